"""`hermes_json`: `<tool_call>{"name": .., "arguments": {..}}</tool_call>` (Hermes 2 Pro / 3, Qwen2.5 / 3,
SmolLM2 and most ChatML models).

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"            # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := call-object | "[" call-object ([","] call-object)* "]"   # an empty list [] is not a call
    call-object := {"name", "arguments"} | {"name", "parameters"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}               # a JSON object, keys in any order

with START = `<tool_call>` and END = `</tool_call>`. Several values in one block are parallel calls,
with or without a comma between them (`{..}, {..}`), and so are the objects of a list.

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

This module is its family's configuration point: the formats that write these call objects between
other tags (`longcat_json`, `jamba_json`, `internlm_json`, `granite_fc_json`; `marked_json`'s family
builds on it too) are `HermesJsonStream` with other `start_markers` / `end_marker`, and
`JsonBlockTags` gives each its writer, constraints and SGLang call tag, as this format's own are
built.

Other engines' names for this wire format: vLLM's `granite4` (IBM Granite 4: the same blocks, a
newline inside each tag), `ernie45` (ERNIE 4.5: the same blocks; its `<response>..</response>` around
an answer is the `ernie45` reasoning parser's to remove, as vLLM's tool parser removes it only while
streaming) and `qwen3_json`; SGLang's `trinity` (Arcee Trinity: Qwen's blocks, written inside its
reasoning as well). SGLang's `trinity` detector reads a block inside `<think>` and deletes the think
tags from the content; here reasoning stays text, and a block in it is text as for every model: a
reasoning parser that ends the reasoning at `<tool_call>` (vLLM's `qwen3`) hands such a
call to this parser as content, where it counts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.outside import OutsideCalls
from ..core.stream import FormatStream
from .grammar import Element, json_value, repeated, structural, tag, triggered
from .spec import Call, CallTag, Constraint, ConstraintRequest, Format, Writer

START, END = "<tool_call>", "</tool_call>"
_TEXT, _OPEN, _JSON, _AFTER = range(4)


class HermesJsonStream(FormatStream):
    """Incremental parser for one response in the `<tool_call>` JSON format. A format of the family
    sets `start_markers` (every spelling of its opener, the writer's first) and `end_marker` (None:
    its blocks have no closing tag, a call ends where its JSON value does)."""

    format_name = "hermes_json"
    start_markers: tuple[str, ...] = (START,)
    end_marker: str | None = END

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        start_marker: str | None = None,
        end_marker: str | None = None,
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        starts = (start_marker,) if start_marker is not None else self.start_markers
        end = end_marker if end_marker is not None else self.end_marker
        self._ends = (end,) if end else ()
        self._outside = OutsideCalls(self._text, starts, think_markers)
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
        or text (END is missing, or the format has none; the finished calls stand and what followed
        them is content)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        end = self._literal_at(text, pos, self._ends)
        if end is None:
            return None  # a partial END
        if end:
            self._raw = []
            self._state = _TEXT
            return pos + len(end)
        c = text[pos]
        if c in "{[":
            self._start_value()  # the whitespace before it is text again if this value breaks
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


@dataclass(frozen=True)
class JsonBlockTags:
    """How a format of the family writes a call, as its template does: `start`, then `after_start`,
    the call object `{"name": .., ARGUMENTS_KEY: ..}` (JSON as `json.dumps` writes it), then
    `before_end` and `end` (None: the format has no closing tag); blocks joined by `separator`."""

    start: str
    end: str | None
    after_start: str = "\n"
    before_end: str = "\n"
    separator: str = "\n"
    arguments_key: str = "arguments"

    def call_object(self, name: str, arguments: dict[str, Any]) -> str:
        return json.dumps({"name": name, self.arguments_key: arguments}, ensure_ascii=False)

    @property
    def closing(self) -> str:
        """What follows a call object's last brace up to the end of its block."""
        return self.before_end + self.end if self.end is not None else ""

    def writer(self) -> Writer:
        """One block per call, `separator` between, as the template writes them."""

        def write(calls: Sequence[Call]) -> str:
            return self.separator.join(
                f"{self.start}{self.after_start}{self.call_object(name, arguments)}{self.closing}"
                for name, arguments in calls
            )

        return write

    def call_begin(self, name: str) -> str:
        """The block up to the arguments value, as the writer writes it."""
        name_json = json.dumps(name, ensure_ascii=False)
        return f'{self.start}{self.after_start}{{"name": {name_json}, "{self.arguments_key}": '

    def _tags(self, request: ConstraintRequest, names: list[str]) -> list[Element]:
        end = "}" + self.closing
        return [tag(self.call_begin(name), json_value(request.parameters(name)), end) for name in names]

    def constraints(self) -> tuple[Constraint, Constraint]:
        """`required` (at least one block, at most one if `single`, as the writer writes them) and
        strict `auto` (free text, where each `start` opens a block of one call to a declared tool)."""

        def required(request: ConstraintRequest) -> dict[str, Any]:
            return structural(repeated(request, self._tags(request, request.names), self.separator))

        def auto(request: ConstraintRequest) -> dict[str, Any]:
            return triggered(request, [self.start], self._tags(request, list(request.schemas)))

        return required, auto

    def call_tag(self) -> CallTag:
        """SGLang's per-call tag for strict `auto`: one call per block."""
        begin = self.start.replace("{", "{{").replace("}", "}}") + self.after_start
        return CallTag(f'{begin}{{{{"name": "{{name}}", "{self.arguments_key}": ', "}" + self.closing, self.start)


TAGS = JsonBlockTags(START, END)
"""Qwen's spelling: a newline inside each tag, a newline between blocks."""

write = TAGS.writer()
required_constraint, auto_constraint = TAGS.constraints()

FORMAT = Format(
    "hermes_json",
    '<tool_call>{"name": .., "arguments": {..}}</tool_call>',
    HermesJsonStream,
    write,
    markers=(START, END),
    required=required_constraint,
    call_tag=TAGS.call_tag(),
    vllm_tag_model="hermes",
    auto=auto_constraint,
    vllm_names=("hermes", "qwen3_json", "granite4", "ernie45", "ripple"),
    sglang_names=("hermes", "qwen", "qwen25", "trinity"),
    models=(
        "Hermes 2 Pro / 3, Qwen2.5 / Qwen3, SmolLM2, IBM Granite 4, ERNIE 4.5, Arcee Trinity, Ricursive Ripple, "
        "most ChatML models"
    ),
)
