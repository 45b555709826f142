"""Unit tests of the core pieces: marker hold-back and the incremental JSON lexer."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolcall_parsers.core.json_lexer import MAX_DEPTH, JsonLexer, JsonSyntaxError
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
    lexer, raw = JsonLexer(), []
    for start in range(0, len(text), size):
        tokens, end = lexer.feed(text[start : start + size])
        raw += [t[1] for t in tokens]
        if end >= 0:
            return "".join(raw), start + end
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
    if pos < 0:
        assert lexer.feed(doc)[1] == doc.index("}") + 1
        return
    with pytest.raises(JsonSyntaxError) as info:
        lexer.feed(doc)
    assert info.value.pos == pos


def test_lexer_holds_numbers_and_escapes_until_complete():
    lexer = JsonLexer()
    tokens, _ = lexer.feed('{"n": 12')
    assert "".join(t[1] for t in tokens) == '{"n": '
    tokens, _ = lexer.feed('3, "s": "ab\\u00')
    assert "".join(t[1] for t in tokens) == '123, "s": "ab'
    tokens, _ = lexer.feed("fc")
    assert "".join(t[1] for t in tokens) == "\\u00fc"


def test_lexer_refuses_excessive_nesting():
    with pytest.raises(JsonSyntaxError, match="deep"):
        JsonLexer().feed("[" * (MAX_DEPTH + 1))


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
