"""llama_pythonic: the call-list machine and its Python literal reader. Each test names the defect of
issue 9 (adversarial review) or the decision it pins; the corpus runs the same inputs in every chunking."""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest
from helpers import char_chunks, counter_ids, random_chunks, result_of, run_chunks
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core import python_literals
from toolcall_parsers.core.python_literals import LiteralBuilder, NotALiteral, PythonLexer, number
from toolcall_parsers.formats import llama_pythonic

FMT = "llama_pythonic"


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


@pytest.fixture
def no_internal_error(caplog):
    yield
    assert "internal parser error" not in caplog.text


# -- issue 9 defect 1: internal errors (odd numbers, deep nesting) --------------------------------------


@pytest.mark.parametrize("bad", ["1e", "1e+", "1E-", "1.5e", "0x", "1__0"])
def test_a_number_python_refuses_is_its_call_as_text_and_nothing_is_doubled(bad, no_internal_error):
    result = parsed(f"Hi\n[f(x={bad})] bye")
    assert result.content == f"Hi\n[f(x={bad})] bye"
    assert result.calls == []
    assert calls(parsed(f"[f(x={bad}), g(y=2)]")) == [("g", {"y": 2})]


def test_nesting_past_the_limit_is_its_call_as_text_without_recursion(no_internal_error):
    deep = "[f(a=" + "[" * 500 + "]" * 500 + "), g(b=1)]"
    result = parsed(deep)
    assert calls(result) == [("g", {"b": 1})]
    assert result.content == deep[: deep.index(", g(")]
    within = "[f(a=" + "[" * 255 + "]" * 255 + ")]"  # with the arguments object: 256 levels
    assert json.loads(parse(FMT, within).calls[0].arguments_json) == json.loads("{" + '"a": ' + within[5:-2] + "}")


def test_the_depth_limit_comes_from_the_environment(monkeypatch, no_internal_error):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_DEPTH", "3")
    result = parsed("[f(a=[[1]]), g(a=[[[1]]]), h(a={'k': [2]})]")
    assert calls(result) == [("f", {"a": [[1]]}), ("h", {"a": {"k": [2]}})]
    assert result.content == ", g(a=[[[1]]])"


# -- issue 9 defect 3: a list inside a string starts a call only when streamed ---------------------------


@pytest.mark.parametrize(
    "text",
    [
        '[f(a=1) "x\n[g(b=2)]"]',  # a string where `,` or `]` belongs
        '[f(a=1), "x\n[g(b=2)]"]',  # a string where a call's name belongs
        "[f(a=1)'''x\n[g(b=2)]''']",
        '[f(a=1), h"x\n[g(b=2)]"]',  # a string where `(` belongs
    ],
)
def test_a_string_that_breaks_the_list_is_text_to_its_end_in_every_chunking(text):
    result = parsed(text)
    assert calls(result) == [("f", {"a": 1})]
    assert "[g(b=2)]" in result.content


# -- issue 9 defect 5: whitespace runs re-buffered on every delta ---------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("<|python_tag|>", "[f(a=1)]"),
        ("Go.\n[", "f(a=1)]"),
        ("<|python_start|>[f(a=1)]", "<|python_end|>"),
        ("[f(a=1,", "b=2)]"),
    ],
)
def test_whitespace_runs_are_consumed_not_held(before, after):
    stream = get_format(FMT).stream(None, counter_ids)
    events = stream.feed(before)
    for _ in range(2000):
        events += stream.feed(" \n\t ")
        assert len(stream._buf) <= 16  # what the next delta would re-read
    events += stream.feed(after) + stream.close()
    assert [e.name for e in events if isinstance(e, CallStart)] == ["f"]


# -- issue 9 defect 6: parse() tokenized the rest of the output for every list ---------------------------


def test_each_list_is_tokenized_once_and_only_to_its_closing_bracket(monkeypatch):
    read = PythonLexer.read
    covered = []

    def counting_read(self, text, pos):
        token = read(self, text, pos)
        if token is not None:
            covered.append(token[3] - token[2])
        return token

    monkeypatch.setattr(PythonLexer, "read", counting_read)
    text = "".join(f"[f(i={i})]\nsome prose (with parentheses) and 'quotes', {i}\n" for i in range(300))
    result = parse(FMT, text)
    assert [c.arguments["i"] for c in result.calls] == list(range(300))
    assert sum(covered) == sum(len(f"f(i={i})]") for i in range(300))  # the prose is never tokenized


