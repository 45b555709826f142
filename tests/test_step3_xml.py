"""step3_xml behaviour that is Step-3's own (the invokes are minimax_xml's machine, proven by the
corpus, the properties and the adapter tests every format gets): the head of a call before its
invoke, the separator between calls, and the close of the invoke before the call's end."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers.formats.step3_xml import CALL_BEGIN, CALL_END, END, SEP, START

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
INVOKE = '<steptml:invoke name="get_weather"><steptml:parameter name="city">Oslo</steptml:parameter></steptml:invoke>'


@pytest.mark.parametrize(
    "head",
    ["function" + SEP, "\nfunction " + SEP + "\n", "function" + SEP + "get_weather\n", ""],
    ids=["template", "spaced", "label", "no type"],
)
def test_the_heads_a_call_may_have(head):
    result = both_paths("step3_xml", START + CALL_BEGIN + head + INVOKE + CALL_END + END, TOOLS, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})] and result.content is None


@pytest.mark.parametrize("head", ["custom" + SEP, "function", "function" + SEP + "a<b", "function" + SEP + "x" * 1100])
def test_a_call_with_another_head_is_text_and_the_next_call_counts(head):
    broken = CALL_BEGIN + head + INVOKE + CALL_END
    good = CALL_BEGIN + "function" + SEP + INVOKE + CALL_END
    result = both_paths("step3_xml", START + broken + good + END, TOOLS, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})]
    assert result.content == START + broken


def test_a_separator_between_calls_is_markup_and_the_invoke_must_close():
    call = CALL_BEGIN + "function" + SEP + INVOKE + CALL_END
    result = both_paths("step3_xml", START + call + SEP + "\n" + call + END, TOOLS)
    assert len(result.calls) == 2 and result.content is None
    unclosed = CALL_BEGIN + "function" + SEP + INVOKE.removesuffix("</steptml:invoke>") + CALL_END
    result = both_paths("step3_xml", START + unclosed + call + END, TOOLS)
    assert len(result.calls) == 1 and result.content == START + unclosed
