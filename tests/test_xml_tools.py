"""xml_tools behaviour that the corpus does not pin down: entities, framing newlines, when a call
starts and how its body streams, hold-back bounds, error cases and their logs."""

from __future__ import annotations

import logging

import pytest
from helpers import counter_ids, random_chunks, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core.xml_entities import decode_entities, entity_at
from toolcall_parsers.formats.gptme_blocks import split_words


def tool(name, properties, required):
    parameters = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


S = {"type": "string"}
SAVE = tool("save", {"path": S, "content": S}, ["path", "content"])
SHELL = tool("shell", {"command": S}, ["command"])
COMPLETE = tool("complete", {}, [])
TOOLS = [SAVE, SHELL, COMPLETE]


def stream(streaming=None, tools=TOOLS):
    return get_format("xml_tools").stream(tools, counter_ids, streaming=streaming)


def chunkings(text):
    return [[text], list(text), *(random_chunks(text, seed) for seed in range(3))]


def calls(text, tools=TOOLS):
    return [(c.name, c.arguments) for c in parse("xml_tools", text, tools).calls]


@pytest.mark.parametrize(
    ("text", "decoded"),
    [
        ("&lt;&gt;&amp;&quot;&apos;", "<>&\"'"),
        ("&#65;&#x42;&#x1F600;", "AB😀"),
        ("&nbsp; &amp &#0; &#xD800; &#x110000; &#;", "&nbsp; &amp &#0; &#xD800; &#x110000; &#;"),
        ("&amp;lt;", "&lt;"),
    ],
)
def test_entities(text, decoded):
    assert decode_entities(text) == decoded


def test_a_partial_entity_waits_only_while_it_can_still_be_one():
    assert entity_at("x &am", 2) is None
    assert entity_at("x &#x1F6", 2) is None
    assert entity_at("x &amx", 2) == ("&", 3)
    assert entity_at("x &" + "a" * 20, 2) == ("&", 3)
    assert entity_at("x &amp;", 2) == ("&", 7)


def test_one_leading_and_one_trailing_newline_are_framing():
    assert calls("<tool-use><shell>\nls\n</shell></tool-use>") == [("shell", {"command": "ls"})]
    assert calls("<tool-use><shell>\n\nls\n\n</shell></tool-use>") == [("shell", {"command": "\nls\n"})]
    assert calls("<tool-use><shell>\n</shell></tool-use>") == [("shell", {"command": ""})]
    assert calls("<tool-use><shell>\n\n</shell></tool-use>") == [("shell", {"command": ""})]
    assert calls("<tool-use><shell>\n\n\n</shell></tool-use>") == [("shell", {"command": "\n"})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<tool-use>\r\n<save args="a.txt">\r\nhello\r\n</save>\r\n</tool-use>', {"path": "a.txt", "content": "hello"}),
        ("<tool-use><shell>\r\n</shell></tool-use>", {"command": ""}),
        ("<tool-use><shell>\r\n\r\n</shell></tool-use>", {"command": ""}),
        ("<tool-use><shell>\r\nls\r\npwd\r\n</shell></tool-use>", {"command": "ls\r\npwd"}),
        ("<tool-use><shell>\r\r\na\r\r\n</shell></tool-use>", {"command": "\r\r\na\r"}),
        ("<tool-use><shell>\ra\r</shell></tool-use>", {"command": "\ra\r"}),  # a lone `\r` is no line break
    ],
)
def test_a_crlf_framing_line_break_is_one_line_break(text, expected):
    assert [args for _, args in calls(text)] == [expected]
    for chunks in chunkings(text):
        for policy in (None, "eager"):
            result = result_of(run_chunks("xml_tools", chunks, TOOLS, streaming=policy))
            assert [c.arguments for c in result.calls] == [expected]


@pytest.mark.parametrize("body", ["\r", "a\r", "\r\n", "\ra", "\r\r\n"])
def test_the_writer_and_template_escape_a_body_carriage_return_beside_the_framing(body):
    """A body's `\\r` is written `&#13;`: a literal one beside the framing line break would join it."""
    text = get_format("xml_tools").write([("shell", {"command": body})])
    assert "\r" not in text
    assert calls(text) == [("shell", {"command": body})]


def test_a_carriage_return_that_may_start_a_line_break_is_held_one_character():
    s = stream("eager")
    s.feed("<tool-use><shell>ls")
    assert s.feed("\r") == [] and s._buf == "\r"
    assert s.feed("\r\r") == [CallArgs(0, "\\r\\r")] and s._buf == "\r"
    assert s.feed("\n</shell>") == [CallArgs(0, '"}'), CallEnd(0, {"command": "ls\r\r"})]


def test_a_newline_in_args_separates_words_as_a_shell_does():
    assert split_words("a\nb\r\n c") == ["a", "b", "c"]
    assert split_words("'a\nb' \"c\nd\"") == ["a\nb", "c\nd"]  # quoted, it stays
    assert calls('<tool-use><save args="a.txt\nb"></save></tool-use>') == [("save", {"path": "a.txt", "content": "b"})]


