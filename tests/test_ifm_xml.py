"""ifm_xml behaviour: what is K2 Horizon's own (the rest is glm_xml's machine, proven by its tests,
this format's corpus, the properties and the adapter tests every format gets): the optional type tag
between a key and its value, in every chunking; the three reasoning tags; our template's history
read back; the constraints."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import ifm_xml as ifm

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["query"],
            },
        },
    },
    {"type": "function", "function": {"name": "free", "parameters": {"type": "object"}}},
]


def typed(name: str, key: str, type_name: str, value: str) -> str:
    arg = f"<ifm|arg_key>{key}</ifm|arg_key>\n<ifm|arg_type>{type_name}</ifm|arg_type>\n"
    arg += f"<ifm|arg_value>{value}</ifm|arg_value>"
    return f"<ifm|tool_calls><ifm|tool_call>{name}{arg}</ifm|tool_call></ifm|tool_calls>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (typed("free", "n", "integer", "7"), {"n": 7}),
        (typed("free", "n", "string", "7"), {"n": "7"}),
        (typed("free", "n", "any", "[1]"), {"n": "[1]"}),
        (typed("free", "n", "array[integer]", "[1, 2]"), {"n": [1, 2]}),
        (typed("free", "n", "Mystery", "7"), {"n": 7}),  # an unknown type name: typed as without one
        (typed("lookup", "query", "integer", "007"), {"query": "007"}),  # the schema wins
    ],
    ids=["integer", "string", "any", "array", "unknown type", "schema wins"],
)
def test_the_type_tag_types_what_the_schema_does_not(text, expected):
    assert calls_of(both_paths("ifm_xml", text, TOOLS, eager=True)) == [(text.split(">", 2)[2].split("<")[0], expected)]


@pytest.mark.parametrize("think", ["think", "think_fast", "think_faster"])
def test_each_reasoning_tag_holds_text(think):
    inner = ifm.FORMAT.write([("lookup", {"query": "a"})])
    text = f"<ifm|{think}>{inner}</ifm|{think}>" + ifm.FORMAT.write([("lookup", {"query": "b"})])
    result = both_paths("ifm_xml", text, TOOLS, eager=True)
    assert calls_of(result) == [("lookup", {"query": "b"})]
    assert result.content == f"<ifm|{think}>{inner}</ifm|{think}>"


def test_our_template_history_reads_back(smollm2_tokenizer):
    calls = [("lookup", {"query": "a b", "limit": 2}), ("free", {})]
    history = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "On it.",
            "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
        },
        {"role": "tool", "content": "r1"},
        {"role": "tool", "content": "r2"},
    ]
    out = render_template(smollm2_tokenizer, "ifm_xml", history, tools=TOOLS, add_generation_prompt=True)
    turn = out.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    assert turn == "On it." + ifm.FORMAT.write(calls)
    assert calls_of(both_paths("ifm_xml", turn, TOOLS, smollm2_tokenizer, eager=True)) == calls
    assert "<|im_start|>tool\n<tool_response>\nr1\n</tool_response>\n<tool_response>\nr2\n</tool_response>" in out


def test_required_pins_the_schema():
    schemas = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
    grammar = tag_grammar(ifm.FORMAT.required_constraint(ConstraintRequest(schemas)))
    assert grammar_accepts(
        grammar, ifm.FORMAT.write([("lookup", {"query": "x", "limit": 3}), ("free", {"any": "thing"})])
    )
    assert not grammar_accepts(grammar, ifm.FORMAT.write([("lookup", {"limit": 3})]))  # query is required
    closed = {"lookup": {**schemas["lookup"], "additionalProperties": False}}
    grammar = tag_grammar(ifm.FORMAT.required_constraint(ConstraintRequest(closed)))
    assert grammar_accepts(grammar, ifm.FORMAT.write([("lookup", {"query": "x </ifm|arg_key> y", "limit": 3})]))
    assert not grammar_accepts(grammar, ifm.FORMAT.write([("lookup", {"query": "x", "limit": "three"})]))
