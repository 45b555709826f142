"""End to end through a real `vllm serve` (CPU build) with SmolLM2-135M: what only a server proves.

The parser is found through its entry point (`--tool-call-parser hermes_json`), our chat template is
served, and the official `openai` client reads every adapter path: non-streamed and streamed, finish
reasons, `tool_choice="none"`, a call cut by `max_tokens`, `required`, a named tool and strict
`auto` constrained by the grammar (sampled calls validate), exact streaming of a broken call, and a
request's own streaming policy (`vllm_xargs`).
One format stands for all here: per-format behaviour runs through vLLM's real parser stack in
process, for every registered format (tests/test_e2e_inprocess.py, tests/test_vllm_adapter.py). The
server is the session's (conftest.py), shared with the load test."""

from __future__ import annotations

import json

import pytest
from e2e import STRICT_TOOLS, call_pairs, complete, stream
from helpers import needs

# one vllm serve at a time: on one worker
pytestmark = [needs("vllm"), pytest.mark.e2e, pytest.mark.xdist_group("vllm_serve")]


@pytest.fixture(scope="module")
def client(hermes_server):
    import openai

    return openai.OpenAI(base_url=hermes_server, api_key="unused", timeout=120)


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
    assert got == {"content": raw, "reasoning": None, "calls": [], "finish": "stop"}


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
    assert stream(client, raw, tool_choice="none") == {"content": raw, "reasoning": None, "calls": [], "finish": "stop"}


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


def test_strict_auto_holds_sampled_calls_to_the_schema(client):
    """Unforced and sampled (temperature 0.8), after three example calls in history that leave out a
    key the schema requires: with strict tools every call the model writes validates, since decoding
    is held to the schema from the call's opener on; the same requests without `strict` give calls
    that copy the examples and do not (scripts/strict_rates.py measures every format this way)."""
    from strict_rates import SETTINGS, ask, valid

    def sampled(setting: str) -> list[tuple[str, str]]:
        return [
            call
            for seed in range(3)
            for streamed in (False, True)
            for call in ask(client, SETTINGS[setting], seed, streamed)[0]
        ]

    strict = sampled("strict auto")
    assert strict and all(valid(name, arguments) for name, arguments in strict), strict
    free = sampled("free auto")
    assert any(not valid(name, arguments) for name, arguments in free), free


# -- exact streaming (issue 11): the stream tells the story the finished response tells ------------

MALFORMED = (
    "Searching.\n"
    '<tool_call>\n{"name": "search", "arguments": {"query": tomorrow}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)


def as_client_sees(choice) -> dict:
    calls = [{"name": c.function.name, "arguments": c.function.arguments} for c in choice.message.tool_calls or []]
    return {"content": choice.message.content, "calls": calls}


def streamed_as_client_sees(got: dict) -> dict:
    return {
        "content": got["content"],
        "calls": [{"name": c["name"], "arguments": c["arguments"]} for c in got["calls"]],
    }


def test_a_malformed_call_streams_exactly_as_the_finished_response(client):
    finished = as_client_sees(complete(client, MALFORMED))
    assert [c["name"] for c in finished["calls"]] == ["get_weather"]
    assert "tomorrow" in finished["content"]
    assert streamed_as_client_sees(stream(client, MALFORMED)) == finished


def test_a_call_cut_by_max_tokens_streams_exactly_as_the_finished_response(client):
    raw = 'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris and a very long tail of text'
    finished = complete(client, raw, max_tokens=18)
    got = stream(client, raw, max_tokens=18)
    assert finished.finish_reason == got["finish"] == "length"
    assert got["calls"] == [] and streamed_as_client_sees(got) == as_client_sees(finished)


def test_eager_streaming_per_request_shows_the_partial_call(client):
    got = stream(client, MALFORMED, extra_xargs={"tool_call_streaming": "eager"})
    assert [c["name"] for c in got["calls"]] == ["search", "get_weather"]  # the broken call was shown
    assert "tomorrow" in got["content"]


def test_metrics_count_each_kind_of_output_exactly(client, hermes_server):
    """The server's own `/metrics` (prometheus_client's registry, which vLLM exposes): a good call,
    a malformed block, an undeclared tool, a schema-breaking value and a cut call, finished and then
    streamed, move our counters by exactly what was sent."""
    import urllib.request

    from test_metrics import MOVED, SENT, counter_values, moved_by

    def scrape() -> dict:
        with urllib.request.urlopen(hermes_server.removesuffix("/v1") + "/metrics", timeout=60) as response:
            return counter_values(response.read().decode())

    before = scrape()
    for raw in SENT.values():
        complete(client, raw)
    middle = scrape()
    assert moved_by(before, middle, "vllm", "finished") == MOVED
    for raw in SENT.values():
        stream(client, raw)
    assert moved_by(middle, scrape(), "vllm", "streamed") == MOVED


def test_metrics_count_reasoning_blocks_closed_and_unclosed(client, hermes_server):
    """`--reasoning-parser hermes_json` on the same server: a block the model closes and one the
    output ends inside, finished and then streamed; each response counted once (one the output
    ends inside reasoning never reaches vLLM's tool parser when streamed: ours counts it)."""
    import urllib.request

    from test_metrics import counter_values

    def blocks() -> dict:
        with urllib.request.urlopen(hermes_server.removesuffix("/v1") + "/metrics", timeout=60) as response:
            values = counter_values(response.read().decode())
        out = {
            (dict(labels)["mode"], dict(labels)["end"]): value
            for (name, labels), value in values.items()
            if name == "toolcall_parsers:reasoning_blocks_total" and dict(labels)["format"] == "hermes_json"
        }
        for (name, labels), value in values.items():
            if name == "toolcall_parsers:responses_total" and dict(labels)["format"] == "hermes_json":
                out[(dict(labels)["mode"], "responses")] = value
        return out

    def moved(before: dict, after: dict) -> dict:
        return {key: value - before.get(key, 0) for key, value in after.items() if value != before.get(key, 0)}

    outputs = ["<think>It is Paris.</think>Sunny.", "<think>Paris, and then a long"]
    before = blocks()
    for raw in outputs:
        complete(client, raw)
    middle = blocks()
    assert moved(before, middle) == {
        ("finished", "closed"): 1,
        ("finished", "unclosed"): 1,
        ("finished", "responses"): 2,
    }
    for raw in outputs:
        stream(client, raw)
    assert moved(middle, blocks()) == {
        ("streamed", "closed"): 1,
        ("streamed", "unclosed"): 1,
        ("streamed", "responses"): 2,
    }
