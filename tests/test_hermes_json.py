"""hermes_json behaviour that the corpus does not pin down: streaming granularity, options, logs."""

from __future__ import annotations

import logging

import pytest
from helpers import assert_one_call_with_escaped_surrogate, counter_ids, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def stream(streaming="eager"):
    """Eager streaming: what these tests pin is how finely a call streams once it is shown."""
    return get_format("hermes_json").stream(TOOLS, counter_ids, streaming=streaming)


def test_name_is_sent_once_the_name_string_is_complete():
    s = stream()
    assert s.feed('Hi.<tool_call>{"name": "get_wea') == [Text("Hi.")]
    assert s.feed('ther", "arguments": {"city": "Pa') == [
        CallStart(0, "call_0", "get_weather"),
        CallArgs(0, '{"city": "Pa'),
    ]
    assert s.feed('ris", "days": 1') == [CallArgs(0, 'ris", "days": ')]  # the number waits
    assert s.feed("0}}") == [CallArgs(0, "10}"), CallEnd(0, {"city": "Paris", "days": 10})]
    assert s.feed("</tool_call>") == []
    assert s.close() == []


def test_arguments_before_the_name_are_sent_with_it():
    s = stream()
    assert s.feed('<tool_call>{"arguments": {"city": "X"}, ') == []
    assert s.feed('"name": "get_weather"}') == [
        CallStart(0, "call_0", "get_weather"),
        CallArgs(0, '{"city": "X"}'),
        CallEnd(0, {"city": "X"}),
    ]


def test_arguments_given_as_a_string_are_sent_as_the_object():
    events = run_chunks("hermes_json", ['<tool_call>{"name": "f", "arguments": "{\\"a\\": [1]}"}</tool_call>'])
    assert events == [CallStart(0, "call_0", "f"), CallArgs(0, '{"a": [1]}'), CallEnd(0, {"a": [1]})]


def test_partial_marker_is_held_then_released_at_close():
    s = stream()
    assert s.feed("The tag is <tool_") == [Text("The tag is")]
    assert s.close() == [Text(" <tool_")]


def test_whitespace_next_to_a_call_is_held_until_text_follows():
    s = stream()
    assert s.feed("Sure.\n\n") == [Text("Sure.")]
    assert s.feed('<tool_call>{"name": "get_weather"}</tool_call>\n')[0] == CallStart(0, "call_0", "get_weather")
    assert s.feed("\nBye") == [Text("\n\n\n\nBye")]  # all of it, once real text follows
    assert s.feed("  \n") == []
    assert s.close() == []


def test_other_markers():
    text = 'a<function_call>{"name": "f", "arguments": {}}</function_call>b<tool_call>'
    result = parse("hermes_json", text, start_marker="<function_call>", end_marker="</function_call>")
    assert [c.name for c in result.calls] == ["f"]
    assert result.content == "ab<tool_call>"


def test_think_markers_can_be_disabled():
    text = '<think><tool_call>{"name": "f"}</tool_call></think>'
    assert parse("hermes_json", text).calls == []
    assert [c.name for c in parse("hermes_json", text, think_markers=None).calls] == ["f"]


def test_unknown_tool_is_kept_and_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = result_of(
            run_chunks("hermes_json", ['<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>'], TOOLS)
        )
    assert [c.name for c in result.calls] == ["rm_rf"]
    assert "hermes_json" in caplog.text and "'rm_rf'" in caplog.text


def test_malformed_block_is_logged_with_format_and_span(caplog):
    with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
        result = parse("hermes_json", '<tool_call>{"name": "f", "arguments": {"a": 1,}}</tool_call>')
    assert result.calls == [] and result.content.startswith("<tool_call>")
    assert "hermes_json: not a valid call" in caplog.text and '{"a": 1,' in caplog.text


def test_internal_error_passes_the_rest_through(monkeypatch, caplog):
    s = stream()
    s.feed("held <tool_")

    def broken(text):
        raise RuntimeError("bug")

    monkeypatch.setattr(s, "_feed", broken)
    with caplog.at_level(logging.ERROR, logger="toolcall_parsers"):
        events = s.feed("call> more")
    assert events == [Text(" <tool_call> more")]
    assert s.feed(" and more") == [Text(" and more")]
    assert "internal parser error" in caplog.text


def test_unknown_format_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="hermes_json"):
        get_format("nope")


def test_ids_are_unique_by_default():
    result = parse("hermes_json", '<tool_call>{"name": "a"}</tool_call><tool_call>{"name": "b"}</tool_call>')
    assert len({c.id for c in result.calls}) == 2
    assert all(c.id.startswith("call_") for c in result.calls)


def test_huge_string_argument_streams_in_pieces():
    value = "x" * 200_000
    s = stream()
    s.feed('<tool_call>{"name": "f", "arguments": {"v": "')
    pieces = [s.feed(value[i : i + 1000]) for i in range(0, len(value), 1000)]
    assert all(p == [CallArgs(0, value[:1000])] for p in pieces)
    assert s.feed('"}}')[-1] == CallEnd(0, {"v": value})


# -- issue 9 (adversarial review): each test fails on the code before the fix ---------------------


@pytest.mark.parametrize("chunking", ["whole", "chars"])
def test_a_marker_inside_a_string_that_breaks_the_block_is_text(chunking):
    """Defect 3: the error position used to depend on chunking, so `<tool_call>` inside the string
    started a call only when streamed."""
    text = '<tool_call>["x <tool_call>{"name": "g", "arguments": {}}]</tool_call> after'
    result = result_of(run_chunks("hermes_json", [text] if chunking == "whole" else list(text)))
    assert result.calls == [] and result.content == text


