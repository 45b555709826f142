"""The family of JSON calls after a marker: `hermes_json`'s machine with other markers, other call
objects and an optional end, configured once here and named by each format of the family
(`granite_json`, `phi4_json`, `apertus_json`, `cohere_json`).

Grammar, as every machine of the family reads it::

    output  := (text | think | block)*
    think   := THINK_OPEN text THINK_CLOSE               # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := "[" call ([","] call)* "]"                # an empty list is not a call
             | call                                      # only where the format takes a lone object
    call    := a JSON object in the format's `CallShape`

with the format's STARTs (several where a model family spells its marker two ways), its END (None
where the model writes none: the value's end ends the block) and its reasoning markers. A format
whose model writes its list with no marker at all (`xlam_json`) sets `list_at_start`: then a list
opens a block at the output's start and right after one of its STARTs, which only say where a list
may follow: a line break is markup where a list follows it, else text; the markers of reasoning
and markdown code (`list_quoted`, among the STARTs) are text, between them no list opens, and a
list may follow a closing one; a list anywhere else is text. The rest is
`hermes_json`'s, word for word: the block ends where its JSON value ends, so END or START inside a
string is data; a block whose JSON breaks is text from its START up to the break (up to the end of
the string that broke it), and scanning goes on there; a block the output cuts off is text;
arguments given as a JSON string holding an object are decoded; `null` or none is `{}`; a comma
dropped between two call objects of a list is read as if written (`core.json_calls`: both calls,
never the first with the rest of its list as text).

This module is the family's configuration point: `MarkedJsonStream` (class attributes
`start_markers`, `end_marker`, `shape` and `list_at_start`; a format with other reasoning markers
gives them as its `think_markers` default), `array_writer` (what the template writes) and
`array_constraints` (both decoding constraints, the calls written as the writer writes them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.ids import IdFactory
from ...core.json_calls import DEFAULT_SHAPE, CallShape, JsonCallReader
from ...core.json_lexer import json_text
from ...core.outside import ThinkMarkers
from ..constraints import Element, const, json_value, repeated, sequence, structural, tag, triggered
from ..spec import Call, CallTag, Constraint, ConstraintRequest, Format, Writer
from . import format_stream
from .json_blocks import JsonBlockStream

CallObject = Callable[[str, dict[str, Any]], dict[str, Any]]
"""A call as the format's JSON object (name and arguments in its keys)."""


class MarkedJsonStream(JsonBlockStream):
    """Incremental parser for one response of a format of this family: `hermes_json`'s machine
    (its `start_markers` and `end_marker` set by the format), reading the format's `shape` of call
    objects (see the module docstring)."""

    end_marker = None
    shape: CallShape = DEFAULT_SHAPE
    list_at_start = False
    """A list with no marker opens a block at the output's start and right after a START (see the
    module docstring)."""
    list_quoted: tuple[tuple[str, str], ...] = (("<think>", "</think>"),)
    """With `list_at_start`: the (opener, closer) pairs of text where no list opens (reasoning,
    markdown code)."""

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)  # type: ignore[arg-type]
        self._text_state = self._state  # the machine starts in its text state
        self._list_next = self.list_at_start  # a `[` here (after whitespace) opens a block
        self._quoted_close: str | None = None  # with `list_at_start`: the closer of the quoted text read

    def _scan_text(self, text: str, pos: int) -> int | None:
        """Where a list may open a block with no marker: whitespace is held, then `[` opens it and
        anything else is text (and the text state's scanning goes on there). With such lists, a
        START found is where a list may follow."""
        if self._list_next:
            if (at := self._markup_ws(text, pos, self._raw)) > pos:
                return at
            self._list_next = False
            if text[pos] == "[":
                self._start_value()
                return pos
            self._text("".join(self._raw))
            self._raw = []
        at = super()._scan_text(text, pos)
        if self.list_at_start and self._state != self._text_state:
            self._state = self._text_state
            marker = self._raw[0]
            closers = dict(self.list_quoted)
            if self._quoted_close is not None or marker in closers or marker in closers.values():
                self._text(self._raw.pop())
                if self._quoted_close is None and marker in closers:
                    self._quoted_close = closers[marker]
                    return at
                if self._quoted_close not in (None, marker):
                    return at
                self._quoted_close = None
            self._list_next = True
        return at

    def _scan_open(self, text: str, pos: int) -> int | None:
        """After START: where the format takes only a list, a START not followed by `[` is a word
        in prose (Phi-4-mini's `functools` is Python's module too), text without a warning."""
        if self.shape.array_only:
            if (at := self._markup_ws(text, pos, self._raw)) > pos:
                return at
            if text[pos] != "[":
                self._text("".join(self._raw))
                self._raw = []
                self._state = self._text_state
                return pos
        return super()._scan_open(text, pos)

    def _close(self) -> None:
        if self._list_next:  # whitespace held where a list could have opened a block
            self._text("".join(self._raw))
            self._raw = []
        super()._close()

    def _start_value(self) -> None:
        prefix = "".join(self._raw)
        super()._start_value()
        self._reader = JsonCallReader(
            self._start_call, self._call_args, self._end_call, self.limits, prefix, self.shape
        )


