"""beam_xml behaviour: what is Beam's own (the corpus, the properties and the adapter tests every
format gets prove the rest): where a value ends (its close, the next parameter on a new line, the
message's closer), which messages are calls, and the call that the end of the output leaves."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of

HEAD = " to=write_file<|channel|>analysis <|constrain|>xml<|message|>"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"}},
            },
        },
    }
]


def param(key: str, value: str, close: str = "</rfl:parameter>") -> str:
    return f'<rfl:parameter name="{key}">\n{value}\n{close}'


@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        # the close, the next parameter after the value's line break, the message's closer
        (param("path", "a") + param("mode", "7"), {"path": "a", "mode": 7}),
        (param("path", "a", "") + param("mode", "7"), {"path": "a", "mode": 7}),
        (param("path", "a", ""), {"path": "a"}),
        # a close tag or an open tag within a line is the value's text
        (
            param("content", 'x </rfl:parameter> and <rfl:parameter name="y">'),
            {"content": 'x </rfl:parameter> and <rfl:parameter name="y">'},
        ),
        # one line break on each side is framing; more is the value's
        (param("content", "\n\nbody\n\n"), {"content": "\n\nbody\n\n"}),
    ],
)
def test_value_ends(body, arguments):
    result = both_paths("beam_xml", HEAD + body + "<|call|>", TOOLS)
    assert calls_of(result) == [("write_file", arguments)] and not result.content


def test_only_messages_to_a_tool_in_xml_are_calls():
    json_body = ' to=write_file<|channel|>analysis <|constrain|>json<|message|>{"path": "a"}<|call|>'
    assert calls_of(both_paths("beam_xml", json_body, TOOLS)) == []
    answer = "<|channel|>final<|message|>" + param("path", "a") + "<|return|>"
    assert both_paths("beam_xml", answer, TOOLS).content == answer


def test_the_end_of_the_output_after_a_parameter_ends_the_call():
    # `<|call|>` is a stop token an engine may drop: the complete parameters stand
    assert calls_of(both_paths("beam_xml", HEAD + param("path", "a"), TOOLS)) == [("write_file", {"path": "a"})]
    cut = HEAD + '<rfl:parameter name="path">\na'
    result = both_paths("beam_xml", cut, TOOLS)
    assert calls_of(result) == [] and result.content == cut.strip()
    for tail in ("<|ca", "<|call"):  # the closer cut part-way (an outside review): the call, and that part as text
        result = both_paths("beam_xml", HEAD + param("path", "a") + tail, TOOLS)
        assert (result.content, calls_of(result)) == (tail, [("write_file", {"path": "a"})])