def test_an_empty_call_list_is_text():
    """Defect 10: `[]` vanished from the content."""
    assert parse("hermes_json", "Hi <tool_call>[]</tool_call> bye").content == "Hi <tool_call>[]</tool_call> bye"


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {"a": "x\ud800y"}}</tool_call>',
        '<tool_call>{"name": "f", "arguments": "{\\"a\\": \\"\\ud800\\"}"}</tool_call>',
        '<tool_call>{"name": "f", "arguments": "{\\"a\\": \\"\ud800\\"}"}</tool_call>',
    ],
)
def test_lone_surrogates_come_out_escaped(text):
    """Defect 9: arguments_json held a lone surrogate the server could not encode as UTF-8."""
    assert_one_call_with_escaped_surrogate("hermes_json", text)


def test_comma_separated_objects_in_one_block_are_two_calls():
    text = '<tool_call>{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}</tool_call>'
    assert [c.name for c in parse("hermes_json", text).calls] == ["f", "g"]


def test_string_arguments_are_decoded_leniently():
    text = '<tool_call>{"name": "f", "arguments": "{\\"code\\": \\"a\tb\nc\\"}"}</tool_call>'
    assert parse("hermes_json", text).calls[0].arguments == {"code": "a\tb\nc"}


def test_whitespace_after_a_call_is_consumed_not_held():
    """Defect 5: whitespace after a complete call was held and re-copied on every delta."""
    s = stream()
    s.feed('<tool_call>{"name": "f", "arguments": {}}')
    for _ in range(1000):
        s.feed("    ")
        assert len(s._buf) == 0
    assert result_of(s.feed("</tool_call> ok") + s.close()).content == "ok"


def test_a_response_of_many_calls_is_read_from_one_buffer(monkeypatch):
    """Defect 6: each block sliced off the rest of the text. Every reader step of one feed must see
    the same text object (a position moves, nothing is copied)."""
    s = stream()
    seen = spy_on_readers(s)
    text = '<tool_call>{"name": "f", "arguments": {"i": 1}}</tool_call>\n' * 200
    result = result_of(s.feed(text) + s.close())
    assert len(result.calls) == 200 and len(seen) == 1


# -- the streaming policy (issue 11) --------------------------------------------------------------

BROKEN = '<tool_call>{"name": "search", "arguments": {"query": tomorrow}}</tool_call>'


@pytest.mark.parametrize("streaming", [None, "complete", 512])
def test_a_call_that_breaks_is_never_shown(streaming):
    """Default, `complete` and a bound: a stream shows exactly what parse() returns."""
    for chunks in ([BROKEN], list(BROKEN)):
        s = get_format("hermes_json").stream(TOOLS, counter_ids, streaming=streaming)
        events = [e for chunk in chunks for e in s.feed(chunk)] + s.close()
        assert not any(isinstance(e, CallStart) for e in events)
        assert result_of(events).content == BROKEN


def test_eager_shows_the_call_as_soon_as_its_name_is_known():
    s = stream("eager")
    assert s.feed(BROKEN)[0] == CallStart(0, "call_0", "search")


def test_a_call_is_held_until_it_completes_or_passes_the_bound():
    s = stream(20)
    assert s.feed('<tool_call>{"name": "f", "arguments": {"a": "0123456789') == []
    assert s.feed("0123456789") == [CallStart(0, "call_0", "f"), CallArgs(0, '{"a": "01234567890123456789')]
    assert s.feed("x") == [CallArgs(0, "x")]
    s = stream("complete")
    assert s.feed('<tool_call>{"name": "f", "arguments": {"a": "' + "x" * 10_000) == []
    assert s.feed('"}}')[0] == CallStart(0, "call_0", "f")


def test_a_held_call_that_breaks_leaves_no_gap_in_the_indexes():
    text = BROKEN + '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    events = run_chunks("hermes_json", list(text), TOOLS)
    assert [e.index for e in events if isinstance(e, CallStart)] == [0]


def test_an_unknown_streaming_policy_is_refused():
    with pytest.raises(ValueError, match="streaming policy"):
        get_format("hermes_json").stream(streaming="fast")


# -- the engine names this format serves besides hermes (granite4, ernie45, qwen3_json, trinity) ---------

GRANITE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "save",
            "description": "Write a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    },
]
GRANITE_CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("save", {"path": "w.txt", "content": "a\nb"})]


@pytest.mark.parametrize("template", ["ibm-granite-granite-4.0", "ibm-granite-granite-4.1"])
def test_granite4s_own_template_writes_what_this_format_reads(smollm2_tokenizer, model_template, template):
    """IBM Granite 4's template renders a turn's calls as Qwen's blocks (a newline inside each tag):
    vLLM's `granite4` parser is this format; `detect` names it for Granite 4's template."""
    from helpers import both_paths, calls_of
    from toolcall_parsers.detect import detect_template

    history = [
        {"role": "user", "content": "Weather in Paris, then save it"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in GRANITE_CALLS],
        },
        {"role": "tool", "content": "sunny"},
    ]
    rendered = smollm2_tokenizer.apply_chat_template(
        history, tools=GRANITE_TOOLS, chat_template=model_template(template), tokenize=False
    )
    turn = rendered.split("<|start_of_role|>assistant<|end_of_role|>")[1].split("<|end_of_text|>")[0]
    result = both_paths("hermes_json", turn, GRANITE_TOOLS, smollm2_tokenizer, eager=True)
    assert calls_of(result) == GRANITE_CALLS
    assert result.content == "Checking."
    assert detect_template(smollm2_tokenizer, model_template(template), "Granite 4").parser == "hermes_json"
