"""A strict request never returns an unchecked call (issue 39): for every format, any text its strict
`auto` constraint admits is read back as prose or as calls to the declared tools whose arguments
validate against their schemas. Texts come from walking the compiled grammar (`strict_walk`) over a
vocabulary that holds the format's markers, its think markers, and hostile snippets (calls to an
undeclared tool, or with arguments that break the schema, in the writer's spelling and with each of
the format's markers put in place of another), and from those snippets checked one by one."""

from __future__ import annotations

import json
import random
from typing import Any

import jsonschema
import pytest
from helpers import DERIVED, grammar_accepts, needs, subject, tag_grammar
from hypothesis import given, settings
from hypothesis import strategies as st
from strict_walk import CHARACTERS, WORDS, cached_walk
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.core.logs import logs_silenced
from toolcall_parsers.formats import ConstraintRequest

pytestmark = needs("xgrammar")

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}
BLOCK_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
STRICT = [*(name for name, fmt in FORMATS.items() if fmt.auto_constraint is not None), *DERIVED]
"""Every format with a strict constraint, and formats compiled from response templates with their
markers renamed (`helpers.subject`)."""


def _schema(name: str) -> dict[str, Any]:
    return SCHEMA if subject(name).pins_arguments else BLOCK_SCHEMA


def _tools(name: str) -> list[dict[str, Any]]:
    function = {"name": "get_weather", "parameters": _schema(name), "strict": True}
    return [{"type": "function", "function": function}]


def _tag(name: str, single: bool) -> dict[str, Any]:
    request = ConstraintRequest({"get_weather": _schema(name)}, single=single, strict=frozenset({"get_weather"}))
    tag = subject(name).constraint(request, auto=True)
    assert tag is not None
    return tag


def hostile_snippets(name: str) -> list[str]:
    """Calls the strict request must not get back: an undeclared tool, arguments that break the schema
    (a missing required key, a wrong type, an undeclared key), in the writer's spelling, with each
    marker in place of another of the format's markers, and inside the format's think blocks."""
    fmt = subject(name)
    calls = [
        ("evil", {"city": "Paris"}),
        ("get_weather", {"days": 3}),
        ("get_weather", {"city": "Paris", "days": "three"}),
        ("get_weather", {"city": "Paris", "zzz": 1}),
    ]
    written = [fmt.write([call]) for call in calls]
    good = fmt.write([("get_weather", {"city": "Paris"})])
    snippets = list(written)
    markers = [marker for marker in fmt.markers if len(marker) > 1]
    for text in written:
        for old in markers:
            if old in text:
                # the reply may begin inside a message the prompt opened (`<|start|>assistant`)
                rest = text.split(old, 1)[1]
                snippets += [rest, rest.removeprefix("assistant")]
                snippets += [text.replace(old, new, 1) for new in markers if new != old]
                snippets.append(text.replace(old, old.replace(" ", "Ġ"), 1))
                snippets.append(text.replace(old, old.replace(" ", ""), 1))
                snippets.append(text.replace(old, old.replace("|><|", "|> <|"), 1))
    drafted = fmt.write([("get_weather", {"city": "PARIS"})])
    cut = drafted.find("PARIS") + 2
    for open_, close in fmt.think_pairs:
        snippets += [open_ + text + close for text in written[:2]]
        snippets += [open_ + "I will call " + good[: len(good) // 2], close + written[0]]
        # a call drafted in the block, the block closed inside its value, a call after it, and the
        # draft's end: one forced call to the grammar, a closed block and a free call to the parser
        snippets.append(open_ + drafted[:cut] + close + "\n" + written[0] + drafted[cut:])
    # A reply that begins with a channel format's message header (the prompt wrote `<|start|>assistant`).
    snippets += [
        ' to=functions.evil<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>',
        ' to=functions.evil<|channel|>commentary<|message|>{"city": "Paris"}<|call|>',
        ' to=evil<|message|><atem:function_calls><atem:invoke name="evil"></atem:invoke></atem:function_calls>',
    ]
    return list(dict.fromkeys(snippet for snippet in snippets if snippet))


def _checked(name: str, text: str, **options: Any) -> None:
    """`text`'s calls (finished and streamed alike elsewhere) are declared and valid."""
    with logs_silenced():
        result = parse(subject(name), text, _tools(name), **options)
    for call in result.calls:
        assert call.name == "get_weather", (text, call)
        if subject(name).pins_arguments:
            jsonschema.validate(call.arguments, SCHEMA)


def _accepts(tag: dict[str, Any], text: str) -> bool:
    return grammar_accepts(tag_grammar(tag), text)


@pytest.mark.parametrize("name", STRICT)
@pytest.mark.parametrize("single", [False, True], ids=["parallel", "single"])
def test_every_hostile_snippet_the_strict_grammar_admits_reads_as_declared_valid_calls(name, single):
    tag = _tag(name, single)
    grammar = tag_grammar(tag)
    for snippet in hostile_snippets(name):
        for text in (snippet, "Sure. " + snippet):
            if grammar_accepts(grammar, text):
                _checked(name, text)


def _walk(name: str, single: bool) -> Any:
    fmt = subject(name)
    pieces = (
        *CHARACTERS,
        *WORDS,
        *fmt.markers,
        *(marker for pair in fmt.think_pairs for marker in pair),
        *hostile_snippets(name),
        fmt.write([("get_weather", {"city": "Paris"})]),
    )
    return cached_walk(f"{name}/{single}", json.dumps(_tag(name, single)), pieces)


MIXED_DIALECTS = "deepseek_dsml"
"""Its parser reads one dialect's value close inside another dialect's block (V3.2's, V4's, the
spaced one), which the per-dialect grammar (xgrammar's DeepSeek style) leaves in a value: open
(README's known limits); the walk finds it now and then, so it is a non-strict xfail."""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=False, reason="mixed DSML dialects"))
        if name == MIXED_DIALECTS
        else name
        for name in STRICT
    ],
)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), single=st.booleans())
def test_any_text_the_strict_grammar_admits_reads_as_declared_valid_calls(name, seed, single):
    text = _walk(name, single).draw(random.Random(seed))
    if text is not None:
        _checked(name, text)


