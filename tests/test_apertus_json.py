"""apertus_json behaviour: what is Apertus' own (the rest is the marked_json family's machine,
proven by the corpus, the properties and the adapter tests every format gets): Apertus' own chat
template (its history read back, `detect` on it), its reasoning markers, and the one-key call
object, which no other format reads."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse
from toolcall_parsers.formats import apertus_json as apertus

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "save",
            "description": "Write a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    },
]
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("save", {"path": "w.txt", "content": "a\nb"})]
HISTORY = [
    {"role": "user", "content": "Weather in Paris, then save it"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in CALLS],
    },
    {"role": "tool", "content": '"sunny"'},
    {"role": "tool", "content": '"ok"'},
]


@pytest.fixture(scope="module")
def apertus_tokens(smollm2_dir):
    """SmolLM2's tokenizer with Apertus' tool and reasoning markers added as special tokens, as they
    are in Apertus' vocabulary (no Apertus tokenizer ships on PyPI)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    tok.add_special_tokens({"additional_special_tokens": [apertus.START, apertus.END, *apertus.THINK_MARKERS]})
    return tok


def test_apertus_own_template_writes_what_this_parser_reads(apertus_tokens, model_template):
    """Apertus' template: the content, then every call in one list, then the results in the same
    assistant turn."""
    out = apertus_tokens.apply_chat_template(
        HISTORY, chat_template=model_template("Apertus-8B-Instruct"), tokenize=False
    )
    turn = out.split("<|assistant_start|>")[1].split("<|assistant_end|>")[0]
    assert turn.endswith('<|tools_suffix|>["sunny", "ok"]')
    calls_text = turn.removesuffix('["sunny", "ok"]')
    result = both_paths("apertus_json", calls_text, TOOLS, apertus_tokens, eager=True)
    assert calls_of(result) == CALLS
    assert result.content == "Checking."


def test_detect_names_this_format_for_apertus_own_template(apertus_tokens, model_template):
    from toolcall_parsers.detect import detect_template

    template = model_template("Apertus-8B-Instruct")
    assert detect_template(apertus_tokens, template, "Apertus").parser == "apertus_json"


def test_the_one_key_shape_is_apertus_own():
    """`{"NAME": {..}}` is a call here and nowhere else: the same object after another format's
    marker is not a call, and a call object of the common shape is not one here."""
    assert calls_of(parse("apertus_json", '<|tools_prefix|>[{"save": {"path": "a"}}]', TOOLS)) == [
        ("save", {"path": "a"})
    ]
    assert parse("hermes_json", '<tool_call>{"save": {"path": "a"}}</tool_call>', TOOLS).calls == []
    common = '<|tools_prefix|>[{"name": "save", "arguments": {"path": "a"}}]<|tools_suffix|>'
    assert parse("apertus_json", common, TOOLS).calls == []


def test_reasoning_markers_are_apertus_own():
    """A block written inside `<|inner_prefix|>..<|inner_suffix|>` is text; `<think>` means nothing."""
    inner = '<|inner_prefix|>maybe <|tools_prefix|>[{"save": {}}]<|tools_suffix|><|inner_suffix|>'
    assert parse("apertus_json", inner, TOOLS).calls == []
    think = '<think><|tools_prefix|>[{"save": {}}]<|tools_suffix|></think>'
    assert calls_of(parse("apertus_json", think, TOOLS)) == [("save", {})]
