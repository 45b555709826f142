"""End to end, `qwen_xml`: a real `vllm serve` (CPU build) with SmolLM2-135M, the parser found
through its entry point, our Qwen3-Coder-style template, and the official `openai` client (see
tests/e2e.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, call_pairs, complete, serve, stream
from toolcall_parsers import parse

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
    "Let me do both.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nMünster\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n</function>\n</tool_call>\n"
    f"<tool_call>\n<function=write_file>\n<parameter=path>\na.xml\n</parameter>\n<parameter=content>\n{XML_FILE}\n"
    "</parameter>\n</function>\n</tool_call>"
)
EXPECTED = [
    ("get_weather", {"city": "Münster", "days": 3, "metric": True}),
    ("write_file", {"path": "a.xml", "content": XML_FILE}),
]


@pytest.fixture(scope="module")
def client(smollm2_dir):
    with serve("qwen_xml", smollm2_dir) as client:
        yield client


def test_typed_calls_streaming_and_not_agree_with_parse(client):
    assert [(c.name, c.arguments) for c in parse("qwen_xml", TWO_CALLS, tools=TOOLS).calls] == EXPECTED
    choice = complete(client, TWO_CALLS, tools=TOOLS)
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me do both."
    assert call_pairs(choice.message.tool_calls) == EXPECTED
    got = stream(client, TWO_CALLS, tools=TOOLS)
    assert got["finish"] == "tool_calls"
    assert got["content"] == "Let me do both."
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == EXPECTED


def test_dropped_closes_are_tolerated(client):
    raw = "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n<parameter=days>\n2\n</function>"
    choice = complete(client, raw, tools=TOOLS)
    assert call_pairs(choice.message.tool_calls) == [("get_weather", {"city": "Oslo", "days": 2})]
    got = stream(client, raw, tools=TOOLS)
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == [
        ("get_weather", {"city": "Oslo", "days": 2})
    ]


def test_truncated_function_is_not_a_call(client):
    raw = "<tool_call>\n<function=write_file>\n<parameter=content>\na long text that goes on and on and on"
    choice = complete(client, raw, tools=TOOLS, max_tokens=15)
    assert choice.finish_reason == "length" and not choice.message.tool_calls
    content = choice.message.content
    assert content.startswith("<tool_call>\n<function=") and raw.startswith(content)  # the text as written
    got = stream(client, raw, tools=TOOLS, max_tokens=15)
    assert got["finish"] == "length" and got["calls"] == [] and got["content"] == content


def test_tool_choice_required_is_constrained_to_the_format(client):
    """One call (`parallel_tool_calls=False`): with parallel calls allowed, the grammar lets the model
    end after any block, and SmolLM2-135M keeps writing blocks until `max_tokens` instead."""
    choice = complete(
        client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100, parallel_tool_calls=False
    )
    assert choice.finish_reason == "tool_calls"
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and arguments["city"] in ("Paris", "Tokyo")


def test_tool_choice_required_single_call_streaming(client):
    got = stream(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100, parallel_tool_calls=False)
    assert got["finish"] == "tool_calls" and got["calls"][0]["name"] == "get_weather"
    assert json.loads(got["calls"][0]["arguments"])["city"] in ("Paris", "Tokyo")
