"""Argument values are data: a raw-value format reads back every string value as written, its
whitespace included, and trims only the framing its own chat template writes around a value; and a
parameter whose schema is a union of a string and other types reads a value written as another
member as that member (`core.typed_values`), streamed as it is finished.

The raw-value formats are the schema-typed ones (`Format.typed_values`): a string value is unquoted
text, so nothing but the format's own rules says where it starts and ends. What a format cannot carry
at all (a value holding its closing tag) its `writes_value` refuses, and the property leaves out."""

from __future__ import annotations

import json

import pytest
from helpers import both_paths, counter_ids
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolcall_parsers import FORMATS, CallArgs, get_format
from toolcall_parsers.core.logs import logs_silenced

RAW_VALUE_FORMATS = sorted(name for name, fmt in FORMATS.items() if fmt.typed_values)
STRING_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "edit",
            "description": "Replace text in a file.",
            "parameters": {"type": "object", "properties": {"p": {"type": "string"}}, "required": ["p"]},
        },
    }
]

QUOTES = {"minicpm5_xml": ("<![CDATA[", "]]>")}
"""Formats whose writer quotes a value that needs it (MiniCPM5's template: CDATA); the others write
every string value verbatim, always inside the same framing (Qwen3-Coder's `<parameter=p>\\n` and
`\\n</parameter>`, Seed-OSS's bare `<parameter=p>` and `</parameter>`)."""

PIECES = st.sampled_from([" ", "  ", "\n", "\n\n", "\r\n", "\r", "\t", " \n ", "<", ">", "/", "=", '"', "x", "é"])


@st.composite
def string_values(draw: st.DrawFn, fmt: str) -> str:
    """Any text, heavy in whitespace at both ends, and now and then the format's own markers."""
    markers = st.sampled_from(FORMATS[fmt].markers or ("<",))
    parts = draw(st.lists(st.one_of(PIECES, st.text(max_size=6), markers), max_size=8))
    value = "".join(parts)
    writes = FORMATS[fmt].writes_value
    return value if writes is None or writes(value) else draw(st.lists(PIECES, max_size=6).map("".join))


def _value_as_written(fmt: str, value: str) -> str:
    """What the writer writes for `value` where it writes a value that needs no quoting and no
    framing of its own (the rest of the text must be the same)."""
    sentinel = "SENTINEL"
    around = FORMATS[fmt].write([("edit", {"p": sentinel})])
    before, after = around.split(sentinel)
    text = FORMATS[fmt].write([("edit", {"p": value})])
    assert text.startswith(before) and text.endswith(after), text
    return text[len(before) : len(text) - len(after)]


@pytest.mark.parametrize("fmt", RAW_VALUE_FORMATS)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_a_string_value_reads_back_exactly_and_only_its_framing_is_written(fmt, data):
    """The writer writes the value verbatim in the framing it writes around every value (or quoted,
    where the format quotes), and the finished parse and the stream (every chunking, the eager
    policy too) read back exactly the value: the framing is taken off and nothing more."""
    value = data.draw(string_values(fmt))
    opening, closing = QUOTES.get(fmt, ("", ""))
    assert _value_as_written(fmt, value) in (value, opening + value + closing)
    with logs_silenced():
        result = both_paths(fmt, FORMATS[fmt].write([("edit", {"p": value})]), STRING_TOOL, eager=True)
    assert [(call.name, call.arguments) for call in result.calls] == [("edit", {"p": value})]


MODEL_TEMPLATES = {
    "ByteDance-Seed-OSS": "seed_xml",
    "deepseek-ai-DeepSeek-V3.2": "deepseek_dsml",
    "deepseek-ai-DeepSeek-V4": "deepseek_dsml",
    "GLM-4.6": "glm_xml",
    "GLM-4.7-Flash": "glm_xml",
    "inclusionai-ling-3.0-flash": "glm_xml",
    "Kimi-K3": "kimi_xtml",
    "MiniMax-M2": "minimax_xml",
    "MiniMax-M3": "minimax3_xml",
    "muse-glimmer": "muse_atem",
    "openbmb-MiniCPM5-1B": "minicpm5_xml",
    "poolside-Laguna-XS.2": "glm_xml",
    "Qwen3-Coder": "qwen_xml",
    "Qwen3.5-4B": "qwen_xml",
    "StepFun3.5-Flash": "qwen_xml",
    "tencent-Hy3": "hunyuan_xml",
}
"""The real templates (llama.cpp's collection, `model_template`) of models that write a raw-value
format, as `test_detect` detects them."""

EDIT_VALUES = ["def f():\n    return 1\n", "\n    indented", "  spaced  ", "\n", " ", "a\r\n", "\n\nx\n\n", "\t"]
"""What a code edit's `oldString` / `newString` hold: whitespace at the ends that is part of the file."""


