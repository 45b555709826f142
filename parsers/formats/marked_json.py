"""The family of JSON calls after a marker: `hermes_json`'s machine with other markers, other call
objects and an optional end, configured once here and named by each format of the family
(`granite_json`, `phi4_json`, `apertus_json`, `cohere_json`).

Grammar, as every machine of the family reads it::

    output  := (text | think | block)*
    think   := THINK_OPEN text THINK_CLOSE               # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := "[" call ("," call)* "]"                  # an empty list is not a call
             | call                                      # only where the format takes a lone object
    call    := a JSON object in the format's `CallShape`

with the format's STARTs (several where a model family spells its marker two ways), its END (None
where the model writes none: the value's end ends the block) and its reasoning markers. The rest is
`hermes_json`'s, word for word: the block ends where its JSON value ends, so END or START inside a
string is data; a block whose JSON breaks is text from its START up to the break (up to the end of
the string that broke it), and scanning goes on there; a block the output cuts off is text;
arguments given as a JSON string holding an object are decoded; `null` or none is `{}`.

This module is the family's configuration point: `MarkedJsonStream` (class attributes
`start_markers`, `end_marker` and `shape`; a format with other reasoning markers gives them as its
`think_markers` default), `array_writer` (what the template writes) and `array_constraints` (both
decoding constraints, the calls written as the writer writes them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import DEFAULT_SHAPE, CallShape, JsonCallReader
from ..core.json_lexer import json_text
from ..core.outside import ThinkMarkers
from .grammar import Element, const, json_value, repeated, sequence, structural, tag, triggered
from .hermes_json import HermesJsonStream
from .spec import Call, Constraint, ConstraintRequest, Writer

CallObject = Callable[[str, dict[str, Any]], dict[str, Any]]
"""A call as the format's JSON object (name and arguments in its keys)."""


class MarkedJsonStream(HermesJsonStream):
    """Incremental parser for one response of a format of this family: `hermes_json`'s machine
    (its `start_markers` and `end_marker` set by the format), reading the format's `shape` of call
    objects (see the module docstring)."""

    end_marker = None
    shape: CallShape = DEFAULT_SHAPE

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)  # type: ignore[arg-type]
        self._text_state = self._state  # the machine starts in its text state

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
