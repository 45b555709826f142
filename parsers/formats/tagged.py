"""`tagged`: our own compact format, one call per line after `<TOOL_CALLS>`.

Grammar, as this machine reads it::

    output := (text | think | block)*
    think  := "<think>" text "</think>"             # everything inside is text, never a call
    block  := START ws (line ws)* [END]              # END is optional: the end of the output ends it
    line   := NAME gap args                          # the line ends where its JSON value ends
    gap    := [ \\t]+
    args   := a JSON object | a JSON string holding one | null
    NAME   := [A-Za-z0-9_.-]{1,max_name}            # TOOLCALL_PARSERS_MAX_NAME, 1024 by default
    ws     := [ \\t\\r\\n]*

START and END are `<TOOL_CALLS>` and `</TOOL_CALLS>` unless given (the stream's `start_marker` and
`end_marker` options). END is read when a model writes it, and then text may follow; JSON is read in
any spacing. A `</TOOL_CALLS>` or a newline inside a JSON string changes nothing. A malformed line
is text up to its end, and the other lines still count; a line cut off by the end of the output is
text. After a call, a line that does not start with a name character ends the block (END is missing)
and is content.

Streaming: a call starts only once its arguments are sure to be a JSON object: at an object's first
key or its closing brace (`{"` or `{}`, whitespace between), and when a JSON string holding an
object, or `null`, is complete. So a line of prose after a block (`I now know.`, `Use {braces}`,
`He said "hi"`) never announces a call, however it is split into deltas. Only a line whose second
word opens an object with a key (`Use {"a" ..`) starts a call that then breaks: the streaming policy
holds it (the default never shows it; `eager` shows its start). A line after a block whose second
word is `null` or a complete `"{..}"` is a call.

Nothing unbounded is held back between deltas: whitespace runs and names are consumed as they come
(a name longer than TOOLCALL_PARSERS_MAX_NAME breaks its line where the limit is passed); only a
partial END, or an unfinished escape or number of the arguments, waits for more text.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls
from ..core.stream import FormatStream, NotACall
from .constraints import Element, const, json_value, regex, repeated, sequence, structural, tag, triggered
from .spec import Call, CallTag, ConstraintRequest, Format

START, END = "<TOOL_CALLS>", "</TOOL_CALLS>"
_NAME_CHARS = frozenset(string.ascii_letters + string.digits + "_.-")
_NAME_RUN = re.compile(r"[A-Za-z0-9_.\-]*")
_GAP_RUN = re.compile(r"[ \t]*")
_ARGS_FIRST = '{"n'  # an object, a JSON string holding one, or null

_TEXT, _LINE, _NAME, _GAP, _ARGS, _SKIP = "text", "line", "name", "gap", "args", "skip"


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
        self._block_calls = 0  # calls finished in the current block
        self._rejections_at_block = 0  # spans given back before the current block (`tally`)
        self._reset_line()
        self._readers = {
            _TEXT: self._scan_text,
            _LINE: self._scan_line,
            _NAME: self._scan_name,
            _GAP: self._scan_gap,
            _ARGS: self._scan_args,
            _SKIP: self._scan_skip,
        }

    def _reset_line(self) -> None:
        self._raw: list[str] = []  # the block's markup before its first line, or the current line
        self._name: list[str] = []
        self._name_len = 0
        self._index = -1  # the line's call, once it started
        self._args: ArgumentsReader | None = None
        self._early_args: list[str] = []  # arguments read before the call is sure: "{" and whitespace

    # -- states ---------------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._raw = [m.group()]
            self._block_calls = 0
            self._rejections_at_block = self.tally.rejections  # spans given back before this block
            self._state = _LINE
        return at

    def _scan_line(self, text: str, pos: int) -> int | None:
        """Between lines: whitespace (consumed, never held), then a name, END, or, after a call,
        text (END is missing; the finished lines stand)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        end = self._literal_at(text, pos, (self._end_marker,))
        if end is None:
            return None  # a partial END
        if end:
            self._end_block()
            return pos + len(end)
        if text[pos] in _NAME_CHARS:
            self._state = _NAME
            return pos
        if self._block_calls == 0:
            raise NotACall("no call line after the start marker")
        self._raw = []  # whitespace next to the finished calls
        self._state = _TEXT
        return pos

    def _scan_name(self, text: str, pos: int) -> int | None:
        """The name, consumed as it comes; past `max_name` characters the line is broken right
        there, at a position the text fixes, so no chunking changes what follows."""
        room = self.limits.max_name - self._name_len
        end = _NAME_RUN.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        self._raw.append(text[pos:end])
        self._name.append(text[pos:end])
        self._name_len += end - pos
        if self._name_len > self.limits.max_name:
            raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        if end == len(text):
            return end
        if text[end] not in " \t":
            raise NotACall("the tool name is not followed by a space", end)
        self._state = _GAP
        return end

    def _scan_gap(self, text: str, pos: int) -> int | None:
        """Spaces and tabs between the name and its arguments (consumed), then where they start."""
        if (at := self._markup_ws(text, pos, self._raw, _GAP_RUN)) > pos:
            return at
        if text[pos] not in _ARGS_FIRST:
            raise NotACall("no JSON arguments after the name", pos)
        self._args = ArgumentsReader(self._send_args, self.limits)
        self._state = _ARGS
        return pos

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        stop, done = self._args.read(text, pos, self._raw)
        if not done:
            return stop if stop > pos else None
        self._end_line()
        return stop

    def _scan_skip(self, text: str, pos: int) -> int | None:
        """The rest of a broken line is text; the next line (or END) goes on with the block."""
        m = self._line_end.search(text, pos)
        if m is None:
            cut = self._line_end.releasable(text, pos)
            self._text(text[pos:cut])
            return cut if cut > pos else None
        self._state = _LINE
        if m.group() == "\n":
            self._text(text[pos : m.end()])
            return m.end()
        self._text(text[pos : m.start()])
        return m.start()

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """A broken line is text up to where it broke, and `_scan_skip` takes the rest of it; a block
        that broke before its first line is text, and the text reader goes on where it broke."""
        self._reject(f"not a valid call line ({err})", "".join(self._raw))
        self._state = _TEXT if self._state == _LINE else _SKIP  # a block without lines is text
        self._reset_line()
        return pos if err.pos is None else err.pos

    def _close(self) -> None:
        if self._state == _ARGS and self._args is not None and self._args.finish(self._buf):
            self._buf = ""  # `null` at the very end
            self._end_line()
        if self._state in (_NAME, _GAP, _ARGS) or (self._state == _LINE and self._block_calls == 0):
            self._reject("the output ended inside a tool call", "".join(self._raw) + self._buf)
        else:
            self._text(self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        return "".join(self._raw)

    # -- helpers --------------------------------------------------------------------------------

    def _send_args(self, fragment: str) -> None:
        """Arguments as they become stable. Until they are sure to be an object (more than `{` and
        whitespace came), they wait here and the call is not announced: see the module docstring."""
        if self._index >= 0:
            self._call_args(self._index, fragment)
            return
        self._early_args.append(fragment)
        if fragment == "{" or fragment.isspace():
            return
        self._index = self._start_call("".join(self._name))
        early, self._early_args = "".join(self._early_args), []
        self._call_args(self._index, early)

    def _end_line(self) -> None:
        assert self._args is not None
        self._end_call(self._index, self._args.arguments)
        self._block_calls += 1
        self._reset_line()
        self._state = _LINE

    def _end_block(self) -> None:
        if self._block_calls == 0:
            refused = self.tally.rejections > self._rejections_at_block  # a call line of the block was
            span = "".join(self._raw) + self._end_marker
            self._reject("a tool-call block without a call line", span, rest_of_last=refused)
        self._raw = []
        self._state = _TEXT


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """One block, a `name {json}` line per call."""
    lines = "".join(f"{name} {json.dumps(arguments, ensure_ascii=False)}\n" for name, arguments in calls)
    return f"{START}\n{lines}{END}"


def _lines(request: ConstraintRequest, names: list[str]) -> Element:
    """One or more `name {json}` lines (at most one if `single`), each after a line break."""
    return repeated(request, [tag(f"\n{name} ", json_value(request.parameters(name)), "") for name in names])


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where each `<TOOL_CALLS>` opens a block of call lines that ends
    with `</TOOL_CALLS>` on its own line."""
    return triggered(request, [START], [tag(START, _lines(request, list(request.schemas)), "\n" + END)])


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """A block of one or more `name {json}` lines (at most one if `single`), then `</TOOL_CALLS>` on
    its own line or the end of the output (the parser reads both)."""
    closing = regex("(\n" + re.escape(END) + ")?")
    return structural(sequence(const(START), _lines(request, request.names), closing))


def _writes_name(name: str) -> bool:
    return _NAME_RUN.fullmatch(name) is not None


FORMAT = Format(
    "tagged",
    "<TOOL_CALLS> then one `name {json}` per line",
    TaggedStream,
    write,
    markers=(START, END),
    required_constraint=required_constraint,
    call_tag=CallTag(START + "\n{name} ", "\n" + END, START),
    writes_name=_writes_name,
    auto_constraint=auto_constraint,
    models="any model prompted with our template (ChatML: Qwen, SmolLM2, ...)",
)
