"""qwen_xml behaviour that the corpus does not pin down: what streams when, the framing newlines, the
end-of-value rules (a `</parameter>` in a value, a dropped `</parameter>`) in both paths, bounds,
hold-back and logging."""

from __future__ import annotations

import json
import logging

import pytest
from helpers import char_chunks, counter_ids, random_chunks, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse

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
    return get_format("qwen_xml").stream(TOOLS, counter_ids, streaming="eager")


def call_text(*params: tuple[str, str], name: str = "write_file") -> str:
    """One block as Qwen3-Coder's template writes it."""
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def all_chunkings(text: str) -> list[list[str]]:
    return [[text], char_chunks(text), random_chunks(text, 1), random_chunks(text, 2)]


def test_name_at_function_tag_close_strings_stream_typed_values_wait():
    s = stream()
    assert s.feed("Ok.\n<tool_call>\n<function=write_fi") == [Text("Ok.")]
    assert s.feed("le>\n<parameter=path>\nsrc/a") == [
        CallStart(0, "call_0", "write_file"),
        CallArgs(0, '{"path": "src/a'),
    ]
    assert s.feed(".py\n</parameter>\n<parameter=mode>\n6") == [CallArgs(0, '.py", "mode": ')]
    assert s.feed("44\n</param") == []
    assert s.feed('eter>\n<parameter=content>\nline "1"\n') == [CallArgs(0, '644, "content": "line \\"1\\"')]
    assert s.feed("line 2\n\n") == [CallArgs(0, "\\nline 2\\n")]  # the last newline may be framing: held
    assert s.feed("</parameter>\n</function>\n</tool_call>") == [
        CallArgs(0, '"}'),
        CallEnd(0, {"path": "src/a.py", "mode": 644, "content": 'line "1"\nline 2\n'}),
    ]
    assert s.close() == []


def test_one_newline_each_side_is_framing():
    for value, expected in [("", ""), ("\n", "\n"), ("\n\nx\n\n", "\n\nx\n\n"), ("a\r\n", "a\r\n")]:
        text = call_text(("content", value))
        for chunks in all_chunkings(text):
            assert result_of(run_chunks("qwen_xml", chunks, TOOLS)).calls[0].arguments == {"content": expected}
    inline = "<tool_call><function=write_file><parameter=content>x</parameter></function></tool_call>"
    assert parse("qwen_xml", inline, tools=TOOLS).calls[0].arguments == {"content": "x"}


def test_a_crlf_framing_line_break_is_one_line_break():
    """`\r\n` around a value is framing as a whole (`core/lines.py`) when the value opens with one;
    opened with `\n` (the template's spelling), a value ending in `\r` reads back as written."""
    cases = [("\r\nv\r\n", "v"), ("\r\n\r\nv\r\n\r\n", "\r\nv\r\n"), ("\r\nv\r", "v\r"), ("\r\nv\n", "v")]
    cases += [("\nv\r\n", "v\r"), ("\rv\r\n", "\rv\r"), ("\na\r\n\n", "a\r\n")]
    for value, expected in cases:
        text = f"<tool_call>\r\n<function=write_file>\r\n<parameter=content>{value}</parameter>\r\n</function>"
        for chunks in all_chunkings(text):
            assert result_of(run_chunks("qwen_xml", chunks, TOOLS)).calls[0].arguments == {"content": expected}


def test_parameter_close_is_held_until_its_meaning_is_known():
    s = stream()
    s.feed("<tool_call>\n<function=write_file>\n<parameter=content>\na")
    assert s.feed("</parameter>  ") == []  # could end the value, or be data
    assert s.feed("<b>") == [CallArgs(0, "</parameter>  <b>")]  # data: what follows is not a tag we expect
    assert s.feed("\n</parameter>\n</func") == []
    assert s.feed("tion>") == [CallArgs(0, '"}'), CallEnd(0, {"content": "a</parameter>  <b>"})]


