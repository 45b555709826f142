"""End to end, `mistral_json`: a real `vllm serve` (CPU build) with SmolLM2-135M, the parser found
through its entry point, our Mistral template, and the official `openai` client (see tests/e2e.py).
SmolLM2's tokenizer has no `[TOOL_CALLS]` token, so the marker arrives as text; token gating is
covered in tests/test_vllm_adapter.py."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, call_pairs, complete, serve, stream

pytestmark = pytest.mark.e2e
MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")
V11 = (
    'On it.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    '[TOOL_CALLS]search[CALL_ID]abc123def[ARGS]{"query": "what is [TOOL_CALLS] ]"}'
)
V3 = '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "search", "arguments": {}}]'


@pytest.fixture(scope="module")
def client(smollm2_dir):
    with serve("mistral_json", smollm2_dir) as client:
        yield client


def test_v11_calls(client):
    expected = [("get_weather", {"city": "Paris"}), ("search", {"query": "what is [TOOL_CALLS] ]"})]
    choice = complete(client, V11)
    assert choice.finish_reason == "tool_calls" and choice.message.content == "On it."
    assert call_pairs(choice.message.tool_calls) == expected
    assert MISTRAL_ID.fullmatch(choice.message.tool_calls[0].id)
    assert choice.message.tool_calls[1].id == "abc123def"
    got = stream(client, V11)
    assert got["finish"] == "tool_calls" and got["content"] == "On it."
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == expected
    assert [c["id"] for c in got["calls"]][1] == "abc123def" and MISTRAL_ID.fullmatch(got["calls"][0]["id"])


def test_pre_v11_array(client):
    expected = [("get_weather", {"city": "Paris"}), ("search", {})]
    assert call_pairs(complete(client, V3).message.tool_calls) == expected
    got = stream(client, V3)
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == expected


def test_prose_marker_is_text(client):
    raw = "The [TOOL_CALLS] marker starts calls."
    assert complete(client, raw).message.content == raw
    assert stream(client, raw) == {"content": raw, "calls": [], "finish": "stop"}


def test_tool_choice_required_is_constrained_to_the_format(client):
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100)
    assert choice.finish_reason == "tool_calls"
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and arguments["city"] in ("Paris", "Tokyo")
    assert MISTRAL_ID.fullmatch(choice.message.tool_calls[0].id)
