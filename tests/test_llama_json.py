"""llama_json: Llama 3.x JSON calls, the bounded decision on a call's first keys, built-in tools after
`<|python_tag|>`, and the bounds. Each test names the decision it pins; the corpus runs the same
kinds of inputs in every chunking."""

from __future__ import annotations

import json

import pytest
from helpers import char_chunks, counter_ids, random_chunks, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats.llama_json import required_constraint

FMT = "llama_json"


def tools(*names: str) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


def parsed(text: str, tool_list: list[dict] | None = None):
    """The result of `text`, once every chunking (whole, char by char, random) gave the same events."""
    whole = run_chunks(FMT, [text], tool_list)
    for chunks in (char_chunks(text), random_chunks(text, 1), random_chunks(text, 2)):
        assert run_chunks(FMT, chunks, tool_list) == whole
    return result_of(whole)


def calls(result) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in result.calls]


def call(name: str = "f", key: str = "parameters", **args) -> str:
    return json.dumps({"name": name, key: args})


def stream(tool_list=None, **options):
    return get_format(FMT).stream(tool_list, counter_ids, streaming="eager", **options)


@pytest.fixture
def no_internal_error(caplog):
    yield
    assert "internal parser error" not in caplog.text


# -- where a call starts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content"),
    [
        (call(a=1), None),  # the whole output
        ("<|python_tag|>" + call(a=1), None),
        ("  \n" + call(a=1), None),
        ("Sure.\n" + call(a=1), "Sure."),  # a line start
        ("Sure.\n\t  " + call(a=1), "Sure."),  # an indented line start
        ("Sure. <|python_tag|>" + call(a=1), "Sure."),  # after the tag, mid-line
    ],
)
def test_a_call_starts_the_output_a_line_or_follows_the_tag(text, content):
    result = parsed(text)
    assert calls(result) == [("f", {"a": 1})]
    assert result.content == content


@pytest.mark.parametrize(
    "text",
    [
        "Try " + call(a=1),  # mid-line
        "a\nb " + call(a=1),
        "<think>\n" + call(a=1) + "\n</think>",
    ],
)
def test_a_call_object_mid_line_or_in_reasoning_is_content(text):
    result = parsed(text)  # no tools declared: mid-line, no name is a declared tool's
    assert result.calls == [] and result.content == text.strip()


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Here you go: " + call(a=1), "Here you go:"),
        ("Sure " + call(a=1) + "; " + call("g") + " done.", "Sure  done."),
        ('{"x": 1}; ' + call(a=1), '{"x": 1};'),
        ('{"name": "f", "parameters": {' + call(a=1), '{"name": "f", "parameters": {'),  # where a call broke
    ],
)
def test_a_declared_tools_call_mid_line_after_prose_is_a_call(text, content):
    result = parsed(text, tools("f", "g"))
    assert calls(result)[-1][0] in ("f", "g") and result.content == content


@pytest.mark.parametrize(
    "text",
    [
        "Quote: " + call("other", a=1),  # not declared
        '[TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}]',  # another format's markup, glued
        '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
        'functools[{"name": "f", "arguments": {"a": 1}}]',
        "calls: [ " + call(a=1) + "]",  # an array item
        '{"example": ' + call(a=1) + "}",  # a value inside JSON
        'x = {"a": 1, "b": ' + call(a=1) + "}",
        "f( " + call(a=1) + ")",
        "Try" + call(a=1),  # no space before it
    ],
)
def test_a_call_shape_mid_line_with_another_reading_is_content(text):
    result = parsed(text, tools("f"))
    assert result.calls == [] and result.content == text


def test_the_line_break_before_a_line_start_call_belongs_to_it():
    assert parsed("a\n" + call() + "b").content == "ab"
    assert parsed("a\n\n" + call() + "b").content == "a\nb"  # only the last line break


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Hi\r\n" + call(city="A") + "\r\nbye", "Hi\r\nbye"),  # as with LF: "Hi\nbye"
        ("Hi\r\r\n  " + call(city="A") + "b", "Hi\rb"),  # one `\r` goes with the break
        ("Hi\r\n" + call(city="A") + "\r\n" + call(city="A") + "\r", "Hi"),
        ("Hi\r" + call(city="A"), "Hi\r" + call(city="A")),  # a lone `\r` breaks no line
        ("Hi\r<|python_tag|>" + call(city="A"), "Hi"),  # trailing whitespace of content is trimmed
    ],
)
def test_a_crlf_before_a_line_start_call_is_one_line_break(text, content):
    result = parsed(text)
    assert result.content == content
    assert len(result.calls) == (0 if content.endswith("}") else text.count('"name"'))


