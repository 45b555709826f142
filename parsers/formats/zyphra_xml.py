"""`zyphra_xml`: Zyphra ZAYA1 tool calls: `qwen_xml`'s grammar inside Zyphra's own block tags.

Grammar: `qwen_xml`'s, with START = `<zyphra_tool_call>` and END = `</zyphra_tool_call>` for its block
tags. vLLM 0.34 reads ZAYA1 with its Qwen3 parser and these two tags (`vllm/parser/zaya.py`), so
everything else is that format's, word for word (its machine with these tags): functions and their
parameters, NAME, the framing line breaks around a value, what ends a value, a dropped
`</parameter>` or `</function>`, a bare `<function=` for a declared tool, think blocks as text, the
typing of values by the tool's schema and every error case. Qwen's `<tool_call>` is text here.
"""

from __future__ import annotations

from .families.qwen_functions import QwenFunctions

FORMAT = QwenFunctions(
    "zyphra_xml",
    "<zyphra_tool_call>\\n<function=f>\\n<parameter=p>\\nv\\n</parameter>\\n</function>\\n</zyphra_tool_call> (ZAYA1)",
    start="<zyphra_tool_call>",
    end="</zyphra_tool_call>",
    vllm_names=("zaya", "zaya_xml"),
    models="Zyphra ZAYA1",
).format(__name__)
