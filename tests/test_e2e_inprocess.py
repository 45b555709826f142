"""The end-to-end cases of every format, in process: vLLM's real parser stack (`ParserManager`,
`parse`, `parse_delta(..., finished=...)`, see tests/test_vllm_adapter.py) fed a real tokenizer's
deltas, one token and several tokens at a time.

Per-format behaviour is proven here, for every registered format, with texts its spec's `write`
gives; a real `vllm serve` runs only for what a server alone proves (tests/test_e2e_hermes_json.py,
test_e2e_auto.py, test_e2e_load.py). `EXTRA` keeps the format-specific texts the per-format server
tests used to force (variants, look-alikes, broken calls); each must be one of the registered formats.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from helpers import content_of, needs, run_chunks
from test_vllm_adapter import complete_through, make_request, plugins, stream_through, tokenizer  # noqa: F401
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.core.events import CallEnd, CallStart
from toolcall_parsers.detect import PROBE_TOOLS

pytestmark = needs("vllm")

TOOLS = PROBE_TOOLS  # required string parameters: what positional formats (gptme's blocks) write
QUERY = 'explain "quotes", a back\\slash, [brackets] {braces}, ü and 東京'
CALLS = [("get_weather", {"city": "Paris"}), ("search", {"query": QUERY})]
OPTIONAL_QUERY = [
    TOOLS[0],
    {
        "type": "function",
        "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
    },
]
"""`search` with no required parameter: a gptme block with no body calls it with no arguments."""
TYPED_TOOLS = [
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


def pairs(calls: list[Any]) -> list[tuple[str, Any]]:
    return [(c.name, json.loads(c.arguments)) for c in calls]


def through_vllm(tok: Any, fmt: str, text: str, tools: Any = TOOLS, groups: tuple[int, ...] = (1, 4)) -> dict[str, Any]:
    """`text` through vLLM's stack, finished and streamed (`groups` tokens per delta); asserts the
    stream tells the finished response's story (the calls it shows that finished, and the content)
    and returns the finished response's content and calls."""
    request = make_request(tools)
    _, content, calls = complete_through(tok, text, request, fmt=fmt)
    events = run_chunks(fmt, [text], request.tools)
    started = [e.index for e in events if isinstance(e, CallStart)]
    finished = {e.index for e in events if isinstance(e, CallEnd)}
    for group in groups:
        streamed = stream_through(tok, text, request, group=group, fmt=fmt)
        assert streamed["content"] == content, group
        shown = [c for i, c in zip(started, streamed["calls"], strict=True) if i in finished]
        assert [(c["name"], c["arguments"]) for c in shown] == [(c.name, c.arguments) for c in calls], group
        assert len({c["id"] for c in streamed["calls"]}) == len(streamed["calls"])
        assert streamed["parser"]._tool_parser.get_remaining_unstreamed_args() == ""
    expected = parse(fmt, text, request.tools)
    assert content == expected.content and pairs(calls) == [(c.name, c.arguments) for c in expected.calls]
    return {"content": content, "calls": calls}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_two_calls_after_content(tokenizer, fmt):  # noqa: F811
    got = through_vllm(tokenizer, fmt, "Let me check both.\n" + FORMATS[fmt].write(CALLS))
    assert got["content"] == content_of(fmt, ["Let me check both.\n"]) and pairs(got["calls"]) == CALLS
    assert len({c.id for c in got["calls"]}) == 2


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_plain_answer_is_content(tokenizer, fmt):  # noqa: F811
    got = through_vllm(tokenizer, fmt, "Paris is sunny today.")
    assert got == {"content": "Paris is sunny today.", "calls": []}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_call_cut_off_is_text_streamed_and_not(tokenizer, fmt):  # noqa: F811
    """What `max_tokens` leaves of a call (the longest cut of its text where parse() finds none):
    content, the same in both paths, never a call."""
    written = "Checking.\n" + FORMATS[fmt].write(CALLS[1:])
    text = next(written[:n] for n in range(len(written) - 1, 0, -1) if not parse(fmt, written[:n], TOOLS).calls)
    got = through_vllm(tokenizer, fmt, text)
    assert got["calls"] == [] and got["content"].startswith("Checking.")


XML_FILE = '<root>\n  <parameter name="x">1</parameter>\n</root>\n'
TYPED = [
    ("get_weather", {"city": "Münster", "days": 3, "metric": True}),
    ("write_file", {"path": "a.xml", "content": XML_FILE}),
]
MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")