def test_a_carriage_return_that_may_start_a_line_break_is_held_one_character():
    s = stream()
    assert s.feed("Hi\r") == [Text("Hi")] and s._buf == "" and s._lines.pending() == "\r"  # kept aside
    assert s.feed("\r") == [] and s._lines.pending() == "\r"  # the first one is text (its whitespace waits)
    assert s.feed("\n") == [] and s._lines.pending() == "\r\n"  # a line break, held at the line start
    assert s.feed(call(city="A") + "x") == [
        CallStart(0, "call_0", "f"),
        CallArgs(0, '{"city": "A"}'),
        CallEnd(0, {"city": "A"}),
        Text("\rx"),
    ]


# -- the bounded decision on the first keys ------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "John", "age": 3}',
        '{"name": "f"}',
        '{"parameters": {}, "name": "f"}',  # keys in another order: content (decided on the first key)
        '{"type": "object", "name": "f", "parameters": {}}',
        '{"type": "function", "parameters": {}}',
        '{"function": {"name": "f", "arguments": {}}}',
        '{"name": 3, "parameters": {}}',
        '{"name": "", "parameters": {}}',
        '{"name": "f" "parameters": {}}',
        "{'name': 'f', 'parameters': {}}",
        "{}",
        "{{}}",
    ],
)
def test_any_other_object_is_content_without_a_log(text, caplog):
    result = parsed(text)
    assert result.calls == [] and result.content == text
    assert "llama_json" not in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "parameters": {"a": 1}}',
        '{"name": "f", "arguments": {"a": 1}}',
        '{"type": "function", "name": "f", "parameters": {"a": 1}}',
        '{ "type" : "function" ,\n "name" : "f" ,\n "parameters" : {"a": 1} }',
        '{"name": "\\u0066", "parameters": {"a": 1}}',
        '{"name": "f", "parameters": "{\\"a\\": 1}"}',
        '{"name": "f", "parameters": {"a": 1}, "id": "x"}',
    ],
)
def test_call_shapes(text):
    assert calls(parsed(text)) == [("f", {"a": 1})]


def test_a_non_call_is_released_as_soon_as_a_key_shows_it():
    s = stream()
    assert s.feed('{"name": "John", "a') == []  # `"a` may become `"arguments"`
    assert s.feed("g") == [Text('{"name": "John", "ag')]
    assert s.feed('e": 3}') == [Text('e": 3}')]


def test_what_waits_for_the_decision_is_the_head_only():
    s = stream()
    assert s.feed('{"name": "get_weather", "parameters"') == [CallStart(0, "call_0", "get_weather")]
    assert s.feed(': {"city": "Par') == [CallArgs(0, '{"city": "Par')]
    assert s.feed('is"}}') == [CallArgs(0, 'is"}'), CallEnd(0, {"city": "Paris"})]
    assert s.close() == []


def test_whitespace_in_the_head_is_consumed_not_held():
    s = stream()
    s.feed('{"name"')
    for _ in range(2000):
        s.feed(" \n\t ")
        assert len(s._buf) <= 8
    events = s.feed(': "f", "parameters": {}}') + s.close()
    assert [e for e in events if isinstance(e, CallStart)] == [CallStart(0, "call_0", "f")]


def test_each_feed_gives_every_reader_step_the_same_text():
    s = stream()
    seen = spy_on_readers(s)
    text = 'Hi\n{"name": "f", "parameters": {"a": [1, "x"]}}; {"name": "g", "arguments": {}} ok'
    for piece in random_chunks(text, 3, 9):
        s.feed(piece)
    s.close()
    assert len(seen) <= len(random_chunks(text, 3, 9))


# -- several calls, text after them ---------------------------------------------------------------------


@pytest.mark.parametrize("sep", ["; ", ";", " ; ", ";\n", "\n", "", " ", "\n\n"])
def test_several_calls(sep):
    assert calls(parsed(call(a=1) + sep + call("g", b=2))) == [("f", {"a": 1}), ("g", {"b": 2})]


@pytest.mark.parametrize(
    ("after", "content"),
    [
        (" I called it.", "I called it."),
        ("; done", "; done"),
        ('; {"x": 1}', '; {"x": 1}'),
        (";;" + call(), ";;" + call()),  # one `;` only
        ("\n\nBye", "Bye"),
    ],
)
def test_text_after_a_call_is_content(after, content):
    result = parsed(call(a=1) + after)
    assert calls(result)[0] == ("f", {"a": 1})
    assert result.content == content


