"""granite_fc_json behaviour that is its own (the rest is hermes_json's machine, proven by the corpus,
the properties and the adapter tests every format gets): a block has no closing tag, so a call ends
with its JSON and what follows is text or the next block."""

from __future__ import annotations

from helpers import calls_of, counter_ids
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
CALL = '<function_call> {"name": "get_weather", "arguments": {"city": "Paris"}}'


def test_a_call_ends_with_its_json():
    s = get_format("granite_fc_json").stream(TOOLS, counter_ids, streaming="eager")
    assert s.feed(CALL) == [
        CallStart(0, "call_0", "get_weather"),
        CallArgs(0, '{"city": "Paris"}'),
        CallEnd(0, {"city": "Paris"}),
    ]
    assert s.feed(" Done") == [Text("Done")]  # the first text of the response, trimmed
    assert s.close() == []


def test_the_whitespace_between_blocks_is_nobodys_content():
    result = parse("granite_fc_json", CALL + "\n\n" + CALL.replace("Paris", "Rome") + "\n", TOOLS)
    assert calls_of(result) == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    assert result.content is None


def test_a_closing_tag_the_model_invents_is_text():
    result = parse("granite_fc_json", CALL + "</function_call>", TOOLS)
    assert calls_of(result) == [("get_weather", {"city": "Paris"})]
    assert result.content == "</function_call>"
