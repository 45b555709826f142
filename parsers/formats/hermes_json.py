"""`hermes_json`: `<tool_call>{"name": .., "arguments": {..}}</tool_call>` (Hermes 2 Pro / 3, Qwen2.5 / 3,
SmolLM2 and most ChatML models).

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"            # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := call-object | "[" call-object ([","] call-object)* "]"   # an empty list [] is not a call
    call-object := {"name", "arguments"} | {"name", "parameters"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}               # a JSON object, keys in any order

with START = `<tool_call>` and END = `</tool_call>`. Several values in one block are parallel calls,
with or without a comma between them (`{..}, {..}`), and so are the objects of a list.

The block ends where its JSON value ends, not at the first END: `</tool_call>` inside a string is
data. END may be missing when the value is complete: the call counts and what follows is content. A
block whose JSON breaks is text from its START up to the break; scanning for calls goes on right
there, so the next block still counts. Where a string makes the block invalid (a string where a call
object belongs, a name longer than TOOLCALL_PARSERS_MAX_NAME), the block is text up to the end of
that string, in every chunking: a `<tool_call>` written inside the string never starts a call. A
block cut off by the end of the output (inside its JSON) is text.

`arguments` is an object; a JSON string holding an object is decoded (also when encoded twice, and
leniently: raw control characters inside it are accepted) and sent as the object; `null`, `""` or
none is `{}`; any other type makes the block text. Raw control characters inside strings (a literal
newline in code) are accepted and sent escaped, so `arguments` is always strict JSON. A
model-supplied `id` is ignored: ids are the engine's.

The markers are options: `get_format("hermes_json").stream(tools, start_marker="<function_call>",
end_marker="</function_call>")`; `think_markers=None` disables the `<think>` rule.

This module is its family's configuration point: the formats that write these call objects between
other tags (`longcat_json`, `jamba_json`, `internlm_json`, `granite_fc_json`; `marked_json`'s family
builds on it too) are values of the family (`families/json_blocks`: a `JsonBlockFormat` of its
`JsonBlockTags`, its other opener spellings and its end), from which each gets its stream, writer,
constraints and SGLang call tag, as this format does.

Other engines' names for this wire format: vLLM's `granite4` (IBM Granite 4: the same blocks, a
newline inside each tag), `ernie45` (ERNIE 4.5: the same blocks; its `<response>..</response>` around
an answer is the `ernie45` reasoning parser's to remove, as vLLM's tool parser removes it only while
streaming) and `qwen3_json`; SGLang's `trinity` (Arcee Trinity: Qwen's blocks, written inside its
reasoning as well). SGLang's `trinity` detector reads a block inside `<think>` and deletes the think
tags from the content; here reasoning stays text, and a block in it is text as for every model: a
reasoning parser that ends the reasoning at `<tool_call>` (vLLM's `qwen3`) hands such a
call to this parser as content, where it counts.
"""

from __future__ import annotations

from .families.json_blocks import END, START, JsonBlockFormat, JsonBlockTags

FORMAT = JsonBlockFormat(
    "hermes_json",
    '<tool_call>{"name": .., "arguments": {..}}</tool_call>',
    JsonBlockTags(START, END),  # Qwen's spelling: a newline inside each tag, a newline between blocks
    vllm_tag_model="hermes",
    vllm_names=("hermes", "qwen3_json", "granite4", "ernie45", "ripple"),
    sglang_names=("hermes", "qwen", "qwen25", "trinity"),
    models=(
        "Hermes 2 Pro / 3, Qwen2.5 / Qwen3, SmolLM2, IBM Granite 4, ERNIE 4.5, Arcee Trinity, Ricursive Ripple, "
        "most ChatML models"
    ),
).format(__name__)