def test_the_first_end_tag_ends_the_body():
    text = "<tool-use><save args='a.xml'><save>x</save></save></tool-use>"
    assert calls(text) == [("save", {"path": "a.xml", "content": "<save>x"})]


def test_only_declared_tools_make_calls():
    text = "<tool-use><shell>ls</shell></tool-use>"
    assert calls(text) == [("shell", {"command": "ls"})]
    assert calls(text, [SAVE]) == [] and calls(text, None) == []
    assert parse("xml_tools", text, [SAVE]).content == text


def test_elements_before_a_broken_one_stand():
    text = "<tool-use><shell>ls</shell><shell args='x'>y</shell><shell>pwd</shell></tool-use>"
    result = parse("xml_tools", text, TOOLS)
    assert [c.arguments for c in result.calls] == [{"command": "ls"}]
    assert result.content == "<shell args='x'>y</shell><shell>pwd</shell></tool-use>"


def test_a_call_starts_when_its_start_tag_is_complete_and_its_body_streams():
    s = stream("eager")
    assert s.feed('Saving.\n<tool-use>\n<save args="hel') == [Text("Saving.")]
    assert s.feed('lo.py"') == []
    assert s.feed(">\nx &l") == [CallStart(0, "call_0", "save"), CallArgs(0, '{"path": "hello.py", "content": "x ')]
    assert s.feed("t; 1\n") == [CallArgs(0, "< 1")]  # the newline waits: it may be framing
    assert s.feed("</sa") == []
    assert s.feed("ve>") == [CallArgs(0, '"}'), CallEnd(0, {"path": "hello.py", "content": "x < 1"})]
    assert s.feed("\n</tool-use>") == []
    assert s.close() == []


def test_hold_back_is_bounded_by_the_end_tag():
    s = stream("eager")
    s.feed("<tool-use><shell>ls")
    s.feed("</shel")
    assert s._buf == "</shel"
    assert s.feed("x") == [CallArgs(0, "</shelx")]
    s.feed("\n" + " " * 5000)
    assert s._buf == ""


def test_a_long_args_value_is_consumed_and_bounded(caplog):
    s = stream()
    s.feed('<tool-use><save args="' + "a" * 3000)
    assert s._buf == ""
    text = '<tool-use><save args="' + "a " * 3000 + '">x</save></tool-use><tool-use><shell>ls</shell></tool-use>'
    for chunks in chunkings(text):
        assert [c.arguments for c in result_of(run_chunks("xml_tools", chunks, TOOLS)).calls] == [{"command": "ls"}]


def test_a_name_past_the_bound_is_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    long = tool("shell_long_name", {}, [])
    text = "<tool-use><shell_long_name></shell_long_name></tool-use>"
    assert calls(text, [long]) == []
    s = get_format("xml_tools").stream([long], counter_ids)
    s.feed("<tool-use><shell_long_na")
    assert len(s._buf) <= 8 + 64


def test_each_error_is_one_log_line_with_its_reason(caplog):
    cases = {
        "<tool-use><save args='a b c'>x</save></tool-use>": "3 words for 2 required",
        "<tool-use><save>x</save></tool-use>": "one is the body",
        "<tool-use><nope>x</nope></tool-use>": "not a tool the request declares",
        "<tool-use><complete>bye</complete></tool-use>": "no parameter is left for it",
        "<tool-use><shell id='1'>ls</shell></tool-use>": "in the start tag",
        "<tool-use></tool-use>": "without a tool element",
        "<tool-use><shell>ls": "ended inside a tool call",
    }
    for text, reason in cases.items():
        caplog.clear()
        with caplog.at_level(logging.WARNING, "toolcall_parsers"):
            assert parse("xml_tools", text, TOOLS).content == text
        assert len(caplog.records) == 1 and reason in caplog.records[0].getMessage(), text


def test_a_body_for_a_tool_whose_words_took_every_parameter_is_text_in_both_paths():
    text = "<tool-use><save args='a b'>x</save></tool-use>"
    assert parse("xml_tools", text, TOOLS).content == text
    assert not any(isinstance(e, CallStart) for e in run_chunks("xml_tools", list(text), TOOLS))


def test_arguments_past_the_size_bound_are_text_whatever_the_chunking(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "100")
    text = "<tool-use><shell>" + "x" * 200 + "</shell></tool-use> <tool-use><shell>ls</shell></tool-use>"
    for chunks in chunkings(text):
        result = result_of(run_chunks("xml_tools", chunks, TOOLS))
        assert [c.arguments for c in result.calls] == [{"command": "ls"}]


def test_a_response_is_read_from_one_buffer():
    s = stream()
    seen = spy_on_readers(s)
    s.feed("intro &amp; <b>\n" * 20 + "<tool-use>\n<shell>\nls &lt; x\n</shell>\n</tool-use>\n" * 20)
    assert len(seen) == 1


def test_reasoning_and_markdown_fences_are_text():
    text = "<think><tool-use><shell>rm</shell></tool-use></think>```shell\nls\n```"
    assert calls(text) == [] and parse("xml_tools", text, TOOLS).content == text
