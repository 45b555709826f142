"""End to end, `llama_json`: a real `vllm serve` (CPU build) with SmolLM2-135M, the parser found through
its entry point, our Llama 3.1 JSON template, and the official `openai` client (see tests/e2e.py).
Every forced output is checked against `parse()` of the same text, streamed and not."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, TOOLS, call_pairs, complete, serve, stream
from toolcall_parsers import parse

pytestmark = pytest.mark.e2e
RAW = (
    "Let me check.\n"
    '{"name": "get_weather", "parameters": {"city": "Paris"}}; '
    '{"type": "function", "name": "search", "arguments": {"query": "a}b; {\\"name\\": \\"x\\"}"}}; '
    '{"name": "broken", "parameters": {"x": y}}'
)
EXPECTED = [("get_weather", {"city": "Paris"}), ("search", {"query": 'a}b; {"name": "x"}'})]


@pytest.fixture(scope="module")
def client(smollm2_dir):
    with serve("llama_json", smollm2_dir) as client:
        yield client


def test_calls_streamed_and_not_agree_with_parse(client):
    expected = parse("llama_json", RAW, TOOLS)
    assert [(c.name, c.arguments) for c in expected.calls] == EXPECTED
    assert expected.content == 'Let me check.; {"name": "broken", "parameters": {"x": y}}'  # the bad call is text
    choice = complete(client, RAW)
    assert choice.finish_reason == "tool_calls"
    assert call_pairs(choice.message.tool_calls) == EXPECTED
    assert choice.message.content == expected.content
    got = stream(client, RAW)
    assert got["finish"] == "tool_calls"
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == EXPECTED
    assert got["content"] == expected.content


def test_json_in_an_answer_and_builtin_calls(client):
    prose = 'The config is:\n{"name": "app", "debug": true}\nand {"name": "f", "parameters": {}} mid-line.'
    assert complete(client, prose).message.content == prose
    assert stream(client, prose) == {"content": prose, "calls": [], "finish": "stop"}
    builtin = '<|python_tag|>brave_search.call(query="weather in Paris")'
    expected = [("brave_search", {"query": "weather in Paris"})]
    assert call_pairs(complete(client, builtin).message.tool_calls) == expected
    assert [(c["name"], json.loads(c["arguments"])) for c in stream(client, builtin)["calls"]] == expected


def test_a_call_cut_by_max_tokens_is_text_streamed_and_not(client):
    raw = 'Checking.\n{"name": "get_weather", "parameters": {"city": "Paris and a very long tail of text'
    finished = complete(client, raw, max_tokens=18)
    got = stream(client, raw, max_tokens=18)
    assert finished.finish_reason == got["finish"] == "length"
    assert not finished.message.tool_calls and got["calls"] == []
    assert finished.message.content.startswith('Checking.\n{"name": "get_weather"')
    assert got["content"] == finished.message.content


def test_tool_choice_required_is_constrained_to_the_format(client):
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100)
    assert choice.finish_reason == "tool_calls"
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and arguments["city"] in ("Paris", "Tokyo")
    named = {"type": "function", "function": {"name": "get_weather"}}
    got = stream(client, None, tools=STRICT_TOOLS, tool_choice=named, max_tokens=100)
    assert got["calls"] and got["calls"][0]["name"] == "get_weather"
    assert json.loads(got["calls"][0]["arguments"])["city"] in ("Paris", "Tokyo")