@pytest.mark.parametrize(
    "value",
    [
        "x</parameter>y",
        "x</parameter>\n<b>",
        "x</parameter>\n</parameter>",  # each close is followed by another close, not by a tag
        "<parameter>\n  <hello></hello></parameter>\n<root/>",  # vllm#44060's XML file
        "x</function>\n</tools>",  # a tools list written to a file
        "a <parameter=p> b",  # not at the start of a line
        "x</function>",
    ],
)
def test_end_tags_inside_values_are_data_streaming_and_not(value):
    text = call_text(("content", value))
    whole = run_chunks("qwen_xml", [text], TOOLS)
    assert result_of(whole).calls[0].arguments == {"content": value}
    for chunks in all_chunkings(text):
        assert run_chunks("qwen_xml", chunks, TOOLS) == whole


@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        ("<parameter=path>\na\n<parameter=mode>\n1\n</parameter>\n</function>", {"path": "a", "mode": 1}),
        ("<parameter=path>\na\n</function>\n</tool_call>", {"path": "a"}),
        ("<parameter=path>\na\n</function>", {"path": "a"}),  # the end of the output follows
        ("<parameter=path>\na\n</function>\n\n", {"path": "a"}),
        ("<parameter=path>\na\n</function>\n<tool_call>\n<function=write_file>\n</function>", {"path": "a"}),
        ("<parameter=path>a</function><function=write_file></function></tool_call>", {"path": "a"}),
    ],
)
def test_a_dropped_parameter_close_is_tolerated(body, arguments):
    """ollama#17914: under long contexts Qwen3.5/3.6 drop `</parameter>`; the next parameter on its
    own line, or the function's close followed by a block tag or the end, ends the value."""
    text = f"<tool_call>\n<function=write_file>\n{body}"
    whole = run_chunks("qwen_xml", [text], TOOLS)
    result = result_of(whole)
    assert result.calls[0].arguments == arguments and result.content is None
    for chunks in all_chunkings(text):
        assert run_chunks("qwen_xml", chunks, TOOLS) == whole


def test_a_function_close_followed_by_a_cut_block_close_at_the_end_is_a_call():
    """The payload is complete (`</function>`), only `</tool_call>` is cut: a call, the cut part
    text (the rule of every format: a call cut after its payload is a call)."""
    text = "<tool_call>\n<function=write_file>\n<parameter=path>\na\n</function>\n</tool_ca"
    for chunks in all_chunkings(text):
        result = result_of(run_chunks("qwen_xml", chunks, TOOLS))
        assert [(c.name, c.arguments) for c in result.calls] == [("write_file", {"path": "a"})]
        assert result.content == "</tool_ca"


def test_a_value_cannot_hold_a_line_that_starts_a_parameter():
    """The documented ambiguity: at the start of a value's line, `<parameter=` begins the next
    parameter (a dropped `</parameter>`), so such a value splits."""
    text = call_text(("content", "a\n<parameter=mode>\n2"))
    assert parse("qwen_xml", text, tools=TOOLS).calls[0].arguments == {"content": "a", "mode": 2}


