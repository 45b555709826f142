"""End to end: a real `vllm serve` (CPU build) with SmolLM2-135M, our parser found through its entry
point, our chat template, and the official `openai` client.

The model is too small to call tools reliably, so most requests force an exact raw text through
vLLM's structured outputs (a regex of the text) with `tool_choice="auto"`: the real detokenizer,
serving layer and parser then run on real token deltas. `tool_choice="required"` and named choices
run unforced: there the grammar comes from the parser class (vLLM's `hermes` structural tag).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("vllm")
openai = pytest.importorskip("openai")

from vllm_server import SERVED_NAME as MODEL  # noqa: E402
from vllm_server import vllm_server  # noqa: E402

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parent.parent
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
    },
]
STRICT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    }
]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def server(smollm2_dir) -> Iterator[str]:
    args = ["--enable-auto-tool-choice", "--tool-call-parser", "hermes_json"]
    args += ["--chat-template", str(ROOT / "chat_templates" / "hermes_json.jinja")]
    with vllm_server(smollm2_dir, args) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server, api_key="unused", timeout=120)


def forced(raw: str) -> dict[str, Any]:
    return {"structured_outputs": {"regex": re.escape(raw)}}


def complete(client, raw: str | None, tools=TOOLS, **kwargs):
    extra = forced(raw) if raw is not None else None
    kwargs.setdefault("max_tokens", 300)
    response = client.chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=tools, temperature=0, extra_body=extra, **kwargs
    )
    return response.choices[0]


def stream(client, raw: str | None, tools=TOOLS, **kwargs) -> dict[str, Any]:
    """Stream a request and rebuild what a client sees, checking OpenAI's delta rules."""
    extra = forced(raw) if raw is not None else None
    kwargs.setdefault("max_tokens", 300)
    chunks = client.chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=tools, temperature=0, stream=True, extra_body=extra, **kwargs
    )
    content, calls, finish = [], {}, None
    for chunk in chunks:
        choice = chunk.choices[0]
        finish = choice.finish_reason or finish
        content.append(choice.delta.content or "")
        for tc in choice.delta.tool_calls or []:
            if tc.index not in calls:
                assert tc.id and tc.type == "function" and tc.function.name
                calls[tc.index] = {"id": tc.id, "name": tc.function.name, "arguments": ""}
            else:
                assert not tc.id and not tc.function.name
            calls[tc.index]["arguments"] += tc.function.arguments or ""
    return {"content": "".join(content) or None, "calls": [calls[i] for i in sorted(calls)], "finish": finish}


def call_pairs(calls) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in calls or []]


TWO_CALLS = (
    "Let me check both.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "search", "arguments": {"query": "explain the </tool_call> token, ü"}}\n</tool_call>'
)
TWO_CALLS_EXPECTED = [("get_weather", {"city": "Paris"}), ("search", {"query": "explain the </tool_call> token, ü"})]


def test_two_calls_non_streaming(client):
    choice = complete(client, TWO_CALLS)
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check both."
    assert call_pairs(choice.message.tool_calls) == TWO_CALLS_EXPECTED
    assert len({c.id for c in choice.message.tool_calls}) == 2


def test_two_calls_streaming(client):
    got = stream(client, TWO_CALLS)
    assert got["finish"] == "tool_calls"
    assert got["content"] == "Let me check both."
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == TWO_CALLS_EXPECTED
    assert len({c["id"] for c in got["calls"]}) == 2


def test_plain_answer(client):
    raw = "Paris is sunny today."
    assert complete(client, raw).message.content == raw
    got = stream(client, raw)
    assert got == {"content": raw, "calls": [], "finish": "stop"}


def test_empty_arguments_and_arguments_as_string(client):
    raw = (
        '<tool_call>{"name": "search", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"x\\"}"}</tool_call>'
    )
    expected = [("search", {}), ("search", {"query": "x"})]
    assert call_pairs(complete(client, raw).message.tool_calls) == expected
    got = stream(client, raw)
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == expected


def test_truncated_call_is_not_presented_as_complete(client):
    raw = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris and a very long tail of text'
    choice = complete(client, raw, max_tokens=18)
    assert choice.finish_reason == "length"
    assert not choice.message.tool_calls
    assert choice.message.content.startswith("Checking.\n<tool_call>")
    got = stream(client, raw, max_tokens=18)
    assert got["finish"] == "length"
    assert got["content"].startswith("Checking.\n<tool_call>")  # the unfinished block comes back as text


def test_tool_choice_none_passes_text_untouched(client):
    raw = 'Here: <tool_call>{"name": "search", "arguments": {}}</tool_call>'
    choice = complete(client, raw, tool_choice="none")
    assert choice.message.content == raw and not choice.message.tool_calls
    assert stream(client, raw, tool_choice="none") == {"content": raw, "calls": [], "finish": "stop"}


def test_tool_choice_required_is_constrained_to_the_format(client):
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100)
    assert choice.finish_reason == "tool_calls"
    assert call_pairs(choice.message.tool_calls)[0][0] == "get_weather"
    got = stream(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=100)
    assert got["finish"] == "tool_calls" and got["calls"][0]["name"] == "get_weather"
    assert json.loads(got["calls"][0]["arguments"])["city"] in ("Paris", "Tokyo")


def test_named_tool_choice(client):
    named = {"type": "function", "function": {"name": "get_weather"}}
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice=named, max_tokens=100)
    assert call_pairs(choice.message.tool_calls)[0][0] == "get_weather"
