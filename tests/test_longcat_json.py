"""longcat_json behaviour that is LongCat's own (the rest is hermes_json's machine, proven by the
corpus, the properties and the adapter tests every format gets): LongCat's tags as single tokens,
and the two tag families being each other's text."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse
from toolcall_parsers.formats import longcat_json as longcat

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CALL = '<longcat_tool_call>\n{"name": "get_weather", "arguments": {"city": "Tokyo"}}\n</longcat_tool_call>'


@pytest.fixture(scope="module")
def longcat_tokens(smollm2_dir):
    """SmolLM2's tokenizer with LongCat's tags added as single tokens, as in LongCat's vocabulary."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    tok.add_tokens([longcat.START, longcat.END], special_tokens=True)
    return tok


def test_tags_as_single_tokens_stream_the_same(longcat_tokens):
    text = "Let me check.\n" + CALL + "\n" + CALL.replace("Tokyo", "Osaka")
    assert len(longcat_tokens.encode(longcat.START, add_special_tokens=False)) == 1
    result = both_paths("longcat_json", text, TOOLS, longcat_tokens, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Tokyo"}), ("get_weather", {"city": "Osaka"})]
    assert result.content == "Let me check."


def test_qwen_tags_and_longcat_tags_are_each_others_text():
    qwen = CALL.replace("longcat_tool_call", "tool_call")
    assert parse("longcat_json", qwen, TOOLS).calls == []
    assert parse("hermes_json", CALL, TOOLS).calls == []
    assert calls_of(parse("longcat_json", qwen + CALL, TOOLS)) == [("get_weather", {"city": "Tokyo"})]


def test_the_writer_and_the_constraint_spell_a_call_alike():
    """The required constraint's tag is the writer's text up to the arguments and after them."""
    from toolcall_parsers.formats.spec import ConstraintRequest

    written = longcat.FORMAT.write([("get_weather", {"city": "Tokyo"})])
    element = longcat.FORMAT.required_constraint(ConstraintRequest({"get_weather": {"type": "object"}}))["format"][
        "tags"
    ][0]
    assert written == element["begin"] + '{"city": "Tokyo"}' + element["end"]
