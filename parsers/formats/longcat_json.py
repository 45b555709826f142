"""`longcat_json`: Meituan LongCat-Flash tool calls, `hermes_json`'s call objects between LongCat's
own tags.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := call-object | "[" call-object ("," call-object)* "]"
    call-object := {"name", "arguments"} | {"name", "parameters"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}

with START = `<longcat_tool_call>` and END = `</longcat_tool_call>` (single tokens of LongCat's
tokenizer). Everything between them is `hermes_json`'s: the same machine with these tags, so the
block ends where its JSON value ends (an END inside a string is data), a block whose JSON breaks is
text up to the break and scanning goes on there, a block the output cuts off is text, arguments as
a JSON string holding an object are decoded, and every other case is as that format's section says.
LongCat's template writes one call per block, a newline inside each tag, as Qwen's does.

This is vLLM's `longcat` parser's format (a subclass of its `hermes` parser with these tags). Later
LongCat releases that write `<longcat_tool_call>NAME` with `<longcat_arg_key>` / `<longcat_arg_value>`
pairs are another format, not read here.
"""

from __future__ import annotations

from .families.json_blocks import JsonBlockFormat, JsonBlockTags

START, END = "<longcat_tool_call>", "</longcat_tool_call>"

FORMAT = JsonBlockFormat(
    "longcat_json",
    '<longcat_tool_call>{"name": .., "arguments": {..}}</longcat_tool_call> (LongCat-Flash)',
    JsonBlockTags(START, END),  # a newline inside each tag and between blocks, as LongCat's template writes
    special_tokens=(START, END),
    vllm_names=("longcat",),
    models="Meituan LongCat-Flash (Chat, Thinking)",
).format(__name__)
