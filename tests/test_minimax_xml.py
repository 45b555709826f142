"""minimax_xml behaviour that the corpus does not pin down: what streams when, the `</parameter>`
rule in both paths, typing by schema, and logging."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import replace

import pytest
from helpers import char_chunks, counter_ids, random_chunks, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core import typed_values
from toolcall_parsers.core.limits import Limits
from toolcall_parsers.core.typed_values import ValueWriter, schema_types, type_value

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
    """Eager streaming: what these tests pin is how finely a call streams once it is shown."""
    return get_format("minimax_xml").stream(TOOLS, counter_ids, streaming="eager")


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
        ("7", {"type": ["integer", "string"]}, 7),  # a union reads the non-string member first
        ("07", {"type": ["integer", "string"]}, "07"),  # ... in JSON's spelling only
        ("3", {"type": "integer", "enum": [1, 2, 3]}, 3),
        ("\nParis\n", {"type": "string", "enum": ["Paris", "Tokyo"]}, "Paris"),  # xgrammar's style allows it
        (" Paris", {"const": "Paris"}, "Paris"),
        (" Lyon ", {"type": "string", "enum": ["Paris"]}, " Lyon "),  # no member: verbatim
        (" Paris ", {"type": "string", "enum": ["Paris", " Paris "]}, " Paris "),  # a member as written
        ("+5", None, "+5"),
        ("-0.5", None, -0.5),
        ("[1, 2]", None, [1, 2]),
        ("[1, 2", None, "[1, 2"),
    ],
)
def test_type_value(text, schema, value):
    result = type_value(text, schema)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize("fmt", ["minimax_xml", "dots_xml", "glm_xml", "qwen_xml"])
def test_a_strict_enum_written_with_whitespace_reads_as_its_member_in_both_paths(fmt):
    """xgrammar's XML styles (vLLM's and SGLang's strict MiniMax and Qwen constraints) admit
    whitespace around an enum's string: the value is the member, streamed or not."""
    city = {"type": "string", "enum": ["Paris", "Tokyo"]}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": city}, "required": ["city"]}}}]  # fmt: skip
    text = get_format(fmt).write([("get_weather", {"city": "Paris"})]).replace("Paris", "\n Paris\t\n")
    assert parse(fmt, text, tools).calls[0].arguments == {"city": "Paris"}
    stream = get_format(fmt).stream(tools, lambda name, index: f"id{index}")
    events = [event for char in text for event in stream.feed(char)] + stream.close()
    fragments = "".join(event.fragment for event in events if isinstance(event, CallArgs))
    assert json.loads(fragments) == {"city": "Paris"}


# -- issue 9 / issue 10 ---------------------------------------------------------------------------

TYPED = [
    {
        "type": "function",
        "function": {
            "name": "typed",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "x": {"type": "number"},
                    "s": {"type": "string"},
                    "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
                    "a": {"type": "array", "items": {"type": "number"}},
                },
            },
        },
    }
]


def one_call(params: str, tools=TYPED, name: str = "typed"):
    """The single call of a block with one invoke of `name`, parsed whole and char by char (equal)."""
    text = f'<minimax:tool_call><invoke name="{name}">{params}</invoke></minimax:tool_call>'
    whole = run_chunks("minimax_xml", [text], tools)
    assert run_chunks("minimax_xml", char_chunks(text), tools) == whole
    (call,) = result_of(whole).calls
    return call


def no_internal_error(caplog) -> None:
    assert "internal parser error" not in caplog.text


@pytest.mark.parametrize("param", ["a", "o", "untyped"])
def test_values_nested_past_the_depth_limit_stay_strings(param, caplog):
    """Defect 1: json.loads then recursive typing raised RecursionError on ~500 deep values; the depth
    limit (TOOLCALL_PARSERS_MAX_DEPTH) now applies: a deeper value fits no type, so it is a string."""
    value = "[" * 500 + "]" * 500 if param != "o" else '{"k": ' * 500 + "1" + "}" * 500
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        call = one_call(f'<parameter name="{param}">{value}</parameter>')
    assert call.arguments == {param: value}
    no_internal_error(caplog)


def test_values_nested_up_to_the_depth_limit_are_read():
    value = "[" * 256 + "]" * 256
    assert one_call(f'<parameter name="a">{value}</parameter>').arguments["a"] == json.loads(value)
    assert type_value(value, None, replace(Limits(), max_depth=255)) == value


