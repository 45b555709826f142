"""markdown_tools behaviour that the corpus does not pin down: the schema mapping and word splitting,
when a call starts and how its body streams, hold-back bounds, error cases and their logs."""

from __future__ import annotations

import json
import logging

import pytest
from helpers import counter_ids, random_chunks, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core.stream import NotACall
from toolcall_parsers.formats.gptme_blocks import BlockCall, positional_parameters, split_words


def tool(name, properties, required):
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


S = {"type": "string"}
SAVE = tool("save", {"path": S, "content": S}, ["path", "content"])
SHELL = tool("shell", {"command": S}, ["command"])
COMPLETE = tool("complete", {}, [])
TOOLS = [SAVE, SHELL, COMPLETE]


def stream(streaming=None, tools=TOOLS):
    return get_format("markdown_tools").stream(tools, counter_ids, streaming=streaming)


def chunkings(text):
    return [[text], list(text), *(random_chunks(text, seed) for seed in range(3))]


def calls(text, tools=TOOLS):
    return [(c.name, c.arguments) for c in parse("markdown_tools", text, tools).calls]


# -- the schema mapping and the words -------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("a b", ["a", "b"]),
        ("  a\t b  ", ["a", "b"]),
        ("'my file' x", ["my file", "x"]),
        ('"a \\"q\\" \\$ \\n"', ['a "q" $ \\n']),
        ("a\\ b c", ["a b", "c"]),
        ("a'b c'd", ["ab cd"]),
        ("''", [""]),
        ("", []),
    ],
)
def test_words_split_as_a_shell_does(line, words):
    assert split_words(line) == words


@pytest.mark.parametrize("line", ["'open", '"open', "a\\"])
def test_unclosed_quotes_and_a_trailing_backslash_are_errors(line):
    with pytest.raises(NotACall):
        split_words(line)


def test_positional_parameters_are_the_required_strings_in_declaration_order():
    schema = {"properties": {"b": S, "opt": S, "a": {"type": ["string", "null"]}}, "required": ["a", "b"]}
    assert positional_parameters(schema) == ["b", "a"]
    assert positional_parameters({}) == []


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"n": {"type": "integer"}}, "required": ["n"]},
        {"properties": {}, "required": ["ghost"]},
        {"properties": {"x": {}}, "required": ["x"]},
    ],
)
def test_schemas_that_cannot_be_mapped(schema):
    with pytest.raises(NotACall):
        positional_parameters(schema)


def test_the_body_is_the_last_key_so_that_it_can_stream():
    call = BlockCall(SAVE["function"]["parameters"], ["a.py"])
    assert call.head_json == '{"path": "a.py", "content": "' and call.tail_json == '"}'
    assert call.finished("x") == {"path": "a.py", "content": "x"}
    full = BlockCall(SAVE["function"]["parameters"], ["a.py", "x"])
    assert full.body_parameter is None and full.head_json == '{"path": "a.py", "content": "x"}'
    with pytest.raises(NotACall):
        full.finished("a body")
    with pytest.raises(NotACall):
        BlockCall(SAVE["function"]["parameters"], [])  # two parameters left for the body
    with pytest.raises(NotACall):
        BlockCall(SAVE["function"]["parameters"], ["a", "b", "c"])


def test_optional_parameters_are_never_filled():
    search = tool("search", {"query": S, "limit": {"type": "integer"}}, ["query"])
    assert calls("```search\npizza\n```", [search]) == [("search", {"query": "pizza"})]
    assert calls("```search pizza 5\n```", [search]) == []


# -- calls and content ----------------------------------------------------------------------------


def test_only_declared_tools_make_calls():
    text = "```save a.py\nx\n```"
    assert calls(text) == [("save", {"path": "a.py", "content": "x"})]
    assert calls(text, [SHELL]) == [] and calls(text, None) == []
    assert parse("markdown_tools", text, None).content == text


@pytest.mark.parametrize("chunks", chunkings("````python\n```save x\nbody\n```\n````\n```shell\nls\n```"))
def test_a_fence_inside_a_content_fence_is_content(chunks):
    result = result_of(run_chunks("markdown_tools", chunks, TOOLS))
    assert result.content == "````python\n```save x\nbody\n```\n````"
    assert [(c.name, c.arguments) for c in result.calls] == [("shell", {"command": "ls"})]


def test_the_closing_fence_is_the_same_character_at_least_as_long_and_nothing_else():
    assert calls("````shell\n```\n~~~~\n```` x\n`````\n") == [("shell", {"command": "```\n~~~~\n```` x"})]
    assert calls("~~~shell\n```\n~~~") == [("shell", {"command": "```"})]


def test_a_fence_longer_than_the_bound_is_no_fence():
    run = "`" * 65
    assert calls(f"{run}shell\nls\n{run}") == []
    assert calls(f"```shell\nls\n{run}\n```") == [("shell", {"command": "ls\n" + run})]


