# ruff: noqa: RUF001, RUF002  (GigaChat's marker is spelled with U+FF5C, the fullwidth bar)
"""gigachat_gcml behaviour: what is GigaChat 3.5's own (the rest is deepseek_dsml's machine, proven by
the corpus, the properties and the adapter tests every format gets): the `string` attribute over the
schema, GCML and DSML as each other's text, our template's history read back and `detect` on it,
and the constraints' choice of `string` by the schema."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers import parse
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import deepseek_dsml as ds
from toolcall_parsers.formats import gigachat_gcml as gc

G = gc.GCML
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "code": {"type": ["string", "integer"]},
                },
                "required": ["city"],
            },
        },
    }
]
CLOSED = {"get_weather": {**TOOLS[0]["function"]["parameters"], "additionalProperties": False}}
"""Closed, so no other key (a declared one again, as free text) is admitted."""
CALLS = [("get_weather", {"city": "Paris", "days": 2, "code": "02134"})]
HISTORY = [
    {"role": "user", "content": "Weather in Paris"},
    {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in CALLS],
    },
    {"role": "tool", "content": "sunny"},
]


def param(key: str, kind: str, value: str) -> str:
    return f'<{G}parameter name="{key}" string="{kind}">{value}</{G}parameter>'


def block(*params: str) -> str:
    return f'<{G}tool_calls><{G}invoke name="get_weather">{"".join(params)}</{G}invoke></{G}tool_calls>'


def test_the_string_attribute_decides_before_the_schema():
    """`string="true"` is the text verbatim whatever the schema; `"false"` is typed by it."""
    text = block(param("city", "true", "Paris"), param("days", "true", "5"), param("code", "false", "7"))
    assert calls_of(both_paths("gigachat_gcml", text, TOOLS)) == [
        ("get_weather", {"city": "Paris", "days": "5", "code": 7})
    ]
    # `code` admits a string and an integer: JSON's `7` is the integer, other text the string (a union
    # reads its other members first, `core.typed_values`); `days` admits only an integer
    assert parse("gigachat_gcml", block(param("code", "false", "07")), TOOLS).calls[0].arguments == {"code": "07"}
    assert parse("gigachat_gcml", block(param("days", "false", "7")), TOOLS).calls[0].arguments == {"days": 7}


def test_gcml_and_dsml_are_each_others_text():
    dsml = ds.write(CALLS)
    assert parse("gigachat_gcml", dsml, TOOLS).calls == []
    assert parse("deepseek_dsml", gc.FORMAT.write(CALLS), TOOLS).calls == []
    assert calls_of(parse("gigachat_gcml", gc.FORMAT.write(CALLS), TOOLS)) == CALLS


def test_our_template_writes_a_history_this_parser_reads(smollm2_tokenizer):
    out = render_template(smollm2_tokenizer, "gigachat_gcml", HISTORY, tools=TOOLS, add_generation_prompt=True)
    assert out.endswith("assistant<|role_sep|>\n")
    assert "function result<|role_sep|>\nsunny<|message_sep|>" in out
    turn = out.split("assistant<|role_sep|>\n")[1].split("<|message_sep|>")[0]
    assert turn == "Checking." + gc.FORMAT.write(CALLS)
    result = both_paths("gigachat_gcml", turn, TOOLS, smollm2_tokenizer)
    assert calls_of(result) == CALLS and result.content == "Checking."


def test_detect_names_this_format_for_our_template(smollm2_tokenizer):
    from toolcall_parsers.detect import detect_template

    template = gc.FORMAT.template_path.read_text(encoding="utf-8")
    assert detect_template(smollm2_tokenizer, template, "gigachat_gcml").parser == "gigachat_gcml"


@pytest.mark.parametrize(
    ("text", "admitted"),
    [
        (gc.FORMAT.write(CALLS), True),
        (gc.FORMAT.write([("get_weather", {"city": "Oslo", "code": 7})]), True),  # code: string or integer
        (
            gc.FORMAT.write([("get_weather", {"city": "Oslo", "days": "2"})]),
            False,
        ),  # days: string="true" for an integer
        (gc.FORMAT.write([("get_weather", {"days": 2})]), False),  # city is required
    ],
)
def test_the_constraint_picks_string_by_the_schema(text, admitted):
    grammar = tag_grammar(gc.FORMAT.required_constraint(ConstraintRequest(CLOSED)))
    assert grammar_accepts(grammar, text) is admitted


def test_a_strict_value_cannot_hide_the_end_of_its_invoke():
    """Found by the strict property (hypothesis): a raw value holding `</｜GCML｜invoke>` and a new
    block was admitted, and the parser ends the value there (a dropped parameter close) and reads
    the block's call, to an undeclared tool. A raw value now holds no invoke close."""
    request = ConstraintRequest(CLOSED, single=True, strict=frozenset(CLOSED))
    hidden = (
        '<｜GCML｜tool_calls>\n<｜GCML｜invoke name="get_weather">\n<｜GCML｜parameter name="city" string="true">'
        '</｜GCML｜invoke></｜GCML｜tool_calls><｜GCML｜tool_calls><｜GCML｜invoke name="l"></｜GCML｜invoke>'
        "</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>"
    )
    assert not grammar_accepts(tag_grammar(gc.FORMAT.constraint(request, auto=True)), hidden)
    assert [c.name for c in parse("gigachat_gcml", hidden, TOOLS).calls] == ["l"]  # what it would be
