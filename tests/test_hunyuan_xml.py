"""hunyuan_xml behaviour: what is Hunyuan's own (the rest is glm_xml's machine, proven by its tests,
this format's corpus, the properties and the adapter tests every format gets): the suffixed tags as
single tokens, Hy3's own chat template (its history read back, `detect` on it), Hy4's calls
without the separator, the block, and the constraints written as the template writes calls."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.core.reasoning import Reasoning
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import hunyuan_xml as hy

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
    {"type": "function", "function": {"name": "now", "parameters": {"type": "object", "properties": {}}}},
]
HISTORY = [
    {"role": "user", "content": "Paris?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "one city",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}},
            {"type": "function", "function": {"name": "now", "arguments": {}}},
        ],
    },
    {"role": "tool", "content": "sunny"},
    {"role": "tool", "content": "noon"},
]
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("now", {})]
BAR = "\uff5c"  # the fullwidth bar of Hy3's turn markers


def turn_token(name: str) -> str:
    return f"<{BAR}hy_{name}{hy.SUFFIX}{BAR}>"


TURN_TOKENS = [turn_token(name) for name in ("begin_of_sentence", "User", "Assistant", "eos")]


@pytest.fixture(scope="module")
def hy_tokens():
    """SmolLM2's tokenizer with Hy3's suffixed tags and turn markers added as special tokens, as they
    are in Hy3's vocabulary (no Hunyuan tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": [*hy.HY.markers, *hy.HY.think, *TURN_TOKENS]})
    return tok


def turn_of(rendered: str) -> str:
    """The assistant turn's text, as the model would have written it."""
    return rendered.split(turn_token("Assistant"))[1].split(turn_token("eos"))[0]


def test_hy3s_own_template_writes_what_this_parser_reads(hy_tokens, model_template):
    """Hy3's template: reasoning, content, then the block: each call, key and value on its own line."""
    out = hy_tokens.apply_chat_template(
        HISTORY, chat_template=model_template("tencent-Hy3"), tools=TOOLS, tokenize=False
    )
    turn = turn_of(out)
    assert turn.endswith(hy.write(CALLS))
    result = both_paths("hunyuan_xml", turn, TOOLS, hy_tokens, eager=True)
    assert calls_of(result) == CALLS
    assert result.content == f"<think{hy.SUFFIX}>one city</think{hy.SUFFIX}>Checking."


def test_our_template_writes_the_same_turn(hy_tokens, model_template):
    ours = render_template(hy_tokens, "hunyuan_xml", HISTORY, tools=TOOLS, add_generation_prompt=True)
    theirs = hy_tokens.apply_chat_template(
        HISTORY, chat_template=model_template("tencent-Hy3"), tools=TOOLS, tokenize=False, add_generation_prompt=True
    )
    assert turn_of(ours) == turn_of(theirs)
    assert ours.endswith(turn_token("Assistant") + f"<think{hy.SUFFIX}></think{hy.SUFFIX}>")
    assert "<tool_response:opensource>\nsunny\n</tool_response:opensource>" in ours


def test_detect_names_this_format_for_hy3s_own_template(hy_tokens, model_template):
    from toolcall_parsers.detect import detect_template

    assert detect_template(hy_tokens, model_template("tencent-Hy3"), "Hy3").parser == "hunyuan_xml"


def test_hy4_calls_without_the_separator_read_the_same(hy_tokens):
    hy4 = hy.write(CALLS).replace(hy.HY.name_separator, "")
    assert calls_of(both_paths("hunyuan_xml", hy4, TOOLS, hy_tokens, eager=True)) == CALLS


def test_glm_tags_and_hunyuan_tags_are_each_others_text():
    glm = "<tool_call>now</tool_call>"
    assert parse("hunyuan_xml", glm, TOOLS).calls == []
    assert parse("glm_xml", hy.write(CALLS), TOOLS).calls == []


