"""`minimax_xml`: MiniMax-M2 XML tool calls, values typed by the tool schema.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (invoke ws)* [END]             # END may be missing after complete invokes
    invoke    := "<invoke name=" ws NAME ">" ws (parameter ws)* "</invoke>"
    parameter := "<parameter name=" ws NAME ">" VALUE "</parameter>"
    NAME      := '"' [^"]* '"' ws | "'" [^']* "'" ws | [^<>]*

with START = `<minimax:tool_call>` and END = `</minimax:tool_call>`; `ws` is any whitespace. A NAME
is not empty and at most `TOOLCALL_PARSERS_MAX_NAME` characters (a bare one with its trailing spaces).
VALUE is raw text: the format has no escaping. A `</parameter>` ends it only when what follows (after
whitespace) is `<parameter`, `</invoke>` or the end of the output; otherwise it is part of the value
(a file that holds XML).

Values are typed by the request's tool schema (`core.typed_values`). The call's name is known when its
invoke tag closes; a string value streams as it is written; other values are sent when their
`</parameter>` is known to end them (all as far as the core's streaming policy shows a call). An
invoke that breaks the grammar, is refused at its name (too many calls, an undeclared tool the
operator refuses, a lone surrogate) or passes the size bound of its arguments is text up to its
`</invoke>`, and the other invokes still count; a block that never holds an invoke, and an invoke cut
off by the end of the output, are text. A size bound crossed inside a value is acted on where that
value ends, so the outcome does not depend on how the text was chunked.

Reading is one pass over the text: whitespace between tags and after a `</parameter>` is consumed as
it arrives (kept as markup, or as value text once it is known to be data), so what waits for more
text is at most a partial tag or a name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import FormatStream, NotACall
from ..core.typed_values import decoded_string
from ..core.xml_parameters import ParameterValueReader, ValueEnd

START, END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE_OPEN, INVOKE_CLOSE = "<invoke name=", "</invoke>"
PARAM_OPEN, PARAM_CLOSE = "<parameter name=", "</parameter>"
VALUE_END = ValueEnd(PARAM_CLOSE, followers=("<parameter", INVOKE_CLOSE))
"""A `</parameter>` ends a value when the next parameter or the invoke's end follows (after whitespace)."""

_WS = re.compile(r"\s*")
_BARE_NAME_END = re.compile("[<>]")

# States: text outside blocks; in a block between invokes; in an invoke between parameters; in a
# tag's NAME; after a quoted NAME (before its `>`); in a VALUE (up to the `</parameter>` that ends
# it); in a broken invoke, skipping to its `</invoke>`.
_TEXT, _BLOCK, _INVOKE, _NAME, _NAME_END, _VALUE, _SKIP = range(7)