# fmt -> (text, tools, calls, content): None leaves the content to parse() alone.
EXTRA: dict[str, list[tuple[str, Any, list[tuple[str, Any]], str | None]]] = {
    "hermes_json": [
        (
            '<tool_call>{"name": "search", "arguments": {}}</tool_call>'
            '<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"x\\"}"}</tool_call>',
            TOOLS,
            [("search", {}), ("search", {"query": "x"})],
            None,
        ),
    ],
    "llama_json": [
        (
            'Let me check.\n{"name": "get_weather", "parameters": {"city": "Paris"}}; '
            '{"type": "function", "name": "search", "arguments": {"query": "a}b; {\\"name\\": \\"x\\"}"}}; '
            '{"name": "broken", "parameters": {"x": y}}',
            TOOLS,
            [("get_weather", {"city": "Paris"}), ("search", {"query": 'a}b; {"name": "x"}'})],
            'Let me check.; {"name": "broken", "parameters": {"x": y}}',
        ),
        (
            'The config is:\n{"name": "app", "debug": true}\nand {"name": "f", "parameters": {}} mid-line.',
            TOOLS,
            [],
            None,
        ),
        (
            '<|python_tag|>brave_search.call(query="weather in Paris")',
            TOOLS,
            [("brave_search", {"query": "weather in Paris"})],
            None,
        ),
    ],
    "llama_pythonic": [
        (
            "I will look both up.\n[get_weather(city=\"Paris\"), search(query='hello]world', "
            'filters={"year": [2024, -1.5], "exact": True}), broken(1)]',
            TOOLS,
            [
                ("get_weather", {"city": "Paris"}),
                ("search", {"query": "hello]world", "filters": {"year": [2024, -1.5], "exact": True}}),
            ],
            "I will look both up., broken(1)",
        ),
        ("See [1] and [O'Reilly] for details.", TOOLS, [], "See [1] and [O'Reilly] for details."),
    ],
    "markdown_tools": [
        (
            "Here:\n```python\nprint(1)\n```\n```get_weather\nParis\n```\n```search\n```",
            OPTIONAL_QUERY,
            [("get_weather", {"city": "Paris"}), ("search", {})],
            "Here:\n```python\nprint(1)\n```",
        ),
        ("```get_weather\nOslo", TOOLS, [], "```get_weather\nOslo"),
    ],
    "xml_tools": [
        (
            "Here:\n```python\nprint(1)\n```\n<tool-use>\n<get_weather>\nParis &amp; Nice\n</get_weather>\n"
            "<search>\n</search>\n</tool-use>",
            OPTIONAL_QUERY,
            [("get_weather", {"city": "Paris & Nice"}), ("search", {})],
            "Here:\n```python\nprint(1)\n```",
        ),
        ("<tool-use><get_weather>Oslo", TOOLS, [], "<tool-use><get_weather>Oslo"),
    ],
    "minimax_xml": [
        (
            "Let me do both.\n<minimax:tool_call>\n"
            '<invoke name="get_weather">\n<parameter name="city">Münster</parameter>\n'
            '<parameter name="days">3</parameter>\n<parameter name="metric">true</parameter>\n</invoke>\n'
            '<invoke name="write_file">\n<parameter name="path">a.xml</parameter>\n'
            f'<parameter name="content">{XML_FILE}'
            "</parameter>\n</invoke>\n</minimax:tool_call>",
            TYPED_TOOLS,
            TYPED,
            "Let me do both.",
        ),
        (
            '<minimax:tool_call>\n<invoke name="get_weather">\n</invoke>\n</minimax:tool_call>\nDone.',
            TYPED_TOOLS,
            [("get_weather", {})],
            "Done.",
        ),
    ],
    "qwen_xml": [
        (
            "Let me do both.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nMünster\n</parameter>\n"
            "<parameter=days>\n3\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n</function>\n</tool_call>\n"
            f"<tool_call>\n<function=write_file>\n<parameter=path>\na.xml\n</parameter>\n<parameter=content>\n{XML_FILE}\n"
            "</parameter>\n</function>\n</tool_call>",
            TYPED_TOOLS,
            TYPED,
            "Let me do both.",
        ),
        (
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n<parameter=days>\n2\n</function>",
            TYPED_TOOLS,
            [("get_weather", {"city": "Oslo", "days": 2})],
            None,
        ),
    ],
    "mistral_json": [
        (
            'On it.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
            '[TOOL_CALLS]search[CALL_ID]abc123def[ARGS]{"query": "what is [TOOL_CALLS] ]"}',
            TOOLS,
            [("get_weather", {"city": "Paris"}), ("search", {"query": "what is [TOOL_CALLS] ]"})],
            "On it.",
        ),
        (
            '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}, '
            '{"name": "search", "arguments": {}}]',
            TOOLS,
            [("get_weather", {"city": "Paris"}), ("search", {})],
            None,
        ),
        ("The [TOOL_CALLS] marker starts calls.", TOOLS, [], "The [TOOL_CALLS] marker starts calls."),
    ],
    "tagged": [
        (
            'Checking both.\n<TOOL_CALLS>\nget_weather {"city": "Paris"}\nsearch {"query": "a </TOOL_CALLS> b\\nc"}\n'
            "</TOOL_CALLS>",
            TOOLS,
            [("get_weather", {"city": "Paris"}), ("search", {"query": "a </TOOL_CALLS> b\nc"})],
            "Checking both.",
        ),
        (
            '<TOOL_CALLS>\nget_weather {"city": "Oslo"}\nsearch {"query": "a long query a long',
            TOOLS,
            [("get_weather", {"city": "Oslo"})],
            None,
        ),
    ],
}
EXTRA_CASES = [(fmt, *case) for fmt in sorted(EXTRA) for case in EXTRA[fmt]]


def test_extra_cases_name_registered_formats():
    assert set(EXTRA) <= set(FORMATS)


@pytest.mark.parametrize(
    ("fmt", "text", "tools", "calls", "content"), EXTRA_CASES, ids=[f"{c[0]}:{n}" for n, c in enumerate(EXTRA_CASES)]
)
def test_format_specific_cases(tokenizer, fmt, text, tools, calls, content):  # noqa: F811
    got = through_vllm(tokenizer, fmt, text, tools)
    assert pairs(got["calls"]) == calls
    if content is not None:
        assert got["content"] == content


def test_mistral_ids_are_its_own_and_a_model_written_id_is_kept(tokenizer):  # noqa: F811
    text, tools, _, _ = EXTRA["mistral_json"][0]
    got = through_vllm(tokenizer, "mistral_json", text, tools)
    assert MISTRAL_ID.fullmatch(got["calls"][0].id) and got["calls"][1].id == "abc123def"
    streamed = stream_through(tokenizer, text, make_request(tools), fmt="mistral_json")
    assert MISTRAL_ID.fullmatch(streamed["calls"][0]["id"]) and streamed["calls"][1]["id"] == "abc123def"
