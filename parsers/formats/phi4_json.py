"""`phi4_json`: Microsoft Phi-4-mini tool calls, `functools` then a JSON list of calls, with no
closing marker.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                 # everything inside is text, never a call
    block   := "functools" ws "[" call ("," call)* "]"  # what follows the list is text (or a block)
    call    := {"name", "arguments"} | {"name", "parameters"} | {"function": {"name", "arguments"}}

`functools` is plain text in Phi-4-mini's tokenizer, and the name of Python's module: where it is
not followed by a list (`import functools`, `functools.partial`), it is a word of the content, read
on at once and never logged. The rest is the `marked_json` family's (`hermes_json`'s machine): the
list ends where its JSON ends, string-aware; a list that breaks is text up to the break and scanning
goes on there; a list the output cuts off is text; an empty list is text; arguments as a JSON string
holding an object are decoded; none or `null` is `{}`. Text before and after the list is content
(vLLM's `phi4_mini_json` parser drops it, and streams nothing).

The template shipped here is vLLM's example's teaching (`functools[{"name": .., "arguments": ..},
..]`, Phi's `<|system|>` / `<|user|>` / `<|assistant|>` turns ending in `<|end|>`), with the history
written as the model writes calls (vLLM's example renders them without the marker).
"""

from __future__ import annotations

from typing import Any

from ..core.json_calls import CallShape
from .marked_json import (
    NEXT_CALL_OBJECT,
    MarkedJsonStream,
    array_constraints,
    array_writer,
    headed_calls,
    name_arguments_begin,
)
from .spec import CallTag, Format

MARKER = "functools"


class Phi4JsonStream(MarkedJsonStream):
    """Incremental parser for one response in Phi-4-mini's tool-call format."""

    format_name = "phi4_json"
    start_markers = (MARKER,)
    shape = CallShape(array_only=True)


def _call_object(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


write = array_writer(MARKER, "", _call_object)
"""`functools[{"name": .., "arguments": ..}, ..]`, as Phi-4-mini writes its calls."""

required_constraint, auto_constraint = array_constraints(MARKER, "", headed_calls(name_arguments_begin))

FORMAT = Format(
    "phi4_json",
    'functools[{"name": .., "arguments": {..}}, ..] (Phi-4-mini)',
    Phi4JsonStream,
    write,
    markers=(MARKER,),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    other_openers=(NEXT_CALL_OBJECT,),
    call_tag=CallTag(MARKER + '[{{"name": "{name}", "arguments": ', "}]", MARKER),
    vllm_names=("phi4_mini_json",),
    models="Microsoft Phi-4-mini",
    reasoning_openers=(),
)
