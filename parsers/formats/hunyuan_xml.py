"""`hunyuan_xml`: Tencent Hy3 (and Hy4) tool calls: GLM's keys and values in tags, inside a block,
every tag with the tokenizer's suffix (`:opensource` in the released models).

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think:opensource>" text "</think:opensource>"   # text, never a call
    block   := "<tool_calls:opensource>" ws (call ws)* ["</tool_calls:opensource>"]
    call    := "<tool_call:opensource>" NAME ["<tool_sep:opensource>"] ws (arg ws)* "</tool_call:opensource>"
    arg     := "<arg_key:opensource>" KEY "</arg_key:opensource>" ws
               "<arg_value:opensource>" VALUE "</arg_value:opensource>"

Hy3's template writes the block's open and a line break, then each call as
`<tool_call:opensource>NAME<tool_sep:opensource>` and a line break, each key and each value on its
own line, the call's close and a line break, and the block's close. Hy4 drops `<tool_sep>` (its
name ends at the first key or the call's close); both read the same. Every marker is one special
token of the vocabulary, the suffix included: vLLM's `hy_v3` takes the suffix from the tokenizer's
`token_suffix` setting, `hy_v4` and SGLang's `hunyuan` from the vocabulary; this format is the
`:opensource` spelling (Hy3-preview's bare tags, as in the engines' own tests, are text to it).

Everything inside a call is `glm_xml`'s, word for word (its machine, with these tags): NAME, KEY,
VALUE typed by the tool's schema (a string schema keeps the text verbatim, other values are JSON
as the template writes them), a value's close that ends it only before the next key or the call's
close, the dropped key or value openers, and every malformed shape. What the block adds is the
block machine's rule (`xml_blocks`): a block that holds no call is text; the block's close may be
missing after complete calls (the calls stand); text in the block after a call ends the block; a
call outside a block is text, as both engines read it.

Reasoning: `<think:opensource>..</think:opensource>` is text to this parser, so a block the model
writes while thinking is never a call.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from .glm_xml import GlmXmlStream
from .key_values import (
    KeyValueTags,
    key_value_constraints,
    key_value_writer,
    needs_declared_tools,
    tagged_pairs,
    writes_name,
    writes_value,
)
from .spec import Format

SUFFIX = ":opensource"


def _pair(name: str) -> tuple[str, str]:
    return f"<{name}{SUFFIX}>", f"</{name}{SUFFIX}>"


(CALL_OPEN, CALL_CLOSE), (KEY_OPEN, KEY_CLOSE), (VALUE_OPEN, VALUE_CLOSE) = map(
    _pair, ("tool_call", "arg_key", "arg_value")
)
HY = KeyValueTags(
    CALL_OPEN,
    CALL_CLOSE,
    KEY_OPEN,
    KEY_CLOSE,
    VALUE_OPEN,
    VALUE_CLOSE,
    block=_pair("tool_calls"),
    name_separator=f"<tool_sep{SUFFIX}>",
    think=_pair("think"),
)


class HunyuanXmlStream(GlmXmlStream):
    """Incremental parser for one response in Hunyuan's tool-call format (`glm_xml`'s machine with
    Hunyuan's tags and block)."""

    format_name = "hunyuan_xml"
    kv = HY

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = HY.think
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)


write = key_value_writer(HY, "\n")
"""As Hy3's template writes calls: the block's open, each call, key and value on its own line."""

required_constraint, auto_constraint = key_value_constraints(HY, tagged_pairs(HY, "\n"), "\n")

FORMAT = Format(
    "hunyuan_xml",
    "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>k"
    "</arg_key:opensource><arg_value:opensource>v</arg_value:opensource>..</tool_calls:opensource> (Tencent Hy3)",
    HunyuanXmlStream,
    write,
    markers=HY.markers,
    special_tokens=HY.markers,
    required=required_constraint,
    auto=auto_constraint,
    writes_name=writes_name,
    writes_value=writes_value(HY),
    needs_declared_tools=needs_declared_tools(HY),
    typed_values=True,
    vllm_names=("hy_v3", "hy_v4"),
    sglang_names=("hunyuan",),
    models="Tencent Hy3, Hy4",
)
