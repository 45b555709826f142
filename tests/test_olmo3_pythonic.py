"""olmo3_pythonic behaviour: what is Olmo 3's own (the calls are llama_pythonic's machine, proven by the
corpus, the properties and the adapter tests every format gets): calls one per line inside Olmo's tags
(the reader's lines mode), values as Olmo 3's template writes them (`tojson`), the turn our template
renders, and the family's constraints in lines mode with JSON's literals."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers import parse
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import olmo3_pythonic as olmo

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"}},
                "required": ["city"],
            },
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
CALLS = [
    ("get_weather", {"city": "Paris", "days": 2, "metric": True, "unit": None}),
    ("save", {"path": "w.txt", "content": 'a "b"\nc é'}),
]
HISTORY = [
    {"role": "user", "content": "Weather in Paris, then save it"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in CALLS],
    },
    {"role": "tool", "content": "sunny"},
]


@pytest.fixture(scope="module")
def olmo_tokens():
    """SmolLM2's tokenizer with Olmo 3's ChatML and function-call tags added as special tokens, as they
    are in Olmo 3's instruct tokenizer (none ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    special = [olmo.START, olmo.END, "<functions>", "</functions>", "<|im_start|>", "<|im_end|>"]
    tok.add_special_tokens({"additional_special_tokens": special})
    return tok


def test_our_template_writes_olmo3s_turn(olmo_tokens):
    """Olmo 3's shape: content, then the tag right after it, calls joined by a line break, each value
    by `tojson` (`true`, `null`, JSON strings); tool results in the environment role."""
    out = render_template(olmo_tokens, "olmo3_pythonic", HISTORY, tools=TOOLS, add_generation_prompt=True)
    turn = out.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    assert turn == (
        'Checking.<function_calls>get_weather(city="Paris", days=2, metric=true, unit=null)\n'
        'save(path="w.txt", content="a \\"b\\"\\nc é")</function_calls>'
    )
    assert turn == "Checking." + olmo.FORMAT.write(CALLS)
    assert out.endswith("<|im_start|>environment\nsunny<|im_end|>\n<|im_start|>assistant\n")
    assert "<functions>" in out and '"name": "save"' in out
    result = both_paths("olmo3_pythonic", turn, TOOLS, olmo_tokens, eager=True)
    assert (result.content, calls_of(result)) == ("Checking.", CALLS)


def test_detect_names_this_format_for_our_template(olmo_tokens):
    from toolcall_parsers.detect import detect_template

    template = olmo.FORMAT.template_path.read_text(encoding="utf-8")
    assert detect_template(olmo_tokens, template, "olmo3_pythonic.jinja").parser == "olmo3_pythonic"


@pytest.mark.parametrize(
    "separator", ["\n", "\r\n", "\n\n", "\n  ", " \n", "\n\t"], ids=["lf", "crlf", "blank", "indent", "space", "tab"]
)
def test_any_whitespace_holding_a_line_break_separates_calls(separator):
    text = f"<function_calls>get_weather(city='A'){separator}save(path='p')</function_calls>"
    assert calls_of(both_paths("olmo3_pythonic", text, TOOLS)) == [
        ("get_weather", {"city": "A"}),
        ("save", {"path": "p"}),
    ]


@pytest.mark.parametrize("separator", [" ", ", ", ",\n", "; "])
def test_a_second_call_not_on_its_own_line_breaks_the_block_there(separator):
    """Lines, not a list: the first call counts, the rest is text (a comma even before a line break)."""
    text = f"<function_calls>get_weather(city='A'){separator}save(path='p')</function_calls>"
    result = both_paths("olmo3_pythonic", text, TOOLS)
    assert calls_of(result) == [("get_weather", {"city": "A"})]
    assert result.content == f"{separator}save(path='p')</function_calls>".strip()


def test_llama_lists_and_olmo_blocks_are_each_others_text():
    assert parse("olmo3_pythonic", '[get_weather(city="Paris")]', TOOLS).calls == []
    assert parse("llama_pythonic", olmo.FORMAT.write([("get_weather", {"city": "Paris"})]), TOOLS).calls == []


STRICT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_admits_the_writer_and_both_spellings_of_literals():
    grammar = tag_grammar(olmo.FORMAT.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    two = olmo.FORMAT.write([("get_weather", {"city": "Paris", "days": 2, "metric": False}), ("now", {})])
    assert grammar_accepts(grammar, two)
    assert grammar_accepts(grammar, two.replace("false", "False"))
    assert not grammar_accepts(grammar, two.replace("\n", ", "))  # one per line
    assert not grammar_accepts(grammar, olmo.FORMAT.write([("get_weather", {"days": 2})]))  # city is required
    assert not grammar_accepts(grammar, olmo.FORMAT.write([("get_weather", {"city": "A", "metric": 1})]))
    assert not grammar_accepts(grammar, olmo.FORMAT.write([("other", {})]))
    single = tag_grammar(olmo.FORMAT.required_constraint(ConstraintRequest({"get_weather": STRICT}, single=True)))
    assert grammar_accepts(single, olmo.FORMAT.write([("get_weather", {"city": "Paris"})]))
    assert not grammar_accepts(
        single, olmo.FORMAT.write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})])
    )


def test_auto_constraint_admits_prose_then_the_block():
    grammar = tag_grammar(olmo.FORMAT.auto_constraint(ConstraintRequest({"get_weather": STRICT})))
    prose = "Let me see [1] f(x)."
    assert grammar_accepts(grammar, prose)
    assert grammar_accepts(grammar, prose + olmo.FORMAT.write([("get_weather", {"city": "Paris", "metric": True})]))
    assert not grammar_accepts(grammar, prose + olmo.FORMAT.write([("get_weather", {"town": "Paris"})]))
