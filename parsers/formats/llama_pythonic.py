"""`llama_pythonic`: Llama 3.2 / Llama 4 style calls, a Python list of keyword-argument calls.

Grammar, as this machine reads it::

    output := (text | think | calls)*
    calls  := start ws "[" ws call (ws "," ws call)* [ws ","] ws "]" [ws "<|python_end|>"]  # end: after python_start
    start  := line-start [ \\t]* | "<|python_tag|>" | "<|python_start|>" | mid-line
    call   := NAME "(" [kwarg ("," kwarg)* [","]] ")"     # NAME may be dotted (a.b.c), Unicode as in Python
    kwarg  := IDENT "=" literal                           # see core/python_literals.py

A `[` starts a call list only when its first item is `NAME(`: `see [1]` or `[O'Reilly]` is text. At a
line start (indented or not, the output's start included) or after a python tag any name counts;
mid-line (after prose, right after another list) only a tool the request declared. The line break
and indentation before a line-start list belong to the list. Nothing is evaluated.

A call with a positional argument, or a value that is not a literal (a set, a call, a name, an
expression, a complex number `1j`, a bad escape, nesting past TOOLCALL_PARSERS_MAX_DEPTH), or that
the core refuses (a bound, an undeclared tool), is text from its name to its closing parenthesis;
the other calls of the list still count. A list whose structure breaks (no `(` after a name, no `,`
or `]` after a call, an unbalanced `]` inside a call) is text from its last finished call up to the
break (a string's end, when a string breaks it, so that nothing inside a string is read as a list),
and scanning for lists goes on there. When every call of a list is text, so are its `]` and its
`<|python_end|>`. Text after the list is content.

Streaming: the call starts at `(`, each argument is sent once its value is complete, and a string value
streams inside the string as it is written (when the core's streaming policy shows the call).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body, json_text
from ..core.outside import OutsideCalls
from ..core.python_literals import LiteralBuilder, NotALiteral, PythonLexer, PyToken, is_name, joined_surrogates
from ..core.stream import FormatStream, NotACall
from .spec import Call, Format

PYTHON_TAG, PYTHON_START, PYTHON_END = "<|python_tag|>", "<|python_start|>", "<|python_end|>"

_TEXT, _TAG, _HEAD, _LIST, _AFTER_LIST = range(5)
# Inside a list, what the next token may be:
_CALL, _OPEN, _ARG, _EQUALS, _VALUE_START, _VALUE, _STRING, _STRING_END, _SKIP, _NEXT, _BAD_STRING = range(11)

_WS = re.compile(r"[ \t\r\n]*")
_NAME_RUN = re.compile(r"[\w.]*")
_BRACKETS = re.compile(r"\[+")
_INDENT = re.compile(r"[ \t]*")


class LlamaPythonicStream(FormatStream):
    """Incremental parser for one response in Llama's pythonic tool-call format."""

    format_name = "llama_pythonic"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, ["[", PYTHON_TAG, PYTHON_START], think_markers)
        self._state = _TEXT
        self._indent: list[str] | None = []  # at a line start: its line break and indentation, not sent yet
        self._marker = ""  # what opened the list: "[" or a python tag
        self._any_name = False  # the list may call any name (at a line start, after a tag): not only declared tools
        self._raw: list[str] = []  # the list's text before this step, since its start or its last finished call
        self._spent = False  # that text was reported in this step: only the text from `_mark` counts
        self._mark = 0  # in the step's text: where the text not yet reported starts
        self._lexer = PythonLexer(self.limits.max_name, self.limits.max_scalar)
        self._at = _CALL
        self._list_calls = 0  # calls of the current list that were read
        self._name = ""
        self._call_key = -1  # the base's number for the call being read
        self._keyword = ""
        self._arguments: dict[str, Any] = {}
        self._builder = LiteralBuilder(self.limits.max_depth)
        self._string: list[str] = []  # a string argument's pieces
        self._depth = 0  # brackets open inside a call being skipped
        self._failure = ""  # why the call being skipped, or the list (after the string being read), is not one
        self._readers = {
            _TEXT: self._scan_text,
            _TAG: self._scan_tag,
            _HEAD: self._scan_head,
            _LIST: self._scan_list,
            _AFTER_LIST: self._scan_after_list,
        }
        self._steps = {
            _CALL: self._expect_call,
            _OPEN: self._expect_open,
            _ARG: self._expect_argument,
            _EQUALS: self._expect_equals,
            _VALUE_START: self._start_value,
            _VALUE: self._read_value,
            _STRING: self._read_string,
            _STRING_END: self._after_string,
            _SKIP: self._skip,
            _NEXT: self._expect_next,
            _BAD_STRING: self._skip_bad_string,
        }

    # -- outside the list -------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is None:
            return at
        self._marker = m.group()
        if self._marker == "[":
            self._any_name = self._indent is not None
            self._raw = [*(self._indent or ()), "["]
            self._indent = None
            self._state = _HEAD
        else:
            self._flush_indent()
            self._raw = [self._marker]
            self._state = _TAG
        return at

    def _scan_tag(self, text: str, pos: int) -> int | None:
        """After a python tag: whitespace, then the list's `[`."""
        gap = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if gap > pos:
            self._raw.append(text[pos:gap])
            return gap
        if text[pos] != "[":
            return self._not_a_list(pos)
        self._raw.append("[")
        self._any_name = True
        self._state = _HEAD
        return pos + 1

    def _scan_head(self, text: str, pos: int) -> int | None:
        """After a `[`: commit to a call list only on `NAME(` (a declared tool's name, mid-line)."""
        gap = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if gap > pos:
            self._raw.append(text[pos:gap])
            return gap
        if text[pos] == "[" and self._raw[-1] == "[":  # `[[[`: only the last may start a list, mid-line
            run = _BRACKETS.match(text, pos).end()  # type: ignore[union-attr]
            self._text("".join(self._raw) + text[pos : run - 1])
            self._raw = ["["]
            self._any_name = False
            return run
        end = _NAME_RUN.match(text, pos, pos + self.limits.max_name + 1).end()  # type: ignore[union-attr]
        name = text[pos:end]
        if end == len(text) and len(name) <= self.limits.max_name:
            return None  # the name may go on
        if (
            len(name) > self.limits.max_name
            or text[end] != "("
            or not is_name(name)
            or not (self._any_name or name in self.tools.schemas)
        ):
            return self._not_a_list(pos)
        self._lexer = PythonLexer(self.limits.max_name, self.limits.max_scalar)
        self._at = _CALL
        self._list_calls = 0
        self._state = _LIST
        return pos

    def _not_a_list(self, pos: int) -> int:
        """What was read since the marker is text; scanning goes on at `pos`."""
        self._text("".join(self._raw))
        self._raw = []
        self._state = _TEXT
        return pos

    def _scan_after_list(self, text: str, pos: int) -> int | None:
        """After a list opened by `<|python_start|>`: whitespace, then its optional `<|python_end|>`."""
        gap = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if gap > pos:
            self._raw.append(text[pos:gap])
            return gap
        if text.startswith(PYTHON_END, pos):
            self._raw = []
            self._state = _TEXT
            return pos + len(PYTHON_END)
        if len(text) - pos < len(PYTHON_END) and PYTHON_END.startswith(text[pos:]):
            return None
        return self._not_a_list(pos)

    # -- inside the list --------------------------------------------------------------------------

    def _scan_list(self, text: str, pos: int) -> int | None:
        """Read tokens until the list closes or the text runs out (never past the list's `]`)."""
        self._mark = pos
        at, end = pos, len(text)
        while at < end:
            token = self._lexer.read(text, at)
            if token is None:
                break
            if token[0] != "ws" and self._token(token, text):
                return self._close_list(text, token[3])
            at = token[3]
        if self._spent:
            self._raw, self._spent = [], False
        self._raw.append(text[self._mark : at])
        return at if at > pos else None

    def _token(self, token: PyToken, text: str) -> bool:
        """Advance on one token; True when it closes the list. NotACall: the list breaks."""
        try:
            return self._steps[self._at](token, text)
        except NotALiteral as err:  # the call is not plain keyword literals: it is text
            self._skip_call(str(err), self._builder.depth if self._at == _VALUE else 0)
            return self._skip(token, text)

    def _expect_call(self, token: PyToken, text: str) -> bool:
        kind, value, _, _ = token
        if kind == "name":
            self._name = value
            self._at = _OPEN
            return False
        if (kind, value) == ("op", "]"):  # after a trailing comma
            return True
        return self._break_list("expected a function name", token)

    def _expect_open(self, token: PyToken, text: str) -> bool:
        if token[:2] != ("op", "("):
            return self._break_list("expected '(' after the function name", token)
        self._arguments = {}
        try:
            self._call_key = self._start_call(self._name)
        except NotACall as err:  # refused: the call is text, up to its closing parenthesis
            self._skip_call(str(err), 0)
            return False
        self._at = _ARG
        return False

    def _expect_argument(self, token: PyToken, text: str) -> bool:
        kind, value, _, end = token
        if (kind, value) == ("op", ")"):
            self._finish_call(end)
        elif kind == "name":
            self._keyword = value
            self._at = _EQUALS
        else:
            raise NotALiteral("a positional argument")
        return False

    def _expect_equals(self, token: PyToken, text: str) -> bool:
        if token[:2] != ("op", "="):
            raise NotALiteral("a positional argument")
        if self._keyword in self._arguments:
            self._warn(f"{self._name}: argument {self._keyword!r} given twice; the last one wins")
        self._send((", " if self._arguments else "{") + json_text(self._keyword) + ": ")
        self._arguments[self._keyword] = None
        self._at = _VALUE_START
        return False

    def _start_value(self, token: PyToken, text: str) -> bool:
        if token[0] in ("str", "strend"):  # a string value: it streams as it is written
            self._string = []
            self._send('"')
            return self._read_string(token, text)
        self._builder = LiteralBuilder(self.limits.max_depth)
        self._at = _VALUE
        return self._read_value(token, text)

    def _read_value(self, token: PyToken, text: str) -> bool:
        kind, value, _, end = token
        if kind == "op" and value in ",)" and self._builder.depth == 0:
            result = self._builder.finish()
            self._send(json_text(result))
            self._end_argument(result, value, end)
        else:
            self._builder.feed(kind, value)
        return False

    def _read_string(self, token: PyToken, text: str) -> bool:
        kind, value, _, _ = token
        if kind == "bad":
            raise NotALiteral(value)
        self._string.append(value)
        self._send(json_string_body(value))
        self._at = _STRING_END if kind == "strend" else _STRING
        return False

    def _after_string(self, token: PyToken, text: str) -> bool:
        kind, value, _, end = token
        if kind in ("str", "strend"):  # implicit concatenation: the same string goes on
            return self._read_string(token, text)
        if kind != "op" or value not in ",)":
            raise NotALiteral("an expression after a string")
        self._send('"')
        self._end_argument(joined_surrogates("".join(self._string)), value, end)
        return False

    def _end_argument(self, result: Any, delimiter: str, end: int) -> None:
        self._arguments[self._keyword] = result
        if delimiter == ",":
            self._at = _ARG
        else:
            self._finish_call(end)

    def _finish_call(self, end: int) -> None:
        self._send("}" if self._arguments else "{}")
        self._end_call(self._call_key, self._arguments)
        self._list_calls += 1
        self._spend(end)
        self._at = _NEXT

    def _send(self, fragment: str) -> None:
        try:
            self._call_args(self._call_key, fragment)
        except NotACall as err:  # past a bound: this call is text
            raise NotALiteral(str(err)) from None

    def _skip_call(self, reason: str, depth: int) -> None:
        """Skip the rest of this call, to its closing parenthesis (`depth` brackets are open inside
        it); the call comes back as text."""
        self._failure, self._depth, self._at = reason, depth, _SKIP

    def _skip(self, token: PyToken, text: str) -> bool:
        kind, value, start, end = token
        if kind != "op":
            return False
        if value in "([{":
            self._depth += 1
        elif value in ")]}" and self._depth > 0:
            self._depth -= 1
        elif value == ")":
            self._reject(f"{self._name}(..): a call with {self._failure}", self._unreported(text, end))
            self._spend(end)
            self._at = _NEXT
        elif value in "]}":
            raise NotACall(f"an unbalanced {value!r} in a call with {self._failure}", start)
        return False

    def _expect_next(self, token: PyToken, text: str) -> bool:
        if token[:2] == ("op", ","):
            self._at = _CALL
            return False
        if token[:2] == ("op", "]"):
            return True
        return self._break_list("expected ',' or ']' after a call", token)

    def _break_list(self, reason: str, token: PyToken) -> bool:
        """The list breaks at this token (at a string's end: what is inside a string is never read
        as text that could start a list)."""
        kind, _, start, end = token
        if kind == "str":
            self._failure, self._at = reason, _BAD_STRING
            return False
        raise NotACall(reason, end if kind == "strend" else start)

    def _skip_bad_string(self, token: PyToken, text: str) -> bool:
        if token[0] == "strend":
            raise NotACall(self._failure, token[3])
        return False

    def _close_list(self, text: str, end: int) -> int:
        self._state = _AFTER_LIST if self._marker == PYTHON_START else _TEXT
        if self._list_calls == 0:  # every call was text: so are the list's closing bracket and end marker
            self._text(self._unreported(text, end))
            self._state = _TEXT
        self._raw, self._spent = [], False
        self._indent = None
        return end

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The list broke: its text since the last finished call is text; scanning goes on there."""
        at = pos if err.pos is None else err.pos
        self._reject(f"not a valid call list ({err})", self._unreported(text, at))
        self._raw, self._spent = [], False
        self._state = _TEXT
        return at

    def _unreported(self, text: str, upto: int) -> str:
        """The list's text not reported yet, up to `upto` in this step's text."""
        return ("" if self._spent else "".join(self._raw)) + text[self._mark : upto]

    def _spend(self, upto: int) -> None:
        """The list's text up to `upto` is reported (as a call or as text)."""
        self._spent = True
        self._mark = upto

    # -- text and line starts ---------------------------------------------------------------------

    def _text(self, text: str) -> None:
        """Every piece of text goes out here. A line's break and indentation are held (consumed,
        not re-read) until the line shows whether a call list starts it: then they belong to it."""
        if not text:
            return
        if self._failed:
            super()._text(text)
            return
        newline = text.rfind("\n")
        if newline < 0 and self._indent is not None and _INDENT.fullmatch(text):
            self._indent.append(text)
            return
        self._flush_indent()
        if newline >= 0 and _INDENT.fullmatch(text, newline + 1):
            super()._text(text[:newline])
            self._indent = [text[newline:]]
        else:
            super()._text(text)

    def _flush_indent(self) -> None:
        if self._indent:
            super()._text("".join(self._indent))
        self._indent = None

    # -- the end ----------------------------------------------------------------------------------

    def _close(self) -> None:
        if self._state == _LIST:
            self._reject("the output ended inside a call list", "".join(self._raw) + self._buf)
        else:
            self._text("".join(self._raw) + self._buf)
        self._flush_indent()
        self._raw = []
        self._buf = ""

    def _pending_text(self) -> str:
        return "".join(self._indent or ()) + "".join(self._raw)


# -- the spec --------------------------------------------------------------------------------------


def _literal(value: Any) -> str:
    """A JSON value as a Python literal (strings in JSON's spelling, which Python reads the same)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def write(calls: Sequence[Call]) -> str:
    """One list of calls, keyword arguments as Python literals."""
    written = [f"{name}({', '.join(f'{k}={_literal(v)}' for k, v in arguments.items())})" for name, arguments in calls]
    return "[" + ", ".join(written) + "]"


def _may_call(text: str) -> bool:
    # Mid-line (after prose), a list calls only declared tools: a superset of `[NAME(`.
    return _LIST_HEAD.search(text) is not None


_LIST_HEAD = re.compile(r"\[\s*[^\s\[\]()]+\(")

FORMAT = Format(
    "llama_pythonic",
    '[f(a=1, b="x"), g()] (after <|python_tag|> or in <|python_start|>..)',
    LlamaPythonicStream,
    write,
    markers=(PYTHON_TAG, PYTHON_START, PYTHON_END),
    special_tokens=(PYTHON_TAG, PYTHON_START, PYTHON_END),
    needs_declared_tools=_may_call,
)