@pytest.mark.parametrize(("model", "fmt"), sorted(MODEL_TEMPLATES.items()))
def test_the_models_own_template_writes_values_that_read_back_exactly(model_template, model, fmt):
    """The assistant turn a model's own chat template (llama.cpp's collection) writes for a code
    edit reads back with every value exactly as the client sent it: the parser takes off what that
    template writes around a value and nothing more (Seed-OSS writes a value right between its tags,
    so a final newline of `newString` is the file's)."""
    from toolcall_parsers.detect import assistant_turn, template_renderer, turn_closing

    render = template_renderer(model_template(model))

    def bound(messages, *, add_generation_prompt):
        return render(messages, add_generation_prompt=add_generation_prompt, tools=STRING_TOOL)

    for value in EDIT_VALUES:
        call = {"id": "c1", "type": "function", "function": {"name": "edit", "arguments": {"p": value}}}
        messages = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
        turn = assistant_turn(bound, messages, turn_closing(bound))
        with logs_silenced():
            result = both_paths(fmt, turn, STRING_TOOL)
        assert [(c.name, c.arguments) for c in result.calls] == [("edit", {"p": value})], turn


# -- unions of a string and other types ---------------------------------------------------------------

UNIONS = [
    {"type": ["string", "integer"]},
    {"type": ["number", "string"]},
    {"type": ["string", "object"]},
    {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]},
    {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "string"}, {"type": "null"}]},
]
MEMBERS = {
    "integer": st.integers(-(10**12), 10**12),
    "number": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**6), 10**6),
    "boolean": st.booleans(),
    "null": st.none(),
    "object": st.dictionaries(
        st.from_regex("[a-z]{1,6}", fullmatch=True), st.integers() | st.text("xyz ", max_size=4), min_size=1
    ),
    "array": st.lists(st.integers(), min_size=1, max_size=4),
}
"""A value of each member. No empty object or array: `minimax3_xml` writes them as an empty element,
which is the empty string where a string is admitted."""
PLAIN_STRINGS = st.text("bcdghkmopqwxyz -_,:!?\n", max_size=12)
"""Strings no other member is spelled as (no digit, bracket, quote, nor the letters of a literal)."""


def _tool(schema: dict) -> list[dict]:
    parameters = {"type": "object", "properties": {"p": schema}}
    return [{"type": "function", "function": {"name": "f", "parameters": parameters}}]


def _members(schema: dict) -> list[str]:
    listed = schema.get("type") or [member["type"] for member in schema["anyOf"]]
    return [kind for kind in listed if kind != "string"]


@pytest.mark.parametrize("fmt", RAW_VALUE_FORMATS)
@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_union_reads_the_member_a_value_is_written_as(fmt, data):
    """`["string", "integer"]` given `42` is 42, `["string", "object"]` given `{"a": 1}` the object
    (as vLLM's qwen3_coder / glm45 / glm47 read them), and a string no other member is spelled as
    stays that string; finished, streamed in every chunking, and the eager stream's pieces never
    take back what they sent (they join to the finished arguments' JSON text, which decodes to them)."""
    schema = data.draw(st.sampled_from(UNIONS))
    value = data.draw(st.one_of(PLAIN_STRINGS, *(MEMBERS[kind] for kind in _members(schema))))
    writes = FORMATS[fmt].writes_value
    if writes is not None and not writes(value):
        value = data.draw(PLAIN_STRINGS)
    tools = _tool(schema)
    text = FORMATS[fmt].write([("f", {"p": value})])
    with logs_silenced():
        result = both_paths(fmt, text, tools, eager=True)  # the eager stream's pieces join to arguments_json
    assert [(call.name, call.arguments) for call in result.calls] == [("f", {"p": value})], text
    assert [json.loads(call.arguments_json) for call in result.calls] == [{"p": value}]


@pytest.mark.parametrize("fmt", RAW_VALUE_FORMATS)
def test_a_union_streams_a_string_before_it_ends_and_holds_what_may_be_another_member(fmt):
    """The union's string streams as soon as the text can be nothing else (a long argument still
    arrives as it is written), and a value that may still be the other member sends nothing before
    its end: `4` may become 42, so no `"4` goes out to be taken back (a format that says a value's
    type in its markup, as DSML's `string="false"` does, writes 42 so)."""
    tools = _tool({"type": ["string", "integer"]})
    sent = {}
    for value in ("hello world", 42):
        text = FORMATS[fmt].write([("f", {"p": value})])
        cut = text.index(str(value)) + len(str(value)) - 1  # the value's last character not yet written
        stream = get_format(fmt).stream(tools, counter_ids, streaming="eager")
        with logs_silenced():
            sent[value] = "".join(e.fragment for e in stream.feed(text[:cut]) if isinstance(e, CallArgs))
    assert '"hello' in sent["hello world"] and "4" not in sent[42], sent