def test_unknown_tool_and_duplicate_parameter_are_logged(caplog):
    text = "<tool_call><function=rm><parameter=p>1</parameter><parameter=p>2</parameter></function></tool_call>"
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = parse("qwen_xml", text, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [("rm", {"p": 2})]
    assert "qwen_xml: call to 'rm'" in caplog.text
    assert "parameter 'p' given twice" in caplog.text


def test_a_broken_function_is_text_and_the_others_count(caplog):
    broken = "<function=write_file>\njunk\n</function>"
    good = "<function=write_file>\n<parameter=mode>\n1\n</parameter>\n</function>"
    text = f"<tool_call>\n{good}\n{broken}\n{good}\n</tool_call>"
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        whole = run_chunks("qwen_xml", [text], TOOLS)
    result = result_of(whole)
    assert [c.arguments for c in result.calls] == [{"mode": 1}, {"mode": 1}]
    assert result.content == broken
    assert caplog.text.count("qwen_xml: not a valid tool call") == 1
    for chunks in all_chunkings(text):
        assert run_chunks("qwen_xml", chunks, TOOLS) == whole


def test_a_function_refused_at_its_name_is_text_up_to_its_end(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    refused = "<function=rm>\n<parameter=p>\n1\n</parameter>\n</function>"
    good = "<function=write_file>\n<parameter=mode>\n1\n</parameter>\n</function>"
    text = f"<tool_call>\n{refused}\n{good}\n<function=rm\ud800></function>\n{refused}\n</tool_call>"
    for chunks in all_chunkings(text):
        result = result_of(run_chunks("qwen_xml", chunks, TOOLS))
        assert [(c.name, c.arguments) for c in result.calls] == [("write_file", {"mode": 1})]
        assert result.content == f"<tool_call>\n{refused}\n<function=rm\ud800></function>\n{refused}"


def test_calls_past_the_most_per_response_are_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "2")
    one = "<function=write_file><parameter=mode>1</parameter></function>"
    result = parse("qwen_xml", f"<tool_call>{one * 3}</tool_call>", tools=TOOLS)
    assert len(result.calls) == 2 and result.content == one


def test_names_longer_than_max_name_are_not_calls(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "20")
    good = "<function=write_file><parameter=mode>1</parameter></function>"
    long = f"<function={'w' * 21}></function>"
    text = f"<tool_call>{long}{good}</tool_call>"
    whole = run_chunks("qwen_xml", [text], TOOLS)
    for chunks in all_chunkings(text):
        assert run_chunks("qwen_xml", chunks, TOOLS) == whole
    result = result_of(whole)
    assert [c.arguments for c in result.calls] == [{"mode": 1}] and result.content == f"<tool_call>{long}"
    assert parse("qwen_xml", text.replace("w" * 21, "w" * 20)).calls[0].name == "w" * 20


def test_arguments_past_their_bound_break_the_function_where_the_value_ends(monkeypatch):
    """The size bound is crossed at a place that depends on chunking; it is acted on where the value
    ends, so a `</function>` inside the value before that place cannot end the broken function in
    one chunking and not in another."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    value = "ab </function> " + "x" * 60
    broken = f"<function=write_file><parameter=content>{value}</parameter></function>"
    good = "<function=write_file><parameter=mode>1</parameter></function>"
    text = f"<tool_call>{broken}{good}</tool_call>"
    whole = run_chunks("qwen_xml", [text], TOOLS)
    for chunks in all_chunkings(text):
        assert run_chunks("qwen_xml", chunks, TOOLS) == whole
    result = result_of(whole)
    assert [c.arguments for c in result.calls] == [{"mode": 1}] and result.content == f"<tool_call>{broken}"


def test_arguments_past_their_bound_at_the_end_of_the_output(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    text = "<tool_call>\n<function=write_file>\n<parameter=content>\n" + "x" * 60 + "\n</function>"
    for chunks in all_chunkings(text):
        result = result_of(run_chunks("qwen_xml", chunks, TOOLS))
        assert result.calls == [] and result.content == text


def test_a_closing_brace_past_the_bound_keeps_the_function_text_once(monkeypatch):
    """The `}` sent at `</function>` can be what crosses the bound: the function is then text, its
    `</function>` written once (it was written twice before the XML block machine was shared)."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "9")
    text = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</function>\n</tool_call>"
    for chunks in all_chunkings(text):
        result = result_of(run_chunks("qwen_xml", chunks, None))
        assert result.calls == [] and result.content == text


@pytest.mark.parametrize("chunking", ["whole", "chars"])
def test_lone_surrogates_come_out_escaped(chunking):
    text = "<tool_call><function=f><parameter=s>a\ud800b</parameter><parameter=\udbff>x</parameter></function>"
    chunks = [text] if chunking == "whole" else char_chunks(text)
    (call,) = result_of(run_chunks("qwen_xml", chunks)).calls
    assert call.arguments == {"s": "a\ud800b", "\udbff": "x"}
    call.arguments_json.encode("utf-8")
    assert json.loads(call.arguments_json) == call.arguments


def test_a_value_of_end_tag_look_alikes_is_read_from_one_buffer():
    """Issue 10: every reader step of one feed sees the same text object (nothing re-copied)."""
    s = get_format("qwen_xml").stream(TOOLS, counter_ids)
    seen = spy_on_readers(s)
    value = "</parameter> x</function> y\n<parameter x" * 300
    functions = call_text(("content", value)) * 20
    result = result_of(s.feed(functions) + s.close())
    assert [c.arguments for c in result.calls] == [{"content": value}] * 20 and len(seen) == 1


@pytest.mark.parametrize(
    "piece",
    ["\n", " ", "</parameter>\n", "</function>  ", "x\n<parameter", "<tool_call>", "\n\n</parameter>"],
)
def test_what_waits_for_more_text_stays_short(piece):
    """Hold-back is bounded (a partial tag, a name, a newline), whatever the value repeats."""
    s = stream()
    s.feed("<tool_call>\n<function=write_file>\n<parameter=content>\n")
    for _ in range(2000):
        s.feed(piece)
        assert len(s._buf) <= len("</parameter>")
    s.close()


def test_several_calls_stream_with_their_indexes():
    text = call_text(("path", "a")) + "\n" + call_text(("path", "b"))
    events = run_chunks("qwen_xml", char_chunks(text), TOOLS, streaming="eager")
    starts = [e for e in events if isinstance(e, CallStart)]
    assert [(e.index, e.name) for e in starts] == [(0, "write_file"), (1, "write_file")]
    assert [e.arguments for e in events if isinstance(e, CallEnd)] == [{"path": "a"}, {"path": "b"}]


# -- a function written without its block -------------------------------------------------------


def both(text: str, tools=TOOLS):
    """The result of `parse()`, checked against every chunking."""
    reference = run_chunks("qwen_xml", [text], tools)
    for chunks in all_chunkings(text)[1:]:
        assert run_chunks("qwen_xml", chunks, tools) == reference, chunks
    return result_of(reference)


BARE = "<function=write_file>\n<parameter=path>\na.py\n</parameter>\n</function>"


@pytest.mark.parametrize(
    ("text", "content", "paths"),
    [
        (BARE, None, ["a.py"]),
        ("Writing it.\n\n" + BARE, "Writing it.", ["a.py"]),
        ("Writing it." + BARE + "\n</tool_call>\nDone.", "Writing it.\nDone.", ["a.py"]),  # the stray END is markup
        (BARE + "\nthen\n" + BARE.replace("a.py", "b.py"), "then", ["a.py", "b.py"]),
        (BARE + "\n" + BARE.replace("a.py", "b.py"), None, ["a.py", "b.py"]),  # one block without START
    ],
)
def test_a_declared_function_without_its_block_is_a_call(text, content, paths):
    result = both(text)
    assert result.content == content
    assert [(c.name, c.arguments) for c in result.calls] == [("write_file", {"path": p}) for p in paths]


@pytest.mark.parametrize(
    "text",
    [
        "<function=other>\n<parameter=path>\na.py\n</parameter>\n</function>",  # not declared
        "Use <function=write_file> to write, and </function> ends it.",  # prose: breaks at once
        "<think>" + BARE + "</think>",  # reasoning
        "<function=write_file>\n<parameter=path>\na.py",  # cut off
    ],
)
def test_a_bare_function_that_is_not_a_declared_complete_call_is_text(text):
    result = both(text)
    assert result.calls == [] and result.content == text


def test_without_tools_a_bare_function_is_text():
    assert both(BARE, None).calls == []


def test_a_broken_bare_function_is_text_only_up_to_where_it_broke():
    """Reading goes on from the break as text: a real block after it still counts (no skipping to a
    `</function>` that belongs to it)."""
    text = "See <function=write_file> here.\n" + call_text(("path", "a.py"))
    result = both(text)
    assert result.content == "See <function=write_file> here."
    assert [c.arguments for c in result.calls] == [{"path": "a.py"}]


def test_bare_functions_in_prose_are_read_once():
    """Each broken bare function is text from where it broke on: nothing is read twice."""
    s = get_format("qwen_xml").stream(TOOLS, counter_ids)
    seen = spy_on_readers(s)
    text = "<function=write_file>\n<parameter=path>\nx <function=write_file> y\n</parameter>\nz " * 2000
    result = result_of(s.feed(text) + s.close())
    assert result.calls == [] and result.content == text.strip() and len(seen) == 1


# -- drifted close markers -----------------------------------------------------------------------


@pytest.mark.parametrize("marker", ["</parameter1>", "</parameter_function>", "</parameter", "</parameter >"])
@pytest.mark.parametrize("follower", ["<parameter=mode>\n6\n</parameter>\n</function>", "</function>"])
def test_a_drifted_parameter_close_ends_the_value_where_a_tag_follows(marker, follower):
    text = f"<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n{marker}\n{follower}\n</tool_call>"
    # a space is not drift: that tag is data, and the dropped-close rules end the value
    expected = {"path": "a.py\n</parameter >"} if marker == "</parameter >" else {"path": "a.py"}
    if "mode" in follower:
        expected["mode"] = 6
    assert [c.arguments for c in both(text).calls] == [expected]


@pytest.mark.parametrize("value", ["x</parameters> y", "<a>\n</parameterList>", "a </parameter_x>"])
def test_a_drifted_close_that_no_tag_follows_is_data(value):
    text = call_text(("path", value))
    assert [c.arguments for c in both(text).calls] == [{"path": value}]


def test_a_drifted_close_holds_back_little():
    s = stream()
    s.feed("<tool_call>\n<function=write_file>\n<parameter=content>\n")
    for _ in range(500):
        s.feed("</parameter" + "x" * 40)
        assert len(s._buf) <= 40
    s.close()


# -- Python's spelling of values -----------------------------------------------------------------

PY_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {
                "type": "object",
                "properties": {
                    "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                    "u": {"type": ["string", "null"]},
                    "s": {"type": "string"},
                    "o": {"type": "object", "properties": {"k": {"type": "integer"}}},
                    "a": {"type": "array", "items": {"type": "string"}},
                    "b": {"type": "boolean"},
                },
            },
        },
    }
]


