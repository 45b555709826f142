"""minimax_xml behaviour that the corpus does not pin down: what streams when, the `</parameter>`
rule in both paths, typing by schema, and logging."""

from __future__ import annotations

import logging

import pytest
from helpers import char_chunks, counter_ids, result_of, run_chunks
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core.typed_values import schema_types, type_value

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"}},
            },
        },
    }
]


def stream():
    return get_format("minimax_xml").stream(TOOLS, counter_ids)


def test_name_at_invoke_tag_close_strings_stream_typed_values_wait():
    s = stream()
    assert s.feed('Ok.\n<minimax:tool_call>\n<invoke name="write_fi') == [Text("Ok.")]
    assert s.feed('le">\n<parameter name="path">src/a') == [
        CallStart(0, "call_0", "write_file"),
        CallArgs(0, '{"path": "src/a'),
    ]
    assert s.feed('.py</parameter>\n<parameter name="mode">6') == [CallArgs(0, '.py", "mode": ')]
    assert s.feed("44</param") == []
    assert s.feed('eter>\n<parameter name="content">line "1"\n') == [
        CallArgs(0, '644, "content": "line \\"1\\"\\n'),
    ]
    assert s.feed("</parameter>\n</invoke>\n</minimax:tool_call>") == [
        CallArgs(0, '"}'),
        CallEnd(0, {"path": "src/a.py", "mode": 644, "content": 'line "1"\n'}),
    ]
    assert s.close() == []


def test_parameter_close_is_held_until_its_meaning_is_known():
    s = stream()
    s.feed('<minimax:tool_call><invoke name="write_file"><parameter name="content">a')
    assert s.feed("</parameter>  ") == []  # could end the value, or be data
    assert s.feed("<b>") == [CallArgs(0, "</parameter>  <b>")]  # data: what follows is not a tag we expect
    assert s.feed("</parameter>\n</inv") == []
    assert s.feed("oke>") == [CallArgs(0, '"}'), CallEnd(0, {"content": "a</parameter>  <b>"})]


@pytest.mark.parametrize(
    "value",
    [
        "x</parameter>y",
        "x</parameter>\n<b>",
        "x</parameter></parameter>",  # each close is followed by another close, not by a tag
        "<parameter>\n  <hello></hello></parameter>\n<root/>",  # vllm#44060's XML file
    ],
)
def test_parameter_close_rule_is_the_same_streaming_and_not(value):
    text = f'<minimax:tool_call><invoke name="write_file"><parameter name="content">{value}</parameter></invoke>'
    whole = run_chunks("minimax_xml", [text], TOOLS)
    assert result_of(whole).calls[0].arguments == {"content": value}
    assert run_chunks("minimax_xml", char_chunks(text), TOOLS) == whole


def test_a_value_followed_by_its_invoke_end_cannot_hold_that_sequence():
    # The documented ambiguity: "</parameter>" then "</invoke>" always closes; the rest is text.
    text = (
        '<minimax:tool_call><invoke name="write_file"><parameter name="content">a</parameter></invoke>'
        "b</parameter></invoke>"
    )
    result = parse("minimax_xml", text, tools=TOOLS)
    assert result.calls[0].arguments == {"content": "a"}
    assert result.content == "b</parameter></invoke>"


def test_unknown_tool_and_duplicate_parameter_are_logged(caplog):
    text = '<minimax:tool_call><invoke name="rm"><parameter name="p">1</parameter><parameter name="p">2</parameter>'
    text += "</invoke>"
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = parse("minimax_xml", text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [("rm", {"p": 2})]
    assert "minimax_xml: call to 'rm'" in caplog.text
    assert "parameter 'p' given twice" in caplog.text


def test_no_tools_keeps_guessing_conservatively():
    text = '<minimax:tool_call><invoke name="f"><parameter name="zip">02134</parameter>'
    text += '<parameter name="n">7</parameter></invoke>'
    assert parse("minimax_xml", text).calls[0].arguments == {"zip": "02134", "n": 7}


@pytest.mark.parametrize(
    ("schema", "types"),
    [
        ({"type": "string"}, {"string"}),
        ({"type": ["string", "null"]}, {"string", "null"}),
        ({"anyOf": [{"type": "integer"}, {"oneOf": [{"type": "boolean"}]}]}, {"integer", "boolean"}),
        ({"enum": ["a", 1]}, {"string", "integer"}),
        ({"const": True}, {"boolean"}),
        ({"properties": {}}, {"object"}),
        ({"items": {}}, {"array"}),
        ({"type": "int"}, {"integer"}),
        ({"description": "x"}, set()),
        (None, set()),
    ],
)
def test_schema_types(schema, types):
    assert schema_types(schema) == types


@pytest.mark.parametrize(
    ("text", "schema", "value"),
    [
        ("  spaced  ", {"type": "string"}, "  spaced  "),
        ("5", {"type": "integer"}, 5),
        (" 5.0\n", {"type": "integer"}, 5),
        ("5.5", {"type": "integer"}, "5.5"),
        ("1e3", {"type": "number"}, 1000.0),
        ("inf", {"type": "number"}, "inf"),
        ("FALSE", {"type": "boolean"}, False),
        ("1", {"type": "boolean"}, "1"),
        ("NULL", {"type": "null"}, None),
        ('{"a": "1"}', {"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}),
        (
            '[{"a": "2"}]',
            {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "number"}}}},
            [{"a": 2}],
        ),
        ("[1]", {"type": "object"}, "[1]"),
        ("x", {"type": ["integer", "string"]}, "x"),
        ("7", {"type": ["integer", "string"]}, "7"),  # a string is admitted: the text stays verbatim
        ("3", {"type": "integer", "enum": [1, 2, 3]}, 3),
        ("+5", None, "+5"),
        ("-0.5", None, -0.5),
        ("[1, 2]", None, [1, 2]),
        ("[1, 2", None, "[1, 2"),
    ],
)
def test_type_value(text, schema, value):
    result = type_value(text, schema)
    assert result == value and type(result) is type(value)
