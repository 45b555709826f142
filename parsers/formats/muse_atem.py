"""`muse_atem`: Muse Glimmer's ATEM calls, `<atem:function_calls>` blocks of invokes, each in a
message addressed to the tool (`<|start|>assistant to=TOOL<|message|>..<|eom|>`).

Grammar, as this machine reads it::

    output    := (text | message)*
    message   := [START "assistant"] ws ["to=" RECIPIENT] MESSAGE body [CLOSER]
    tool-body := ws block ws [CLOSER]                    # a message to a tool
    block     := FUNCTION_CALLS ws (invoke ws)* [FUNCTION_CALLS_CLOSE]
    invoke    := '<atem:invoke name=' NAME ">" ws (parameter ws)* "</atem:invoke>"
    parameter := '<atem:parameter name=' NAME ">" VALUE "</atem:parameter>"

with START = `<|start|>`, MESSAGE = `<|message|>`, CLOSER = `<|eom|>` or `<|eot|>` (special tokens
of Muse Glimmer's tokenizer) and FUNCTION_CALLS = `<atem:function_calls>`. RECIPIENT runs up to
whitespace or `<`; the prompt ends with `<|start|>assistant`, so the reply's first message begins
at ` to=`. The header is read by `channel_messages.HeaderReader` (one line, bounded; a header that
breaks is text), the block by `minimax_xml`'s machine with ATEM's tags, so NAME, VALUE, what ends a
value (`</atem:parameter>` before the next parameter or `</atem:invoke>`), the typing of values by
the tool's schema (without one: JSON literals as JSON, anything else a string, as the engines' `json.loads`
fallback reads them) and every error case are that format's.

Channels scope the calls, as both engines scope them: a block counts only in a message to a tool.
Messages to `self` (reasoning), to `commentary` and without a recipient are text with their markup
up to their closer, so an invoke quoted in them, or in a reply cut off before its closer, is never
a call; a reasoning parser in front takes the reasoning out. The answer (a message to `user`) is
content without its header and closer, as both engines show it: SGLang's `muse` reasoning parser
hands it on framed so the tool parser can scope it. In reasoning, a `to=TOOL<|message|>` (Muse ends
its reasoning so at times, without `<|eom|>`) opens that tool's message; in the answer a quoted
header is text. A block with no message around it is text too (SGLang's rule; vLLM reads one when
the framing is missing, which it is only where special tokens were skipped, and the adapters keep
them). A message to a tool whose body is not a block is text. After a block, the message's closer
is markup; the calls of a block whose close is missing stand, and what follows them is text.

The machine, writer and constraints are the ATEM family's (`families/atem.py`); this format is one
`AtemFormat` value with Glimmer's recipients.

An invoke's NAME is the tool's: Muse's template addresses a tool registered as `NAME` as
`NAME.NAME`, and the model may name the invoke so; that doubled spelling is read as NAME when the
request declares NAME and not the doubled one, as both engines read it.
"""

from __future__ import annotations

from .families.atem import AtemFormat

FORMAT = AtemFormat(
    "muse_atem",
    '<|start|>assistant to=f<|message|><atem:function_calls><atem:invoke name="f"><atem:parameter name="p">v'
    "</atem:parameter></atem:invoke></atem:function_calls><|eom|> (Muse Glimmer)",
    vllm_names=("muse_glimmer",),
    sglang_names=("muse",),
    models="Muse Glimmer",
).format(__name__)