def test_required_accepts_what_the_template_writes_and_pins_the_schema():
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    grammar = tag_grammar(hy.required_constraint(ConstraintRequest(schemas)))
    assert grammar_accepts(grammar, hy.write(CALLS))
    assert grammar_accepts(grammar, hy.write([("get_weather", {"city": "Oslo"})]))
    assert not grammar_accepts(grammar, hy.write([("get_weather", {"days": 2})]))  # city is required
    assert not grammar_accepts(grammar, hy.write([("sleep", {})]))
    closed = {"get_weather": {**schemas["get_weather"], "additionalProperties": False}}
    grammar = tag_grammar(hy.required_constraint(ConstraintRequest(closed)))
    assert not grammar_accepts(grammar, hy.write([("get_weather", {"city": "Oslo", "days": "two"})]))
    counted = {"count": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    grammar = tag_grammar(hy.required_constraint(ConstraintRequest(counted)))
    assert grammar_accepts(grammar, hy.write([("count", {"n": 3})]))
    assert not grammar_accepts(grammar, hy.write([("count", {"n": "three"})]))


def bare(text: str) -> str:
    """Hy3-preview's spelling of `text`: the same tags without the suffix."""
    return text.replace(hy.SUFFIX, "")


def test_hy3_previews_bare_tags_read_as_the_suffixed_ones(hy_tokens):
    """The engines' own tests write Hy3-preview's bare tags: the same calls, reasoning the same text."""
    text = "<think>one city</think>Checking." + bare(hy.write(CALLS))
    result = both_paths("hunyuan_xml", text, TOOLS, hy_tokens, eager=True)
    assert calls_of(result) == CALLS
    assert result.content == "<think>one city</think>Checking."
    hy4 = bare(hy.write(CALLS)).replace(hy.BARE.name_separator or "", "")
    assert calls_of(both_paths("hunyuan_xml", hy4, TOOLS, hy_tokens, eager=True)) == CALLS


@pytest.mark.parametrize(
    "text",
    [
        "<tool_calls><tool_call:opensource>now</tool_call:opensource></tool_calls>",
        "<tool_calls:opensource><tool_call>now</tool_call></tool_calls:opensource>",
        "<think>maybe <tool_calls><tool_call>now</tool_call></tool_calls></think>",
    ],
    ids=["suffixed call in a bare block", "bare call in a suffixed block", "bare block in bare reasoning"],
)
def test_a_blocks_tag_fixes_its_spelling_and_bare_reasoning_is_text(text):
    result = both_paths("hunyuan_xml", text, TOOLS)
    assert result.calls == [] and result.content == text


def test_reasoning_parser_splits_bare_think_blocks_and_opens_at_the_bare_block():
    fmt = FORMATS["hunyuan_xml"]
    assert ("<think>", "</think>") in fmt.think_pairs and "<tool_calls>" in fmt.call_openers
    split = fmt.reasoning_split()
    pieces = split.feed("<think>plan" + bare(hy.write(CALLS))) + split.close()
    reasoning = "".join(p.text for p in pieces if isinstance(p, Reasoning))
    answer = "".join(p.text for p in pieces if not isinstance(p, Reasoning))
    assert reasoning == "plan" and calls_of(parse("hunyuan_xml", answer, TOOLS)) == CALLS


def test_required_accepts_a_block_in_either_spelling():
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    grammar = tag_grammar(hy.required_constraint(ConstraintRequest(schemas)))
    assert grammar_accepts(grammar, hy.write(CALLS)) and grammar_accepts(grammar, bare(hy.write(CALLS)))
    assert not grammar_accepts(grammar, bare(hy.write([("sleep", {})])))
    mixed = hy.write([CALLS[0]]).replace(hy.HY.block[1], bare(hy.write([CALLS[1]])).removeprefix(hy.BARE.block[0]))
    assert not grammar_accepts(grammar, mixed)  # one spelling a block


def test_strict_auto_holds_the_bare_spelling_to_the_declared_tools():
    """Strict `auto`: the bare block's open is a trigger, so an undeclared tool written in the bare
    spelling (which the parser reads as a call) is refused, as in the suffixed one."""
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    grammar = tag_grammar(hy.auto_constraint(ConstraintRequest(schemas)))
    for spell in (lambda text: text, bare):
        good = "Checking." + spell(hy.write(CALLS))
        assert grammar_accepts(grammar, good) and calls_of(parse("hunyuan_xml", good, TOOLS)) == CALLS
        evil = "Checking." + spell(hy.write([("sleep", {})]))
        assert [c.name for c in parse("hunyuan_xml", evil, TOOLS).calls] == ["sleep"]  # a call indeed
        assert not grammar_accepts(grammar, evil), evil
