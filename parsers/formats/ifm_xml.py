"""`ifm_xml`: K2 Horizon (IFM's K2-V3) tool calls: GLM's keys and values in IFM's `<ifm|..>` tags,
inside a block, a value's type optionally named between its key and its value.

Grammar, as this machine reads it::

    output := (text | think | block)*
    think  := THINK_OPEN text THINK_CLOSE     # <ifm|think>, <ifm|think_fast>, <ifm|think_faster>: text
    block  := "<ifm|tool_calls>" ws (call ws)* ["</ifm|tool_calls>"]
    call   := "<ifm|tool_call>" NAME ws (arg ws)* "</ifm|tool_call>"
    arg    := "<ifm|arg_key>" KEY "</ifm|arg_key>" ws ["<ifm|arg_type>" TYPE "</ifm|arg_type>" ws]
              "<ifm|arg_value>" VALUE "</ifm|arg_value>"

K2 Horizon writes one of three layouts, chosen by the request's `chat_template_kwargs`
(`tool_call_format`): `xml` (the default: the grammar above without types), `xml_typed` (every
argument with its TYPE) and `json` (`<ifm|tool_call>{"name": .., "arguments": ..}</ifm|tool_call>`).
This format reads the two XML layouts; vLLM's `k2_horizon` reads only the one the request names, and
refuses the other. A JSON call is no call here (text): serve `json` with a JSON format of ours.

Everything inside a call is `glm_xml`'s, word for word (its machine, with these tags): NAME, KEY,
VALUE typed by the tool's schema, a value's close that ends it only before the next key or the
call's close, the dropped openers, and every malformed shape. TYPE (`string`, `integer`, ..; a
suffix such as `[string]` ignored) types the value only where the tool's schema says nothing of its
key (the schema wins, as SGLang's `k2_horizon` reads it); `any` keeps the text; a second type tag,
or a tag inside one, breaks the call. The block is `call_blocks`' (as `hunyuan_xml`'s): a block with no
call is text, its close may be missing after complete calls, a call outside a block is text (vLLM
reads only the block; SGLang also bare calls).

Neither the model's template nor its tokenizer is public as of vLLM 0.32 / SGLang 0.5.23 (the
engines' parsers and tests are the facts read): no marker is declared a special token; our
template writes the default layout, compact.
"""

from __future__ import annotations

from .families.key_values import KeyValueFormat, KeyValueTags

IFM = KeyValueTags(
    "<ifm|tool_call>",
    "</ifm|tool_call>",
    "<ifm|arg_key>",
    "</ifm|arg_key>",
    "<ifm|arg_value>",
    "</ifm|arg_value>",
    block=("<ifm|tool_calls>", "</ifm|tool_calls>"),
    type_tags=("<ifm|arg_type>", "</ifm|arg_type>"),
    think=("<ifm|think>", "</ifm|think>"),
)

FORMAT = KeyValueFormat(
    "ifm_xml",
    "<ifm|tool_calls><ifm|tool_call>f<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value>"
    "</ifm|tool_call></ifm|tool_calls> (K2 Horizon)",
    IFM,
    think=(IFM.think, ("<ifm|think_fast>", "</ifm|think_fast>"), ("<ifm|think_faster>", "</ifm|think_faster>")),
    vllm_names=("k2_horizon",),
    sglang_names=("k2_horizon",),
    models="K2 Horizon (IFM K2-V3)",
).format(__name__)
