"""The parser's last word on a strict call (issue 39): a call to a tool the request pinned is held
until complete and checked against its schema; one its schema refuses comes back as text, in both
paths and every chunking, under every streaming policy. Grammars leave keywords unchecked
(`not`, `if` / `then`, `dependentRequired`, a `pattern` on a raw value), so this holds whatever the constraint
admitted. Without strict, the same calls are returned as the model wrote them."""

from __future__ import annotations

import json
import logging
from typing import Any

import jsonschema
import pytest
from helpers import both_paths, calls_of, char_chunks, run_chunks
from hypothesis import given, settings
from hypothesis import strategies as st
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.core.events import CallArgs, CallStart, build_result

PICK = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "not": {"const": 3}},
        "tags": {"type": "array"},
        "note": {"type": "string"},
    },
    "required": ["n"],
    "dependentRequired": {"tags": ["note"]},
}
FREE = {"type": "object", "properties": {"n": {"type": "integer"}}}
TOOLS = [
    {"type": "function", "function": {"name": "pick", "parameters": PICK, "strict": True}},
    {"type": "function", "function": {"name": "free", "parameters": FREE}},
]
PINNING = [name for name, fmt in FORMATS.items() if fmt.pins_arguments]


def _text(fmt: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    return "Before. " + "".join(FORMATS[fmt].write([call]) for call in calls) + " After."


@pytest.mark.parametrize("fmt", PINNING)
@pytest.mark.parametrize("strict", [True, frozenset({"pick"})])
def test_a_call_its_schema_refuses_is_text_in_both_paths(fmt, strict):
    calls = [("pick", {"n": 4}), ("pick", {"n": 3}), ("undeclared", {"n": 2}), ("free", {"n": 5})]
    text = _text(fmt, calls)
    result = both_paths(fmt, text, TOOLS, eager=True, strict=strict)
    assert calls_of(result) == [("pick", {"n": 4}), ("free", {"n": 5})]
    assert [call.index for call in result.calls] == [0, 1]
    written = FORMATS[fmt].write([("pick", {"n": 3})]).strip()
    assert written in (result.content or "")
    assert FORMATS[fmt].write([("undeclared", {"n": 2})]).strip() in (result.content or "")


@pytest.mark.parametrize("fmt", PINNING)
def test_without_strict_the_same_calls_are_returned(fmt):
    text = _text(fmt, [("pick", {"n": 3}), ("free", {"n": 5})])
    result = both_paths(fmt, text, TOOLS)
    assert calls_of(result) == [("pick", {"n": 3}), ("free", {"n": 5})]


@pytest.mark.parametrize("fmt", ["hermes_json", "qwen_xml", "llama_pythonic", "kimi_json", "gemma_calls"])
def test_a_strict_call_is_held_past_the_streaming_bound(fmt):
    """A long strict call is shown only once complete and checked, whatever the policy; a tool
    the request did not pin streams as the policy says."""
    long = {"n": 2, "tags": ["x" * 40 + str(i) for i in range(40)], "note": "long"}
    text = _text(fmt, [("pick", long)])
    for policy, strict in (("eager", True), (64, True), ("eager", frozenset({"free"}))):
        stream = FORMATS[fmt].stream(TOOLS, strict=strict, streaming=policy)
        fed = []
        for ch in char_chunks(text):
            fed.append(stream.feed(ch))
        events = [e for step in fed for e in step] + stream.close()
        assert calls_of(build_result(events)) == [("pick", long)]
        first = next(i for i, step in enumerate(fed) if any(isinstance(e, CallStart) for e in step))
        args_steps = [i for i, step in enumerate(fed) if any(isinstance(e, CallArgs) for e in step)]
        if strict is True:
            assert args_steps == [first]  # start and the whole arguments in one step, at the end
        else:
            assert len(args_steps) > 1  # not pinned: streamed as written


def test_the_refusal_is_logged_once_per_call_with_the_format_and_reason(caplog):
    text = _text("hermes_json", [("pick", {"n": 3}), ("pick", {"n": 2, "tags": [1]})])
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = build_result(run_chunks("hermes_json", [text], TOOLS, strict=True))
    assert result.calls == []
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert (
        "hermes_json" in lines[0] and "['n']" in lines[0] and "should not be valid" in lines[0] and "'pick'" in lines[0]
    )
    assert "'note' is a dependency of 'tags'" in lines[1]


def test_a_schema_jsonschema_cannot_use_refuses_the_call():
    """Strict means checked: a call that cannot be checked is not returned as if it were."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": "("}}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": schema}}]
    result = build_result(run_chunks("hermes_json", [_text("hermes_json", [("f", {"s": "x"})])], tools, strict=True))
    assert result.calls == [] and '"name": "f"' in (result.content or "")


SCHEMA_KEYWORDS = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
        "word": {"type": "string", "minLength": 2, "maxLength": 4},
        "count": {"type": "integer", "minimum": 0, "maximum": 9},
        "unit": {"enum": ["c", "f"]},
    },
    "required": ["code"],
    "additionalProperties": False,
}
VALUES = st.fixed_dictionaries(
    {"code": st.sampled_from(["ABC", "abc", "ABCD", "XYZ"])},
    optional={
        "word": st.sampled_from(["a", "ab", "abcd", "abcde"]),
        "count": st.integers(-3, 12),
        "unit": st.sampled_from(["c", "f", "k"]),
        "extra": st.just("x"),
    },
)


@pytest.mark.parametrize("fmt", PINNING)
@settings(max_examples=15, deadline=None)
@given(calls=st.lists(VALUES, min_size=1, max_size=3))
def test_strict_returns_exactly_the_calls_that_validate(fmt, calls):
    """Property: under strict every returned call validates, and every written call that validates
    is returned, in order (no false refusals)."""
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": SCHEMA_KEYWORDS}}]
    text = _text(fmt, [("lookup", args) for args in calls])
    result = both_paths(fmt, text, tools, strict=True)
    valid = [args for args in calls if jsonschema.Draft202012Validator(SCHEMA_KEYWORDS).is_valid(args)]
    assert [args for _, args in calls_of(result)] == valid


def _one_tool(schema: dict[str, Any], name: str = "f") -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "parameters": schema}}]


def test_a_ref_the_schema_does_not_hold_is_never_fetched(tmp_path):
    """An `http://` or `file://` `$ref` is not retrieved (jsonschema's default would fetch it while
    the engine waits): the call cannot be checked, so it is text."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    allowing = tmp_path / "any.json"
    allowing.write_text("{}", encoding="utf-8")
    for ref in (f"http://127.0.0.1:{server.getsockname()[1]}/schema", allowing.as_uri()):
        schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "not": {"$ref": ref}}
        text = _text("qwen_xml", [("f", {"a": 1})])
        assert both_paths("qwen_xml", text, _one_tool(schema), strict=True).calls == []
    with pytest.raises(BlockingIOError):
        server.accept()  # nobody connected
    server.close()