@pytest.mark.parametrize(
    ("key", "raw", "value"),
    [
        ("n", "None", None),
        ("n", "none", "none"),  # only Python's exact spelling
        ("u", "None", None),
        ("u", "Nonesuch", "Nonesuch"),
        ("s", "None", "None"),
        ("s", "{'k': 1}", "{'k': 1}"),
        ("o", "{'k': 1, 'x': None, 'y': True}", {"k": 1, "x": None, "y": True}),
        ("o", "{'k': '2'}", {"k": 2}),  # nested values typed as JSON's are
        ("o", "\"{'k': 1}\"", {"k": 1}),  # a JSON string holding it: unwrapped once
        ("o", '"{\\"k\\": 1}"', {"k": 1}),
        ("o", "{'k': float('nan')}", "{'k': float('nan')}"),  # not a literal
        ("o", "{'k': 1e400}", "{'k': 1e400}"),  # not finite
        ("o", "{1, 2}", "{1, 2}"),  # a set is no JSON kind
        ("o", "[" * 300 + "]" * 300, "[" * 300 + "]" * 300),
        ("a", "['x', \"it's\"]", ["x", "it's"]),
        ("a", "('x',)", "('x',)"),
        ("b", "True", True),
    ],
)
def test_values_in_pythons_spelling(key, raw, value):
    text = f"<tool_call>\n<function=f>\n<parameter={key}>\n{raw}\n</parameter>\n</function>\n</tool_call>"
    assert [c.arguments for c in both(text, PY_TOOLS).calls] == [{key: value}]


def test_pythons_spelling_is_not_guessed_without_a_schema():
    body = "<parameter=x>\n{'k': 1}\n</parameter>\n<parameter=y>\nNone\n</parameter>\n"
    text = f"<tool_call>\n<function=g>\n{body}</function>\n</tool_call>"
    assert [c.arguments for c in both(text, None).calls] == [{"x": "{'k': 1}", "y": "None"}]


def test_a_nullable_string_waits_while_it_may_be_none():
    s = get_format("qwen_xml").stream(PY_TOOLS, counter_ids, streaming="eager")
    s.feed("<tool_call>\n<function=f>\n<parameter=u>\nNon")
    assert s.feed("e") == []
    assert s.feed("s") == [CallArgs(0, '"Nones')]
