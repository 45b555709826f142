"""Strict tool calling (issue 19): each format's constraint for strict `tool_choice="auto"`, compiled
by xgrammar as the servers do. It admits prose, and prose then a call in the format's own spelling
(the writer's); it refuses arguments that break a strict tool's schema, an undeclared tool, and a
second call when parallel calls are off; and what it admits, the parser reads back as those calls."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import content_of, grammar_accepts, needs, tag_grammar
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.formats import ConstraintRequest

pytestmark = needs("xgrammar")

PROSE = "Sure, let me check that for you."
STRICT_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}
BLOCK_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
AUTO = [name for name, fmt in FORMATS.items() if fmt.auto_constraint is not None]


def _schema(fmt: str) -> dict[str, Any]:
    # The gptme blocks map positional words: a tool of required strings
    return STRICT_SCHEMA if FORMATS[fmt].pins_arguments else BLOCK_SCHEMA


def _tools(fmt: str) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": "get_weather", "parameters": _schema(fmt), "strict": True}}]


def _grammar(fmt: str, single: bool = False, strict: frozenset[str] | None = frozenset({"get_weather"})) -> Any:
    request = ConstraintRequest({"get_weather": _schema(fmt)}, single=single, strict=strict)
    tag = FORMATS[fmt].constraint(request, auto=True)
    assert tag is not None
    return tag_grammar(tag)


def _accepts(grammar: Any, text: str) -> bool:
    return grammar_accepts(grammar, text)


def _written(fmt: str, *calls: tuple[str, dict[str, Any]]) -> str:
    return PROSE + "\n" + FORMATS[fmt].write(list(calls))


@pytest.mark.parametrize("fmt", AUTO)
def test_strict_auto_admits_prose_and_calls_the_parser_reads(fmt):
    grammar = _grammar(fmt)
    assert _accepts(grammar, PROSE)
    call = ("get_weather", {"city": "Paris"})
    text = _written(fmt, call)
    assert _accepts(grammar, text), text
    result = parse(fmt, text, _tools(fmt))
    assert [(c.name, c.arguments) for c in result.calls] == [call] and result.content == content_of(fmt, [PROSE + "\n"])
    assert _accepts(grammar, _written(fmt, call, ("get_weather", {"city": "Oslo"})))  # parallel calls allowed


@pytest.mark.parametrize("fmt", AUTO)
def test_strict_auto_refuses_undeclared_tools_and_a_second_call_when_single(fmt):
    undeclared = _written(fmt, ("get_weathr", {"city": "Paris"}))
    # refused, or (where a block names its tool, as a fence does) prose that the parser keeps as text
    assert not _accepts(_grammar(fmt), undeclared) or parse(fmt, undeclared, _tools(fmt)).calls == []
    two = _written(fmt, ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"}))
    assert not _accepts(_grammar(fmt, single=True), two)


@pytest.mark.parametrize("fmt", [name for name in AUTO if FORMATS[name].pins_arguments])
@pytest.mark.parametrize(
    "arguments",
    [{"days": 3}, {"city": "Paris", "days": "three"}, {"city": "Paris", "zzz": 1}],
    ids=["missing required", "wrong type", "undeclared key"],
)
def test_strict_auto_refuses_arguments_that_break_the_schema(fmt, arguments):
    text = _written(fmt, ("get_weather", arguments))
    assert not _accepts(_grammar(fmt), text), text
    assert _accepts(_grammar(fmt, strict=frozenset()), text), text  # not strict: only the envelope


PINNED = [name for name, fmt in FORMATS.items() if fmt.pins_arguments]
ENUMS = {
    "enum": {"type": "string", "enum": ["Paris", "Tokyo"]},
    "const": {"type": "string", "const": "Paris"},
    "untyped enum with the empty string": {"enum": ["Paris", ""]},
}


@pytest.mark.parametrize("fmt", PINNED)
@pytest.mark.parametrize("auto", [False, True], ids=["required", "auto"])
@pytest.mark.parametrize("city", ENUMS.values(), ids=ENUMS.keys())
def test_a_strict_string_enum_holds_in_every_format_that_pins_arguments(fmt, auto, city):
    """Raw-text formats (the XML ones) write a string value unquoted: a strict enum is its members
    there too, not any text (the e2e run saw `\n<steptml:parametr ..` written for an enum)."""
    schema = {"type": "object", "properties": {"city": city}, "required": ["city"], "additionalProperties": False}
    request = ConstraintRequest({"get_weather": schema}, single=False, strict=frozenset({"get_weather"}))
    tag = FORMATS[fmt].constraint(request, auto=auto)
    if tag is None:
        pytest.skip(f"{fmt} has no strict auto constraint")
    grammar = tag_grammar(tag)
    spell = (lambda text: text) if auto else (lambda text: text.removeprefix(PROSE + "\n"))
    assert _accepts(grammar, spell(_written(fmt, ("get_weather", {"city": "Paris"}))))
    assert not _accepts(grammar, spell(_written(fmt, ("get_weather", {"city": "Lyon"}))))


def test_strict_auto_follows_mistrals_generation():
    """A tokenizer without `[ARGS]` writes the older list: the strict constraint follows it."""
    from toolcall_parsers.core.tokens import Vocabulary

    class Tokenizer:
        def get_vocab(self) -> dict[str, int]:
            return {"[TOOL_CALLS]": 5}

    request = ConstraintRequest({"get_weather": STRICT_SCHEMA}, vocabulary=Vocabulary(Tokenizer()), strict=None)
    grammar = tag_grammar(FORMATS["mistral_json"].constraint(request, auto=True))
    good = PROSE + '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    assert _accepts(grammar, good) and _accepts(grammar, PROSE)
    assert not _accepts(grammar, PROSE + '[TOOL_CALLS][{"name": "get_weather", "arguments": {"days": 1}}]')
    assert [c.name for c in parse("mistral_json", good).calls] == ["get_weather"]


OTHER_SPELLINGS: dict[str, list[str]] = {
    "kimi_json": [
        "<|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{args}<|tool_call_end|>",
        "<|tool_call_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>{args}"
        "<|tool_call_end|><|tool_call_section_end|>",
    ],
    "qwen_xml": [
        "<tool_call><function={name}><parameter=city>Paris</parameter></function></tool_call>",
        "<tool_call>\n\n<function={name}>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        "<tool_call> <function={name}>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    ],
    "llama_json": [
        '\n{{ "name": "{name}", "parameters": {args}}}',
        '\n{{"name":"{name}","parameters":{args}}}',
        '\n{{\n  "name": "{name}",\n  "arguments": {args}\n}}',
        '\n{{"type": "function", "name": "{name}", "parameters": {args}}}',
        '{{"a": 1}}\n{{"name": "{name}", "parameters": {args}}}',
        '<|python_tag|>{{"name": "{name}", "parameters": {args}}}',
    ],
    "llama_pythonic": [
        "\n[ {name}(city='Paris')]",
        "[[{name}(city='Paris')]]",
        "[1, [{name}(city='Paris')]]",
        "<|python_tag|>[{name}(city='Paris')]",
        "<|python_start|>[{name}(city='Paris')]<|python_end|>",
    ],
}
"""Spellings other than the writer's that the parser reads as a call (the review of issue 19 found
them unconstrained): strict `auto` must hold each to the declared tools too."""


@pytest.mark.parametrize(
    ("fmt", "spelling"), [(fmt, s) for fmt, spellings in OTHER_SPELLINGS.items() for s in spellings]
)
def test_strict_auto_holds_every_spelling_the_parser_reads(fmt, spelling):
    evil = PROSE + " " + spelling.format(name="evil", args='{"city": "Paris"}')
    declared = [{"type": "function", "function": {"name": "evil", "parameters": _schema(fmt)}}]
    assert [c.name for c in parse(fmt, evil, declared).calls] == ["evil"]  # a call spelling indeed
    assert not _accepts(_grammar(fmt), evil), evil
    good = PROSE + " " + spelling.format(name="get_weather", args='{"city": "Paris"}')
    assert [c.name for c in parse(fmt, good, _tools(fmt)).calls] == ["get_weather"]


@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize(
    "prose",
    ['Use {"a": 1} here.', 'A schema: {"type": "object"}.', "Jinja: {{ x }}.", "{}", 'Say {"names": 1}.'],
)
def test_strict_auto_keeps_braces_the_llama_parser_reads_as_text(prose, single):
    """llama_json's constraint holds every `{` (a call may open at any line start, in any spacing):
    JSON that is no call stays possible."""
    assert parse("llama_json", prose, _tools("llama_json")).calls == []
    assert _accepts(_grammar("llama_json", single=single), prose)


@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize(
    "prose", ["See [1] and [O'Reilly].", "A list [1, [2, 3]] here.", "arr[i] = 1", "ok []", "[f (a=1)]"]
)
def test_strict_auto_keeps_brackets_the_pythonic_parser_reads_as_text(prose, single):
    """llama_pythonic's constraint holds every `[` (a list may open anywhere): lists that are no
    calls stay possible."""
    assert parse("llama_pythonic", prose, _tools("llama_pythonic")).calls == []
    assert _accepts(_grammar("llama_pythonic", single=single), prose)


def _scalar_schemas():
    from hypothesis import strategies as st

    text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
    return st.sampled_from(
        [
            ({"type": "string"}, text),
            ({"type": "integer"}, st.integers(-(10**6), 10**6)),
            ({"type": "number"}, st.floats(-1e6, 1e6, allow_nan=False).map(lambda x: round(x, 3))),
            ({"type": "boolean"}, st.booleans()),
            ({"type": "null"}, st.none()),
            ({"enum": ["a", "b c", 'q"uote']}, st.sampled_from(["a", "b c", 'q"uote'])),
        ]
    )


def _object_schema_and_value(draw):
    from hypothesis import strategies as st

    keys = draw(st.lists(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), min_size=1, max_size=4, unique=True))
    properties, value, required = {}, {}, []
    for key in keys:
        schema, values = draw(_scalar_schemas())
        if draw(st.booleans()):
            schema, values = {"type": "array", "items": schema}, st.lists(values, max_size=3)
        properties[key] = schema
        if draw(st.booleans()):
            required.append(key)
            value[key] = draw(values)
        elif draw(st.booleans()):
            value[key] = draw(values)
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return schema, value


def test_pythonic_strict_arguments_follow_random_schemas():
    """Random tool schemas: the pythonic constraint admits the writer's call of any conforming
    arguments (read back the same), and refuses one whose required argument is missing."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=60, deadline=None)
    @given(st.composite(_object_schema_and_value)())
    def check(schema_and_value):
        schema, value = schema_and_value
        request = ConstraintRequest({"t": schema}, strict=None)
        grammar = tag_grammar(FORMATS["llama_pythonic"].constraint(request))
        text = FORMATS["llama_pythonic"].write([("t", value)])
        assert _accepts(grammar, text), text
        tools = [{"type": "function", "function": {"name": "t", "parameters": schema}}]
        assert [(c.name, c.arguments) for c in parse("llama_pythonic", text, tools).calls] == [("t", value)]
        for key in schema["required"]:
            missing = FORMATS["llama_pythonic"].write([("t", {k: v for k, v in value.items() if k != key})])
            assert not _accepts(grammar, missing), missing

    check()


DEFS_SCHEMA = {
    "type": "object",
    "properties": {"place": {"$ref": "#/$defs/Place"}},
    "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
}


@pytest.mark.parametrize("fmt", [name for name, spec in FORMATS.items() if spec.required_constraint is not None])
@pytest.mark.parametrize("auto", [False, True], ids=["required", "auto"])
def test_every_constraint_compiles_for_prefix_names_and_refs(fmt, auto):
    """Tools whose names begin one another (`get`, `get_weather`: markdown_tools' two fence triggers
    made xgrammar refuse the tag) and a pydantic-style `$defs` schema, as a request sends them; the
    writer's call to each reads back."""
    schemas = {"get": {"type": "object"}, "get_weather": {"type": "object"}, "place": DEFS_SCHEMA}
    spec = FORMATS[fmt]
    for single in (False, True):
        tag = spec.constraint(ConstraintRequest(schemas, single=single), auto=auto)
        if tag is not None:
            grammar = tag_grammar(tag)
            if not auto:
                for name in ("get", "get_weather"):
                    text = spec.write([(name, {})])
                    assert grammar_accepts(grammar, text), (name, text)
