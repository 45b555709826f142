"""`apertus_json`: Swiss AI Apertus tool calls, a JSON list of one-key objects `{"NAME": {args}}`
between `<|tools_prefix|>` and `<|tools_suffix|>`.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<|inner_prefix|>" text "<|inner_suffix|>"   # Apertus' reasoning: text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := "[" call ("," call)* "]" | call
    call    := "{" NAME ":" args "}"                    # one key, the tool's name; its value the arguments

with START = `<|tools_prefix|>` and END = `<|tools_suffix|>`, single special tokens of Apertus'
tokenizer (decoding must keep them). A call object with a second key is not a call: the block is
text up to that key. `args` is an object, a JSON string holding one (Apertus' template writes
`arguments|tojson`, so a history call whose arguments are a string reads back as that string), or
`null` (`{}`). A lone object without the list is read as a list of one, as vLLM's `apertus` parser
does. The rest is the `marked_json` family's (`hermes_json`'s machine): the block ends where its JSON
ends, so a marker inside a string is data; a block that breaks is text up to the break and
scanning goes on there; a block the output cuts off is text (vLLM's parser returns the partial
call). Text before and after a block is content.

Apertus' own template renders a history call as the model writes it (`<|tools_prefix|>[{"f":
{..}}, ..]<|tools_suffix|>`), which this parser reads back; the template shipped here teaches the
same with ChatML-free Apertus turns.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import NAME_AS_KEY
from ..core.json_lexer import json_text
from ..core.outside import ThinkMarkers
from .marked_json import MarkedJsonStream, array_constraints, array_writer, headed_calls
from .spec import CallTag, Format

START, END = "<|tools_prefix|>", "<|tools_suffix|>"
THINK_MARKERS = ("<|inner_prefix|>", "<|inner_suffix|>")


class ApertusJsonStream(MarkedJsonStream):
    """Incremental parser for one response in Apertus' tool-call format."""

    format_name = "apertus_json"
    start_markers = (START,)
    end_marker = END
    shape = NAME_AS_KEY

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)


def _call_object(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {name: arguments}


write = array_writer(START, END, _call_object)
"""`<|tools_prefix|>[{"NAME": {..}}, ..]<|tools_suffix|>`, as Apertus' template writes calls."""


def _call_begin(name: str) -> str:
    return "{" + json_text(name) + ": "


required_constraint, auto_constraint = array_constraints(START, END, headed_calls(_call_begin))

FORMAT = Format(
    "apertus_json",
    '<|tools_prefix|>[{"NAME": {..}}, ..]<|tools_suffix|> (Apertus)',
    ApertusJsonStream,
    write,
    markers=(START, END),
    special_tokens=(START, END),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    call_tag=CallTag(START + '[{{"{name}": ', "}]" + END, START),
    vllm_names=("apertus",),
    sglang_names=("apertus2509",),
    models="Swiss AI Apertus (8B, 70B)",
)
