"""Unit tests of the core pieces: marker hold-back, the incremental JSON lexer, the reader loop's
fallback, bounded logging, limits and API misuse."""

from __future__ import annotations

import json
import logging

import pytest
from helpers import counter_ids, run_chunks
from hypothesis import given, settings
from hypothesis import strategies as st
from toolcall_parsers import Text, get_format, parse
from toolcall_parsers.core.events import build_result
from toolcall_parsers.core.json_lexer import MAX_DEPTH, JsonLexer, JsonSyntaxError
from toolcall_parsers.core.limits import Limits
from toolcall_parsers.core.markers import MarkerScanner


def test_partial_marker_hold_back():
    scanner = MarkerScanner(["<tool_call>", "<think>"])
    assert scanner.partial_len("Sure <tool_") == len("<tool_")
    assert scanner.partial_len("Sure <th") == 3
    assert scanner.partial_len("Sure <") == 1
    assert scanner.partial_len("Sure <x") == 0
    assert scanner.partial_len("a < b") == 0
    assert scanner.partial_len("<tool_call>") == 0  # complete markers are found by search()
    m = scanner.search("x <think> y <tool_call>")
    assert m is not None and m.group() == "<think>" and m.start() == 2


def test_marker_scanner_rejects_empty_markers():
    with pytest.raises(ValueError):
        MarkerScanner([""])


def lex_in_chunks(text: str, size: int) -> tuple[str, int]:
    """Lex `text` in pieces of `size`, presenting what the lexer leaves unconsumed again with the
    next piece (as the reader loop does); (raw text of the tokens, where the value ended or -1)."""
    lexer, raw, held, offset = JsonLexer(), [], "", 0
    for start in range(0, len(text), size):
        piece = held + text[start : start + size]
        offset = start - len(held)
        tokens, stop, error = lexer.read(piece)
        if error is not None:
            raise error
        raw += [t[1] for t in tokens]
        if lexer.done:
            return "".join(raw), offset + stop
        held = piece[stop:]
    return "".join(raw), -1


@pytest.mark.parametrize(
    "doc",
    [
        '{"a": 1, "b": [true, false, null], "c": {"d": "e\\"f\\\\g\\u00fc"}}',
        "[]",
        "{}",
        '  {"n": -0.5e-10, "m": 0, "k": 123456789012345678901234567890}',
        '[[[[1]]], {"": ""}]',
        '"just a string"',
    ],
)
@pytest.mark.parametrize("size", [1, 2, 3, 1000])
def test_lexer_forwards_valid_json_exactly(doc, size):
    raw, end = lex_in_chunks(doc + " tail", size)
    assert raw == doc
    assert end == len(doc)
    assert json.loads(raw) == json.loads(doc)


def test_lexer_reescapes_raw_control_characters():
    raw, _ = lex_in_chunks('{"code": "a\nb\tc\x01"}', 1)
    assert raw == '{"code": "a\\nb\\tc\\u0001"}'
    assert json.loads(raw) == {"code": "a\nb\tc\x01"}


@pytest.mark.parametrize(
    ("doc", "pos"),
    [
        ('{"a" 1}', 5),
        ("{,}", 1),
        ("[1,]", 3),
        ('{"a": tru e}', 6),
        ('{"a": 01}', 6),
        ('{"a": "\\x"}', 7),
        ('{"a": 1}}', -1),  # the value ends at the first '}', the rest is not the lexer's
    ],
)
def test_lexer_reports_the_error_position(doc, pos):
    lexer = JsonLexer()
    _, stop, error = lexer.read(doc)
    if pos < 0:
        assert error is None and lexer.done and stop == doc.index("}") + 1
        return
    assert isinstance(error, JsonSyntaxError) and error.pos == pos == stop


def test_lexer_leaves_unfinished_numbers_and_escapes_unconsumed():
    lexer = JsonLexer()
    tokens, stop, _ = lexer.read('{"n": 12')
    assert "".join(t[1] for t in tokens) == '{"n": ' and stop == 6
    text = '123, "s": "ab\\u00'
    tokens, stop, _ = lexer.read(text)
    assert "".join(t[1] for t in tokens) == '123, "s": "ab' and text[stop:] == "\\u00"
    tokens, stop, _ = lexer.read("\\u00fc")
    assert "".join(t[1] for t in tokens) == "\\u00fc"


