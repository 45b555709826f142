"""`solar_xml`: Upstage Solar Open2 tool calls: `glm_xml`'s grammar in Solar's special tokens, the
key's close opening the value: `<|tool_call:start|>NAME\\n` then
`<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>\\n` per argument, then `<|tool_call:end|>`.

Grammar: `glm_xml`'s (its machine, with these tags), but for the value's open, which Solar does not
write: the value starts right after `<|tool_arg:value|>`, so its leading whitespace is data, as
its trailing whitespace is. NAME is the rest of the call's first line; KEY, VALUE raw and typed by
the tool's schema, a value's close that ends it only before the next key or the call's close, a
dropped value's close before the next key, the whitespace between a value's close and the next tag
as markup, every malformed shape: `glm_xml`'s. One hook of the family (`next_call_ends_call`): a
`<|tool_call:start|>` after a value, or inside one, ends the call whose close (and the value's) the
model dropped, and starts the next, as vLLM reads it (a `<|tool_arg:start|>` inside a value ends it
too, as in `glm_xml`; Solar's other tags are the value's data unless what follows them ends it).
Reasoning is `<|think:start|>..<|think:end|>`, text to this parser. The facts are vLLM main's
`solar_open2` parser and its tests (`vllm/tool_parsers/solar_open2_tool_parser.py`,
`tests/tool_parsers/test_solar_open2_tool_parser.py`), in no vLLM release of December 2026, so no
engine name is claimed here.

Where this reads otherwise than vLLM's parser, and why: a key given twice keeps its last value,
logged (vLLM keeps the first; Upstage's own vLLM patch the last: one rule for the whole family); an
empty NAME is no call (vLLM returns a call named ""); a value whose close was dropped right before
the call's close is text up to it (vLLM reads the call: one rule for the family, where such a value
may be cut short); a call the output cuts off is text, as in every format; text after and between
calls is kept (vLLM drops it). The model's template and tokenizer were not readable here: no marker is declared a
special token, and our template writes ChatML turns around Solar's call layout.
"""

from __future__ import annotations

from .families.key_values import KeyValueFormat, KeyValueTags

SOLAR = KeyValueTags(
    "<|tool_call:start|>",
    "<|tool_call:end|>",
    key_open="<|tool_arg:start|>",
    key_close="<|tool_arg:value|>",
    value_open="",
    value_close="<|tool_arg:end|>",
    think=("<|think:start|>", "<|think:end|>"),
    next_call_ends_call=True,
)

FORMAT = KeyValueFormat(
    "solar_xml",
    "<|tool_call:start|>f\\n<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>\\n<|tool_call:end|> (Solar Open2)",
    SOLAR,
    line="\n",
    key_line="",
    models="Upstage Solar Open2",
).format(__name__)