# -- broken calls: text from their start marker, logged once ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"name": "f", "parameters": {"a": x}}', "not a valid call"),
        ('{"name": "f", "parameters": [1]}', "arguments are not a JSON object"),
        ('{"name": "f", "parameters": {}, "arguments": {}}', "arguments given twice"),
        ('{"name": "f", "parameters": {"a": 1}', "the output ended inside a call"),
        ('{"name": "f", "param', "the output ended inside a call"),
        ('{"name": "f', "the output ended inside a call"),
        ('<|python_tag|>brave_search.call(query="x"', "the output ended inside a built-in tool call"),
        ('<|python_tag|>brave_search.call("x")', "a positional argument"),
        ("<|python_tag|>brave_search.call(q=x)", "'x' is not a literal"),
        ("<|python_tag|>brave_search.call(q=1j)", "complex number"),
    ],
)
def test_a_broken_call_is_text_with_one_log_line(text, reason, caplog, no_internal_error):
    result = parsed(text)
    assert result.calls == [] and result.content == text
    lines = [r.getMessage() for r in caplog.records if r.name == "toolcall_parsers"]
    assert len(lines) == 4  # one per run: whole, char by char, two random splits
    assert reason in lines[0]


def test_a_broken_call_does_not_take_the_next_one():
    text = '{"name": "f", "parameters": {"a": x}}\n' + call("g", b=2)
    result = parsed(text)
    assert calls(result) == [("g", {"b": 2})]
    assert result.content == '{"name": "f", "parameters": {"a": x}}'


def test_a_second_call_cut_off_leaves_the_first():
    result = parsed(call(a=1) + '; {"name": "g", "parameters": {"b"')
    assert calls(result) == [("f", {"a": 1})]
    assert result.content == '; {"name": "g", "parameters": {"b"'


def test_a_broken_call_after_the_tag_returns_the_tag_too():
    assert (
        parsed('<|python_tag|>{"name": "f", "parameters": 1}').content == '<|python_tag|>{"name": "f", "parameters": 1}'
    )


def test_a_broken_stream_shows_no_call_under_the_default_policy():
    s = get_format(FMT).stream(None, counter_ids)
    events = s.feed('{"name": "f", "parameters": {"a": 1') + s.close()
    assert not any(isinstance(e, CallStart) for e in events)


# -- built-in tools (Llama 3.1) -------------------------------------------------------------------------


def test_builtin_tool_calls_after_the_tag():
    result = parsed('<|python_tag|>brave_search.call(query="weather in SF")<|eom_id|>')
    assert calls(result) == [("brave_search", {"query": "weather in SF"})]
    assert result.content == "<|eom_id|>"  # end tokens are text, as in llama_pythonic
    result = parsed("<|python_tag|>wolfram_alpha.call(query='x', n=-2, ok=True, l=[1, None],)")
    assert calls(result) == [("wolfram_alpha", {"query": "x", "n": -2, "ok": True, "l": [1, None]})]
    assert calls(parsed("<|python_tag|>get_time.call()")) == [("get_time", {})]


@pytest.mark.parametrize(
    "text",
    [
        'brave_search.call(query="x")',  # no tag
        '<|python_tag|>a.b.call(query="x")',  # a dotted tool name
        '<|python_tag|>brave_search.run(query="x")',
        '<|python_tag|>[brave_search(query="x")]',  # llama_pythonic's list
    ],
)
def test_not_a_builtin_call(text):
    result = parsed(text)
    assert result.calls == [] and result.content == text


def test_a_bad_string_breaks_the_builtin_call_at_the_string_end():
    """Nothing inside the string is read as text that could start a call."""
    text = '<|python_tag|>f.call(q="\\N{NOPE}\n' + call("g") + '")'
    result = parsed(text)
    assert result.calls == [] and result.content == text


def test_builtin_arguments_stream_per_argument():
    s = stream()
    assert s.feed("<|python_tag|>brave_search.call(") == [CallStart(0, "call_0", "brave_search")]
    assert s.feed('query="a", ') == [CallArgs(0, '{"query": "a"')]
    assert s.feed("n=3)") == [CallArgs(0, ', "n": 3}'), CallEnd(0, {"query": "a", "n": 3})]


def test_a_builtin_call_then_a_json_call():
    assert calls(parsed('<|python_tag|>f.call(a=1); {"name": "g", "parameters": {}}')) == [("f", {"a": 1}), ("g", {})]


# -- code_interpreter: raw Python after the tag ----------------------------------------------------------


CODE = tools("code_interpreter", "f")


def test_code_after_the_tag_is_a_code_interpreter_call_when_declared():
    text = "Let me compute.<|python_tag|>import math\nprint(math.sqrt(2))<|eom_id|>"
    result = parsed(text, CODE)
    assert calls(result) == [("code_interpreter", {"code": "import math\nprint(math.sqrt(2))"})]
    assert result.content == "Let me compute.<|eom_id|>"
    undeclared = parsed(text, tools("f"))
    assert undeclared.calls == [] and undeclared.content == text


@pytest.mark.parametrize("source", ["x", "print(1)", "# a comment\n", 'd = {"name": 1}\n', "a.b.c(1)"])
def test_code_bodies_to_the_end_of_the_output(source):
    assert calls(parsed("<|python_tag|>" + source, CODE)) == [("code_interpreter", {"code": source})]


