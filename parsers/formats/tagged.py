"""`tagged`: our own compact format, one call per line inside `<TOOL_CALLS>` .. `</TOOL_CALLS>`.

Grammar, as this machine reads it::

    output := (text | think | block)*
    think  := "<think>" text "</think>"             # everything inside is text, never a call
    block  := START ws (line ws)* [END]              # END is optional: the end of the output ends it
    line   := NAME " " args                          # the call ends where its JSON value ends
    args   := a JSON object (a JSON string holding one, or null, are read too)
    NAME   := [A-Za-z0-9_.-]{1,256}

START and END are `<TOOL_CALLS>` and `</TOOL_CALLS>` unless given. A `</TOOL_CALLS>` or a newline
inside a JSON string changes nothing. A malformed line is text up to its end, and the other lines
still count; a line cut off by the end of the output is text.

Streaming: the name is sent as soon as the space after it arrives, then the arguments as written.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls
from ..core.stream import FormatStream, NotACall

MAX_NAME = 256
_NAME_END = re.compile(r"[^A-Za-z0-9_.\-]")

_TEXT, _LINE, _NAME, _ARGS_OPEN, _ARGS, _SKIP = range(6)


class TaggedStream(FormatStream):
    """Incremental parser for one response in the `tagged` format."""

    format_name = "tagged"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        start_marker: str = "<TOOL_CALLS>",
        end_marker: str = "</TOOL_CALLS>",
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._end_marker = end_marker
        self._outside = OutsideCalls(self._text, [start_marker], think_markers)
        self._line_end = MarkerScanner(["\n", end_marker])
        self._state = _TEXT
        self._raw: list[str] = []  # the block's markup before its first line, or the current line
        self._block_calls = 0
        self._name = ""
        self._index = -1
        self._args: ArgumentsReader | None = None
        self._readers = {
            _TEXT: self._scan_text,
            _LINE: self._scan_line,
            _NAME: self._scan_name,
            _ARGS_OPEN: self._scan_args_open,
            _ARGS: self._scan_args,
            _SKIP: self._scan_skip,
        }

    def _scan_text(self, text: str) -> str:
        m, rest = self._outside.scan(text)
        if m is not None:
            self._raw = [m.group()]
            self._block_calls = 0
            self._state = _LINE
        return rest

    def _scan_line(self, text: str) -> str:
        """Between lines: whitespace, then a name, END, or (after complete lines) text."""
        body = text.lstrip()
        self._raw.append(text[: len(text) - len(body)])
        if not body:
            return ""
        if body.startswith(self._end_marker):
            self._end_block()
            return body[len(self._end_marker) :]
        if self._end_marker.startswith(body):
            self._buf = body
            return ""
        if _NAME_END.match(body):
            if self._block_calls == 0:
                raise NotACall("no call line after the start marker", body)
            self._raw = []  # END is missing; the finished lines stand
            self._state = _TEXT
            return body
        self._name = ""
        self._state = _NAME
        return body

    def _scan_name(self, text: str) -> str:
        m = _NAME_END.search(text)
        part = text if m is None else text[: m.start()]
        self._raw.append(part)
        self._name += part
        if len(self._name) > MAX_NAME:
            raise NotACall("the tool name is too long", "")
        if m is None:
            return ""
        rest = text[m.start() :]
        if rest[0] != " ":
            raise NotACall("the tool name is not followed by a space", rest)
        self._raw.append(" ")
        self._state = _ARGS_OPEN
        return rest[1:]

    def _scan_args_open(self, text: str) -> str:
        """The call starts only when its arguments do, so prose after a block is not taken for one."""
        if text[0] not in '{"n':
            raise NotACall("no JSON arguments after the name", text)
        self._index = self._start_call(self._name)
        self._args = ArgumentsReader(self._send)
        self._state = _ARGS
        return text

    def _send(self, fragment: str) -> None:
        self._call_args(self._index, fragment)

    def _scan_args(self, text: str) -> str:
        assert self._args is not None
        end = self._args.read(text, self._raw)
        if end < 0:
            return ""
        self._end_call(self._index, self._args.arguments)
        self._block_calls += 1
        self._raw = []
        self._state = _LINE
        return text[end:]

    def _recover(self, err: NotACall, text: str) -> str:
        self._reject(f"not a valid call line ({err})", "".join(self._raw))
        self._raw = []
        self._args = None
        if self._state == _LINE:  # the block never held a line: it is text
            self._state = _TEXT
        else:
            self._state = _SKIP
        return err.rest if err.rest is not None else text

    def _scan_skip(self, text: str) -> str:
        """The rest of a broken line is text; the next line (or END) goes on with the block."""
        before, m, self._buf = self._line_end.split(text)
        self._text(before)
        if m is None:
            return ""
        if m.group() == "\n":
            self._text("\n")
            self._state = _LINE
            return text[m.end() :]
        self._state = _LINE
        return text[m.start() :]

    def _end_block(self) -> None:
        if self._block_calls == 0:
            self._reject("a tool-call block without a call line", "".join(self._raw) + self._end_marker)
        self._raw = []
        self._state = _TEXT

    def _close(self) -> None:
        if self._state == _ARGS and not self._buf and self._args is not None and self._args.finish():
            self._end_call(self._index, self._args.arguments)  # `null` at the very end
            self._block_calls += 1
            self._raw = []
            self._state = _LINE
        if self._state in (_NAME, _ARGS_OPEN, _ARGS) or (self._state == _LINE and self._block_calls == 0):
            self._reject("the output ended inside a tool call", "".join(self._raw) + self._buf)
        else:
            self._text(self._outside.release() + self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        return self._outside.release() + "".join(self._raw) + self._buf


def required_constraint(
    schemas: dict[str, dict[str, Any]], only: str | None, single: bool, start: str = "<TOOL_CALLS>"
) -> dict[str, Any]:
    """The decoding constraint for `tool_choice="required"` (or one named tool, `only`): a structural
    tag in xgrammar's JSON form for a block of one or more `name {json}` lines ending the output."""
    names = [only] if only is not None else list(schemas)
    tags = [
        {
            "type": "tag",
            "begin": f"\n{name} ",
            "content": {"type": "json_schema", "json_schema": schemas.get(name) or {"type": "object"}},
            "end": "",
        }
        for name in names
    ]
    lines = {
        "type": "tags_with_separator",
        "tags": tags,
        "separator": "",
        "at_least_one": True,
        "stop_after_first": single,
    }
    elements = [{"type": "const_string", "value": start}, lines]
    return {"type": "structural_tag", "format": {"type": "sequence", "elements": elements}}