def test_many_lists_hold_no_copies_of_the_text_with_the_collector_off():
    text = "".join(f"[f(i={i})]\n" for i in range(2000))
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        result = parse(FMT, text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gc.enable()
    assert len(result.calls) == 1024  # TOOLCALL_PARSERS_MAX_CALLS; the rest is text
    assert peak < 200 * len(text)  # events and results; the old reader held one copy of the rest per list


# -- issue 9 defect 9: lone surrogates in arguments_json -------------------------------------------------


def test_a_surrogate_pair_written_as_two_escapes_is_one_character():
    result = parsed("[f(a='\\ud83d\\ude00', b=\"\\ud83c\\udf27 rain\", c=['\\uD83D\\uDE00'], d='\\ud83d\\U0000de00')]")
    assert calls(result) == [("f", {"a": "😀", "b": "🌧 rain", "c": ["😀"], "d": "😀"})]
    assert result.calls[0].arguments_json.encode("utf-8")


def test_a_surrogate_pair_of_raw_characters_is_one_character():
    result = parsed("[f(a='\ud83d\ude00', b='\ud83d\\ude00')]")
    assert calls(result) == [("f", {"a": "😀", "b": "😀"})]


@pytest.mark.parametrize("value", ["'\\ud83d x'", "{'k': '\\udc00'}", "['\\ud800\\ud800']", "'\ud800'"])
def test_a_lone_surrogate_comes_out_escaped_in_arguments_json(value):
    call = parsed(f"[f(a={value})]").calls[0]
    call.arguments_json.encode("utf-8")  # the server can write it
    assert json.loads(call.arguments_json) == call.arguments
    assert "\\ud8" in call.arguments_json or "\\udc" in call.arguments_json


# -- issue 9 defect 11: one value the lexer rejected dropped the later calls ------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0x1F", 31),
        ("0o17", 15),
        ("0b101", 5),
        ("-0X_ff", -255),
        ("1_000", 1000),
        ("1_000.5", 1000.5),
        ("1e1_0", 1e10),
        ("'20\\N{DEGREE SIGN}C'", "20°C"),
        ("'line one\nline two'", "line one\nline two"),  # decided: a raw newline in '...' is read leniently
        ("1j", None),  # decided: a complex number is not JSON, so the call is text
        ("2.5J", None),
        ("'\\N{NO SUCH CHARACTER}'", None),
        ("'\\N{DEGREE SIGN'", None),
        ("'\\xZZ ) ]'", None),
        ("'\\u12G4'", None),
        ("'\\U00110000'", None),
        ("007", None),  # Python refuses it; a zip code must not lose its zero
        ("1.2.3", None),
        ("r'x'", None),
        ("{'a', 'b'}", None),
        ("10**3", None),
        ("x" * 2000, None),  # a name past TOOLCALL_PARSERS_MAX_NAME
    ],
)
def test_a_value_makes_only_its_own_call_text(value, expected, no_internal_error):
    result = parsed(f"[f(a=1), g(b={value}), h(c=2)]")
    middle = [] if expected is None else [("g", {"b": expected})]
    assert calls(result) == [("f", {"a": 1}), *middle, ("h", {"c": 2})]
    assert result.content == (None if expected is not None else f", g(b={value})")


def test_a_non_ascii_identifier_is_a_keyword_as_in_python():
    assert calls(parsed("[f(a=1), g(город='Zürich'), h(c=2)]")) == [
        ("f", {"a": 1}),
        ("g", {"город": "Zürich"}),
        ("h", {"c": 2}),
    ]