@pytest.mark.parametrize("name", STRICT)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), single=st.booleans())
def test_with_the_parsers_check_no_admitted_text_returns_an_unchecked_call(name, seed, single):
    """As the adapters parse a strict request (`strict=`: each pinned call checked against its
    schema), the walk's texts never return an unchecked call, in every format: also where the
    grammar alone has a known gap (mixed DSML dialects, xgrammar's unbounded numbers)."""
    text = _walk(name, single).draw(random.Random(seed))
    if text is not None:
        _checked(name, text, strict=True)


REQUIRED = [*(name for name, fmt in FORMATS.items() if fmt.required_constraint is not None), *DERIVED]


@pytest.mark.parametrize("name", REQUIRED)
@pytest.mark.parametrize("single", [False, True], ids=["parallel", "single"])
def test_required_ends_after_the_calls_and_a_line_break(name, single):
    """`required` / named: after the call list (one call when single) the output may end, also
    after a line break, which otherwise had to open another call (qwen_xml repeated its call until
    max_tokens); the parser reads the calls back."""
    request = ConstraintRequest({"get_weather": _schema(name)}, single=single)
    grammar = tag_grammar(subject(name).constraint(request))
    calls = [("get_weather", {"city": "Paris"})] * (1 if single else 2)
    text = subject(name).write(calls)
    for ending in ("", "\n"):
        assert grammar_accepts(grammar, text + ending), text + ending
        with logs_silenced():
            assert [(c.name, c.arguments) for c in parse(subject(name), text + ending, _tools(name)).calls] == calls


NUMBER_SCHEMA = {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
HUGE_NUMBERS = ["1e400", "-1E+999"]


STYLED = {"deepseek_dsml", "dots_xml", "minimax_xml", "minimax3_xml"}
"""Formats whose arguments xgrammar's XML styles render: its numbers there are unbounded (README's
known limits); a typed value past a float's range comes back as the string written."""


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason="xgrammar style")) if name in STYLED else name
        for name in REQUIRED
        if name in DERIVED or subject(name).pins_arguments  # derived: never built at collection
    ],
)
def test_a_number_the_required_grammar_admits_reads_as_a_number(name):
    """Numbers past a float's range or past the scalar bound: the grammar refuses them, or the parser
    reads the call with a number (typed-XML formats returned the string "1e400", the pythonic ones
    no call at all)."""
    request = ConstraintRequest({"get_weather": NUMBER_SCHEMA})
    grammar = tag_grammar(subject(name).constraint(request))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": NUMBER_SCHEMA}}]
    written = subject(name).write([("get_weather", {"n": 12345.5})])
    assert "12345.5" in written
    for number in HUGE_NUMBERS:
        text = written.replace("12345.5", number)
        if grammar_accepts(grammar, text):
            with logs_silenced():
                calls = parse(subject(name), text, tools).calls
            assert len(calls) == 1 and isinstance(calls[0].arguments["n"], (int, float)), (text[:200], calls)


@pytest.mark.parametrize("name", sorted(STYLED))
def test_a_huge_number_is_no_unchecked_call_under_strict(name):
    """Where the grammar still admits `1e400` (xgrammar's styles), a strict request's parser refuses
    the call the string would make: it comes back as text."""
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": NUMBER_SCHEMA}}]
    text = subject(name).write([("get_weather", {"n": 12345.5})]).replace("12345.5", "1e400")
    with logs_silenced():
        result = parse(subject(name), text, tools, strict=True)
    assert result.calls == [] and "1e400" in (result.content or "")


OPEN_SCHEMA = {k: v for k, v in SCHEMA.items() if k != "additionalProperties"}
REVIEW_CASES = [
    # a declared key written again with any value, where the schema does not close the object
    (
        "qwen_xml",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nx\n</parameter>\n<parameter=days>\nabc\n"
        "</parameter>\n</function>\n</tool_call>",
    ),
    (
        "glm_xml",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>x</arg_value><arg_key>days</arg_key>"
        "<arg_value>abc</arg_value></tool_call>",
    ),
    # a value that holds the call's close, then a call to any tool
    (
        "glm_xml",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>P</tool_call><tool_call>evil</tool_call>"
        "</arg_value></tool_call>",
    ),
    (
        "muse_atem",
        '<|start|>assistant to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
        '<atem:parameter name="city">P</atem:parameter><atem:parameter name="days">abc</atem:parameter>\n'
        "</atem:invoke>\n</atem:function_calls><|eom|>",
    ),
]
"""Strict bypasses an outside review found (issue 39's last round)."""


@pytest.mark.parametrize(("name", "text"), REVIEW_CASES)
@pytest.mark.parametrize("schema", [SCHEMA, OPEN_SCHEMA], ids=["closed", "open"])
def test_the_reviews_bypasses_are_refused_or_read_valid(name, text, schema):
    request = ConstraintRequest({"get_weather": schema}, strict=frozenset({"get_weather"}))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": schema}}]
    for auto in (False, True):
        grammar = tag_grammar(subject(name).constraint(request, auto=auto))
        if grammar_accepts(grammar, text):
            with logs_silenced():
                calls = parse(subject(name), text, tools).calls
            for call in calls:
                assert call.name == "get_weather", (auto, call)
                jsonschema.validate(call.arguments, SCHEMA)
