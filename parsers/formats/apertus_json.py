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

from ..core.json_calls import NAME_AS_KEY
from .families.marked_json import NAME_AS_KEY_SPELLING, MarkedJsonFormat

START, END = "<|tools_prefix|>", "<|tools_suffix|>"
THINK_MARKERS = ("<|inner_prefix|>", "<|inner_suffix|>")

FORMAT = MarkedJsonFormat(
    "apertus_json",
    '<|tools_prefix|>[{"NAME": {..}}, ..]<|tools_suffix|> (Apertus)',
    (START,),
    NAME_AS_KEY,
    end=END,
    spelling=NAME_AS_KEY_SPELLING,
    think=THINK_MARKERS,
    special_tokens=(START, END),
    vllm_names=("apertus",),
    sglang_names=("apertus2509",),
    models="Swiss AI Apertus (8B, 70B)",
).format(__name__)