# -- issue 9 judgement calls -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "content"), [("    [f(a=1)]", None), ("\t[f(a=1)]", None), ("x\n \t [f(a=1)]\ny", "x\ny")]
)
def test_an_indented_list_is_read_and_its_line_break_belongs_to_it(text, content):
    result = parsed(text)
    assert calls(result) == [("f", {"a": 1})]
    assert result.content == content


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("Hi\r\n[f(a=1)]\r\nBye", "Hi\r\nBye"),  # was "Hi\r\r\nBye": only the `\n` went with the list
        ("Hi\r\r\n  [f(a=1)]b", "Hi\rb"),  # one `\r` goes with the break
        ("Hi\r\n[f(a=1)]\r\n[f(a=1)]\r", "Hi"),
        ("Hi\r<|python_tag|>[f(a=1)]", "Hi"),  # trailing whitespace of content is trimmed
    ],
)
def test_a_crlf_before_a_line_start_list_is_one_line_break(text, content):
    """As in llama_json (`core/lines.py` holds the line start for both)."""
    result = parsed(text)
    assert result.content == content
    assert calls(result) == [("f", {"a": 1})] * text.count("[f(")


def test_a_lone_carriage_return_breaks_no_line():
    assert parsed("Hi\r[f(a=1)]").calls == []  # mid-line: an undeclared tool is text
    assert calls(parsed("Hi\r[f(a=1)]", tools("f"))) == [("f", {"a": 1})]
    assert parsed("Hi\r[f(a=1)]", tools("f")).content == "Hi"


def test_a_trailing_comma_after_the_last_call_is_accepted():
    result = parsed("[f(), g(a=1),]")
    assert calls(result) == [("f", {}), ("g", {"a": 1})]
    assert result.content is None  # the comma and the bracket are the list's markup, not text
    assert parsed("[f(),\n]").content is None


def test_a_list_after_prose_on_the_same_line_counts_when_it_calls_a_declared_tool():
    text = "Sure, let me check. [get_weather(city='Tokyo')] One moment."
    result = parsed(text, tools("get_weather"))
    assert calls(result) == [("get_weather", {"city": "Tokyo"})]
    assert result.content == "Sure, let me check.  One moment."
    assert parsed(text, tools("search")).content == text
    assert parsed(text).content == text  # no tool declared: only a line start counts


def test_a_list_right_after_a_list_counts_when_it_calls_a_declared_tool():
    assert calls(parsed("[f(a=1)][g(b=2)]", tools("f", "g"))) == [("f", {"a": 1}), ("g", {"b": 2})]
    result = parsed("[f(a=1)][g(b=2)]")
    assert calls(result) == [("f", {"a": 1})]
    assert result.content == "[g(b=2)]"


@pytest.mark.parametrize(
    "text", ["[O'Reilly]", "[1]", "See [1] and [O'Reilly], yes.", "a [get_weather] b", "[ f (x=1)]"]
)
def test_brackets_in_prose_stay_text(text):
    assert parsed(text, tools("get_weather", "f")).content == text


def test_the_end_marker_of_a_list_whose_calls_are_all_text_is_text():
    """Found by scripts/fuzz.py: the `<|python_end|>` of such a list was dropped as markup."""
    text = "<|python_start|>[g(2)]<|python_end|> No call."
    assert parsed(text).content == text
    assert parsed("<|python_start|>[f(a=1)] <|python_end|> Done.").content == "Done."


def test_a_run_of_brackets_is_text_but_its_last_may_start_a_list():
    """Found by scripts/fuzz.py: a flood of `[` cost a state round trip each; now one step per run."""
    assert parsed("[[[f(a=1)]]] " + "[" * 5000).content == "[[[f(a=1)]]] " + "[" * 5000  # mid-line, undeclared
    result = parsed("x [[[f(a=1)]]]", tools("f"))
    assert calls(result) == [("f", {"a": 1})]
    assert result.content == "x [[]]"


# -- core contract: a refused call (NotACall from _start_call / _call_args) is text ------------------------


def test_a_call_to_an_undeclared_tool_is_text_when_the_operator_says_so(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    result = parsed("[f(a=(1, ')')), get_weather(city='x')]", tools("get_weather"))
    assert calls(result) == [("get_weather", {"city": "x"})]
    assert result.content == "[f(a=(1, ')'))"


def test_calls_past_the_most_per_response_are_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "1")
    result = parsed("[f(), g(a=[1, 2])]\n[h()]")
    assert calls(result) == [("f", {})]
    assert result.content == ", g(a=[1, 2])\n[h()]"  # after a call that was read, the list's ] is markup


