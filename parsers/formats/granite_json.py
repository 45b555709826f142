"""`granite_json`: IBM Granite 3.x tool calls, a JSON list of calls after `<|tool_call|>` (or the
plain-text `<tool_call>`), with no closing marker.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                 # everything inside is text, never a call
    block   := START ws "[" call ("," call)* "]"        # what follows the list is text (or a block)
    call    := {"name", "arguments"} | {"name", "parameters"} | {"function": {"name", "arguments"}}
    START   := "<|tool_call|>" | "<tool_call>"

Granite 3.0 writes `<|tool_call|>`, a single special token (decoding must keep it); 3.1 to 3.3 are
prompted with the same token and vLLM's `granite` parser also reads the plain-text `<tool_call>`
those models sometimes write: both open a block here. A lone object after the marker (`<tool_call>
{..}`) is not Granite's format and is text, as in vLLM's parser. The rest is the `marked_json`
family's (`hermes_json`'s machine): the list ends where its JSON ends, string-aware, so a `]` or a
marker inside an argument changes nothing; a list that breaks is text up to the break and scanning
goes on there; a list the output cuts off is text; arguments as a JSON string holding an object are
decoded; none or `null` is `{}`. Text before and after the list is content (vLLM's parser drops it).

Granite 3.3's own template never renders a call in the history (an assistant turn is its content
only), so the template shipped here writes them as the model does: `<|tool_call|>` then the list.
"""

from __future__ import annotations

from ..core.json_calls import CallShape
from .families.marked_json import NEXT_CALL_OBJECT, MarkedJsonFormat

TOKEN, PLAIN = "<|tool_call|>", "<tool_call>"

FORMAT = MarkedJsonFormat(
    "granite_json",
    '<|tool_call|>[{"name": .., "arguments": {..}}, ..] (Granite 3.x; <tool_call> too)',
    (TOKEN, PLAIN),
    CallShape(array_only=True),
    special_tokens=(TOKEN,),
    other_openers=((PLAIN, TOKEN), NEXT_CALL_OBJECT),
    vllm_names=("granite",),
    models="IBM Granite 3.0 / 3.1 / 3.2 / 3.3",
).format(__name__)
