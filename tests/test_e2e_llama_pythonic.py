"""End to end, `llama_pythonic`: a real `vllm serve` (CPU build) with SmolLM2-135M, the parser found
through its entry point, our Llama template, and the official `openai` client (see tests/e2e.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, call_pairs, complete, serve, stream

pytestmark = pytest.mark.e2e
RAW = (
    "I will look both up.\n"
    '[get_weather(city="Paris"), search(query=\'hello]world\', filters={"year": [2024, -1.5], "exact": True}),'
    " broken(1)]"
)
EXPECTED = [
    ("get_weather", {"city": "Paris"}),
    ("search", {"query": "hello]world", "filters": {"year": [2024, -1.5], "exact": True}}),
]


@pytest.fixture(scope="module")
def client(smollm2_dir):
    with serve("llama_pythonic", smollm2_dir) as client:
        yield client


def test_calls_non_streaming(client):
    choice = complete(client, RAW)
    assert choice.finish_reason == "tool_calls"
    assert call_pairs(choice.message.tool_calls) == EXPECTED
    assert choice.message.content == "I will look both up., broken(1)"  # the bad call is text


def test_calls_streaming(client):
    got = stream(client, RAW)
    assert got["finish"] == "tool_calls"
    finished = [(c["name"], json.loads(c["arguments"])) for c in got["calls"] if c["name"] != "broken"]
    assert finished == EXPECTED
    assert got["content"] == "I will look both up., broken(1)"


def test_brackets_in_prose_are_text(client):
    raw = "See [1] and [O'Reilly] for details."
    assert complete(client, raw).message.content == raw
    assert stream(client, raw) == {"content": raw, "calls": [], "finish": "stop"}


def test_tool_choice_required_uses_vllm_json_constraint(client):
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100)
    assert choice.finish_reason == "tool_calls"
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and arguments["city"] in ("Paris", "Tokyo")
