"""End to end, `markdown_tools` and `xml_tools` (gptme's formats): a real `vllm serve` (CPU build) with
SmolLM2-135M per format, in sequence, the parser found through its entry point, our template, and the
official `openai` client (see tests/e2e.py)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm")

from e2e import STRICT_TOOLS, call_pairs, complete, serve, stream

pytestmark = pytest.mark.e2e
CONTENT = "Here:\n```python\nprint(1)\n```"
RAW = {
    "markdown_tools": CONTENT + "\n```get_weather\nParis\n```\n```search\n```",
    "xml_tools": CONTENT
    + "\n<tool-use>\n<get_weather>\nParis &amp; Nice\n</get_weather>\n<search>\n</search>\n</tool-use>",
}
EXPECTED = {
    "markdown_tools": [("get_weather", {"city": "Paris"}), ("search", {})],
    "xml_tools": [("get_weather", {"city": "Paris & Nice"}), ("search", {})],
}
CUT = {"markdown_tools": "```get_weather\nOslo", "xml_tools": "<tool-use><get_weather>Oslo"}


@pytest.fixture(scope="module", params=["markdown_tools", "xml_tools"])
def served(request, smollm2_dir):
    with serve(request.param, smollm2_dir) as client:
        yield request.param, client


def test_calls_non_streaming_and_streaming(served):
    fmt, client = served
    choice = complete(client, RAW[fmt])
    assert choice.finish_reason == "tool_calls" and choice.message.content == CONTENT
    assert call_pairs(choice.message.tool_calls) == EXPECTED[fmt]
    got = stream(client, RAW[fmt])
    assert got["finish"] == "tool_calls" and got["content"] == CONTENT
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == EXPECTED[fmt]


def test_an_unclosed_block_is_content_in_both_paths(served):
    fmt, client = served
    choice = complete(client, CUT[fmt])
    assert not choice.message.tool_calls and choice.message.content == CUT[fmt]
    got = stream(client, CUT[fmt])
    assert got["calls"] == [] and got["content"] == CUT[fmt]


def test_tool_choice_required_is_constrained_to_the_format(served):
    fmt, client = served
    choice = complete(client, None, tools=STRICT_TOOLS, tool_choice="required", max_tokens=200)
    assert choice.finish_reason == "tool_calls", (fmt, choice.message.content)
    (name, arguments), *_ = call_pairs(choice.message.tool_calls)
    assert name == "get_weather" and isinstance(arguments["city"], str)
