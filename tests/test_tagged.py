"""tagged behaviour that the corpus does not pin down: when a call starts, limits, whitespace, logs."""

from __future__ import annotations

import logging

import pytest
from helpers import (
    assert_one_call_with_escaped_surrogate,
    counter_ids,
    random_chunks,
    result_of,
    run_chunks,
    spy_on_readers,
)
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
BLOCK = '<TOOL_CALLS>\nget_weather {"city": "Oslo"}\n'


def stream(streaming=None, tools=TOOLS):
    return get_format("tagged").stream(tools, counter_ids, streaming=streaming)


def chunkings(text):
    return [[text], list(text), *(random_chunks(text, seed) for seed in range(3))]


def test_a_call_starts_at_its_first_key_and_its_arguments_stream():
    s = stream("eager")
    assert s.feed("Sure.\n<TOOL_CALLS>\nget_weather {") == [Text("Sure.")]
    assert s.feed('"ci') == [CallStart(0, "call_0", "get_weather"), CallArgs(0, '{"ci')]
    assert s.feed('ty": "Par') == [CallArgs(0, 'ty": "Par')]
    assert s.feed('is"}\n') == [CallArgs(0, 'is"}'), CallEnd(0, {"city": "Paris"})]
    assert s.close() == []


def test_empty_null_and_string_arguments_start_the_call_once_complete():
    s = stream("eager")
    assert s.feed("<TOOL_CALLS>\nget_weather { ") == []
    assert s.feed("}") == [CallStart(0, "call_0", "get_weather"), CallArgs(0, "{ }"), CallEnd(0, {})]
    assert s.feed("\nget_weather nul") == []
    assert s.feed("l\n") == [CallStart(1, "call_1", "get_weather"), CallArgs(1, "{}"), CallEnd(1, {})]
    assert s.feed('get_weather "{\\"city\\": ') == []
    assert s.feed('\\"Rome\\"}"') == [
        CallStart(2, "call_2", "get_weather"),
        CallArgs(2, '{"city": "Rome"}'),
        CallEnd(2, {"city": "Rome"}),
    ]
    assert [c.arguments for c in parse("tagged", "<TOOL_CALLS>\nf null").calls] == [{}]  # null at the very end


# -- issue 9 (adversarial review): each test fails on the code before the fix ---------------------


@pytest.mark.parametrize("chunking", ["whole", "chars"])
def test_a_name_over_the_limit_breaks_only_its_line(chunking):
    """Defect 2: a name over the limit dropped the rest of its delta, later valid lines included."""
    line = "a" * 1025 + " {}"
    text = f'<TOOL_CALLS>\n{line}\nget_weather {{"city": "Oslo"}}\n'
    result = result_of(run_chunks("tagged", [text] if chunking == "whole" else list(text), TOOLS))
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Oslo"})]
    assert result.content == f"<TOOL_CALLS>\n{line}"