def test_the_body_drops_only_the_newline_before_the_closing_fence():
    assert calls("```shell\n```") == [("shell", {"command": ""})]
    assert calls("```shell\n\n```") == [("shell", {"command": ""})]
    assert calls("```shell\n\n\n```") == [("shell", {"command": "\n"})]
    assert calls("```shell\n a \n  ```  ") == [("shell", {"command": " a "})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```save a.txt\r\nhello\r\n```\r\n", [("save", {"path": "a.txt", "content": "hello"})]),
        ("```shell\r\nls\r\npwd\r\n```", [("shell", {"command": "ls\r\npwd"})]),  # interior CRLFs stay
        ("```shell\r\n\r\n\r\n```", [("shell", {"command": "\r\n"})]),
        ("```shell\r\na\r\r\n```", [("shell", {"command": "a\r"})]),  # one `\r` goes with the break
        ("```shell\r\na\rb\n```", [("shell", {"command": "a\rb"})]),
        ("```save 'a.txt'\r\n\nx\n```", [("save", {"path": "a.txt", "content": "\nx"})]),
    ],
)
def test_a_crlf_is_one_line_break_wherever_a_line_break_is_framing(text, expected):
    assert calls(text) == expected
    for chunks in chunkings(text):
        for policy in (None, "eager"):
            result = result_of(run_chunks("markdown_tools", chunks, TOOLS, streaming=policy))
            assert [(c.name, c.arguments) for c in result.calls] == expected


def test_a_carriage_return_that_may_start_the_closing_line_break_is_held_one_character():
    s = stream("eager")
    s.feed("```shell\r\nls")
    assert s.feed("\r") == [] and s._buf == "\r"
    assert s.feed("\r") == [CallArgs(0, "\\r")] and s._buf == "\r"  # the first one is body
    assert s.feed("\n") == [] and s._buf == ""
    assert s.feed("```") == []
    assert s.close() == [CallArgs(0, '"}'), CallEnd(0, {"command": "ls\r"})]


def test_a_tool_without_parameters_takes_no_words_and_no_body():
    assert calls("```complete\n```") == [("complete", {})]
    assert calls("```complete x\n```") == []
    assert calls("```complete\nbye\n```") == []


def test_an_unclosed_call_at_the_end_is_content_in_both_paths():
    text = "Running:\n```shell\nls -la\n"
    assert parse("markdown_tools", text, TOOLS).content == text.strip()
    default = run_chunks("markdown_tools", list(text), TOOLS)
    assert not any(isinstance(e, CallStart) for e in default)  # the policy never showed it
    eager = run_chunks("markdown_tools", list(text), TOOLS, streaming="eager")
    assert [type(e) for e in eager if not isinstance(e, Text)][:1] == [CallStart]  # eager showed it
    assert result_of(eager).calls == [] and result_of(eager).content == text.strip()


# -- streaming --------------------------------------------------------------------------------------


def test_a_call_starts_when_its_opening_line_is_complete_and_its_body_streams():
    s = stream("eager")
    assert s.feed("Saving.\n```save hel") == [Text("Saving.")]
    assert s.feed("lo.py") == []
    assert s.feed("\nprint(") == [
        CallStart(0, "call_0", "save"),
        CallArgs(0, '{"path": "hello.py", "content": "print('),
    ]
    assert s.feed('"hi")\n') == [CallArgs(0, '\\"hi\\")')]  # the newline waits: it may precede the fence
    assert s.feed("``") == []
    assert s.feed("`\n") == [CallArgs(0, '"}'), CallEnd(0, {"path": "hello.py", "content": 'print("hi")'})]
    assert s.close() == []


def test_a_held_newline_is_body_once_the_next_line_is_not_a_fence():
    s = stream("eager")
    s.feed("```shell\nls\n")
    assert s.feed("  ``x") == [CallArgs(0, "\\n  ``x")]


def test_hold_back_is_bounded_at_a_line_start():
    s = stream("eager")
    s.feed("```shell\nls\n")
    s.feed("   " + "`" * 64)
    assert len(s._buf) == 67
    assert s.feed("`") == [CallArgs(0, "\\n   " + "`" * 65)]  # 65: no fence, body text
    assert s._buf == ""


def test_spaces_after_a_closing_run_are_consumed_not_held():
    s = stream("eager")
    s.feed("```shell\nls\n```")
    s.feed(" " * 10_000)
    assert s._buf == ""
    assert s.feed("x") == [CallArgs(0, "\\n```" + " " * 10_000 + "x")]


def test_an_info_line_past_the_bound_opens_a_content_fence(caplog):
    long = "```shell " + "a" * 5000 + "\n```shell\nls\n```\n```shell\npwd\n```"
    for chunks in chunkings(long):
        result = result_of(run_chunks("markdown_tools", chunks, TOOLS))
        assert [c.arguments for c in result.calls] == [{"command": "pwd"}]
    s = stream()
    s.feed("```shell " + "a" * 3000)
    assert s._buf == ""  # consumed into the block's raw text, never held


