"""dots_xml behaviour that is dots' own (the invokes are minimax_xml's machine, proven by the corpus,
the properties and the adapter tests every format gets): the JSON call object a block may hold,
how it streams, and what ends it."""

from __future__ import annotations

from helpers import both_paths, calls_of, counter_ids
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {}}}}]
START, END = "<dots_function_call>", "</dots_function_call>"


def test_a_json_call_streams_as_its_json_is_written():
    s = get_format("dots_xml").stream(TOOLS, counter_ids, streaming="eager")
    assert s.feed("Ok. " + START + '\n{"name": "sea') == [Text("Ok.")]
    assert s.feed('rch", "arguments": {"query": "ch') == [
        CallStart(0, "call_0", "search"),
        CallArgs(0, '{"query": "ch'),
    ]
    assert s.feed('airs"}}\n' + END + " done") == [
        CallArgs(0, 'airs"}'),
        CallEnd(0, {"query": "chairs"}),
        Text("  done"),  # the space held after "Ok." comes back before the text that follows
    ]


def test_the_json_body_in_every_chunking():
    text = "A " + START + '{"parameters": {"q": "' + END + '"}, "name": "search"}' + END + " B"
    result = both_paths("dots_xml", text, TOOLS, eager=True)
    assert calls_of(result) == [("search", {"q": END})]
    assert result.content == "A  B"


def test_after_the_json_call_only_the_end_belongs_to_the_block():
    text = START + '{"name": "search", "arguments": {}}' + '<invoke name="search"></invoke>' + END
    result = both_paths("dots_xml", text, TOOLS)
    assert calls_of(result) == [("search", {})]
    assert result.content == '<invoke name="search"></invoke>' + END


def test_json_that_is_not_a_call_leaves_the_whole_block_text():
    for body in ('{"name": 5}', "[1, 2]", '{"arguments": {}}', "nothing"):
        text = START + body + END
        result = both_paths("dots_xml", text, TOOLS)
        assert (result.content, result.calls) == (text, [])