def test_local_refs_are_checked():
    positive = {"type": "integer", "minimum": 1}
    schema = {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": positive}}
    for p, kept in ((2, 1), (0, 0)):
        text = _text("hermes_json", [("f", {"p": p})])
        assert len(both_paths("hermes_json", text, _one_tool(schema), strict=True).calls) == kept


def test_unique_items_compares_as_json_schema_does_in_linear_time():
    schema = {"type": "object", "properties": {"a": {"type": "array", "uniqueItems": True}}}
    cases = [([1, 1.0], 0), ([1, True], 1), ([{"k": i} for i in range(3000)], 1), ([{"x": [1]}, {"x": [1.0]}], 0)]
    for items, kept in cases:
        result = parse("hermes_json", _text("hermes_json", [("f", {"a": items})]), _one_tool(schema), strict=True)
        assert len(result.calls) == kept, items[:3]


def test_a_schema_whose_branches_multiply_refuses_the_call_within_its_budget():
    """Nested `anyOf` branches double the work per level: past the budget the call is text (the
    budget grows with the arguments' length, so the cost stays linear), a shallow one is checked."""
    node = {"$ref": "#/$defs/N"}
    branches = [{"type": "array", "items": node, "contains": {"type": "string"}}, {"type": "array", "items": node}]
    schema = {"type": "object", "properties": {"x": node}, "$defs": {"N": {"anyOf": branches}}}
    for depth, kept in ((6, 1), (30, 0)):
        text = '<tool_call>{"name": "f", "arguments": {"x": %s}}</tool_call>' % ("[" * depth + "]" * depth)
        assert len(both_paths("hermes_json", text, _one_tool(schema), strict=True).calls) == kept


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("hermes_json", '<tool_call>{"name": "run", "arguments": {"cmd": "rm -rf ~", "cmd": "ls"}}</tool_call>'),
        (
            "qwen_xml",
            "<tool_call>\n<function=run>\n<parameter=cmd>\nrm -rf ~\n</parameter>\n<parameter=cmd>\nls\n</parameter>\n"
            "</function>\n</tool_call>",
        ),
    ],
)
def test_a_key_written_twice_is_no_strict_call(fmt, text):
    """The check sees one value of a key named twice, a client's decoder may keep the other: refused."""
    schema = {"type": "object", "properties": {"cmd": {"enum": ["ls", "pwd"]}}, "additionalProperties": False}
    assert both_paths(fmt, text, _one_tool(schema, "run"), strict=True).calls == []
    assert len(both_paths(fmt, text, _one_tool(schema, "run")).calls) == 1  # not strict: read as ever


def test_deep_arguments_get_the_same_answer_at_any_stack_depth():
    schema = {"type": "object"}
    shallow, deep = ({"a": [[[1]]]}, 1), ({"a": json.loads("[" * 80 + "]" * 80)}, 0)

    def at_depth(levels: int, text: str) -> int:
        if levels:
            return at_depth(levels - 1, text)
        return len(parse("hermes_json", text, _one_tool(schema), strict=True).calls)

    for arguments, kept in (shallow, deep):
        text = _text("hermes_json", [("f", arguments)])
        assert {at_depth(levels, text) for levels in (0, 200, 400)} == {kept}


def test_strict_takes_a_set_of_names_not_a_string():
    with pytest.raises(TypeError, match="hermes_json: strict takes"):
        parse("hermes_json", "x", TOOLS, strict="pick")
