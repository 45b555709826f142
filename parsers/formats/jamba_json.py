"""`jamba_json`: AI21 Jamba and Tencent Hunyuan-A13B tool calls, a JSON list of calls between
`<tool_calls>` tags.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := "[" call-object ("," call-object)* "]" | call-object
    call-object := {"name", "arguments"} | {"name", "parameters"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}

with START = `<tool_calls>` and END = `</tool_calls>` (special tokens of Jamba's tokenizer; plain
text to Hunyuan's). Both models' templates write every call of a turn as one list in one block,
`<tool_calls>[{"name": .., "arguments": {..}}, ..]</tool_calls>`; a lone call object in the block
(no list) is read too, as a model sometimes writes it. Everything after START is `hermes_json`'s (a
`MarkedJsonFormat` value: the family's machine is that format's), so the block ends where its JSON
value ends (`</tool_calls>` or `]` inside a string is data), a block whose JSON breaks is text up
to the break and scanning goes on there, a block the output cuts off is text, arguments as a JSON
string holding an object are decoded, and every other case is as that format's section says.

Text after the block is content (vLLM's `jamba` and `hunyuan_a13b` parsers drop it). Hunyuan-A13B
answers inside `<answer>..</answer>` after its `<think>` block: those tags are the `hunyuan_a13b`
reasoning parser's to remove; the "Assistant:" prefix (`助手` and a full-width colon) that Hunyuan's
template asks a plain answer to open with is content here (vLLM's parser removes it from an answer
without calls).
"""

from __future__ import annotations

from ..core.json_calls import DEFAULT_SHAPE
from .families.marked_json import MarkedJsonFormat

START, END = "<tool_calls>", "</tool_calls>"

FORMAT = MarkedJsonFormat(
    "jamba_json",
    '<tool_calls>[{"name": .., "arguments": {..}}, ..]</tool_calls> (Jamba, Hunyuan-A13B)',
    (START,),
    DEFAULT_SHAPE,
    end=END,
    special_tokens=(START, END),
    vllm_names=("jamba", "hunyuan_a13b"),
    models="AI21 Jamba 1.5 / 1.6 / 1.7, Tencent Hunyuan-A13B",
).format(__name__)
