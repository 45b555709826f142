"""xlam_json behaviour: what is xLAM's own (the rest is marked_json's machine, proven by the corpus,
the properties and the adapter tests every format gets): where a bare list opens a block and where
it is text, the spellings vLLM's `xlam` also reads that stay text, our template's history read back
and `detect` on it, and the `required` constraint."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import xlam_json as xlam

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
LIST = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
CALLS = [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        (LIST, None),
        ("\n  " + LIST, None),
        ("Checking.\n" + LIST, "Checking."),
        ("Checking.\r\n  " + LIST + "\nDone.", "Checking.\nDone."),
        ("<think>Paris.</think>" + LIST, "<think>Paris.</think>"),
        ("Paris, then.</think>\n\n" + LIST, "Paris, then.</think>"),  # the template opened the reasoning
    ],
)
def test_a_list_opening_the_turn_or_a_line_is_a_call(text, content):
    result = both_paths("xlam_json", text, TOOLS)
    assert calls_of(result) == CALLS and result.content == content


@pytest.mark.parametrize(
    "text",
    [
        "Here: " + LIST,  # after prose on its line
        "<think>Plan:\n" + LIST + "\n</think>",  # inside reasoning
        "```json\n" + LIST + "\n```",  # vLLM's fence
        "[TOOL_CALLS]" + LIST,  # Mistral's marker
        "<tool_call>" + LIST + "</tool_call>",  # Hermes' tags
        "[]",
        "See:\n[the docs](https://example.com)",
    ],
)
def test_other_spellings_are_text(text):
    result = both_paths("xlam_json", text, TOOLS)
    assert result.calls == [] and result.content == text


def test_our_template_writes_a_history_this_parser_reads(smollm2_tokenizer):
    history = [
        {"role": "user", "content": "Weather in Paris"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
        {"role": "tool", "content": "sunny"},
    ]
    out = render_template(smollm2_tokenizer, "xlam_json", history, tools=TOOLS, add_generation_prompt=True)
    assert "make calls in a single JSON array" in out
    assert "<|start_header_id|>ipython<|end_header_id|>\n\nsunny<|eot_id|>" in out
    turn = out.split("<|start_header_id|>assistant<|end_header_id|>\n\n")[1].split("<|eot_id|>")[0]
    assert turn == "Checking." + xlam.write(CALLS)
    result = both_paths("xlam_json", turn, TOOLS, smollm2_tokenizer)
    assert calls_of(result) == CALLS and result.content == "Checking."


def test_detect_names_this_format_for_our_template(smollm2_tokenizer):
    from toolcall_parsers.detect import detect_template

    template = xlam.FORMAT.template_path.read_text(encoding="utf-8")
    assert detect_template(smollm2_tokenizer, template, "xlam_json").parser == "xlam_json"


@pytest.mark.parametrize(
    ("text", "admitted"),
    [
        (xlam.write(CALLS), True),
        (LIST, True),
        ("Sure.\n" + LIST, False),
        ('[{"name": "get_weather", "arguments": {}}]', False),
    ],
)
def test_the_required_constraint_is_the_list(text, admitted):
    schemas = {"get_weather": TOOLS[0]["function"]["parameters"]}
    grammar = tag_grammar(xlam.required_constraint(ConstraintRequest(schemas)))
    assert grammar_accepts(grammar, text) is admitted
