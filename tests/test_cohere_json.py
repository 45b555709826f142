"""cohere_json behaviour: what is Cohere's own (the rest is the marked_json family's machine,
proven by the corpus, the properties and the adapter tests every format gets): Cohere's own chat
templates (their history read back, `detect` on them), the plan as reasoning, and Cohere's call
keys, which no other format reads."""

from __future__ import annotations

import json

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import get_format, parse
from toolcall_parsers.formats import cohere_json as cohere

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
        "content": "",
        "tool_plan": "Two calls.",
        "reasoning_content": "Two calls.",
        "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": arguments}}
            for n, (name, arguments) in enumerate(CALLS)
        ],
    },
    {"role": "tool", "tool_call_id": "c0", "content": "sunny"},
    {"role": "tool", "tool_call_id": "c1", "content": "ok"},
]
TEMPLATES = ["Cohere2MoE", "CohereForAI-c4ai-command-r7b-12-2024-tool_use"]


@pytest.fixture(scope="module")
def cohere_tokens(smollm2_dir):
    """SmolLM2's tokenizer with Cohere's markers added as special tokens, as they are in Cohere's
    vocabularies (no Cohere tokenizer ships on PyPI)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    markers = [cohere.START, cohere.END, *cohere.THINK_MARKERS, "<|START_RESPONSE|>", "<|END_RESPONSE|>"]
    turns = ["<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|USER_TOKEN|>"]
    tok.add_special_tokens({"additional_special_tokens": markers + turns + ["<|SYSTEM_TOKEN|>"]})
    return tok


@pytest.mark.parametrize("name", TEMPLATES)
def test_cohere_own_template_writes_what_this_parser_reads(cohere_tokens, model_template, name):
    """Cohere's templates: the plan in the thinking block, then every call, one per line, numbered."""
    out = cohere_tokens.apply_chat_template(HISTORY, chat_template=model_template(name), tools=TOOLS, tokenize=False)
    turn = next(part for part in out.split("<|CHATBOT_TOKEN|>")[1:] if "<|START_ACTION|>" in part)
    turn = turn.split("<|END_OF_TURN_TOKEN|>")[0]
    assert turn.startswith("<|START_THINKING|>Two calls.<|END_THINKING|><|START_ACTION|>[\n")
    result = both_paths("cohere_json", turn, TOOLS, cohere_tokens, eager=True)
    assert calls_of(result) == CALLS
    assert result.content == "<|START_THINKING|>Two calls.<|END_THINKING|>"


@pytest.mark.parametrize("name", TEMPLATES)
def test_detect_names_this_format_for_cohere_own_templates(cohere_tokens, model_template, name):
    from toolcall_parsers.detect import detect_template

    assert detect_template(cohere_tokens, model_template(name), name).parser == "cohere_json"


def test_cohere_keys_are_cohere_own():
    """`tool_name` / `parameters` make a call here and in no other format."""
    call = '{"tool_call_id": "0", "tool_name": "save", "parameters": {"path": "a"}}'
    assert calls_of(parse("cohere_json", f"<|START_ACTION|>[{call}]<|END_ACTION|>", TOOLS)) == [("save", {"path": "a"})]
    assert parse("hermes_json", f"<tool_call>{call}</tool_call>", TOOLS).calls == []
    assert parse("granite_json", f"<|tool_call|>[{call}]", TOOLS).calls == []


def test_a_block_in_the_plan_is_text():
    plan = '<|START_THINKING|>I will write <|START_ACTION|>[{"tool_name": "save"}]<|END_ACTION|><|END_THINKING|>'
    assert parse("cohere_json", plan, TOOLS).calls == []


def _common_list(start: str, end: str = "") -> str:
    """CALLS as a list of common call objects (`name` / `arguments`) between `start` and `end`."""
    objects = ", ".join(json.dumps({"name": name, "arguments": arguments}) for name, arguments in CALLS)
    return f"{start}[{objects}]{end}"


LISTS = {
    "cohere_json": cohere.write(CALLS),
    "granite_json": get_format("granite_json").write(CALLS),
    "xlam_json": get_format("xlam_json").write(CALLS),
    "hermes_json": _common_list("<tool_call>", "</tool_call>"),
    "mistral_json": _common_list("[TOOL_CALLS]"),
}


@pytest.mark.parametrize("fmt", sorted(LISTS))
def test_a_comma_dropped_between_two_calls_of_a_list_is_both_calls_never_half(fmt):
    """An outside review: `[{..} {..}]` was the first call, and the rest of the list as content with
    its opening gone. A comma dropped between two call objects is read as if written: both calls.
    The list reader (`core.json_calls`) serves every format of JSON call lists, so all read it so."""
    text = LISTS[fmt]
    assert "}, {" in text
    for spelling in ("} {", "}{", "}\n{"):
        result = both_paths(fmt, "Sure. " + text.replace("}, {", spelling), TOOLS, eager=True)
        assert (result.content, calls_of(result)) == ("Sure.", CALLS), spelling


def test_inside_arguments_a_dropped_comma_is_still_no_json():
    text = '<tool_call>{"name": "save", "arguments": {"path": [{"a": 1} {"b": 2}]}}</tool_call>'
    assert both_paths("hermes_json", text, TOOLS).calls == []