def test_a_backtick_in_a_backtick_fences_info_string_is_no_fence():
    assert calls("```shell` x\n```shell\nls\n```") == [("shell", {"command": "ls"})]
    assert calls("~~~shell `x`\nls\n~~~") == []  # shell takes one parameter: `x` is a word too many


def test_reasoning_is_text():
    text = "<think>\n```shell\nrm -rf /\n```\n</think>\n```shell\nls\n```"
    assert calls(text) == [("shell", {"command": "ls"})]


def test_each_error_is_one_log_line_with_its_reason(caplog):
    cases = {
        "```save a b c\nx\n```": "3 words for 2 required string parameters",
        "```save\nx\n```": "one is the body",
        "```save 'a\nx\n```": "unclosed quote",
        "```complete\nbye\n```": "no parameter is left for it",
        "```shell\nls": "ended inside a tool block",
    }
    for text, reason in cases.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, "toolcall_parsers"):
            assert parse("markdown_tools", text, TOOLS).content == text
        assert len(caplog.records) == 1 and reason in caplog.records[0].getMessage(), text
    caplog.clear()
    weather = tool("get_weather", {"days": {"type": "integer"}}, ["days"])
    with caplog.at_level(logging.WARNING, "toolcall_parsers"):
        parse("markdown_tools", "```get_weather 3\n```\n```python\nx\n```", [weather])
    assert len(caplog.records) == 1 and "not a string" in caplog.records[0].getMessage()


def test_arguments_past_the_size_bound_are_content_whatever_the_chunking(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "100")
    text = "```shell\n" + "x" * 200 + "\n```\n```shell\nls\n```"
    for chunks in chunkings(text):
        result = result_of(run_chunks("markdown_tools", chunks, TOOLS))
        assert [c.arguments for c in result.calls] == [{"command": "ls"}]
        assert result.content == "```shell\n" + "x" * 200 + "\n```"


def test_a_refused_call_opens_a_content_fence(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "1")
    text = "```shell\nls\n```\n```shell\npwd\n```"
    assert calls(text) == [("shell", {"command": "ls"})]


def test_a_response_of_many_lines_is_read_from_one_buffer():
    s = stream()
    seen = spy_on_readers(s)
    s.feed("intro\n" * 50 + "```python\nx\n```\n" + "```shell\nls\n```\n" * 20)
    assert len(seen) == 1


def test_lone_surrogates_come_out_escaped():
    (call,) = parse("markdown_tools", "```save \ud800\n\udc00x\n```", TOOLS).calls
    assert "\\ud800" in call.arguments_json and "\\udc00" in call.arguments_json
    call.arguments_json.encode("utf-8")


def test_the_required_constraint_lets_the_output_end_after_a_blank_line():
    """The last block may be followed by its line break and one blank line, then the end (the
    e2e `required` case: a model that ends the closing fence's line must not be forced into another
    block); nothing else may follow, and the blocks still read as calls."""
    xgr = pytest.importorskip("xgrammar")
    from toolcall_parsers.formats import ConstraintRequest
    from toolcall_parsers.formats.markdown_tools import required_constraint
    from xgrammar.testing import _is_grammar_accept_string

    schemas = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": schemas["get_weather"]}}]
    block = "```get_weather\nParis\n```"
    for single in (False, True):
        tag = required_constraint(ConstraintRequest(schemas, None, single))
        grammar = xgr.Grammar.from_structural_tag(json.dumps(tag))
        for tail in ("", "\n", "\n\n"):
            assert _is_grammar_accept_string(grammar, block + tail), (single, tail)
            result = parse("markdown_tools", block + tail, tools)
            assert result.content is None and [c.arguments for c in result.calls] == [{"city": "Paris"}]
        for tail in ("\n\n\n", "\nText", "\n\n```get_weather\nOslo\n```"):
            assert not _is_grammar_accept_string(grammar, block + tail), (single, tail)
        two = block + "\n```get_weather\nOslo\n```\n\n"
        assert _is_grammar_accept_string(grammar, two) is not single


def test_writes_value_refuses_a_body_ending_in_a_lone_carriage_return():
    """A fence has no escape: a body's final `\\r` joins the closing line break (`"a\\r"` reads back
    `"a"`), so the spec's `writes_value` keeps tools that write calls (the fuzzer) off it."""
    spec = get_format("markdown_tools")
    for value in ("a\r", "\r", "x\r\r"):
        assert not spec.writes_value(value)
        assert calls(spec.write([("shell", {"command": value})])) != [("shell", {"command": value})]
    for value in ("a\r\n", "\ra", "a", ""):
        assert spec.writes_value(value)
