"""End to end, `tagged`: a real `vllm serve` (CPU build) with SmolLM2-135M, the parser found through its
entry point, our tagged template, and the official `openai` client (see tests/e2e.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, call_pairs, complete, serve, stream

pytestmark = pytest.mark.e2e
RAW = (
    "Checking both.\n<TOOL_CALLS>\n"
    'get_weather {"city": "Paris"}\n'
    'search {"query": "a </TOOL_CALLS> b\\nc"}\n'
    "</TOOL_CALLS>"
)
EXPECTED = [("get_weather", {"city": "Paris"}), ("search", {"query": "a </TOOL_CALLS> b\nc"})]


@pytest.fixture(scope="module")
def client(smollm2_dir):
    with serve("tagged", smollm2_dir) as client:
        yield client


def test_calls_non_streaming(client):
    choice = complete(client, RAW)
    assert choice.finish_reason == "tool_calls" and choice.message.content == "Checking both."
    assert call_pairs(choice.message.tool_calls) == EXPECTED


def test_calls_streaming(client):
    got = stream(client, RAW)
    assert got["finish"] == "tool_calls" and got["content"] == "Checking both."
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == EXPECTED


def test_unfinished_last_line_is_text(client):
    raw = '<TOOL_CALLS>\nget_weather {"city": "Oslo"}\nsearch {"query": "' + "a long query " * 30
    choice = complete(client, raw, max_tokens=30)
    # vLLM reports "tool_calls" for a non-streamed answer holding a call, even when cut by max_tokens.
    assert choice.finish_reason == "tool_calls"
    assert call_pairs(choice.message.tool_calls) == [("get_weather", {"city": "Oslo"})]
    assert choice.message.content.startswith('search {"query": "a')
    got = stream(client, raw, max_tokens=30)
    assert got["finish"] == "length"
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"][:1]] == [("get_weather", {"city": "Oslo"})]
    assert got["content"].startswith('search {"query": "a')


def test_tool_choice_required_is_constrained_to_the_format(client):
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=60)
    assert choice.finish_reason == "tool_calls"
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and arguments["city"] in ("Paris", "Tokyo")