def test_a_code_body_streams_as_a_json_string():
    s = stream(CODE)
    events = s.feed('<|python_tag|>print("hi")\n')
    assert events == [CallStart(0, "call_0", "code_interpreter"), CallArgs(0, '{"code": "print(\\"hi\\")\\n')]
    assert s.feed("x = 1<|eo") == [CallArgs(0, "x = 1")]
    assert s.feed("t_id|>") == [CallArgs(0, '"}'), CallEnd(0, {"code": 'print("hi")\nx = 1'}), Text("<|eot_id|>")]


def test_code_past_the_size_bound_is_text_to_its_end(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    text = "<|python_tag|>" + "x = 1\n" * 20 + "<|eom_id|>\n" + call()
    result = parsed(text, CODE)
    assert calls(result) == [("f", {})]
    assert result.content == "<|python_tag|>" + "x = 1\n" * 20 + "<|eom_id|>"


# -- bounds ---------------------------------------------------------------------------------------------


def test_a_name_longer_than_the_bound_is_content_and_nothing_long_is_held(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "16")
    ok = '{"name": "' + "n" * 16 + '", "parameters": {}}'
    assert calls(parsed(ok)) == [("n" * 16, {})]
    long = '{"name": "' + "n" * 17 + '", "parameters": {}}'
    assert parsed(long).calls == []
    s = stream()
    s.feed('{"name": "')
    for _ in range(100):
        s.feed("n")
        assert len(s._buf) <= 16 + 2
    assert result_of(s.close()).calls == []


def test_a_builtin_name_is_held_only_up_to_the_bound(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "16")
    s = stream()
    events = s.feed("<|python_tag|>")
    for _ in range(100):
        events += s.feed("n")
        assert len(s._buf) <= 16
    events += s.close()
    assert "".join(e.text for e in events if isinstance(e, Text)) == "<|python_tag|>" + "n" * 100


@pytest.mark.parametrize(
    ("setting", "text"),
    [
        ("TOOLCALL_PARSERS_MAX_DEPTH", '{"name": "f", "parameters": {"a": [[[[1]]]]}}'),
        ("TOOLCALL_PARSERS_MAX_SCALAR", '{"name": "f", "parameters": {"a": ' + "1" * 40 + "}}"),
        ("TOOLCALL_PARSERS_MAX_CALL_CHARS", '{"name": "f", "parameters": {"a": "' + "x" * 40 + '"}}'),
    ],
)
def test_past_a_bound_the_call_is_text(monkeypatch, setting, text, no_internal_error):
    monkeypatch.setenv(setting, "3" if setting.endswith("DEPTH") else "16")
    result = parsed(text + "\n" + call("g"))
    assert calls(result) == [("g", {})]
    assert result.content == text


def test_more_calls_than_the_bound_are_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "2")
    text = "; ".join(call(i=i) for i in range(3))
    result = parsed(text)
    assert calls(result) == [("f", {"i": 0}), ("f", {"i": 1})]
    assert result.content == "; " + call(i=2)


def test_an_undeclared_tool_is_text_when_the_operator_says_so(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    text = call("nope", a=1) + "\n" + call("f", b=2) + "\n<|python_tag|>nope.call(a=1)"
    result = parsed(text, tools("f"))
    assert calls(result) == [("f", {"b": 2})]
    assert result.content == call("nope", a=1) + "\n<|python_tag|>nope.call(a=1)"


def test_whitespace_runs_between_calls_are_consumed():
    s = stream()
    s.feed(call())
    for _ in range(2000):
        s.feed(" \n\t ")
        assert len(s._buf) <= 8
    events = s.feed(";") + s.feed(" " * 5000) + s.feed(call("g")) + s.close()
    assert [e.name for e in events if isinstance(e, CallStart)] == ["g"]


# -- the decoding constraint for tool_choice="required" ---------------------------------------------------


def test_required_constraint_writes_what_the_parser_reads():
    tag = required_constraint(ConstraintRequest({"get_weather": {"type": "object"}, 'we"ird': {}}))
    body = tag["format"]
    assert body["type"] == "tags_with_separator" and body["separator"] == "; " and body["at_least_one"]
    begins = [t["begin"] for t in body["tags"]]
    assert begins == ['{"name": "get_weather", "parameters": ', '{"name": "we\\"ird", "parameters": ']
    text = begins[1] + '{"a": 1}' + body["tags"][1]["end"] + "; " + begins[0] + "{}" + body["tags"][0]["end"]
    assert calls(parse(FMT, text)) == [('we"ird', {"a": 1}), ("get_weather", {})]
    named = required_constraint(ConstraintRequest({"a": {}, "b": {}}, "b", True))["format"]
    assert [t["begin"] for t in named["tags"]] == ['{"name": "b", "parameters": '] and named["stop_after_first"]