def test_lexer_refuses_excessive_nesting():
    _, _, error = JsonLexer().read("[" * (MAX_DEPTH + 1))
    assert error is not None and "deep" in str(error)


json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
).filter(lambda v: isinstance(v, (dict, list)))


@settings(max_examples=200, deadline=None)
@given(json_docs, st.booleans(), st.integers(1, 9))
def test_lexer_round_trips_any_json(value, ascii_only, size):
    doc = json.dumps(value, ensure_ascii=ascii_only)
    raw, end = lex_in_chunks(doc, size)
    assert raw == doc and end == len(doc)


# -- the reader loop, logging, limits, misuse ---------------------------------------------------


def test_an_internal_error_passes_each_character_through_once():
    """Issue 9 defect 1: the fallback re-emitted the whole delta although part of it was sent."""
    stream = get_format("hermes_json").stream(None, counter_ids)

    def broken(text: str, pos: int) -> int:
        raise RuntimeError("a bug")

    stream._readers["json"] = broken  # the JSON state: reached after "Hi\n" and the marker were read
    text = 'Hi\n<tool_call>{"name": "f", "arguments": {}}</tool_call> bye'
    events = stream.feed(text)
    assert build_result(events).content == text.rstrip()
    assert stream.feed(" more") == [Text(" more")]  # the rest of the response passes through
    assert stream.close() == []


def test_logging_is_bounded_per_response(caplog):
    text = '<tool_call>{"name": 1}</tool_call>' * 500
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = parse("hermes_json", text)
    assert result.content == text
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 4
    assert "500 rejected spans or warnings in this response, 497 not logged" in lines[-1]


def test_log_spans_setting(monkeypatch, caplog):
    monkeypatch.setenv("TOOLCALL_PARSERS_LOG_SPANS", "0")
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        parse("hermes_json", "<tool_call>x <tool_call>y")
    assert len(caplog.records) == 1 and "2 rejected spans" in caplog.records[0].getMessage()


def test_a_bad_setting_is_reported_and_the_default_used(monkeypatch, caplog):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "many")
    with caplog.at_level(logging.ERROR, logger="toolcall_parsers"):
        assert Limits.from_env().max_calls == Limits().max_calls
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "0")
    assert Limits.from_env().max_calls == Limits().max_calls


CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'


def test_calls_past_the_bound_are_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "2")
    result = parse("hermes_json", CALL * 3)
    assert [c.index for c in result.calls] == [0, 1]
    assert result.content == CALL


def test_a_call_past_the_size_bound_is_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "100")
    long_call = '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * 200 + '"}}</tool_call>'
    for chunks in ([long_call + CALL], list(long_call + CALL)):
        result = build_result(run_chunks("hermes_json", chunks))
        assert result.content == long_call
        assert [(c.index, c.name) for c in result.calls] == [(0, "f")]


def test_undeclared_tools_are_kept_by_default_or_text_on_request(monkeypatch):
    tools = [{"type": "function", "function": {"name": "g", "parameters": {}}}]
    assert [c.name for c in parse("hermes_json", CALL, tools).calls] == ["f"]
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    result = parse("hermes_json", CALL, tools)
    assert result.calls == [] and result.content == CALL


def test_indexes_count_only_the_calls_returned():
    """Issue 9 defect 4: a call that starts and breaks burned an index in parse()."""
    broken = '<tool_call>{"name": "g", "arguments": {"a": tomorrow}}</tool_call>'
    result = parse("hermes_json", CALL + broken + CALL)
    assert [c.index for c in result.calls] == [0, 1]
    assert result.content == broken


def test_api_misuse_raises_a_clear_type_error():
    stream = get_format("hermes_json").stream()
    with pytest.raises(TypeError, match="str, not bytes"):
        stream.feed(b"<tool_call>")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tools must be a list"):
        get_format("hermes_json").stream(tools=5)
    with pytest.raises(TypeError, match="tools must be a list"):
        parse("tagged", "x", tools="get_weather")