@pytest.mark.parametrize("param", ["n", "x", "untyped"])
@pytest.mark.parametrize("digits", [600, 5000])
def test_numbers_longer_than_max_scalar_stay_strings(param, digits, caplog):
    """Defect 1: an integer over Python's 4300-digit limit raised ValueError from int(); numbers are
    now read only up to TOOLCALL_PARSERS_MAX_SCALAR (512) characters, and a longer one is a string."""
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        call = one_call(f'<parameter name="{param}">{"7" * digits}</parameter>')
    assert call.arguments == {param: "7" * digits}
    no_internal_error(caplog)


def test_numbers_json_cannot_carry_stay_strings():
    assert type_value("1e400", {"type": "number"}) == "1e400"
    assert type_value("1e400", None) == "1e400"
    assert type_value('{"k": 1e400}', {"type": "object"}) == '{"k": 1e400}'
    assert type_value('{"k": NaN}', None) == '{"k": NaN}'
    assert type_value('{"k": ' + "7" * 600 + "}", {"type": "object"}) == '{"k": ' + "7" * 600 + "}"
    assert type_value("7" * 5000, {"type": "integer"}, replace(Limits(), max_scalar=10000)) == "7" * 5000


GARBAGE_SCHEMAS = [
    {"anyOf": True},
    {"oneOf": 5},
    {"allOf": {"type": "integer"}},
    {"anyOf": [5, "x", None, [1]]},
    {"type": 5},
    {"type": [5, None, ["x"], {"a": 1}]},
    {"properties": []},
    {"type": "object", "properties": []},
    {"type": "object", "properties": {"k": "not a schema", "m": {"anyOf": True}}},
    {"type": "array", "items": 5},
    {"type": "array", "items": {"oneOf": True}},
    {"enum": 5, "const": [1]},
    {"enum": [{}, [], None, 1.5, object()]},
    5,
    "string",
    [{"type": "integer"}],
    True,
]


@pytest.mark.parametrize("schema", GARBAGE_SCHEMAS, ids=range(len(GARBAGE_SCHEMAS)))
@pytest.mark.parametrize("text", ["5", "x", '{"k": "1", "m": "2"}', '["1"]', "null", "true"])
def test_any_json_garbage_in_a_schema_never_raises(schema, text, caplog):
    """Defect 1: `"anyOf": true` (and other schemas that are not what JSON Schema says) raised while
    typing a value. Anything unusable in a schema says nothing."""
    schema_types(schema)
    type_value(text, schema)
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"p": schema}}}}]
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        call = one_call(f'<parameter name="p">{text}</parameter>', tools, "f")
    assert list(call.arguments) == ["p"]
    no_internal_error(caplog)


def test_a_schema_that_refers_to_itself_is_read_boundedly():
    schema: dict = {"anyOf": []}
    schema["anyOf"] += [schema, schema, {"type": "integer"}]
    assert schema_types(schema) == {"integer"}
    assert type_value("5", schema) == 5


def test_union_members_and_their_implied_types_are_read_as_before():
    # A schema's own enum / properties / items count only when it and its union members name no type.
    assert schema_types({"enum": ["a"], "anyOf": [{"type": "integer"}]}) == {"integer"}
    assert schema_types({"type": "foo", "enum": [1]}) == set()
    assert schema_types({"anyOf": [{"enum": [1]}, {"properties": {}}], "items": {}}) == {"integer", "object"}


@pytest.mark.parametrize(
    "head",
    [
        '<minimax:tool_call><invoke name="typed">',  # between tags
        '<minimax:tool_call><invoke name="typed"><parameter name="n">5</parameter>',  # after </parameter>
        '<minimax:tool_call><invoke name="typed"><parameter name="untyped">',  # leading an untyped value
        '<minimax:tool_call><invoke name="typed"><parameter name="s">a</parameter>',  # the same, as data
        "<minimax:tool_call>",  # before the first invoke
        '<minimax:tool_call><invoke name="typed"></invoke>',  # between invokes
        '<minimax:tool_call><invoke name="typed"><parameter name="n">1</parameter></invoke>',
        '<minimax:tool_call><invoke name= "typed"  ',  # after a quoted name
    ],
)
def test_whitespace_runs_are_consumed_not_held(head):
    """Defect 5: whitespace between tags, after `</parameter>` and leading an untyped value was held
    back and re-copied with every delta (quadratic). It is consumed as it arrives."""
    s = get_format("minimax_xml").stream(TYPED, counter_ids)
    s.feed(head)
    for _ in range(2000):
        s.feed(" \n\t ")
        assert len(s._buf) == 0


