"""End to end, `minimax_xml`: a real `vllm serve` (CPU build) with SmolLM2-135M, the parser found
through its entry point, our MiniMax template, and the official `openai` client (see tests/e2e.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, call_pairs, complete, serve, stream

pytestmark = pytest.mark.e2e

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    },
]
XML_FILE = '<root>\n  <parameter name="x">1</parameter>\n</root>\n'
TWO_CALLS = (
    "Let me do both.\n<minimax:tool_call>\n"
    '<invoke name="get_weather">\n<parameter name="city">Münster</parameter>\n'
    '<parameter name="days">3</parameter>\n<parameter name="metric">true</parameter>\n</invoke>\n'
    f'<invoke name="write_file">\n<parameter name="path">a.xml</parameter>\n<parameter name="content">{XML_FILE}'
    "</parameter>\n</invoke>\n</minimax:tool_call>"
)
EXPECTED = [
    ("get_weather", {"city": "Münster", "days": 3, "metric": True}),
    ("write_file", {"path": "a.xml", "content": XML_FILE}),
]


@pytest.fixture(scope="module")
def client(smollm2_dir):
    with serve("minimax_xml", smollm2_dir) as client:
        yield client


def test_typed_calls_non_streaming(client):
    choice = complete(client, TWO_CALLS, tools=TOOLS)
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me do both."
    assert call_pairs(choice.message.tool_calls) == EXPECTED


def test_typed_calls_streaming(client):
    got = stream(client, TWO_CALLS, tools=TOOLS)
    assert got["finish"] == "tool_calls"
    assert got["content"] == "Let me do both."
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == EXPECTED


def test_empty_invoke_and_text_after(client):
    raw = '<minimax:tool_call>\n<invoke name="get_weather">\n</invoke>\n</minimax:tool_call>\nDone.'
    choice = complete(client, raw, tools=TOOLS)
    assert call_pairs(choice.message.tool_calls) == [("get_weather", {})] and choice.message.content == "Done."
    got = stream(client, raw, tools=TOOLS)
    assert [(c["name"], c["arguments"]) for c in got["calls"]] == [("get_weather", "{}")] and got["content"] == "Done."


def test_truncated_invoke_is_not_a_call(client):
    raw = '<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="content">a long text that goes on and on'
    choice = complete(client, raw, tools=TOOLS, max_tokens=15)
    assert choice.finish_reason == "length" and not choice.message.tool_calls
    assert choice.message.content.startswith("<minimax:tool_call>")
    got = stream(client, raw, tools=TOOLS, max_tokens=15)
    assert got["finish"] == "length" and got["content"].startswith("<minimax:tool_call>")


def test_tool_choice_none_passes_text_untouched(client):
    raw = '<minimax:tool_call><invoke name="get_weather"></invoke></minimax:tool_call>'
    assert complete(client, raw, tools=TOOLS, tool_choice="none").message.content == raw
    assert stream(client, raw, tools=TOOLS, tool_choice="none") == {"content": raw, "calls": [], "finish": "stop"}


def test_tool_choice_required_is_constrained_to_the_format(client):
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100)
    assert choice.finish_reason == "tool_calls"
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and arguments["city"] in ("Paris", "Tokyo")
