"""`llama_json`: Llama 3.1 / 3.2 / 3.3 JSON tool calls, and Llama 3.1's built-in tool calls.

Grammar, as this machine reads it::

    output   := (text | think | calls)*
    calls    := start call (ws [";"] ws call)*            # text after the last call is content; without
                                                          # ";", only a line break before a call is its own
    start    := output-start | line-start [ \\t]* | "<|python_tag|>" ws   # a line starts after "\\n" or "\\r\\n"
    call     := head args-value rest-of-object            # read by core/json_calls.py from the head on
    head     := "{" ws ['"type"' ws ":" ws '"function"' ws "," ws] '"name"' ws ":" ws NAME ws "," ws KEY
    KEY      := '"parameters"' | '"arguments"'
    builtin  := "<|python_tag|>" ws IDENT ".call(" [kwarg ("," kwarg)* [","]] ")"   # kwarg: core/python_literals.py
    code     := "<|python_tag|>" ws python-source        # only when the request declares `code_interpreter`

A call is decided from its first keys as they arrive, so what waits for the decision is bounded (the
keys, the name: at most TOOLCALL_PARSERS_MAX_NAME characters; all consumed, never re-read; only a
partial key or a lone backslash is held back):
the object's first key is `name` (or `"type": "function"` then `name`, as Llama 3.1 sometimes writes
and llama.cpp accepts), its value a JSON string, and the next key `parameters` or `arguments`. Any
other object (`{"name": "John", "age": 3}`, a config, keys in another order) is content, released
as soon as it is known not to be a call; scanning goes on right after the point where that became
known. A `{` mid-line (after prose on the same line) is content, as in vLLM's streaming reader. A line break
is `\\n` or `\\r\\n`: the line break a call object takes (the one right before it) is the whole `\\r\\n`;
a lone `\\r` breaks no line.

After the head the object is read by the shared JSON call reader: arguments stream as written, an
arguments string holding an object is decoded, keys after the arguments are ignored. A call whose JSON
breaks, or that the output cuts off, is text from its start marker (the tag or `;` before it
included) up to the break; scanning goes on there. Text after a call is content (vLLM's llama3_json
drops it; we never lose text).

Built-in tools (Llama 3.1 `brave_search`, `wolfram_alpha`, any `NAME.call(..)`) count only right after
`<|python_tag|>`: a call named NAME whose keyword arguments are Python literals; a positional
argument or a value that is not a literal makes the whole call text; JSON calls may follow it as they
follow a JSON call (`;`, a line break or nothing between). After the tag, anything that is
neither `{` nor `NAME.call(` is Python source for `code_interpreter` when the request declares that
tool (`{"code": source}`, up to `<|eom_id|>` / `<|eot_id|>` or the end), else text.

`<|eom_id|>` / `<|eot_id|>` (present only when the server keeps special tokens and does not stop on
them) are text wherever they appear, as in `llama_pythonic`; they end a code body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import JsonCallReader
from ..core.json_lexer import JsonSyntaxError, json_string_body, json_text
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls
from ..core.python_literals import LiteralBuilder, NotALiteral, PythonLexer, PyToken, joined_surrogates
from ..core.stream import FormatStream, NotACall
from .spec import Call, CallTag, ConstraintRequest, Format

PYTHON_TAG, END_OF_MESSAGE, END_OF_TURN = "<|python_tag|>", "<|eom_id|>", "<|eot_id|>"
CODE_TOOL = "code_interpreter"
"""The built-in tool whose call after the tag is raw Python source; its one argument is `code`."""

_TEXT, _TAG, _HEAD, _JSON, _AFTER, _BUILTIN, _CODE = range(7)
_NAME, _IN_NAME, _COMMIT = -1, -2, -3
_HEAD_STEPS: dict[int, tuple[tuple[str, int], ...]] = {
    0: (("{", 1),),
    1: (('"type"', 2), ('"name"', 6)),
    2: ((":", 3),),
    3: (('"function"', 4),),
    4: ((",", 5),),
    5: (('"name"', 6),),
    6: ((":", _NAME),),
    8: ((",", 9),),
    9: (('"parameters"', _COMMIT), ('"arguments"', _COMMIT)),
}
"""The head of a call object: step -> (literal, next step) alternatives; whitespace between steps."""
_NAME_STEP_NEXT = 8
# Inside a built-in call's parentheses, what the next token may be:
_ARG, _EQUALS, _VALUE = range(3)

_WS = re.compile(r"[ \t\r\n]*")
_INDENT = re.compile(r"[ \t]*")
_NAME_BODY = re.compile(r'(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*')
_NAME_RUN = re.compile(r"[\w.]*")


class LlamaJsonStream(FormatStream):
    """Incremental parser for one response in Llama 3.x's JSON tool-call format."""

    format_name = "llama_json"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, ["{", PYTHON_TAG], think_markers)
        self._break: list[str] | None = []  # at a line start: its line break and indentation, not sent yet
        self._cr = False  # mid-line, a `\r` that ended the text so far, not sent yet: it may start a `\r\n`
        self._state = _TEXT
        self._prefix = ""  # the markup before a call object: the tag, a `;`, and whitespace
        self._raw: list[str] = []  # what the current state consumed and did not report yet
        self._head_step = 0
        self._reader: JsonCallReader | None = None
        self._separated = False  # a `;` was read after the last call
        self._call_key = -1  # the base's number for a built-in or code call
        self._lexer = PythonLexer(self.limits.max_name, self.limits.max_scalar)
        self._at = _ARG
        self._keyword = ""
        self._arguments: dict[str, Any] = {}
        self._builder = LiteralBuilder(self.limits.max_depth)
        self._in_string = False  # the last Python token read was a string piece that goes on
        self._failure = ""  # why the built-in call breaks, once the string being read ends
        self._code: list[str] = []
        self._code_end = MarkerScanner([END_OF_MESSAGE, END_OF_TURN])
        self._readers = {
            _TEXT: self._scan_text,
            _TAG: self._scan_tag,
            _HEAD: self._scan_head,
            _JSON: self._scan_json,
            _AFTER: self._scan_after,
            _BUILTIN: self._scan_builtin,
            _CODE: self._scan_code,
        }

    # -- outside calls ----------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is None:
            return at
        if m.group() == PYTHON_TAG:
            self._flush_break()
            self._raw = [PYTHON_TAG]
            self._state = _TAG
            return at
        if self._break is None:  # a `{` mid-line is content
            self._text("{")
            return at
        self._start_head(self._take_break(), m.start())
        return m.start()

    def _scan_tag(self, text: str, pos: int) -> int | None:
        """After `<|python_tag|>`: whitespace, then a call object, `NAME.call(`, or code."""
        gap = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if gap > pos:
            self._raw.append(text[pos:gap])
            return gap
        if text[pos] == "{":
            self._start_head("".join(self._raw), pos)
            return pos
        end = _NAME_RUN.match(text, pos, pos + self.limits.max_name + 1).end()  # type: ignore[union-attr]
        if end == len(text) and end - pos <= self.limits.max_name:
            return None  # the name may go on
        name = text[pos:end]
        if (
            end - pos <= self.limits.max_name
            and text[end] == "("
            and name[:-5].isidentifier()
            and name.endswith(".call")
        ):
            return self._start_builtin(name[:-5], text, pos, end + 1)
        if CODE_TOOL in self.tools.schemas:
            self._start_code()
            return pos
        return self._not_a_call(pos)

    def _not_a_call(self, pos: int) -> int:
        """What was read since the start marker is content; scanning goes on at `pos`."""
        self._text(self._prefix + "".join(self._raw))
        self._prefix, self._raw = "", []
        self._state = _TEXT
        return pos

    # -- the head of a call object ----------------------------------------------------------------

    def _start_head(self, prefix: str, pos: int) -> None:
        self._prefix, self._raw = prefix, []
        self._head_step = 0
        self._name_at = 0  # in `_raw`: where the name's string starts
        self._name_read = 0  # characters of the name's string read so far
        self._state = _HEAD

    def _scan_head(self, text: str, pos: int) -> int | None:
        """One step of the head: whitespace, a literal, or the name; a mismatch makes it content."""
        if self._head_step == _IN_NAME:
            return self._scan_name(text, pos)
        if self._head_step:
            gap = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if gap > pos:
                self._raw.append(text[pos:gap])
                return gap
        if self._head_step == _NAME:
            if text[pos] != '"':
                return self._not_a_call(pos)
            self._raw.append('"')
            self._name_at, self._head_step = len(self._raw) - 1, _IN_NAME
            return pos + 1
        for literal, step in _HEAD_STEPS[self._head_step]:
            if text.startswith(literal, pos):
                self._raw.append(literal)
                if step == _COMMIT:
                    return self._commit(pos + len(literal))
                self._head_step = step
                return pos + len(literal)
        if any(len(text) - pos < len(lit) and lit.startswith(text[pos:]) for lit, _ in _HEAD_STEPS[self._head_step]):
            return None  # a partial literal
        return self._not_a_call(pos)

    def _scan_name(self, text: str, pos: int) -> int | None:
        """Inside the name, a JSON string of at most TOOLCALL_PARSERS_MAX_NAME characters: consumed as
        it comes (only a lone trailing backslash waits for its escape), decided when it closes. Where
        it stops being a name is fixed by the text (its first character past the bound, a control
        character), so the rest is read the same way in every chunking."""
        room = self.limits.max_name - self._name_read
        end = _NAME_BODY.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        if end - pos > room:
            self._raw.append(text[pos : pos + room])
            return self._not_a_call(pos + room)
        if end == len(text) or (end == len(text) - 1 and text[end] == "\\"):
            self._raw.append(text[pos:end])
            self._name_read += end - pos
            return end if end > pos else None  # the name goes on (a lone backslash: its escape too)
        if text[end] != '"':
            self._raw.append(text[pos:end])
            return self._not_a_call(end)
        self._raw.append(text[pos : end + 1])
        try:
            name = json.loads("".join(self._raw[self._name_at :]))
        except ValueError:
            return self._not_a_call(end + 1)
        if not name:
            return self._not_a_call(end + 1)
        self._head_step = _NAME_STEP_NEXT
        return end + 1

    def _commit(self, pos: int) -> int:
        """The head is a call's: the JSON call reader takes over, from the object's start."""
        head = "".join(self._raw)
        reader = JsonCallReader(self._start_call, self._call_args, self._end_call, self.limits, self._prefix)
        self._prefix, self._raw = "", []
        try:
            reader.feed(head, 0)
        except JsonSyntaxError as err:  # the core refused the call (a bound, an undeclared tool)
            self._reject(f"not a valid call ({err})", "".join(reader.unfinished) + head[err.pos :])
            self._state = _TEXT
            return pos
        self._reader = reader
        self._state = _JSON
        return pos

    # -- the rest of a call object, and after it --------------------------------------------------

    def _scan_json(self, text: str, pos: int) -> int | None:
        assert self._reader is not None
        try:
            stop, done = self._reader.feed(text, pos)
        except JsonSyntaxError as err:
            self._reject(f"not a valid call ({err})", "".join(self._reader.unfinished))
            self._reader = None
            self._state = _TEXT
            return err.pos
        if not done:
            return stop if stop > pos else None
        self._reader = None
        self._after_call()
        return stop

    def _after_call(self) -> None:
        self._raw = []
        self._separated = False
        self._state = _AFTER

    def _scan_after(self, text: str, pos: int) -> int | None:
        """After a call: whitespace, an optional `;`, then another call object; anything else is content."""
        gap = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if gap > pos:
            self._raw.append(text[pos:gap])
            return gap
        c = text[pos]
        if c == "{":
            if not self._separated:  # only a line break right before the object belongs to it
                self._text("".join(self._raw))
                self._raw = [self._take_break()]
            self._start_head("".join(self._raw), pos)
            return pos
        if c == ";" and not self._separated:
            self._separated = True
            self._raw.append(c)
            return pos + 1
        return self._not_a_call(pos)

    # -- built-in tools: NAME.call(key=literal, ..) -----------------------------------------------

    def _start_builtin(self, name: str, text: str, pos: int, body: int) -> int:
        try:
            self._call_key = self._start_call(name)
        except NotACall as err:
            raise NotACall(str(err), body) from None
        self._raw.append(text[pos:body])
        self._lexer = PythonLexer(self.limits.max_name, self.limits.max_scalar)
        self._at, self._arguments, self._in_string, self._failure = _ARG, {}, False, ""
        self._state = _BUILTIN
        return body

    def _scan_builtin(self, text: str, pos: int) -> int | None:
        """Read the call's tokens up to its closing parenthesis (never past it)."""
        at, end = pos, len(text)
        while at < end:
            token = self._lexer.read(text, at)
            if token is None:
                break
            kind, stop = token[0], token[3]
            if self._builtin_step(token):
                self._after_call()
                return stop
            self._in_string = kind == "str" or (kind == "bad" and self._in_string)
            at = stop
        self._raw.append(text[pos:at])
        return at if at > pos else None

    def _builtin_step(self, token: PyToken) -> bool:
        """One token of the call; True when it closes the call. NotACall where the call breaks: at the
        token, or at the end of the string it is in (nothing inside a string is read as text that
        could start a call)."""
        kind, _, start, stop = token
        if self._failure:
            if kind == "strend":
                raise NotACall(self._failure, stop)
            return False
        if kind == "ws":
            return False
        try:
            return self._builtin_token(token)
        except NotALiteral as err:
            reason = f"not a built-in tool call ({err})"
            if kind == "str" or (kind == "bad" and self._in_string):
                self._failure = reason
                return False
            raise NotACall(reason, stop if kind == "strend" else start) from None

    def _builtin_token(self, token: PyToken) -> bool:
        """Advance on one token; True when it closes the call. NotALiteral: the call is text."""
        kind, value, _, _ = token
        if self._at == _ARG:
            if (kind, value) == ("op", ")"):
                return self._finish_builtin()
            if kind != "name":
                raise NotALiteral("a positional argument")
            self._keyword, self._at = value, _EQUALS
        elif self._at == _EQUALS:
            if (kind, value) != ("op", "="):
                raise NotALiteral("a positional argument")
            self._builder, self._at = LiteralBuilder(self.limits.max_depth), _VALUE
        elif kind == "op" and value in ",)" and self._builder.depth == 0:
            self._add_argument(self._builder.finish())
            if value == ")":
                return self._finish_builtin()
            self._at = _ARG
        else:
            self._builder.feed(kind, value)
        return False

    def _add_argument(self, value: Any) -> None:
        if self._keyword in self._arguments:
            self._warn(f"argument {self._keyword!r} given twice; the last one wins")
        try:
            fragment = json_text(self._keyword) + ": " + json_text(value)
        except ValueError:
            raise NotALiteral("a number JSON cannot carry") from None
        self._send((", " if self._arguments else "{") + fragment)
        self._arguments[self._keyword] = value

    def _finish_builtin(self) -> bool:
        self._send("}" if self._arguments else "{}")
        self._end_call(self._call_key, self._arguments)
        return True

    def _send(self, fragment: str) -> None:
        try:
            self._call_args(self._call_key, fragment)
        except NotACall as err:  # past a bound: the call is text
            raise NotALiteral(str(err)) from None

    # -- code_interpreter: raw Python source after the tag ----------------------------------------

    def _start_code(self) -> None:
        self._call_key = self._start_call(CODE_TOOL)  # NotACall: handled by _recover
        self._code, self._failure = [], ""
        self._call_args(self._call_key, '{"code": "')
        self._state = _CODE

    def _scan_code(self, text: str, pos: int) -> int | None:
        m = self._code_end.search(text, pos)
        cut = m.start() if m is not None else self._code_end.releasable(text, pos)
        self._add_code(text[pos:cut])
        if m is not None:
            self._finish_code()
            return cut
        return cut if cut > pos else None

    def _add_code(self, piece: str) -> None:
        if not piece:
            return
        self._raw.append(piece)
        if self._failure:
            return
        self._code.append(piece)
        try:
            self._call_args(self._call_key, json_string_body(piece))
        except NotACall as err:  # past a bound: the code is text, up to where it ends
            self._failure = str(err)

    def _finish_code(self) -> None:
        if not self._failure:
            try:
                self._call_args(self._call_key, '"}')
            except NotACall as err:
                self._failure = str(err)
        if self._failure:
            self._reject(f"a {CODE_TOOL} call: {self._failure}", "".join(self._raw))
            self._state = _TEXT
        else:
            self._end_call(self._call_key, {"code": joined_surrogates("".join(self._code))})
            self._after_call()
        self._raw, self._code, self._failure = [], [], ""

    # -- errors, text, the end --------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """A built-in or code call broke: its text up to the break is text; scanning goes on there."""
        at = pos if err.pos is None else err.pos
        self._reject(str(err), self._prefix + "".join(self._raw) + text[pos:at])
        self._prefix, self._raw, self._code, self._failure = "", [], [], ""
        self._state = _TEXT
        return at

    def _text(self, text: str) -> None:
        """Every piece of content goes out here. A line's break (`\\n` or `\\r\\n`) and indentation
        are held (consumed, not re-read) until the line shows whether a call object starts it: then
        they belong to it. A `\\r` ending the text is held too (one character): it may start a break."""
        if not text:
            return
        if self._failed:
            super()._text(text)
            return
        if self._cr:  # the held `\r` goes out with what follows it, or joins its line break
            self._cr, text = False, "\r" + text
        newline = text.rfind("\n")
        if newline < 0 and self._break is not None and _INDENT.fullmatch(text):
            self._break.append(text)
            return
        self._flush_break()
        if newline >= 0 and _INDENT.fullmatch(text, newline + 1):
            cut = newline - 1 if newline > 0 and text[newline - 1] == "\r" else newline
            super()._text(text[:cut])
            self._break = [text[cut:]]
        elif text.endswith("\r"):
            super()._text(text[:-1])
            self._cr = True
        else:
            super()._text(text)

    def _flush_break(self) -> None:
        if self._break:
            super()._text("".join(self._break))
        if self._cr:
            super()._text("\r")
        self._break, self._cr = None, False

    def _take_break(self) -> str:
        """The held line break and indentation, for the call object that starts the line (a `\\r`
        held mid-line is text: it breaks no line)."""
        if self._cr:
            self._flush_break()
        held, self._break = "".join(self._break or ()), None
        return held

    def _close(self) -> None:
        rest, self._buf = self._buf, ""
        if self._state == _JSON:
            assert self._reader is not None
            self._reject("the output ended inside a call", "".join(self._reader.unfinished) + rest)
        elif self._state == _BUILTIN:
            self._reject("the output ended inside a built-in tool call", "".join(self._raw) + rest)
        elif self._state == _CODE:
            self._add_code(rest)
            self._finish_code()
        elif self._state == _TAG and rest.strip() and CODE_TOOL in self.tools.schemas:
            self._close_code(rest)
        elif self._state == _HEAD and self._head_step in (_IN_NAME, _NAME_STEP_NEXT, 9):
            self._reject("the output ended inside a call", self._prefix + "".join(self._raw) + rest)
        else:
            self._text(self._prefix + "".join(self._raw) + rest)
        self._flush_break()
        self._prefix, self._raw, self._reader = "", [], None

    def _close_code(self, source: str) -> None:
        """The output ended right after the tag and a name-like run: that run is the code."""
        try:
            self._start_code()
        except NotACall as err:
            self._reject(str(err), "".join(self._raw) + source)
            return
        self._add_code(source)
        self._finish_code()

    def _pending_text(self) -> str:
        held = "".join(self._break or ()) + ("\r" if self._cr else "")
        if self._reader is not None:
            return held + "".join(self._reader.unfinished)
        return held + self._prefix + "".join(self._raw)


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """The calls joined by `; `, as the template writes them."""
    return "; ".join(json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls)


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One or more `{"name": .., "parameters": ..}` objects joined by `; ` (at most one if
    `single`): the output then starts with a call."""
    tags = [
        {
            "type": "tag",
            "begin": '{"name": ' + json_text(name) + ', "parameters": ',
            "content": {"type": "json_schema", "json_schema": request.parameters(name)},
            "end": "}",
        }
        for name in request.names
    ]
    calls = {"type": "tags_with_separator", "tags": tags, "separator": "; ", "at_least_one": True}
    return {"type": "structural_tag", "format": {**calls, "stop_after_first": request.single}}


def _may_call(text: str) -> bool:
    # Code after the tag is a call only when `code_interpreter` is declared (see above).
    return PYTHON_TAG in text


FORMAT = Format(
    "llama_json",
    '{"name": .., "parameters": {..}} (a line start or after <|python_tag|>; several joined by ";")',
    LlamaJsonStream,
    write,
    markers=(PYTHON_TAG, END_OF_MESSAGE),
    special_tokens=(PYTHON_TAG, END_OF_MESSAGE),
    required=required_constraint,
    call_tag=CallTag(PYTHON_TAG + '{{"name": "{name}", "parameters": ', "}", PYTHON_TAG),
    needs_declared_tools=_may_call,
)
