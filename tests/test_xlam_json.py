"""xlam_json behaviour: what is xLAM's own (the rest is marked_json's machine, proven by the corpus,
the properties and the adapter tests every format gets): where a bare list opens a block and where
it is text, the spellings vLLM's `xlam` also reads (a ```json fence, `[TOOL_CALLS]`, `<tool_call>`),
our template's history read back and `detect` on it, and both constraints."""

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
        "```\n" + LIST + "\n```",  # code: a fence not named json
        "```python\n" + LIST + "\n```",
        "```jsonc\n" + LIST + "\n```",
        '```json\n{"type": "object"}\n' + LIST + "\n```",  # a json fence holding no list is code to its close
        "<think>```json\n" + LIST + "\n```</think>",  # a json fence in reasoning
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',  # Hermes' own call
        "[]",
        "See:\n[the docs](https://example.com)",
    ],
)
def test_other_spellings_are_text(text):
    result = both_paths("xlam_json", text, TOOLS)
    assert result.calls == [] and result.content == text


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I'll help you with that.\n```json\n" + LIST + "\n```", "I'll help you with that."),
        ("```json " + LIST + "```\nDone.", "Done."),
        ("```json\n" + LIST + "\nthat is all\n```\n" + LIST, "that is all\n```"),  # then code, then a list
        ("I'll check the weather for you.[TOOL_CALLS]" + LIST, "I'll check the weather for you."),
        ("Sure.\n[TOOL_CALLS] " + LIST + "\nDone.", "Sure.\nDone."),
        ("I'll help you check the weather.<tool_call>" + LIST + "</tool_call>", "I'll help you check the weather."),
        ("<tool_call>\n" + LIST + "\n</tool_call>", None),
    ],
)
def test_the_spellings_vllms_xlam_reads_are_calls(text, content):
    """vLLM's `xlam` reads a list in a ```json fence, after `[TOOL_CALLS]` and in `<tool_call>`,
    after prose too; so does this parser, and the marker is markup."""
    result = both_paths("xlam_json", text, TOOLS, eager=True)
    calls = CALLS * (1 + text.endswith(LIST) * (text.count(LIST) - 1))
    assert calls_of(result) == calls and result.content == content


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


SPELLINGS = [
    "\n{}",
    "\n  {}",
    "</think>{}",
    "```json\n{}\n```",
    "```json {}```",
    "[TOOL_CALLS]{}",
    "[TOOL_CALLS] {}",
    "<tool_call>{}</tool_call>",
    "<tool_call>\n{}\n</tool_call>",
]
"""Every spelling in which the parser reads a list of calls (`{}`: the list)."""


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("single", [False, True])
def test_strict_auto_holds_every_spelling_to_the_declared_tools(spelling, single):
    """Strict `auto`: each spelling that opens a call (the new ones: a ```json fence, `[TOOL_CALLS]`,
    `<tool_call>`) opens its list at a `[`, which the constraint holds: an undeclared tool is refused,
    a declared one admitted, and the parser reads it."""
    schemas = {"get_weather": TOOLS[0]["function"]["parameters"]}
    grammar = tag_grammar(xlam.auto_constraint(ConstraintRequest(schemas, single=single)))
    good = "Sure." + spelling.format(LIST)
    assert grammar_accepts(grammar, good)
    assert calls_of(both_paths("xlam_json", good, TOOLS)) == CALLS
    evil = good.replace("get_weather", "evil")
    assert [c.name for c in both_paths("xlam_json", evil, TOOLS).calls] == ["evil"]  # a call indeed
    assert not grammar_accepts(grammar, evil)
    assert not grammar_accepts(grammar, good.replace('"Paris"', "1"))  # arguments held to the schema


@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize(
    "prose", ["See [1] and [the docs](x).", "[]", "ok [ ]", "A list: [1, [2, 3]].", '```json\n{"a": 1}\n```']
)
def test_strict_auto_keeps_brackets_the_parser_reads_as_text(prose, single):
    schemas = {"get_weather": TOOLS[0]["function"]["parameters"]}
    grammar = tag_grammar(xlam.auto_constraint(ConstraintRequest(schemas, single=single)))
    assert both_paths("xlam_json", prose, TOOLS).calls == []
    assert grammar_accepts(grammar, prose)
