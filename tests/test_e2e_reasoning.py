"""Reasoning and calls together through a real `vllm serve` (CPU build): `--reasoning-parser
hermes_json --tool-call-parser hermes_json`, both ours, found through the entry points and composed
by vLLM's own `DelegatingParser`. Forced outputs of a reasoning model (think then call, the closer
inside a call's string, a call opened inside an unclosed block, a call drafted inside a closed one,
`tool_choice="none"`) come back the same finished and streamed, arguments intact. Every format and
every shape run through the same composition in process (tests/test_reasoning.py); what only a
server proves is here: the serving layer's calls, the request's template arguments, the engine
core's own instance deciding when constraints start."""

from __future__ import annotations

import json

import pytest
from e2e import complete, stream
from helpers import needs

# one vllm serve at a time: on one worker
pytestmark = [needs("vllm"), pytest.mark.e2e, pytest.mark.xdist_group("vllm_serve")]

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
SEARCH = '<tool_call>\n{"name": "search", "arguments": {"query": "a </think> b"}}\n</tool_call>'


@pytest.fixture(scope="module")
def client(hermes_server):
    import openai

    return openai.OpenAI(base_url=hermes_server, api_key="unused", timeout=120)


def finished(client, raw: str, **kwargs) -> tuple:
    message = complete(client, raw, **kwargs).message
    reasoning = getattr(message, "reasoning", None) or getattr(message, "reasoning_content", None)
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
    return _strip(reasoning), _strip(message.content), calls


def streamed(client, raw: str, **kwargs) -> tuple:
    got = stream(client, raw, **kwargs)
    calls = [(c["name"], json.loads(c["arguments"])) for c in got["calls"]]
    return _strip(got["reasoning"]), _strip(got["content"]), calls


def _strip(text: str | None) -> str | None:
    return (text or "").strip() or None


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(
            f"<think>\nThe user wants Paris.\n</think>\n\n{CALL}",
            ("The user wants Paris.", None, [("get_weather", {"city": "Paris"})]),
            id="think_then_call",
        ),
        pytest.param(
            f"<think>r</think>\nLet me look.\n{SEARCH}",
            ("r", "Let me look.", [("search", {"query": "a </think> b"})]),
            id="closer_inside_a_string",
        ),
        pytest.param(
            f"<think>I will call.\n{CALL}",
            ("I will call.", None, [("get_weather", {"city": "Paris"})]),
            id="call_in_unclosed_think",
        ),
        pytest.param(
            f"<think>maybe {CALL} no</think>The answer is sunny.",
            (f"maybe {CALL} no", "The answer is sunny.", []),
            id="call_in_closed_think_stays_reasoning",
        ),
        pytest.param("Sunny in Paris.", (None, "Sunny in Paris.", []), id="no_reasoning"),
    ],
)
def test_reasoning_and_calls_finished_and_streamed(client, raw, want):
    assert finished(client, raw) == want
    assert streamed(client, raw) == want


def test_tool_choice_none_keeps_an_unclosed_block_as_reasoning(client):
    raw = f"<think>I will call.\n{CALL}"
    want = (f"I will call.\n{CALL}", None, [])
    assert finished(client, raw, tool_choice="none") == want
    assert streamed(client, raw, tool_choice="none") == want