def test_an_undecided_value_is_decided_from_its_first_characters_only():
    """Defect 5: while an untyped value was undecided, every piece joined all the text held so far
    (quadratic in a value of whitespace). The decision reads a bounded head: once that is full, it
    is never asked again, and the value is typed when complete."""
    writer = ValueWriter(None)
    asked = []
    decide = writer._decide
    writer._decide = lambda head: asked.append(len(head)) or decide(head)
    for _ in range(1000):
        assert writer.feed("    ") == ""
    assert len(asked) <= 17 and max(asked) <= 65
    writer.feed("{}")
    assert writer.finish() == ("{}", {})


class _Spy:
    """A compiled pattern that records the length of the text it is asked to match."""

    def __init__(self, pattern: re.Pattern[str], lengths: list[int]) -> None:
        self._pattern, self._lengths = pattern, lengths

    def fullmatch(self, text: str) -> re.Match[str] | None:
        self._lengths.append(len(text))
        return self._pattern.fullmatch(text)


def test_number_patterns_see_no_more_than_max_scalar(monkeypatch):
    """Defect 7: a `number` value of 16,000 digits and `x` took seconds: `_FLOAT` was ambiguous
    (`[0-9]+\\.?[0-9]*`) and ran over the whole text. It is unambiguous now, and number patterns
    only ever see text up to TOOLCALL_PARSERS_MAX_SCALAR characters."""
    lengths: list[int] = []
    for name in ("_INT", "_FLOAT", "_JSON_NUMBER"):
        monkeypatch.setattr(typed_values, name, _Spy(getattr(typed_values, name), lengths))
    value = "1" * 16000 + "x"
    call = one_call(f'<parameter name="x">{value}</parameter><parameter name="untyped">{value}</parameter>')
    assert call.arguments == {"x": value, "untyped": value}
    assert type_value(value[:-1], {"type": "integer"}) == value[:-1]
    assert max(lengths, default=0) <= Limits().max_scalar


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12.", 12.0),
        (".5", 0.5),
        ("-1.5e3", -1500.0),
        ("+2", 2),
        ("1.e2", 100.0),
        ("1e", "1e"),
        (".", "."),
        ("1.2.3", "1.2.3"),
        ("1..2", "1..2"),
    ],
)
def test_the_unambiguous_float_pattern_reads_what_the_old_one_did(text, value):
    result = type_value(text, {"type": "number"})
    assert result == value and type(result) is type(value)


def test_a_value_of_parameter_close_look_alikes_is_read_from_one_buffer():
    """Issue 10: a value full of `</parameter> x` copied the rest of the text at each look-alike
    (quadratic in parse()). Every reader step of one feed sees the same text object."""
    s = get_format("minimax_xml").stream(TOOLS, counter_ids)
    seen = spy_on_readers(s)
    value = "</parameter> x" * 500
    invokes = f'<invoke name="write_file"><parameter name="content">{value}</parameter></invoke>\n' * 20
    result = result_of(s.feed(f"<minimax:tool_call>{invokes}</minimax:tool_call>") + s.close())
    assert [c.arguments for c in result.calls] == [{"content": value}] * 20 and len(seen) == 1


@pytest.mark.parametrize("chunking", ["whole", "chars"])
def test_lone_surrogates_come_out_escaped(chunking):
    """Defect 9: a lone surrogate in a value (a raw character, or an escape in an object value) went
    into arguments_json unescaped, which the server cannot encode as UTF-8."""
    params = '<parameter name="s">a\ud800b</parameter><parameter name="o">{"k": 1, "t": "\\udc00"}</parameter>'
    params += '<parameter name="\udbff">x</parameter><parameter name="untyped">["\\ud800"]</parameter>'
    text = f'<minimax:tool_call><invoke name="typed">{params}</invoke></minimax:tool_call>'
    chunks = [text] if chunking == "whole" else char_chunks(text)
    (call,) = result_of(run_chunks("minimax_xml", chunks, TYPED)).calls
    assert call.arguments == {"s": "a\ud800b", "o": {"k": 1, "t": "\udc00"}, "\udbff": "x", "untyped": ["\ud800"]}
    call.arguments_json.encode("utf-8")
    assert json.loads(call.arguments_json) == call.arguments