def test_the_name_limit_is_the_operators(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    text = "<TOOL_CALLS>\nabcdefgh {}\nabcdefghi {}\n"
    for chunks in chunkings(text):
        result = result_of(run_chunks("tagged", chunks))
        assert [c.name for c in result.calls] == ["abcdefgh"]
        assert result.content == "abcdefghi {}"


PROSE = ["I now know.", "Use {braces} here.", 'He said "hi" twice.', 'Note "done"', "Done. That is all.", "I  \t no"]


@pytest.mark.parametrize("prose", PROSE)
def test_prose_after_a_block_never_starts_a_call(prose):
    """Defect 4: `I now know.` streamed as "I ", "n", ... announced a call named `I`, and parse()
    burned an index for it. Even eager streaming must not announce one, in any chunking."""
    text = f'{BLOCK}{prose}\nget_weather {{"city": "Rome"}}'
    for chunks in [*chunkings(text), [BLOCK, prose[:2], *prose[2:], '\nget_weather {"city": "Rome"}']]:
        events = run_chunks("tagged", chunks, TOOLS, streaming="eager")
        assert [e.name for e in events if isinstance(e, CallStart)] == ["get_weather", "get_weather"]
        result = result_of(events)
        assert result.content == prose
        assert [(c.index, c.arguments) for c in result.calls] == [(0, {"city": "Oslo"}), (1, {"city": "Rome"})]


def test_a_broken_object_line_after_a_block_is_text_in_both_paths():
    """`Word {not json}` after a finished block: the finished response returns it as text, and a
    stream, eager included, shows it as text too (the call would start only at `{"` or `{}`)."""
    text = BLOCK + "Use {not json} here.\nBye."
    assert parse("tagged", text, TOOLS).content == "Use {not json} here.\nBye."
    for policy in ("eager", None, "complete"):
        events = run_chunks("tagged", list(text), TOOLS, streaming=policy)
        assert sum(isinstance(e, CallStart) for e in events) == 1
        assert result_of(events).content == "Use {not json} here.\nBye."


@pytest.mark.parametrize(
    "text",
    [
        '<TOOL_CALLS>\nf "{\\"a\\": \\"\\ud800\\"}"\n',  # escape text inside a JSON-string argument
        '<TOOL_CALLS>\nf "{\\"a\\": \\"\ud800\\"}"\n',  # the raw lone surrogate character there
        '<TOOL_CALLS>\nf {"a": "x\ud800y"}\n',  # the raw character in an object
    ],
)
def test_lone_surrogates_come_out_escaped(text):
    """Defect 9: arguments_json held a lone surrogate the server could not encode as UTF-8."""
    assert_one_call_with_escaped_surrogate("tagged", text)


def test_any_spaces_and_tabs_between_name_and_arguments():
    text = '<TOOL_CALLS>\nget_weather \t  {"city": "Oslo"}\nget_weather\t\tnull\n'
    for chunks in chunkings(text):
        result = result_of(run_chunks("tagged", chunks, TOOLS))
        assert [c.arguments for c in result.calls] == [{"city": "Oslo"}, {}] and result.content is None


@pytest.mark.parametrize(
    ("head", "run", "tail"),
    [
        ("<TOOL_CALLS>", " \n\t", 'get_weather {"city": "Oslo"}'),  # after the start marker
        ("<TOOL_CALLS>\nget_weather", " \t", '{"city": "Oslo"}'),  # between name and arguments
        ('<TOOL_CALLS>\nget_weather {"city": "Oslo"}', "\n \t", "</TOOL_CALLS>"),  # between lines, before END
        ("<TOOL_CALLS>\nget_weather {", " \n", '"city": "Oslo"}'),  # inside the arguments, before the call starts
    ],
)
def test_whitespace_runs_are_consumed_not_held(head, run, tail):
    """Held whitespace is re-copied on every delta (quadratic): each run must be consumed."""
    s = stream()
    events = s.feed(head)
    for _ in range(1000):
        events += s.feed(run)
        assert len(s._buf) == 0
    result = result_of(events + s.feed(tail) + s.close())
    assert [c.arguments for c in result.calls] == [{"city": "Oslo"}] and result.content is None


def test_a_refused_call_is_text_and_the_block_goes_on(monkeypatch):
    """`_start_call` raises NotACall for a call the operator refuses: that line is text."""
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    text = BLOCK + 'rm_rf {"path": "/"}\nrm_rf null\nget_weather {"city": "Rome"}\n'
    for chunks in chunkings(text):
        result = result_of(run_chunks("tagged", chunks, TOOLS))
        assert [c.arguments for c in result.calls] == [{"city": "Oslo"}, {"city": "Rome"}]
        assert result.content == 'rm_rf {"path": "/"}\nrm_rf null'
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "1")
    text = '<TOOL_CALLS>\nget_weather {"city": "Oslo"}\nget_weather {}\n'
    for chunks in chunkings(text):
        result = result_of(run_chunks("tagged", chunks, TOOLS))
        assert len(result.calls) == 1 and result.content == "get_weather {}"


def test_a_response_of_many_lines_is_read_from_one_buffer():
    """Every reader step of one feed sees the same text object: a position moves, nothing is copied."""
    s = stream()
    seen = spy_on_readers(s)
    text = "<TOOL_CALLS>\n" + "".join(f'get_weather {{"i": {i}}}\nf {{x}}\n' for i in range(200))
    result = result_of(s.feed(text) + s.close())
    assert len(result.calls) == 200 and len(seen) == 1


# -- markers, reasoning, logs ---------------------------------------------------------------------


def test_other_markers():
    text = "a<calls>\nf {}\n</calls>b<TOOL_CALLS>"
    result = parse("tagged", text, start_marker="<calls>", end_marker="</calls>")
    assert [c.name for c in result.calls] == ["f"] and result.content == "ab<TOOL_CALLS>"


def test_think_markers_can_be_disabled():
    text = "<think><TOOL_CALLS>\nf {}\n</TOOL_CALLS></think>"
    assert parse("tagged", text).calls == []
    assert [c.name for c in parse("tagged", text, think_markers=None).calls] == ["f"]


def test_a_malformed_line_is_logged_with_format_and_span(caplog):
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = parse("tagged", "<TOOL_CALLS>\nf {}\ng {city: x}\n")
    assert result.content == "g {city: x}"
    assert "tagged" in caplog.text and "'\\ng {'" in caplog.text
