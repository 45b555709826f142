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

from ..core.json_calls import CallShape
from .families.marked_json import NEXT_CALL_OBJECT, MarkedJsonFormat

FORMAT = MarkedJsonFormat(
    "phi4_json",
    'functools[{"name": .., "arguments": {..}}, ..] (Phi-4-mini)',
    ("functools",),
    CallShape(array_only=True),
    other_openers=(NEXT_CALL_OBJECT,),
    reasoning_openers=(),
    vllm_names=("phi4_mini_json",),
    models="Microsoft Phi-4-mini",
).format(__name__)
