"""Reading Python calls whose arguments are keyword literals, as Llama models write tool calls: a
list `[get_weather(city="SF", days=3), f()]` (`llama_pythonic` and its family), calls one per line
(Olmo 3's `olmo3_pythonic`), or one built-in tool call `brave_search.call(query="x")`
(`llama_json`). Nothing is evaluated: the text is read token by token (`python_literals.PythonLexer`,
on demand, never past the list's `]`, the lines' closing `<` or the call's `)`), and values are built
by `python_literals.LiteralBuilder`.

Grammar::

    list  := call (ws "," ws call)* [ws ","] ws "]"     # the reader starts at the first call's NAME
    lines := call (BREAK call)* ws "<"                   # BREAK: whitespace holding a line break;
                                                         # the "<" (the closing tag's) is not read
    call  := NAME "(" [kwarg ("," kwarg)* [","]] ")"     # one call: the reader starts after its "("
    kwarg := IDENT "=" literal

One reader owns this sub-grammar, as h11's readers own theirs: where it is in it, the call being
read, the text it has not accounted for yet (from the markup before it, handed over as `prefix`),
how a broken piece is reported, and what the end of the output means inside it (`read_eof`). The
format hands it text and learns only that it is `done` (and whether `broken`).

- **A list** (`PythonCallReader.list_of_calls`): a call with a positional argument, a value that is
  not a literal (a set, a call, a name, an expression, `1j`, a bad escape, nesting past
  TOOLCALL_PARSERS_MAX_DEPTH), or that the core refuses (a bound, an undeclared tool), is text from
  its name to its closing parenthesis, and the other calls still count. A list whose structure
  breaks (no `(` after a name, no `,` or `]` after a call, an unbalanced `]` inside a call) is text
  from its last finished call up to the break, and the format reads on there. When every call of a
  list is text, so is its `]`. Each argument is sent once its value is complete, and a string value
  streams inside the string as it is written.
- **Lines** (`PythonCallReader.lines_of_calls`): as a list, with a line break where the list has
  its comma and the closing tag's `<` where it has its `]` (which the format then reads); a `,` or
  a `]` after a call breaks it, and so does a call on the same line as the one before.
- **One call** (`PythonCallReader.one_call`): any of those breaks the whole call: it is text from
  the prefix up to the break. Each argument is sent once its value is complete.

A break found inside a string is reported where the string ends, so nothing inside a string is
ever read as text that could start a call. Events go to the owner (`FormatStream`): `_start_call`,
`_call_args`, `_end_call`, and `_reject` for what is text.

The owner may name its models' Python (`python_spelling`, a `python_literals.Spelling`; Python's own
by default). Where it reads leading zeros, an argument that is such an integer alone (`month=07`)
is that integer, unless the tool's schema for it admits a string and no number: then it is the
digits as written (`code=007` -> "007"), as the schema says the model meant text. Where it reads
loose quotes, a call of a list whose string took a quote as its own stands only once the list goes
on after it (a `,` or the `]`): a quote the lexer took as closing that string too early leaves a
`)` the list cannot go on from, and the call is then text, never a call with a cut value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .json_lexer import json_string_body, json_text
from .python_literals import PYTHON, LiteralBuilder, NotALiteral, PythonLexer, PyToken, Spelling, joined_surrogates
from .stream import NotACall
from .typed_values import schema_types

if TYPE_CHECKING:
    from .stream import FormatStream

Step = Callable[[PyToken], bool]
"""What the next token may be: takes a token (not whitespace); True when it closes the list or call."""


class PythonCallReader:
    """Reads a list of calls, or one call's arguments (see the module docstring)."""

    def __init__(self, owner: FormatStream, prefix: str, *, in_list: bool, lines: bool = False) -> None:
        self._owner = owner
        self._in_list = in_list
        self._lines = lines  # calls one per line, up to a closing tag's "<"
        self._line_broken = False  # lines: a line break since the last call's ")"
        self._stop_before = False  # the token that ended the reading is not read (the closing "<")
        self._spelling: Spelling = getattr(owner, "python_spelling", PYTHON)
        self._lexer = PythonLexer(
            owner.limits.max_name, owner.limits.max_scalar, loose_quotes=self._spelling.loose_quotes
        )
        self._step: Step = self._expect_call
        self._unreported: list[str] = [prefix] if prefix else []  # text of the steps before this one
        self._spent = False  # this step reported that text (as a call or as text): only from `_mark` on counts
        self._step_text = ""  # the step's text, and where its part not reported yet starts
        self._mark = 0
        self.done = False
        self.broken = False
        self.calls = 0  # calls read (not text)
        self._name = ""
        self._key = -1  # the owner's number for the call being read
        self._keyword = ""
        self._arguments: dict[str, Any] = {}
        self._builder = LiteralBuilder(owner.limits.max_depth, self._spelling)
        self._string: list[str] = []  # a streaming string value's pieces
        self._depth = 0  # brackets open inside a call being skipped
        self._failure = ""  # why the call being skipped, or (at the string's end) the whole, is not one
        self._loose_before = 0  # the lexer's loose quotes before the current call
        self._unsure = False  # the call just read took a quote as its string's own: it waits for the list to go on

    @classmethod
    def list_of_calls(cls, owner: FormatStream, prefix: str) -> PythonCallReader:
        """A call list, read from its first call's NAME; `prefix` is its text before that."""
        return cls(owner, prefix, in_list=True)

    @classmethod
    def lines_of_calls(cls, owner: FormatStream, prefix: str) -> PythonCallReader:
        """Calls one per line, read from the first call's NAME up to the `<` of the closing tag;
        `prefix` is their text before that."""
        return cls(owner, prefix, in_list=True, lines=True)

    @classmethod
    def one_call(cls, owner: FormatStream, prefix: str, name: str) -> PythonCallReader:
        """The arguments of one call to `name`, read after its `(`; `prefix` is its text up to there.
        The call starts now: NotACall when the core refuses it."""
        reader = cls(owner, prefix, in_list=False)
        reader._open(name)
        return reader

    # -- the reader -------------------------------------------------------------------------------

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`, never past the list's `]` or the call's `)`: where reading stopped (the
        format reads on there once `done`), or None when nothing could be read (hold `text[pos:]`)."""
        self._step_text, self._mark = text, pos
        at, end = pos, len(text)
        try:
            while at < end:
                token = self._lexer.read(text, at)
                if token is None:
                    break
                at = token[3]
                if token[0] == "ws":
                    self._line_broken = self._line_broken or (self._lines and text.find("\n", token[2], at) >= 0)
                elif self._token(token):
                    at = token[2] if self._stop_before else at
                    self._close(at)
                    return at
        except NotACall as err:  # the list (or the call) breaks: its text so far is text
            at = pos if err.pos is None else err.pos
            what = "not a valid call list" if self._in_list else "not a built-in tool call"
            self._owner._reject(f"{what} ({err})", self.unreported(at))
            self.done = self.broken = True
            return at
        if self._spent:
            self._unreported, self._spent = [], False
        self._unreported.append(text[self._mark : at])
        return at if at > pos else None

    def read_eof(self, rest: str) -> None:
        """The output ended inside the list or call (`rest`: the text held back): all of it is text."""
        what = "a call list" if self._in_list else "a built-in tool call"
        self._owner._reject(f"the output ended inside {what}", "".join(self._unreported) + rest)
        self.done = self.broken = True

    def pending(self) -> str:
        """The text read and not reported before the current step (for the owner's failure path)."""
        return "".join(self._unreported)

    def unreported(self, upto: int) -> str:
        """The text not reported yet, up to `upto` in the current step's text."""
        return ("" if self._spent else "".join(self._unreported)) + self._step_text[self._mark : upto]

    def _spend(self, upto: int) -> None:
        """The text up to `upto` is reported (as a call or as text)."""
        self._spent = True
        self._mark = upto

    def _close(self, end: int) -> None:
        """The list's `]`, the lines' `<` or the call's `)` at `end`. A list whose calls were all text
        is text."""
        if self._in_list and self.calls == 0:
            self._owner._text(self.unreported(end))
        self.done = True

    # -- the grammar ------------------------------------------------------------------------------

    def _token(self, token: PyToken) -> bool:
        try:
            return self._step(token)
        except NotALiteral as err:
            if not self._in_list:
                return self._break(str(err), token)
            self._skip_call(str(err), self._builder.depth if self._step == self._read_value else 0)
            return self._skip(token)

    def _expect_call(self, token: PyToken) -> bool:
        kind, value, _, _ = token
        if kind == "name":
            self._name = value
            self._step = self._expect_open
            return False
        if (kind, value) == ("op", "]"):  # after a trailing comma
            return True
        return self._break("expected a function name", token)

    def _expect_open(self, token: PyToken) -> bool:
        if token[:2] != ("op", "("):
            return self._break("expected '(' after the function name", token)
        try:
            self._open(self._name)
        except NotACall as err:  # refused: the call is text, up to its closing parenthesis
            self._skip_call(str(err), 0)
        return False

    def _open(self, name: str) -> None:
        self._name = name
        self._arguments = {}
        self._loose_before = self._lexer.loose_quotes
        self._key = self._owner._start_call(name)
        self._step = self._expect_argument

    def _expect_argument(self, token: PyToken) -> bool:
        kind, value, _, end = token
        if (kind, value) == ("op", ")"):
            return self._finish_call(end)
        if kind != "name":
            raise NotALiteral("a positional argument")
        self._keyword = value
        self._step = self._expect_equals
        return False

    def _expect_equals(self, token: PyToken) -> bool:
        if token[:2] != ("op", "="):
            raise NotALiteral("a positional argument")
        self._builder = LiteralBuilder(self._owner.limits.max_depth, self._spelling)
        self._step = self._read_value
        if self._in_list:  # the key goes out now, a string value as it is written
            self._warn_twice()
            self._send((", " if self._arguments else "{") + json_text(self._keyword) + ": ")
            self._arguments[self._keyword] = None
            self._step = self._start_value
        return False

    def _start_value(self, token: PyToken) -> bool:
        if token[0] in ("str", "strend"):
            self._string = []
            self._send('"')
            return self._read_string(token)
        self._step = self._read_value
        return self._read_value(token)

    def _read_value(self, token: PyToken) -> bool:
        kind, value, _, end = token
        if kind != "op" or value not in ",)" or self._builder.depth:
            self._builder.feed(kind, value)
            return False
        result = self._builder.finish()
        if self._builder.written is not None and self._wants_text():
            result = self._builder.written
        if self._in_list:
            self._send(json_text(result))
        else:
            self._warn_twice()
            try:
                fragment = json_text(self._keyword) + ": " + json_text(result)
            except ValueError:
                raise NotALiteral("a number JSON cannot carry") from None
            self._send((", " if self._arguments else "{") + fragment)
        return self._end_argument(result, value, end)

    def _wants_text(self) -> bool:
        """Whether the tool's schema for the argument being read admits a string and no number."""
        parameters = self._owner.tools.schemas.get(self._name)
        properties = parameters.get("properties") if isinstance(parameters, dict) else None
        types = schema_types(properties.get(self._keyword)) if isinstance(properties, dict) else frozenset()
        return "string" in types and not types & {"integer", "number"}

    def _read_string(self, token: PyToken) -> bool:
        kind, value, _, _ = token
        if kind == "bad":
            raise NotALiteral(value)
        self._string.append(value)
        self._send(json_string_body(value))
        self._step = self._after_string if kind == "strend" else self._read_string
        return False

    def _after_string(self, token: PyToken) -> bool:
        kind, value, _, end = token
        if kind in ("str", "strend"):  # implicit concatenation: the same string goes on
            return self._read_string(token)
        if kind != "op" or value not in ",)":
            raise NotALiteral("an expression after a string")
        self._send('"')
        return self._end_argument(joined_surrogates("".join(self._string)), value, end)

    def _end_argument(self, result: Any, delimiter: str, end: int) -> bool:
        self._arguments[self._keyword] = result
        if delimiter == ")":
            return self._finish_call(end)
        self._step = self._expect_argument
        return False

    def _finish_call(self, end: int) -> bool:
        self._send("}" if self._arguments else "{}")
        self._step = self._expect_next
        self._line_broken = False
        if self._in_list and self._lexer.loose_quotes > self._loose_before:
            self._unsure = True  # it stands at the next token, if the list goes on (module docstring)
            return False
        self._call_stands(end)
        return not self._in_list

    def _call_stands(self, end: int) -> None:
        """The call just read is a call; its text (up to `end`) is reported as one."""
        self._unsure = False
        self._owner._end_call(self._key, self._arguments)
        self.calls += 1
        self._spend(end)

    def _expect_next(self, token: PyToken) -> bool:
        if self._lines:
            closes = self._expect_next_line(token)
        elif token[:2] == ("op", ","):
            self._step, closes = self._expect_call, False
        elif token[:2] == ("op", "]"):
            closes = True
        else:
            return self._break("expected ',' or ']' after a call", token)
        if self._unsure:
            self._call_stands(token[2])
        return closes

    def _expect_next_line(self, token: PyToken) -> bool:
        if token[:2] == ("op", "<"):
            self._stop_before = True
            return True
        if token[0] == "name" and self._line_broken:
            self._name = token[1]
            self._step = self._expect_open
            return False
        return self._break("expected a line break and a call, or the closing tag, after a call", token)

    def _send(self, fragment: str) -> None:
        try:
            self._owner._call_args(self._key, fragment)
        except NotACall as err:  # past a bound: this call is text
            raise NotALiteral(str(err)) from None

    def _warn_twice(self) -> None:
        if self._keyword in self._arguments:
            name = f"{self._name}: " if self._in_list else ""
            self._owner._warn(f"{name}argument {self._keyword!r} given twice; the last one wins")

    # -- what is not a call -----------------------------------------------------------------------

    def _skip_call(self, reason: str, depth: int) -> None:
        """Skip the rest of this call, to its closing parenthesis (`depth` brackets are open inside
        it); the call comes back as text."""
        self._failure, self._depth, self._step = reason, depth, self._skip

    def _skip(self, token: PyToken) -> bool:
        kind, value, start, end = token
        if kind != "op":
            return False
        if value in "([{":
            self._depth += 1
        elif value in ")]}" and self._depth > 0:
            self._depth -= 1
        elif value == ")":
            self._owner._reject(f"{self._name}(..): a call with {self._failure}", self.unreported(end))
            self._spend(end)
            self._step = self._expect_next
            self._line_broken = False
        elif value in "]}":
            raise NotACall(f"an unbalanced {value!r} in a call with {self._failure}", start)
        return False

    def _break(self, reason: str, token: PyToken) -> bool:
        """The whole breaks at this token; inside a string, where the string ends."""
        if self._lexer.in_string:
            self._failure, self._step = reason, self._rest_of_string
            return False
        raise NotACall(reason, token[3] if token[0] == "strend" else token[2])

    def _rest_of_string(self, token: PyToken) -> bool:
        if token[0] == "strend":
            raise NotACall(self._failure, token[3])
        return False
