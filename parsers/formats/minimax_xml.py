"""`minimax_xml`: MiniMax-M2 XML tool calls, values typed by the tool schema.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (invoke ws)* [END]             # END may be missing after complete invokes
    invoke    := "<invoke name=" NAME ">" ws (parameter ws)* "</invoke>"
    parameter := "<parameter name=" NAME ">" VALUE "</parameter>"
    NAME      := '"' [^"]* '"' | "'" [^']* "'" | [^>]*

with START = `<minimax:tool_call>` and END = `</minimax:tool_call>`. VALUE is raw text: the format has
no escaping. A `</parameter>` ends it only when what follows (after whitespace) is `<parameter`,
`</invoke>` or the end of the output; otherwise it is part of the value (a file that holds XML).

Values are typed by the request's tool schema (`core.typed_values`). A string value streams as it
is written; other values are sent when their `</parameter>` arrives; the call's name as soon as its
invoke tag closes. An invoke that breaks the grammar is text up to its `</invoke>` and the other
invokes still count; a block that never holds an invoke is text.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.ids import IdFactory
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls
from ..core.stream import FormatStream, NotACall
from ..core.typed_values import ValueWriter

START, END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE_OPEN, INVOKE_CLOSE = "<invoke name=", "</invoke>"
PARAM_OPEN, PARAM_CLOSE = "<parameter name=", "</parameter>"
VALUE_FOLLOWERS = ("<parameter", INVOKE_CLOSE)
MAX_NAME = 1024

_TEXT, _BLOCK, _INVOKE_NAME, _INVOKE, _PARAM_NAME, _VALUE, _SKIP = range(7)


def _read_name(text: str) -> tuple[str, int] | None:
    """A NAME followed by `>` at the start of `text`: (name, index after `>`); None while incomplete.
    Raises NotACall when it cannot be a name."""
    if text[:1] in ('"', "'"):
        close = text.find(text[0], 1)
        if close < 0:
            if len(text) > MAX_NAME:
                raise NotACall("name too long")
            return None
        rest = text[close + 1 :]
        stripped = rest.lstrip()
        if not stripped:
            return None
        if stripped[0] != ">":
            raise NotACall("no '>' after the quoted name")
        return text[1:close], len(text) - len(stripped) + 1
    end = text.find(">")
    if end < 0:
        if len(text) > MAX_NAME or "<" in text:
            raise NotACall("unterminated name")
        return None
    name = text[:end].strip()
    if not name or "<" in name:
        raise NotACall("bad name")
    return name, end + 1


class MiniMaxXmlStream(FormatStream):
    """Incremental parser for one response in MiniMax-M2's XML tool-call format."""

    format_name = "minimax_xml"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [START], think_markers)
        self._value_scanner = MarkerScanner([PARAM_CLOSE])
        self._skip_scanner = MarkerScanner([INVOKE_CLOSE, END])
        self._state = _TEXT
        self._raw: list[str] = []  # markup of the current block or invoke, returned as text if it breaks
        self._block_calls = 0  # invokes finished in the current block
        self._index = -1
        self._param = ""
        self._value: ValueWriter | None = None
        self._arguments: dict[str, Any] = {}
        self._schema: dict[str, Any] = {}
        self._readers = {
            _TEXT: self._scan_text,
            _BLOCK: self._scan_block,
            _INVOKE_NAME: self._scan_invoke_name,
            _INVOKE: self._scan_invoke,
            _PARAM_NAME: self._scan_param_name,
            _VALUE: self._scan_value,
            _SKIP: self._scan_skip,
        }

    def _scan_text(self, text: str) -> str:
        m, rest = self._outside.scan(text)
        if m is not None:
            self._raw = [START]
            self._block_calls = 0
            self._state = _BLOCK
        return rest

    # -- markup ----------------------------------------------------------------------------------

    def _expect(self, text: str, options: tuple[str, ...]) -> tuple[str, str] | None:
        """Skip whitespace; return (tag, rest after it) for the option `text` starts with, None
        while `text` may still become one (held back). Raises NotACall otherwise."""
        body = text.lstrip()
        for tag in options:
            if body.startswith(tag):
                self._raw.append(text[: len(text) - len(body) + len(tag)])
                return tag, body[len(tag) :]
        if not body or any(tag.startswith(body) for tag in options):
            self._buf = text
            return None
        raise NotACall(f"unexpected {body[:20]!r}")

    def _scan_block(self, text: str) -> str:
        try:
            found = self._expect(text, (INVOKE_OPEN, END))
        except NotACall:
            if self._block_calls == 0:
                raise
            self._raw = []  # the block's END is missing; the finished invokes stand
            self._state = _TEXT
            return text
        if found is None:
            return ""
        tag, rest = found
        if tag == END:
            self._end_block()
        else:
            self._state = _INVOKE_NAME
        return rest

    def _end_block(self) -> None:
        """END: markup when the block held a call; otherwise the whole block is text."""
        if self._block_calls == 0:
            self._reject("a tool-call block without a valid invoke", "".join(self._raw))
        self._raw = []
        self._state = _TEXT

    def _tag_name(self, text: str) -> tuple[str, str] | None:
        """The NAME and `>` that close an invoke or parameter tag: (name, rest), None while held."""
        body = text.lstrip()
        read = _read_name(body)
        if read is None:
            self._buf = text
            return None
        name, end = read
        consumed = len(text) - len(body) + end
        self._raw.append(text[:consumed])
        return name, text[consumed:]

    def _scan_invoke_name(self, text: str) -> str:
        read = self._tag_name(text)
        if read is None:
            return ""
        name, rest = read
        self._index = self._start_call(name)
        self._arguments = {}
        properties = self.tools.schemas.get(name, {}).get("properties")
        self._schema = properties if isinstance(properties, dict) else {}
        self._state = _INVOKE
        return rest

    def _scan_invoke(self, text: str) -> str:
        found = self._expect(text, (PARAM_OPEN, INVOKE_CLOSE))
        if found is None:
            return ""
        tag, rest = found
        if tag == INVOKE_CLOSE:
            self._call_args(self._index, "}" if self._arguments else "{}")
            self._end_call(self._index, self._arguments)
            self._block_calls += 1
            self._raw = []
            self._state = _BLOCK
        else:
            self._state = _PARAM_NAME
        return rest

    def _scan_param_name(self, text: str) -> str:
        read = self._tag_name(text)
        if read is None:
            return ""
        name, rest = read
        if name in self._arguments:
            self._warn(f"parameter {name!r} given twice in one invoke; the last one wins")
        separator = ", " if self._arguments else "{"
        self._call_args(self._index, separator + json.dumps(name, ensure_ascii=False) + ": ")
        self._arguments[name] = None
        self._param = name
        self._value = ValueWriter(self._schema.get(name) if self.tools else None)
        self._state = _VALUE
        return rest

    # -- values ----------------------------------------------------------------------------------

    def _scan_value(self, text: str) -> str:
        assert self._value is not None
        start = 0
        while True:
            m = self._value_scanner.search(text, start)
            if m is None:
                cut = len(text) - self._value_scanner.partial_len(text)
                self._value_text(text[:cut])
                self._buf = text[cut:]
                return ""
            after = text[m.end() :].lstrip()
            if any(after.startswith(f) for f in VALUE_FOLLOWERS):
                self._value_text(text[: m.start()])
                self._finish_value()
                self._raw.append(PARAM_CLOSE)
                self._state = _INVOKE
                return text[m.end() :]
            if not after or any(f.startswith(after) for f in VALUE_FOLLOWERS):
                self._value_text(text[: m.start()])  # wait to see what follows </parameter>
                self._buf = text[m.start() :]
                return ""
            start = m.end()  # a </parameter> inside the value: data

    def _value_text(self, text: str) -> None:
        if text:
            assert self._value is not None
            self._raw.append(text)
            self._call_args(self._index, self._value.feed(text))

    def _finish_value(self) -> None:
        assert self._value is not None
        fragment, value = self._value.finish()
        self._call_args(self._index, fragment)
        self._arguments[self._param] = value
        self._value = None

    # -- recovery --------------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str) -> str:
        """The current invoke (or block) breaks the grammar: it becomes text, the rest goes on."""
        self._reject(f"not a valid tool call ({err})", "".join(self._raw))
        self._raw = []
        self._value = None
        self._state = _TEXT if self._state == _BLOCK else _SKIP
        return text

    def _scan_skip(self, text: str) -> str:
        """Text of a broken invoke, up to and including its `</invoke>`, then the block goes on; or
        up to END, which then ends the block."""
        before, m, self._buf = self._skip_scanner.split(text)
        self._text(before)
        if m is None:
            return ""
        if m.group() == END:
            self._raw = [END]
            self._end_block()
        else:
            self._text(m.group())
            self._state = _BLOCK
        return text[m.end() :]

    def _close(self) -> None:
        if self._state in (_INVOKE_NAME, _INVOKE, _PARAM_NAME, _VALUE) or (
            self._state == _BLOCK and self._block_calls == 0
        ):
            self._raw.append(self._buf)
            self._reject("the output ended inside a tool call", "".join(self._raw))
        else:
            self._text(self._outside.release() + self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        return self._outside.release() + "".join(self._raw) + self._buf
