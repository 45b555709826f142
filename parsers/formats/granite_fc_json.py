"""`granite_fc_json`: IBM granite-20b-functioncalling tool calls, a call object after each
`<function_call>`, with no closing tag.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)*    # the block ends where its last value ends
    value   := call-object | "[" call-object ("," call-object)* "]"
    call-object := {"name", "arguments"} | {"name", "parameters"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}

with START = `<function_call>` (plain text to the model's tokenizer). Each call has its own START,
as the model's template writes them: `<function_call> {"name": .., "arguments": {..}}`, one after
another. There is no END: a block ends where its JSON value ends, so what follows is text or the
next block, and the whitespace between two blocks is nobody's content. The rest is `hermes_json`'s:
the same machine, so a `<function_call>` inside a string is data, a block whose JSON breaks is text
up to the break and scanning goes on there, a block the output cuts off is text, arguments as a JSON
string holding an object are decoded, and every other case is as that format's section says.

Text before the first block and between blocks is content (vLLM's `granite-20b-fc` parser keeps
only what precedes the first block, and its streaming path reads calls only when the output opens
with `<function_call>`). The model answers "no function applies" with a call to `no_function`, as
its template instructs; that is a call like any other here, for the client to see.
"""

from __future__ import annotations

from .families.json_blocks import JsonBlockFormat, JsonBlockTags
from .families.marked_json import NEXT_CALL_OBJECT

START = "<function_call>"

FORMAT = JsonBlockFormat(
    "granite_fc_json",
    '<function_call> {"name": .., "arguments": {..}} per call, no closing tag (granite-20b-functioncalling)',
    JsonBlockTags(START, None, after_start=" "),  # `<function_call> {..}` per call, a newline between
    other_openers=(NEXT_CALL_OBJECT,),
    vllm_names=("granite-20b-fc",),
    models="IBM granite-20b-functioncalling",
).format(__name__)
