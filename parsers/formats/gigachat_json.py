"""`gigachat_json`: Sber GigaChat 3 / 3.1 tool calls, one `{"name", "arguments"}` object after
GigaChat's `function call` role header (3) or its `<|function_call|>` token (3.1).

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                 # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    value   := call | "[" call ("," call)* "]"
    call    := {"name", "arguments"} | {"name", "parameters"} | {"function": {"name", "arguments"}}
    START   := "<|message_sep|>\\n\\nfunction call<|role_sep|>"   # GigaChat 3: the content's end, then
             | "function call<|role_sep|>"                        #   the role header (alone, too)
             | "<|function_call|>"                                # GigaChat 3.1
    END     := "<|message_sep|>"

GigaChat 3 writes its answer as a message that ends in `<|message_sep|>` and then a message of the
`function call` role; GigaChat 3.1 writes `<|function_call|>` right after the content. The content's
`<|message_sep|>` before the header belongs to the header (so the content is the answer alone, as
vLLM's and SGLang's `gigachat3` return it). `<|message_sep|>`, `<|role_sep|>` and `<|function_call|>`
are single special tokens of GigaChat's tokenizer (decoding must keep them); `function call` is
plain text. GigaChat writes one call per turn; several blocks are read as several calls. The rest is
the `hermes_json` family's machine: the call ends where its JSON ends, so a marker inside a string
is data; a call that breaks is text up to the break and scanning goes on there; a call the output
cuts off is text; arguments as a JSON string holding an object are decoded; none or `null` is `{}`.
A `</s>` after the call (the end-of-sequence token, which a server does not show) is text.

GigaChat's own templates render the history's first call as the model writes it (3:
`<|message_sep|>\\n\\nfunction call<|role_sep|>\\n{..}`, 3.1: `<|function_call|>{..}`), which this
parser reads back; the writer and the template shipped here use 3.1's spelling. SGLang's
`gigachat35` (GigaChat 3.5's GCML tool-call XML) is another format, not read here.
"""

from __future__ import annotations

from .families.json_blocks import JsonBlockFormat, JsonBlockTags
from .families.marked_json import NEXT_CALL_OBJECT

TOKEN, ROLE = "<|function_call|>", "function call<|role_sep|>"
MESSAGE_END = "<|message_sep|>"
ROLE_AFTER_MESSAGE = MESSAGE_END + "\n\n" + ROLE

FORMAT = JsonBlockFormat(
    "gigachat_json",
    '<|function_call|>{"name": .., "arguments": {..}} (GigaChat 3.1; 3: function call<|role_sep|>)',
    # `<|function_call|>{"name": .., "arguments": ..}` per call, as GigaChat 3.1 writes a call
    JsonBlockTags(TOKEN, None, after_start="", before_end="", separator=""),
    spellings=(ROLE_AFTER_MESSAGE, ROLE),
    end_marker=MESSAGE_END,
    markers=(TOKEN, ROLE, MESSAGE_END),
    special_tokens=(TOKEN, MESSAGE_END, "<|role_sep|>"),
    other_openers=((ROLE, TOKEN), NEXT_CALL_OBJECT),
    vllm_names=("gigachat3",),
    sglang_names=("gigachat3",),
    models="Sber GigaChat 3 / 3.1 (10B-A1.8B, 702B-A36B)",
).format(__name__)