class MiniMaxXmlStream(FormatStream):
    """Incremental parser for one response in MiniMax-M2's XML tool-call format."""

    format_name = "minimax_xml"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [START], think_markers)
        self._skip_scanner = MarkerScanner([INVOKE_CLOSE, END])
        self._state = _TEXT
        self._raw: list[str] = []  # markup and values of the current block or invoke: text if it breaks
        self._block_calls = 0  # invokes finished in the current block
        self._key = -1  # the core's number for the call being read
        self._on_name: Callable[[str], None] = self._open_invoke  # what the NAME being read opens
        self._name = ""  # a quoted NAME read, waiting for its `>`
        self._schema: dict[str, Any] = {}  # the invoked tool's parameter schemas
        self._arguments: dict[str, Any] = {}
        self._param = ""
        self._value = ParameterValueReader([VALUE_END], self._send_args, self._raw_append, self.limits)
        self._readers = {
            _TEXT: self._scan_text,
            _BLOCK: self._scan_block,
            _INVOKE: self._scan_invoke,
            _NAME: self._scan_name,
            _NAME_END: self._scan_name_end,
            _VALUE: self._scan_value,
            _SKIP: self._scan_skip,
        }

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._raw = [START]
            self._block_calls = 0
            self._state = _BLOCK
        return at

    # -- markup ----------------------------------------------------------------------------------

    def _markup_ws(self, text: str, pos: int) -> int:
        """Consume the whitespace at `pos` as markup; the position after it."""
        end = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if end > pos:
            self._raw.append(text[pos:end])
        return end

    @staticmethod
    def _tag_at(text: str, pos: int, tags: tuple[str, ...]) -> str | None:
        """The tag of `tags` that starts at `pos`; None while the rest of `text` may still become
        one (held back: at most a tag long). Raises NotACall otherwise."""
        partial = False
        for tag in tags:
            if text.startswith(tag, pos):
                return tag
            partial = partial or (len(text) - pos < len(tag) and tag.startswith(text[pos:]))
        if partial:
            return None
        raise NotACall(f"unexpected {text[pos : pos + 20]!r}")

    def _scan_block(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos)
        if at > pos:
            return at
        try:
            tag = self._tag_at(text, pos, (INVOKE_OPEN, END))
        except NotACall:
            if self._block_calls == 0:
                raise
            self._text("".join(self._raw))  # the block's END is missing; the finished invokes stand
            self._raw = []
            self._state = _TEXT
            return pos
        if tag is None:
            return None
        self._raw.append(tag)
        if tag == END:
            self._end_block()
        else:
            self._on_name = self._open_invoke
            self._state = _NAME
        return pos + len(tag)

    def _end_block(self) -> None:
        """END: markup when the block held a call; otherwise the whole block is text."""
        if self._block_calls == 0:
            self._reject("a tool-call block without a valid invoke", "".join(self._raw))
        self._raw = []
        self._state = _TEXT

    def _scan_name(self, text: str, pos: int) -> int | None:
        """A tag's NAME: quoted (then `_scan_name_end` reads up to `>`), or bare up to `>`. What is
        held back is at most a name long; past that the tag is not a call."""
        at = self._markup_ws(text, pos)
        if at > pos:
            return at
        longest = self.limits.max_name
        quote = text[pos]
        if quote in "\"'":
            close = text.find(quote, pos + 1, pos + 2 + longest)
            if close < 0:
                if len(text) >= pos + 2 + longest:
                    raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
                return None
            self._name = text[pos + 1 : close]
            self._raw.append(text[pos : close + 1])
            self._state = _NAME_END
            return close + 1
        m = _BARE_NAME_END.search(text, pos, pos + 1 + longest)
        if m is None:
            if len(text) >= pos + 1 + longest:
                raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
            return None
        if m.group() == "<":
            raise NotACall("a '<' in a tag's name")
        self._named(text[pos : m.start()].rstrip())
        self._raw.append(text[pos : m.end()])
        return m.end()

    def _scan_name_end(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos)
        if at > pos:
            return at
        if text[pos] != ">":
            raise NotACall("no '>' after the quoted name")
        self._named(self._name)
        self._raw.append(">")
        return pos + 1

    def _named(self, name: str) -> None:
        """A tag's NAME is complete: open what the tag opens (may raise NotACall)."""
        if not name:
            raise NotACall("a tag with an empty name")
        self._on_name(name)

    def _open_invoke(self, name: str) -> None:
        self._key = self._start_call(name)
        self._arguments = {}
        properties = self.tools.schemas.get(name, {}).get("properties")
        self._schema = properties if isinstance(properties, dict) else {}
        self._state = _INVOKE

    def _scan_invoke(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos)
        if at > pos:
            return at
        tag = self._tag_at(text, pos, (PARAM_OPEN, INVOKE_CLOSE))
        if tag is None:
            return None
        if tag == INVOKE_CLOSE:
            self._call_args(self._key, "}" if self._arguments else "{}")
            self._end_call(self._key, self._arguments)
            self._block_calls += 1
            self._raw = []
            self._state = _BLOCK
        else:
            self._raw.append(tag)
            self._on_name = self._open_param
            self._state = _NAME
        return pos + len(tag)

    def _open_param(self, name: str) -> None:
        name = decoded_string(name)  # the key a client reads from the JSON sent
        if name in self._arguments:
            self._warn(f"parameter {name!r} given twice in one invoke; the last one wins")
        separator = ", " if self._arguments else "{"
        self._call_args(self._key, separator + '"' + json_string_body(name) + '": ')
        self._arguments[name] = None
        self._param = name
        self._value.begin(self._schema.get(name) if self.tools else None)
        self._state = _VALUE

    # -- values ----------------------------------------------------------------------------------

    def _scan_value(self, text: str, pos: int) -> int | None:
        """Value text up to the `</parameter>` that ends it (`core.xml_parameters`)."""
        at, end, value = self._value.read(text, pos)
        if end is not None:
            self._arguments[self._param] = value
            self._state = _INVOKE
        return at

    def _send_args(self, fragment: str) -> None:
        self._call_args(self._key, fragment)

    def _raw_append(self, text: str) -> None:
        self._raw.append(text)

    # -- recovery --------------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The current invoke (or block) breaks the grammar: it becomes text, the rest goes on."""
        self._reject(f"not a valid tool call ({err})", self._pending_text())
        self._raw = []
        self._state = _TEXT if self._state == _BLOCK else _SKIP
        return pos if err.pos is None else err.pos

    def _scan_skip(self, text: str, pos: int) -> int | None:
        """Text of a broken invoke, up to and including its `</invoke>`, then the block goes on; or
        up to END, which then ends the block."""
        m = self._skip_scanner.search(text, pos)
        if m is None:
            cut = self._skip_scanner.releasable(text, pos)
            self._text(text[pos:cut])
            return cut if cut > pos else None
        self._text(text[pos : m.start()])
        if m.group() == END:
            self._raw = [END]
            self._end_block()
        else:
            self._text(m.group())
            self._state = _BLOCK
        return m.end()

    def _close(self) -> None:
        if self._state in (_INVOKE, _NAME, _NAME_END, _VALUE) or (self._state == _BLOCK and self._block_calls == 0):
            self._reject("the output ended inside a tool call", self._pending_text() + self._buf)
        else:
            self._text(self._pending_text() + self._buf)
        self._raw = []
        self._buf = ""

    def _pending_text(self) -> str:
        return "".join(self._raw) + (self._value.pending() if self._state == _VALUE else "")