def test_a_call_past_the_arguments_bound_is_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    text = "[f(s='" + "x" * 60 + "'), g(a=1)]"
    whole = result_of(run_chunks(FMT, [text]))
    assert calls(whole) == [("g", {"a": 1})]
    assert whole.content == text[: text.index(", g(")]
    assert result_of(run_chunks(FMT, char_chunks(text))) == whole


# -- streaming -------------------------------------------------------------------------------------------


def test_eager_streaming_sends_a_string_as_written_and_a_number_once_it_ended():
    s = get_format(FMT).stream(None, counter_ids, streaming="eager")
    assert s.feed("Ok.\n[f(s='ab") == [Text("Ok."), CallStart(0, "call_0", "f"), CallArgs(0, '{"s": "ab')]
    assert s.feed("c\\") == [CallArgs(0, "c")]  # the escape waits
    assert s.feed("n'") == [CallArgs(0, "\\n")]  # the string may go on: 'abc\n' 'def'
    assert s.feed(", n=1") == [CallArgs(0, '", "n": ')]
    assert s.feed("2)") == [CallArgs(0, "12}"), CallEnd(0, {"s": "abc\n", "n": 12})]
    assert s.feed("]") == []
    assert s.close() == []


def test_by_default_a_call_is_shown_once_complete():
    s = get_format(FMT).stream(None, counter_ids)
    assert s.feed("[f(s='ab', n=1") == []
    assert s.feed("2), g(") == [
        CallStart(0, "call_0", "f"),
        CallArgs(0, '{"s": "ab", "n": 12}'),
        CallEnd(0, {"s": "ab", "n": 12}),
    ]
    assert s.feed("x)]") == [Text(", g(x)")]  # g was never shown: its text comes back, as in parse()
    assert s.close() == []


def test_the_list_text_comes_back_when_the_output_ends_inside_it():
    result = parsed("Hi\n[f(a=1), g(s='unfinished")
    assert calls(result) == [("f", {"a": 1})]
    assert result.content == "Hi, g(s='unfinished"


# -- the literal reader ----------------------------------------------------------------------------------


def test_the_lexer_reports_absolute_positions_and_leaves_unfinished_tokens():
    lexer = PythonLexer(max_name=64, max_scalar=64)
    text = "xx f(a=12"
    assert lexer.read(text, 3) == ("name", "f", 3, 4)
    assert lexer.read(text, 4) == ("op", "(", 4, 5)
    assert lexer.read(text, 7) is None  # "12" may go on
    assert lexer.read(text + ", ", 7) == ("num", "12", 7, 9)
    assert lexer.read("  'ab\\", 2) == ("str", "ab", 2, 5)  # the quote and "ab"; the escape waits
    assert lexer.read("  'ab\\", 5) is None
    assert lexer.read("  'ab\\n'", 5) == ("strend", "\n", 5, 8)
    assert lexer.read("''", 0) is None  # maybe a triple quote


NUMBERS = [("0", 0), ("00", 0), ("12", 12), ("1_2", 12), ("0xfF", 255), ("0o_7", 7), ("0B1", 1), ("1.", 1.0)]
NUMBERS += [(".5", 0.5), ("1e3", 1000.0), ("1E-3", 0.001), ("1_0.0_1e+0_1", 100.1), ("9" * 30, int("9" * 30))]


@pytest.mark.parametrize(("text", "value"), NUMBERS)
def test_python_numbers(text, value):
    assert number(text) == value


@pytest.mark.parametrize("text", ["1e", "1e+", "01", "1__0", "1_", "0x", "0b2", "1j", "1e999", "1.2.3", "9" * 5000])
def test_numbers_json_cannot_hold_or_python_refuses(text):
    with pytest.raises(NotALiteral):
        number(text)


def test_the_literal_builder_nests_with_a_stack_not_recursion():
    builder = LiteralBuilder(max_depth=100_000)
    for _ in range(20_000):
        builder.feed("op", "[")
    for _ in range(20_000):
        builder.feed("op", "]")
    value, depth = builder.finish(), 1
    while value:
        (value,) = value
        depth += 1
    assert depth == 20_000


def test_nothing_evaluates_model_text():
    for module in (python_literals, llama_pythonic):
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert "eval(" not in source and "import ast" not in source