def array_writer(start: str, end: str, call_object: CallObject) -> Writer:
    """The calls as one block: START, a JSON array of the call objects joined by `, `, END."""

    def write(calls: Sequence[Call]) -> str:
        objects = ", ".join(json.dumps(call_object(name, arguments), ensure_ascii=False) for name, arguments in calls)
        return f"{start}[{objects}]{end}"

    return write


CallTags = Callable[[ConstraintRequest, list[str]], list[Element]]
"""The structural tags of one call to each of `names`, as the writer writes a call."""


NEXT_CALL_OBJECT = ('"name"', None)
"""For `Format.other_openers` of a format whose block reads more call objects after a call without
an opener of their own (no closing marker, or one the model may drop): strict `auto` keeps the key
`"name"` out of free text, so no call object can follow a held call unheld."""


def array_constraints(start: str, end: str, call_tags: CallTags) -> tuple[Constraint, Constraint]:
    """`required` and strict `auto` for a format whose block is START, a JSON array of calls joined
    by `, `, END (as `array_writer` writes it)."""

    def calls(request: ConstraintRequest, names: list[str]) -> Element:
        return repeated(request, call_tags(request, names), ", ")

    def required(request: ConstraintRequest) -> dict[str, Any]:
        """One block of at least one call (at most one if `single`): the output is the block."""
        return structural(sequence(const(start + "["), calls(request, request.names), const("]" + end)))

    def auto(request: ConstraintRequest) -> dict[str, Any]:
        """Strict `auto`: free text, where each START opens a block of calls to declared tools."""
        return triggered(request, [start], [tag(start + "[", calls(request, list(request.schemas)), "]" + end)])

    return required, auto


def headed_calls(call_begin: Callable[[str], str], call_end: str = "}") -> CallTags:
    """Call tags for call objects written as `call_begin(name)`, the arguments, `call_end`."""

    def call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
        return [tag(call_begin(name), json_value(request.parameters(name)), call_end) for name in names]

    return call_tags


def name_arguments_begin(name: str) -> str:
    """`{"name": NAME, "arguments": ` (the head of the common call object, as json.dumps writes it)."""
    return f'{{"name": {json_text(name)}, "arguments": '


# -- a format of the family, as data ---------------------------------------------------------------


@dataclass(frozen=True)
class CallSpelling:
    """How the writer and the constraints spell one call object: `object` of a name and arguments,
    `begin` the object's text up to its arguments, `tag_begin` the same as SGLang's call tag writes
    it (`{name}` for the name)."""

    object: CallObject
    begin: Callable[[str], str]
    tag_begin: str


NAME_AND_ARGUMENTS = CallSpelling(
    lambda name, arguments: {"name": name, "arguments": arguments},
    name_arguments_begin,
    '{{"name": "{name}", "arguments": ',
)
"""`{"name": NAME, "arguments": {..}}`."""


def keyed_spelling(name_key: str, arguments_key: str) -> CallSpelling:
    """`{NAME_KEY: NAME, ARGUMENTS_KEY: {..}}` (Cohere's `tool_name` and `parameters`)."""
    head = "{" + json_text(name_key) + ": "
    return CallSpelling(
        lambda name, arguments: {name_key: name, arguments_key: arguments},
        lambda name: head + json_text(name) + ", " + json_text(arguments_key) + ": ",
        "{" + head + '"{name}", ' + json_text(arguments_key) + ": ",
    )


NAME_AS_KEY_SPELLING = CallSpelling(
    lambda name, arguments: {name: arguments},
    lambda name: "{" + json_text(name) + ": ",
    '{{"{name}": ',
)
"""`{"NAME": {..}}` (Apertus)."""


@dataclass(frozen=True)
class MarkedJsonFormat:
    """One format of the family, as data: `starts` its block markers (the first is what the writer,
    constraints and call tag write), `end` its closing marker ("" where the model writes none),
    `shape` the call objects the stream reads, `spelling` how the writer and constraints write one,
    `think` the think pair its stream reads as text; the rest is the `Format`'s own. Formats whose
    grammar differs subclass `MarkedJsonStream` (`cohere_json`'s numbered objects, `xlam_json`'s
    unmarked lists)."""

    name: str
    summary: str
    starts: tuple[str, ...]
    shape: CallShape
    end: str = ""
    spelling: CallSpelling = NAME_AND_ARGUMENTS
    think: tuple[str, str] = ("<think>", "</think>")
    special_tokens: tuple[str, ...] = ()
    other_openers: tuple[tuple[str, str | None], ...] = ()
    reasoning_openers: tuple[str, ...] | None = None
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    def stream_class(self, module: str) -> type[MarkedJsonStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            MarkedJsonStream,
            self.name,
            module,
            "JSON after a marker",
            self.think,
            start_markers=self.starts,
            end_marker=self.end or None,
            shape=self.shape,
        )

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        start, spelling = self.starts[0], self.spelling
        required, auto = array_constraints(start, self.end, headed_calls(spelling.begin))
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            array_writer(start, self.end, spelling.object),
            markers=(*self.starts, *((self.end,) if self.end else ())),
            special_tokens=self.special_tokens,
            required_constraint=required,
            auto_constraint=auto,
            call_tag=CallTag(start + "[" + spelling.tag_begin, "}]" + self.end, start),
            other_openers=self.other_openers,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            reasoning_openers=self.reasoning_openers,
            spec=self,
        )
