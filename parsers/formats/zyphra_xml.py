"""`zyphra_xml`: Zyphra ZAYA1 tool calls: `qwen_xml`'s grammar inside Zyphra's own block tags.

Grammar, as this machine reads it::

    output    := (text | think | block | bare)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (function ws)* [END]           # END may be missing after complete functions
    bare      := function (ws function)* [ws END]        # START dropped: declared tools only
    function  := "<function=" NAME ">" ws (parameter ws)* "</function>"
    parameter := "<parameter=" NAME ">" ["\\n"] VALUE ["\\n"] [PARAM_CLOSE]

with START = `<zyphra_tool_call>` and END = `</zyphra_tool_call>`. Only the block's tags differ from
`qwen_xml`: vLLM 0.34 reads ZAYA1 with its Qwen3 parser and these two tags (`vllm/parser/zaya.py`),
so everything else is that format's, word for word (its machine with these tags): NAME, the framing
line breaks around a value, what ends a value, a dropped `</parameter>` or `</function>`, a bare
`<function=` for a declared tool, the typing of values by the tool's schema and every error case.
Qwen's `<tool_call>` is text here.
"""

from __future__ import annotations

from .qwen_xml import (
    FUNCTION_CLOSE,
    FUNCTION_OPEN,
    PARAM_CLOSE,
    PARAM_OPEN,
    QwenXmlStream,
    block_constraints,
    block_writer,
    may_hold_bare_call,
    value_ends,
    writable_values,
    writes_name,
)
from .spec import Format
from .xml_blocks import XmlBlockTags

START, END = "<zyphra_tool_call>", "</zyphra_tool_call>"
TAGS = XmlBlockTags(START, END, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, call_word="function")


class ZayaXmlStream(QwenXmlStream):
    """Incremental parser for one response in ZAYA1's tool-call format (`qwen_xml`'s machine with
    Zyphra's block tags)."""

    format_name = "zyphra_xml"
    tags = TAGS
    parameter_ends = value_ends(TAGS)


required_constraint, auto_constraint = block_constraints(TAGS)

FORMAT = Format(
    "zyphra_xml",
    "<zyphra_tool_call>\\n<function=f>\\n<parameter=p>\\nv\\n</parameter>\\n</function>\\n</zyphra_tool_call> (ZAYA1)",
    ZayaXmlStream,
    block_writer(TAGS),
    markers=(START, END, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    required=required_constraint,
    auto=auto_constraint,
    writes_name=writes_name,
    writes_value=writable_values(TAGS),
    needs_declared_tools=may_hold_bare_call,
    other_openers=((FUNCTION_OPEN, None),),  # a bare call to a declared tool: strict writes the block
    typed_values=True,
    vllm_names=("zaya", "zaya_xml"),
    models="Zyphra ZAYA1",
)
