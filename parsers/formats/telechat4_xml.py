"""`telechat4_xml`: TeleChat4 / XingChen4 tool calls: `glm_xml`'s grammar with TeleChat's key and
value tags, `<tool_call>NAME<param_key>k</param_key><param_value>v</param_value></tool_call>`.

Grammar: `glm_xml`'s, word for word (its machine, with these tags): NAME up to a line break or the
first key, KEY, VALUE raw and typed by the tool's schema, a value's close that ends it only before
the next key or the call's close, the dropped openers, whitespace between the tags as markup, think
blocks as text, and every malformed shape. The facts are SGLang's `telechat4` / `xingchen4` /
`xing4_0` detectors (`sglang/srt/function_call/telechat4_detector.py`, one code under three names)
and vLLM's `telechat4` parser (`vllm/tool_parsers/telechat4_tool_parser.py`), in neither engine's
release of December 2026 (SGLang 0.5.23, vLLM 0.34.0), so no engine name is claimed here.

Where this reads otherwise than those parsers, and why: a value keeps its whitespace (they strip
it; a string is what the model wrote, as in `glm_xml`); a block holding JSON
(`<tool_call>{"name": ..}</tool_call>`, which SGLang reads and vLLM takes as a tool's name) or
`name{json}` is text, not a call: that is `hermes_json`'s grammar, and a model that writes it is
served by that format; text after the calls is kept (the engines drop it). Neither the model's
template nor its tokenizer is public: no marker is declared a special token, and our template
writes ChatML turns.
"""

from __future__ import annotations

from .families.key_values import KeyValueFormat, KeyValueTags

FORMAT = KeyValueFormat(
    "telechat4_xml",
    "<tool_call>f<param_key>k</param_key><param_value>v</param_value></tool_call> (TeleChat4, XingChen4)",
    KeyValueTags(
        key_open="<param_key>", key_close="</param_key>", value_open="<param_value>", value_close="</param_value>"
    ),
    models="TeleChat4, XingChen4 (China Telecom)",
).format(__name__)
