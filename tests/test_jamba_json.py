"""jamba_json behaviour that is its own (the rest is hermes_json's machine, proven by the corpus, the
properties and the adapter tests every format gets): every call of a turn in one list, which
streams call by call, and the two models' spellings."""

from __future__ import annotations

from helpers import calls_of, counter_ids
from toolcall_parsers import CallArgs, CallEnd, CallStart, get_format, parse
from toolcall_parsers.formats import jamba_json as jamba

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
]


def test_each_call_of_the_list_streams_as_it_completes():
    s = get_format("jamba_json").stream(TOOLS, counter_ids, streaming="eager")
    assert s.feed('<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}, ') == [
        CallStart(0, "call_0", "get_weather"),
        CallArgs(0, '{"city": "Paris"}'),
        CallEnd(0, {"city": "Paris"}),
    ]
    assert s.feed('{"name": "search", "arguments": {"q": "x"}}]</tool_calls>') == [
        CallStart(1, "call_1", "search"),
        CallArgs(1, '{"q": "x"}'),
        CallEnd(1, {"q": "x"}),
    ]
    assert s.close() == []


def test_jambas_spacing_and_hunyuans_compact_list_read_alike():
    """Jamba writes the list over lines, indented; Hunyuan-A13B's template writes it on one line."""
    jamba_text = '<tool_calls>[\n    {"name": "get_weather", "arguments": {"city": "Paris"}}\n]</tool_calls>'
    hunyuan_text = '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>'
    assert calls_of(parse("jamba_json", jamba_text, TOOLS)) == calls_of(parse("jamba_json", hunyuan_text, TOOLS))


def test_the_writer_writes_one_list_for_the_turn():
    calls = [("get_weather", {"city": "Paris"}), ("search", {"q": "x"})]
    written = jamba.FORMAT.write(calls)
    assert written.count(jamba.START) == 1 and written.endswith("}]" + jamba.END)
    assert calls_of(parse("jamba_json", written, TOOLS)) == calls
