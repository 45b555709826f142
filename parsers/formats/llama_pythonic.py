"""`llama_pythonic`: Llama 3.2 / Llama 4 style calls, a Python list of keyword-argument calls.

Grammar, as this machine reads it::

    output := (text | think | calls)*
    calls  := (line-start | "<|python_tag|>" | "<|python_start|>") ws "[" call ("," call)* "]" ["<|python_end|>"]
    call   := NAME "(" [kwarg ("," kwarg)*] ")"          # NAME may be dotted: a.b.c
    kwarg  := IDENT "=" literal                          # see core/python_literals.py

A list starts a call list only at the start of a line (or after a python tag) and only when its first
item is `NAME(`: `see [1]` or `[O'Reilly]` is text. Nothing is evaluated. A call with a positional
argument, or with a value that is not a literal (a set, a call, a name, an expression), is text; the
other calls of the list still count. Text after the list is content.

Streaming: the call starts at `(`, each argument is sent once its value is complete, and a string value
streams inside the string as it is written.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.outside import OutsideCalls
from ..core.python_literals import NotALiteral, PythonLexer, PyToken, literal
from ..core.stream import FormatStream

LINE_LIST, PYTHON_TAG, PYTHON_START, PYTHON_END = "\n[", "<|python_tag|>", "<|python_start|>", "<|python_end|>"

_TEXT, _HEAD, _LIST, _AFTER_LIST = range(4)
# Inside a list:
_CALL, _OPEN, _ARG, _EQUALS, _VALUE, _STRING_END, _SKIP, _NEXT = range(8)


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
        self._outside = OutsideCalls(self._text, [LINE_LIST, PYTHON_TAG, PYTHON_START], think_markers)
        self._outside.held = "\n"  # the output starts a line; leading whitespace is never content
        self._state = _TEXT
        self._marker = ""
        self._raw: list[str] = []  # the list's text since its start or the last finished call
        self._lexer = PythonLexer()
        self._at = _CALL
        self._index = -1
        self._name = ""
        self._key = ""
        self._arguments: dict[str, Any] = {}
        self._value: list[PyToken] = []
        self._string: list[str] = []
        self._depth = 0
        self._chunk_start = 0
        self._list_calls = 0  # calls of the current list that were read
        self._readers = {
            _TEXT: self._scan_text,
            _HEAD: self._scan_head,
            _LIST: self._scan_list,
            _AFTER_LIST: self._scan_after_list,
        }

    # -- outside the list -------------------------------------------------------------------------

    def _scan_text(self, text: str) -> str:
        m, rest = self._outside.scan(text)
        if m is not None:
            self._marker = m.group()
            self._state = _HEAD
        return rest

    def _scan_head(self, text: str) -> str:
        """After a possible start: commit to a call list only on `[NAME(`."""
        head = text
        if self._marker != LINE_LIST:
            body = head.lstrip()
            if not body:
                self._buf = text
                return ""
            if body[0] != "[":
                return self._not_a_list(text)
            head = body[1:]
        body = head.lstrip()
        i = 0
        while i < len(body) and (body[i].isalnum() or body[i] in "_."):
            i += 1
        if i == len(body):
            if len(body) > 256:
                return self._not_a_list(text)
            self._buf = text
            return ""
        if i == 0 or body[i] != "(" or body[0].isdigit():
            return self._not_a_list(text)
        self._raw = [self._marker, text[: len(text) - len(body)]]
        self._lexer = PythonLexer()
        self._at = _CALL
        self._list_calls = 0
        self._state = _LIST
        return body

    def _not_a_list(self, text: str) -> str:
        """Not a call list: the marker is text, and scanning goes on right after it."""
        self._text(self._marker)
        self._state = _TEXT
        return text

    # -- inside the list --------------------------------------------------------------------------

    def _scan_list(self, text: str) -> str:
        self._chunk_start = 0  # where the current call's text starts in this chunk
        try:
            tokens, failure = self._lexer.read(text)
            for kind, value, end in tokens:
                if self._token(kind, value, end, text):
                    if self._list_calls == 0:  # every call was text: so is the list's closing bracket
                        self._text("".join(self._raw) + text[self._chunk_start : end])
                    self._raw = []
                    self._state = _AFTER_LIST
                    return text[end:]
            if failure is not None:
                raise failure
        except NotALiteral as err:
            self._reject(f"not a valid call list ({err})", "".join(self._raw) + text[self._chunk_start : err.pos])
            self._raw = []
            self._state = _TEXT
            return text[err.pos :]
        self._raw.append(text[self._chunk_start :])
        return ""

    def _token(self, kind: str, value: str, end: int, text: str) -> bool:
        """Advance on one token; True when it closes the list."""
        at, op = self._at, value if kind == "op" else ""
        if at == _CALL:
            if kind != "name":
                raise NotALiteral("expected a function name", end)
            self._name = value
            self._at = _OPEN
        elif at == _OPEN:
            if op != "(":
                raise NotALiteral("expected '(' after the function name", end)
            self._index = self._start_call(self._name)
            self._arguments = {}
            self._at = _ARG
        elif at == _ARG:
            if op == ")":
                self._finish_call(end)
            elif kind == "name":
                self._key = value
                self._at = _EQUALS
            else:
                self._bad_call("a positional argument", op, end, text)
        elif at == _EQUALS:
            if op != "=":
                self._bad_call("a positional argument", op, end, text)
            else:
                self._start_argument()
        elif at == _VALUE:
            self._value_token(kind, value, end, text)
        elif at == _STRING_END:
            if kind in ("str", "strend"):  # implicit concatenation: the same string goes on
                self._at = _VALUE
                self._value_token(kind, value, end, text)
            elif op in (",", ")"):
                self._call_args(self._index, '"')
                self._arguments[self._key] = "".join(self._string)
                self._after_argument(op, end)
            else:
                self._bad_call("an expression after a string", op, end, text)
        elif at == _SKIP:
            if op and op in "([{":
                self._depth += 1
            elif op and op in ")]}":
                self._depth -= 1
                if self._depth < 0:
                    self._end_bad_call(end, text)
        elif at == _NEXT:
            if op == ",":
                self._at = _CALL
            elif op == "]":
                return True
            else:
                raise NotALiteral("expected ',' or ']' after a call", end)
        return False

    def _start_argument(self) -> None:
        if self._key in self._arguments:
            self._warn(f"argument {self._key!r} given twice; the last one wins")
        separator = ", " if self._arguments else "{"
        self._call_args(self._index, separator + json.dumps(self._key, ensure_ascii=False) + ": ")
        self._arguments[self._key] = None
        self._value, self._string, self._depth = [], [], 0
        self._at = _VALUE

    def _value_token(self, kind: str, value: str, end: int, text: str) -> None:
        op = value if kind == "op" else ""
        if self._depth == 0 and kind in ("str", "strend") and (self._string or not self._value):
            if not self._string:  # a string value: it streams as it is written
                self._call_args(self._index, '"')
                self._string = [""]
            self._string.append(value)
            self._call_args(self._index, json_string_body(value))
            if kind == "strend":
                self._at = _STRING_END
            return
        if self._depth == 0 and op in (",", ")"):
            try:
                result = literal(self._value)
            except NotALiteral as err:
                self._bad_call(f"a value that is not a literal: {err}", op, end, text)
                return
            self._call_args(self._index, json.dumps(result, ensure_ascii=False))
            self._arguments[self._key] = result
            self._after_argument(op, end)
            return
        if op and op in "([{":
            self._depth += 1
        elif op and op in ")]}":
            self._depth -= 1
        self._value.append((kind, value, end))

    def _after_argument(self, delimiter: str, end: int) -> None:
        if delimiter == ",":
            self._at = _ARG
        else:
            self._finish_call(end)

    def _finish_call(self, end: int) -> None:
        self._call_args(self._index, "}" if self._arguments else "{}")
        self._end_call(self._index, self._arguments)
        self._list_calls += 1
        self._raw = []
        self._chunk_start = end
        self._at = _NEXT

    def _bad_call(self, reason: str, op: str, end: int, text: str) -> None:
        """Skip the rest of this call, to its closing parenthesis; the call comes back as text."""
        self._warn(f"{self._name}: a call with {reason}")
        if op == ")":  # this very token closes the call
            self._end_bad_call(end, text)
            return
        self._depth = 1 if op and op in "([{" else 0
        self._at = _SKIP

    def _end_bad_call(self, end: int, text: str) -> None:
        self._reject("a call that is not plain keyword literals", "".join(self._raw) + text[self._chunk_start : end])
        self._raw = []
        self._chunk_start = end
        self._at = _NEXT

    def _scan_after_list(self, text: str) -> str:
        """An optional `<|python_end|>` closes a list opened by `<|python_start|>`."""
        if self._marker == PYTHON_START:
            body = text.lstrip()
            if body.startswith(PYTHON_END):
                self._state = _TEXT
                return body[len(PYTHON_END) :]
            if not body or PYTHON_END.startswith(body):
                self._buf = text
                return ""
        self._state = _TEXT
        return text

    # -- the end ----------------------------------------------------------------------------------

    def _close(self) -> None:
        if self._state == _LIST:
            self._reject("the output ended inside a call list", "".join(self._raw) + self._buf)
        elif self._state == _HEAD:
            self._text(self._marker + self._buf)
        else:
            self._text(self._outside.release() + self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        return self._outside.release() + "".join(self._raw) + self._buf
