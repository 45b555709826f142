"""`step5_xml`: StepFun Step-5 tool calls: `qwen_xml`'s grammar, its content's whitespace kept.

Grammar: `qwen_xml`'s, word for word (its machine and tags): functions and their parameters, NAME,
the framing line breaks around a value, what ends a value, a dropped `</parameter>` or
`</function>`, a bare `<function=` for a declared tool, think blocks as text, the typing of values by
the tool's schema and every error case. vLLM 0.34 reads Step-5 with its Qwen3 parser told to keep
the content's whitespace (`vllm/tool_parsers/step5_tool_parser.py`), and so does this format: the
text before the first call reaches the client exactly as the model wrote it, leading and trailing
whitespace and the line breaks before the block included, where `qwen_xml` trims them. From the
first call on, `qwen_xml`'s rule holds: whitespace is markup unless text follows it (the line breaks
between blocks and after the last one, as in vLLM), and a response that starts with a call has no
leading whitespace. Text after a call is kept (vLLM's Qwen3 parser drops it; nothing the model
writes is lost here). The reasoning before the calls is
DeepSeek-R1's `<think>` pair (vLLM's `step5` reasoning parser), read as text by this parser.
Our template is `qwen_xml`'s (Step-5's own was not readable here), so `detect` and `auto` name
`qwen_xml` for it, which reads the same calls: pass `step5_xml` to keep the content as written.
"""

from __future__ import annotations

from .families.qwen_functions import QwenFunctions

FORMAT = QwenFunctions(
    "step5_xml",
    "<tool_call>\\n<function=f>\\n<parameter=p>\\nv\\n</parameter>\\n</function>\\n</tool_call> (Step-5, content kept)",
    keep_whitespace=True,
    vllm_names=("step5",),
    models="StepFun Step-5",
).format(__name__)
