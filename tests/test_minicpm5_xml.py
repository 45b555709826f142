"""minicpm5_xml behaviour that is MiniCPM5's own (the rest is minimax_xml's machine, proven by the
corpus, the properties and the adapter tests every format gets): MiniCPM5's own chat template (its
history read back, `detect` on it), CDATA values in both paths, and the tokenizer's spellings of the
tags."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "save",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    },
]
HISTORY = [
    {"role": "user", "content": "Weather in Paris, then save it"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}},
            {
                "type": "function",
                "function": {"name": "save", "arguments": {"path": "w.txt", "content": "<b>a</b>\nb"}},
            },
        ],
    },
    {"role": "tool", "content": "sunny"},
    {"role": "tool", "content": "ok"},
]
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("save", {"path": "w.txt", "content": "<b>a</b>\nb"})]


def test_minicpm5s_own_template_writes_what_this_parser_reads(smollm2_tokenizer, model_template):
    """MiniCPM5's template: content, then each call after a line break, a value with markup or a
    line break in CDATA."""
    out = smollm2_tokenizer.apply_chat_template(
        HISTORY, chat_template=model_template("openbmb-MiniCPM5-1B"), tools=TOOLS, tokenize=False
    )
    turn = out.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    result = both_paths("minicpm5_xml", turn, TOOLS, smollm2_tokenizer, eager=True)
    assert calls_of(result) == CALLS
    assert result.content == "Checking."


def test_detect_names_this_format_for_minicpm5s_own_template(smollm2_tokenizer, model_template):
    from toolcall_parsers.detect import detect_template

    found = detect_template(smollm2_tokenizer, model_template("openbmb-MiniCPM5-1B"), "MiniCPM5")
    assert found.parser == "minicpm5_xml"


@pytest.mark.parametrize(
    ("function_space", "param_space"), [(" ", " "), ("\u0120", "\u0120"), ("", ""), ("\u0120", "")]
)
def test_the_tokenizers_spellings_of_the_tags(function_space, param_space):
    """As vLLM's tests write them (test_tokenizer_space_marker, test_collapsed_*): `Ġ` for the space,
    or no space. Not in the corpus: the benchmarks' byte-level tokenizer does not rebuild a `Ġ`."""
    text = (
        f'Sure.\n<function{function_space}name="get_weather"><param{param_space}name="city">Oslo</param>'
        f'<param{param_space}name="days">2</param></function>'
    )
    result = both_paths("minicpm5_xml", text, TOOLS, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Oslo", "days": 2})] and result.content == "Sure."


def test_cdata_holds_any_markup_and_must_be_followed_by_the_close():
    text = '<function name="save"><param name="content"><![CDATA[</param></function>]]></param></function>'
    assert calls_of(parse("minicpm5_xml", text, TOOLS)) == [("save", {"content": "</param></function>"})]
    broken = '<function name="save"><param name="content"><![CDATA[x]]>y</function> after'
    assert parse("minicpm5_xml", broken, TOOLS).calls == []