def test_string_arguments_with_a_surrogate_pair_split_across_escape_and_raw_character():
    """Found by scripts/fuzz.py: an escaped high surrogate next to a raw low one inside arguments
    given as a JSON string; the arguments must be what their JSON text says (one character)."""
    text = '<TOOL_CALLS>w "{\\"\\":6,\\"\\":\\"\\\\ud83d\ude00\\"}"'
    (call,) = parse("tagged", text).calls
    assert call.arguments == {"": "\U0001f600"} == json.loads(call.arguments_json)


# -- shared pieces: line breaks, literals, whitespace as markup (issue 18) ------------------------


def test_a_line_break_is_lf_or_crlf_and_a_final_cr_may_start_one():
    from toolcall_parsers.core.lines import before_break, break_at, next_break, trailing_break

    assert next_break("ab\r\ncd", 0) == (2, "\r\n")
    assert next_break("a\rb\ncd", 0) == (3, "\n")  # a lone `\r` breaks no line
    assert next_break("ab\r", 0) == (2, "")  # held: it may start a `\r\n`
    assert next_break("ab", 0) == (2, "")
    assert [break_at(t, 0) for t in ("\r\n", "\n", "\rx", "x", "\r")] == [2, 1, 0, 0, None]
    assert [trailing_break(t) for t in ("a\r\n", "a\n", "a\r", "\n\r\n")] == [2, 1, 0, 2]
    assert before_break("info\r") == "info" and before_break("info") == "info"


def test_the_line_start_hold_keeps_a_crlf_whole():
    from toolcall_parsers.core.lines import LineStarts

    out: list[str] = []
    lines = LineStarts(out.append)
    assert lines.at_line_start  # the output's start
    for piece in ("Hi\r", "\n", "  "):
        lines.text(piece)
    assert "".join(out) == "Hi" and lines.pending() == "\r\n  " and lines.at_line_start
    assert lines.take() == "\r\n  " and not lines.at_line_start  # a call at the line start takes it
    lines.text("x\r")
    assert lines.take() == "" and "".join(out) == "Hix\r"  # mid-line, a held `\r` is text


def test_the_held_break_is_text_unless_the_end_follows_it():
    from toolcall_parsers.core.lines import HeldBreak

    held = HeldBreak()
    assert held.hold("\r\n") == "" and held.hold("\n") == "\r\n"  # the first one was text
    assert held.release() == "\n" and held.held == ""
    held.hold("\n")
    held.drop()
    assert held.release() == ""


def test_a_literal_is_here_partial_or_a_mismatch():
    from toolcall_parsers.core.markers import literal_at

    assert literal_at("x</tool_call>", 1, ["</tool_call>"]) == "</tool_call>"
    assert literal_at("x</tool", 1, ["</tool_call>"]) is None  # may still grow into it
    assert literal_at("x</toolx", 1, ["</tool_call>"]) == ""
    assert literal_at("[ARG", 0, ["[CALL_ID]", "[ARGS]"]) is None
    assert literal_at("[ARGS]", 0, ["[CALL_ID]", "[ARGS]"]) == "[ARGS]"


def test_whitespace_as_markup_is_consumed_into_the_markup():
    stream = get_format("hermes_json").stream()
    markup: list[str] = []
    assert stream._markup_ws("a \t\r\n b", 1, markup) == 6 and markup == [" \t\r\n "]
    assert stream._markup_ws("ab", 1, markup) == 1 and markup == [" \t\r\n "]
    assert stream._markup_ws("a\u00a0b", 1, markup) == 1  # JSON whitespace only, unless the format says
    assert get_format("xml_tools").stream()._markup_ws("a\u00a0b", 1, markup) == 2


def test_the_lexer_names_an_unfinished_token():
    from toolcall_parsers.core.json_lexer import Unfinished

    lexer = JsonLexer()
    _, stop, error = lexer.read('{"a": 12')
    assert (stop, error) == (6, None) and type(stop) is int  # the number may go on: presented again
    stop = lexer._lex_scalar("12", 0, [])
    assert type(stop) is Unfinished and stop == 0
