"""The JSON-in-markers family: one JSON call object (or a list of them) per block, between a
format's start marker and its end marker (or none), string-aware, arguments streamed as written.
`hermes_json`'s docstring states the grammar and every decided case. A format of the family is one
`JsonBlockFormat`: its `JsonBlockTags` (how its template writes a block), the other spellings the
parser reads as its opener, its end marker, its names; its stream class (`JsonBlockStream` with
those markers), writer, `required` and strict `auto` constraints, SGLang call tag and `Format` come
from that value. Formats whose call objects or markers need more (`marked_json`'s family,
`jamba_json`) subclass `JsonBlockStream`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.ids import IdFactory
from ...core.json_calls import JsonCallReader
from ...core.json_lexer import JsonSyntaxError
from ...core.outside import OutsideCalls
from ...core.stream import FormatStream
from ..constraints import Element, json_value, repeated, structural, tag, triggered
from ..spec import Call, CallTag, Constraint, ConstraintRequest, Format, Writer
from . import format_stream

START, END = "<tool_call>", "</tool_call>"
_TEXT, _OPEN, _JSON, _AFTER = "text", "open", "json", "after"


class JsonBlockStream(FormatStream):
    """Incremental parser for one response of a format of the family (Hermes's `<tool_call>` JSON by
    default). A format sets `start_markers` (every spelling of its opener, the writer's first) and
    `end_marker` (None: its blocks have no closing tag, a call ends where its JSON value does);
    `JsonBlockFormat.stream_class` makes that subclass."""

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


@dataclass(frozen=True)
class JsonBlockFormat:
    """One format of the family, as data: `tags` (as its template writes a block); `spellings`,
    the other openers the parser reads as a block's start (GigaChat 3's role header, InternLM's
    spaced header); `end_marker` where the parser's end differs from the writer's `tags.end`
    (`None` in `tags` and here: no closing tag); `think` the think pair read as text; `keep_whitespace`
    sends the content as written (`FormatStream.keeps_whitespace`); the rest is the `Format`'s own."""

    name: str
    summary: str
    tags: JsonBlockTags
    spellings: tuple[str, ...] = ()
    end_marker: str | None = ""  # "": the writer's `tags.end`
    markers: tuple[str, ...] = ()
    special_tokens: tuple[str, ...] = ()
    other_openers: tuple[tuple[str, str | None], ...] = ()
    vllm_tag_model: str | None = None
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""
    think: tuple[str, str] = ("<think>", "</think>")
    keep_whitespace: bool = False

    @property
    def end(self) -> str | None:
        """The end marker the parser reads: `end_marker`, or the writer's `tags.end`."""
        return self.tags.end if self.end_marker == "" else self.end_marker

    def stream_class(self, module: str) -> type[JsonBlockStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            JsonBlockStream,
            self.name,
            module,
            "the JSON-in-markers family",
            self.think,
            start_markers=(self.tags.start, *self.spellings),
            end_marker=self.end,
            keeps_whitespace=self.keep_whitespace,
        )

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        required, auto = self.tags.constraints()
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            self.tags.writer(),
            markers=self.markers or tuple(marker for marker in (self.tags.start, self.end) if marker),
            special_tokens=self.special_tokens,
            required_constraint=required,
            auto_constraint=auto,
            call_tag=self.tags.call_tag(),
            vllm_tag_model=self.vllm_tag_model,
            other_openers=self.other_openers,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )
