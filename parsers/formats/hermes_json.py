"""`hermes_json`: `<tool_call>{"name": .., "arguments": {..}}</tool_call>` (Hermes 2 Pro / 3, Qwen2.5 / 3,
SmolLM2 and most ChatML models).

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"            # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := call-object | "[" call-object ("," call-object)* "]"   # an empty list [] is not a call
    call-object := {"name", "arguments"} | {"name", "parameters"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}               # a JSON object, keys in any order

with START = `<tool_call>` and END = `</tool_call>`. Several values in one block are parallel calls,
with or without a comma between them (`{..}, {..}`).

The block ends where its JSON value ends, not at the first END: `</tool_call>` inside a string is
data. END may be missing when the value is complete: the call counts and what follows is content. A
block whose JSON breaks is text from its START up to the break; scanning for calls goes on right
there, so the next block still counts. Where a string makes the block invalid (a string where a call
object belongs, a name longer than TOOLCALL_PARSERS_MAX_NAME), the block is text up to the end of
that string, in every chunking: a `<tool_call>` written inside the string never starts a call. A
block cut off by the end of the output (inside its JSON) is text.

`arguments` is an object; a JSON string holding an object is decoded (also when encoded twice, and
leniently: raw control characters inside it are accepted) and sent as the object; `null`, `""` or
none is `{}`; any other type makes the block text. Raw control characters inside strings (a literal
newline in code) are accepted and sent escaped, so `arguments` is always strict JSON. A
model-supplied `id` is ignored: ids are the engine's.

The markers are options: `get_format("hermes_json").stream(tools, start_marker="<function_call>",
end_marker="</function_call>")`; `think_markers=None` disables the `<think>` rule.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.outside import OutsideCalls
from ..core.stream import FormatStream
from .grammar import Element, json_value, repeated, structural, tag, triggered
from .spec import Call, CallTag, ConstraintRequest, Format

START, END = "<tool_call>", "</tool_call>"
_TEXT, _OPEN, _JSON, _AFTER = range(4)


class HermesJsonStream(FormatStream):
    """Incremental parser for one response in the `<tool_call>` JSON format."""

    format_name = "hermes_json"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        start_marker: str = "<tool_call>",
        end_marker: str = "</tool_call>",
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._start_marker = start_marker
        self._end_marker = end_marker
        self._outside = OutsideCalls(self._text, [start_marker], think_markers)
        self._state = _TEXT
        self._raw: list[str] = []  # the block's markup before its JSON, or what follows a value
        self._reader: JsonCallReader | None = None
        self._comma = False  # a comma between two call values of one block
        self._readers = {
            _TEXT: self._scan_text,
            _OPEN: self._scan_open,
            _JSON: self._scan_json,
            _AFTER: self._scan_after,
        }

    # -- states ---------------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._raw = [m.group()]
            self._state = _OPEN
        return at

    def _scan_open(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] in "{[":
            self._start_value()
            return pos
        self._reject_block("no JSON after the start marker")
        return pos

    def _scan_json(self, text: str, pos: int) -> int | None:
        assert self._reader is not None
        try:
            stop, done = self._reader.feed(text, pos)
        except JsonSyntaxError as err:
            self._raw = self._reader.unfinished
            self._reject_block(f"not a valid call ({err})")
            return err.pos
        if not done:
            return stop if stop > pos else None
        self._raw = []
        self._reader = None
        self._comma = False
        self._state = _AFTER
        return stop

    def _scan_after(self, text: str, pos: int) -> int | None:
        """After a complete value: whitespace, then END, another value (after an optional comma),
        or text (END is missing; the finished calls stand and what followed them is content)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        end = self._literal_at(text, pos, (self._end_marker,))
        if end is None:
            return None  # a partial END
        if end:
            self._raw = []
            self._state = _TEXT
            return pos + len(end)
        c = text[pos]
        if c in "{[":
            self._raw = []
            self._start_value()
            return pos
        if c == "," and not self._comma:
            self._comma = True
            self._raw.append(c)
            return pos + 1
        self._text("".join(self._raw))
        self._raw = []
        self._state = _TEXT
        return pos

    def _close(self) -> None:
        if self._state in (_OPEN, _JSON):
            if self._reader is not None:
                self._raw = self._reader.unfinished
            self._raw.append(self._buf)
            self._reject_block("the output ended inside a tool call")
        elif self._state == _AFTER and self._buf:
            self._text("".join(self._raw) + self._buf)
        else:
            self._text(self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        return "".join(self._reader.unfinished if self._reader is not None else self._raw)

    # -- helpers --------------------------------------------------------------------------------

    def _start_value(self) -> None:
        self._reader = JsonCallReader(
            self._start_call, self._call_args, self._end_call, self.limits, "".join(self._raw)
        )
        self._raw = []
        self._state = _JSON

    def _reject_block(self, reason: str) -> None:
        self._reject(reason, "".join(self._raw))
        self._raw = []
        self._reader = None
        self._state = _TEXT


# -- the spec --------------------------------------------------------------------------------------

_BEGIN = '<tool_call>\n{{"name": {name}, "arguments": '
_END = "}\n</tool_call>"


def write(calls: Sequence[Call]) -> str:
    """One block per call, a newline between, as the template writes them."""
    return "\n".join(
        f"{START}\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n{END}"
        for name, arguments in calls
    )


def _tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    begin = _BEGIN.format
    return [
        tag(begin(name=json.dumps(name, ensure_ascii=False)), json_value(request.parameters(name)), _END)
        for name in names
    ]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """At least one `<tool_call>\\n{"name": .., "arguments": ..}\\n</tool_call>` block (one per
    call, a newline between), at most one if `single`."""
    return structural(repeated(request, _tags(request, request.names), "\n"))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where each `<tool_call>` opens a block of one call to a declared
    tool (the template's spelling: a newline after the tag and before its end)."""
    return triggered(request, [START], _tags(request, list(request.schemas)))


FORMAT = Format(
    "hermes_json",
    '<tool_call>{"name": .., "arguments": {..}}</tool_call>',
    HermesJsonStream,
    write,
    markers=(START, END),
    required=required_constraint,
    call_tag=CallTag('<tool_call>\n{{"name": "{name}", "arguments": ', _END, START),
    vllm_tag_model="hermes",
    auto=auto_constraint,
    vllm_names=("hermes",),
    sglang_names=("hermes", "qwen", "qwen25"),
    models="Hermes 2 Pro / 3, Qwen2.5 / Qwen3, SmolLM2, most ChatML models",
)
