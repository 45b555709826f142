"""`cohere_json`: Cohere Command R7B / Command A tool calls, a JSON list of
`{"tool_call_id", "tool_name", "parameters"}` objects between `<|START_ACTION|>` and
`<|END_ACTION|>`.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<|START_THINKING|>" text "<|END_THINKING|>"   # the plan: text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := "[" call ([","] call)* "]" | call       # a comma dropped between calls: read as written
    call    := {"tool_name": NAME, "parameters": {..}}   # keys in any order; others ("tool_call_id") ignored
             | {"name": NAME, "arguments": {..}}         # the common keys, as SGLang's detector reads them

with START = `<|START_ACTION|>` and END = `<|END_ACTION|>`, single special tokens of Cohere's
tokenizers (decoding must keep them). Cohere's keys make a call here and in no other format; the
common `name` / `arguments` are read too, as SGLang's `cohere_command4` reads them. The model's
`tool_call_id` ("0", "1", ..) is ignored: ids are the engine's. `parameters` is an object, a JSON
string holding one, or `null` / none (`{}`). The rest is the `marked_json` family's (`hermes_json`'s
machine): the block ends where its JSON ends, so a marker inside a string is data; a block that
breaks is text up to the break and scanning goes on there; a block the output cuts off is text. A
comma missing between two call objects of the list (`[{..} {..}]`, an outside review) is read as if
written: both calls, never the first with the rest of the list as text cut from its opening.

Everything outside the blocks is content, Cohere's other markup included: the plan in
`<|START_THINKING|>..<|END_THINKING|>` (a block written in it is never a call) and the answer's
`<|START_RESPONSE|>..<|END_RESPONSE|>` (Command R7B) or `<|START_TEXT|>..<|END_TEXT|>` (Command A)
are the reasoning parser's to take apart (SGLang's `cohere_command4` does); vLLM's
`cohere_command3` / `cohere_command4` do all of it in the `cohere_melody` package, which also reads
citations, outside this format.

Cohere's own templates render a history call as the model writes it (`<|START_ACTION|>[` then one
object per line, `tool_call_id` numbering the calls), which this parser reads back; the template
shipped here teaches the same with Cohere's turn tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import CallShape
from ..core.json_lexer import json_text
from ..core.outside import ThinkMarkers
from .constraints import Element, const, json_value, one_of, regex, sequence, tag
from .families.marked_json import MarkedJsonStream, array_constraints
from .spec import Call, CallTag, ConstraintRequest, Format

START, END = "<|START_ACTION|>", "<|END_ACTION|>"
THINK_MARKERS = ("<|START_THINKING|>", "<|END_THINKING|>")
SHAPE = CallShape(frozenset({"tool_name", "name"}), frozenset({"parameters", "arguments"}), None)
"""Cohere's keys, and the common ones SGLang's `cohere_command4` also reads."""


class CohereJsonStream(MarkedJsonStream):
    """Incremental parser for one response in Cohere's action format."""

    format_name = "cohere_json"
    start_markers = (START,)
    end_marker = END
    shape = SHAPE

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)


def write(calls: Sequence[Call]) -> str:
    """`<|START_ACTION|>[{"tool_call_id": "0", "tool_name": .., "parameters": ..}, ..]<|END_ACTION|>`,
    the calls numbered from 0 as Cohere's templates number them."""
    objects = ", ".join(
        f'{{"tool_call_id": "{n}", "tool_name": {json_text(name)}, "parameters": {json_text(arguments)}}}'
        for n, (name, arguments) in enumerate(calls)
    )
    return f"{START}[{objects}]{END}"


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One tag for every call (its id any number), the name choosing the arguments' schema."""
    heads = [
        sequence(const(f'", "tool_name": {json_text(name)}, "parameters": '), json_value(request.parameters(name)))
        for name in names
    ]
    return [tag('{"tool_call_id": "', sequence(regex("[0-9]{1,6}"), one_of(heads)), "}")]


required_constraint, auto_constraint = array_constraints(START, END, _call_tags)

FORMAT = Format(
    "cohere_json",
    '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": .., "parameters": {..}}]<|END_ACTION|> (Cohere)',
    CohereJsonStream,
    write,
    markers=(START, END),
    special_tokens=(START, END),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    call_tag=CallTag(START + '[{{"tool_call_id": "0", "tool_name": "{name}", "parameters": ', "}]" + END, START),
    vllm_names=("cohere_command3", "cohere_command4"),
    sglang_names=("cohere_command4",),
    models="Cohere Command R7B, Command A (Reasoning, Vision), Command A MoE",
)