@pytest.mark.parametrize("param", ["s", "o", "untyped", "\ud800\udfff"])
def test_adjacent_lone_surrogates_are_the_character_the_json_says(param):
    """Found by the mutated-documents property: a lone high and a lone low surrogate written next to
    each other are escaped one by one, and JSON then reads them as one character; the arguments say
    what the JSON says."""
    value = "a\ud800\udfffb" if param != "o" else '{"k": 1, "t": "\ud800\udfff"}'
    text = f'<minimax:tool_call><invoke name="typed"><parameter name="{param}">{value}</parameter></invoke>'
    for chunks in ([text], char_chunks(text)):
        (call,) = result_of(run_chunks("minimax_xml", chunks, TYPED)).calls
        call.arguments_json.encode("utf-8")
        assert json.loads(call.arguments_json) == call.arguments
        assert "\U000103ff" in json.dumps(call.arguments, ensure_ascii=False)


def test_an_invoke_refused_at_its_name_is_text_up_to_its_end(monkeypatch):
    """core-api: `_start_call` raises NotACall for an undeclared tool the operator turns into text,
    past the most calls per response, or for a lone surrogate in the name: that invoke is text up
    to its `</invoke>`, like any broken invoke, and the others still count."""
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    refused = '<invoke name="rm"><parameter name="p">1</parameter></invoke>'
    text = f'<minimax:tool_call>{refused}<invoke name="write_file"><parameter name="mode">1</parameter></invoke>'
    text += f'<invoke name="rm\ud800"></invoke>{refused}</minimax:tool_call>'
    for chunks in ([text], char_chunks(text)):
        result = result_of(run_chunks("minimax_xml", chunks, TOOLS))
        assert [(c.name, c.arguments) for c in result.calls] == [("write_file", {"mode": 1})]
        assert result.content == f'<minimax:tool_call>{refused}<invoke name="rm\ud800"></invoke>{refused}'


def test_calls_past_the_most_per_response_are_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "2")
    one = '<invoke name="write_file"><parameter name="mode">1</parameter></invoke>'
    result = parse("minimax_xml", f"<minimax:tool_call>{one * 3}</minimax:tool_call>", tools=TOOLS)
    assert len(result.calls) == 2 and result.content == one


@pytest.mark.parametrize("quote", ['"', "'", ""])
def test_names_longer_than_max_name_are_not_calls(quote, monkeypatch):
    """A name is held back only up to TOOLCALL_PARSERS_MAX_NAME characters; the decision does not
    depend on chunking (the old code judged the length of what had arrived so far)."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "20")
    good = f"<invoke name={quote}write_file{quote}><parameter name={quote}mode{quote}>1</parameter></invoke>"
    long = f"<invoke name={quote}{'w' * 21}{quote}></invoke>"
    text = f"<minimax:tool_call>{long}{good}</minimax:tool_call>"
    whole = run_chunks("minimax_xml", [text], TOOLS)
    assert run_chunks("minimax_xml", char_chunks(text), TOOLS) == whole
    result = result_of(whole)
    assert [c.arguments for c in result.calls] == [{"mode": 1}] and result.content == f"<minimax:tool_call>{long}"
    assert parse("minimax_xml", text.replace("w" * 21, "w" * 20), tools=None).calls[0].name == "w" * 20


def test_arguments_past_their_bound_break_the_invoke_where_the_value_ends(monkeypatch):
    """The size bound is crossed at a place that depends on chunking; it is acted on where the value
    ends, so a `</invoke>` written inside the value before that place cannot end the broken invoke
    in one chunking and not in another."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    value = "ab </invoke> " + "x" * 60
    broken = f'<invoke name="write_file"><parameter name="content">{value}</parameter></invoke>'
    good = '<invoke name="write_file"><parameter name="mode">1</parameter></invoke>'
    text = f"<minimax:tool_call>{broken}{good}</minimax:tool_call>"
    whole = run_chunks("minimax_xml", [text], TOOLS)
    for chunks in (char_chunks(text), random_chunks(text, 1), random_chunks(text, 2)):
        assert run_chunks("minimax_xml", chunks, TOOLS) == whole
    result = result_of(whole)
    assert [c.arguments for c in result.calls] == [{"mode": 1}] and result.content == f"<minimax:tool_call>{broken}"


def test_an_empty_tool_name_is_not_a_call():
    text = '<minimax:tool_call><invoke name=""></invoke></minimax:tool_call> hi'
    result = parse("minimax_xml", text)
    assert result.calls == [] and result.content == text
