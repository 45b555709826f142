"""harmony_json behaviour: what is gpt-oss's own (the corpus, the properties and the adapter tests
every format gets prove the rest): gpt-oss's chat template (its history read back, `detect` on it),
its real tokens (`o200k_harmony`, through `openai_harmony`), which recipients are calls, SGLang's
`gpt-oss` reasoning parser in front of ours, and vLLM's Harmony path, which no tool parser serves."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse
from toolcall_parsers.formats import harmony_json as harmony

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
]
CALL = '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Oslo"}'
"""A call as gpt-oss writes it (the channel first); the engines keep or drop the stop token `<|call|>`."""


@pytest.fixture(scope="module")
def smollm2():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(ensure_model())


@pytest.fixture(scope="module")
def harmony_tokens():
    """gpt-oss's tokenizer, from `openai_harmony` (a dependency of vLLM): its special tokens are single tokens."""
    openai_harmony = pytest.importorskip("openai_harmony")
    encoding = openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)

    class Tokens:
        def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
            return encoding.encode(text, allowed_special="all")

        def decode(self, ids: list[int], **_: object) -> str:
            return encoding.decode(ids)

    tokens = Tokens()
    for marker in harmony.FORMAT.special_tokens:
        assert len(tokens.encode(marker)) == 1, marker
    return tokens


def test_gpt_oss_template_history_reads_back(smollm2, model_template, harmony_tokens):
    """gpt-oss's template writes a call as `<|start|>assistant to=functions.NAME<|channel|>commentary
    json<|message|>{..}<|call|>`; the reply's first message continues the generation prompt."""
    history = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "get_weather",
                                                                               "arguments": {"city": "Paris"}}}]},
    ]  # fmt: skip
    template = model_template("openai-gpt-oss-120b")
    prompt = smollm2.apply_chat_template(
        history[:1], chat_template=template, tokenize=False, add_generation_prompt=True
    )
    full = smollm2.apply_chat_template(history, chat_template=template, tokenize=False)
    assert full.startswith(prompt) and prompt.endswith("<|start|>assistant")
    turn = full[len(prompt) :]
    assert turn.startswith(" to=functions.get_weather<|channel|>commentary json<|message|>")
    result = both_paths("harmony_json", turn, TOOLS, harmony_tokens)
    assert calls_of(result) == [("get_weather", {"city": "Paris"})] and result.content is None


def test_detect_names_this_format_for_gpt_oss_template(smollm2, model_template):
    from toolcall_parsers.detect import detect_template

    assert detect_template(smollm2, model_template("openai-gpt-oss-120b"), "gpt-oss").parser == "harmony_json"


def test_a_whole_turn_in_real_tokens(harmony_tokens):
    """Reasoning, a preamble, two calls and the answer, in gpt-oss's own token deltas."""
    text = (
        "<|channel|>analysis<|message|>Need weather, then search.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        f"{CALL}<|call|>"
        "<|start|>assistant to=functions.search<|channel|>commentary json<|message|>"
        '{"query": "Oslo \\"events\\""}<|call|>'
        "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
    )
    result = both_paths("harmony_json", text, TOOLS, harmony_tokens, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"}), ("search", {"query": 'Oslo "events"'})]
    assert result.content == (
        "<|channel|>analysis<|message|>Need weather, then search.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"
    )


@pytest.mark.parametrize(
    ("recipient", "name"),
    [
        ("functions.get_weather", "get_weather"),
        ("functions.a.b", "a.b"),
        ("get_weather", "get_weather"),  # gpt-oss drops `functions.` at times; vLLM reads the bare name
        ("math.sum", "math.sum"),
        ("functions.", None),
        ("assistant", None),
        ("user", None),
        ("python", None),
        ("browser.search", None),
        ("container.exec", None),
    ],
)
def test_which_recipients_are_calls(recipient, name):
    text = f'<|start|>assistant<|channel|>commentary to={recipient} json<|message|>{{"a": 1}}<|call|>'
    assert harmony.function_name(recipient) == name
    assert calls_of(parse("harmony_json", text)) == ([(name, {"a": 1})] if name else [])


@pytest.mark.parametrize(
    "header",
    [
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>",
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        "<|start|>assistant<|channel|>analysis to=functions.get_weather<|message|>",
        " to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>",
    ],
)
def test_every_header_spelling(header, harmony_tokens):
    result = both_paths("harmony_json", header + '{"city": "Oslo"}<|call|>', TOOLS, harmony_tokens)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})] and result.content is None


def test_bare_header_only_at_the_output_start():
    text = 'Sure. to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Oslo"}<|call|>'
    assert parse("harmony_json", text, TOOLS).calls == []
    assert parse("harmony_json", text, TOOLS).content == text


def test_the_stop_token_may_be_missing_and_text_may_follow():
    """vLLM and SGLang drop the stop token `<|call|>` unless told otherwise: the complete arguments
    end the call; anything written after them is content."""
    assert calls_of(parse("harmony_json", CALL, TOOLS)) == [("get_weather", {"city": "Oslo"})]
    result = parse("harmony_json", CALL + " Done.", TOOLS)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})] and result.content == "Done."


SGLANG_CASES = [
    (
        "<|channel|>analysis<|message|>The user wants Oslo.<|end|>" + CALL + "<|call|>",
        ("The user wants Oslo.", None, [("get_weather", {"city": "Oslo"})]),
    ),
    (
        "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Hello there.<|return|>",
        ("Easy.", "Hello there.", []),
    ),
]


@pytest.mark.parametrize(("text", "expected"), SGLANG_CASES, ids=["call", "answer"])
def test_with_sglangs_gpt_oss_reasoning_parser(text, expected, harmony_tokens):
    """`--reasoning-parser gpt-oss --tool-call-parser harmony_json`: SGLang's reasoning parser takes
    the analysis and the answers' markup out and hands the call's message on as written (with its
    `<|call|>`: SGLang's own detokenizer keeps that stop token only for its `gpt-oss` parser). In
    gpt-oss's token deltas only: that reasoning parser loses the message split inside a token."""
    from helpers import through_sglang_reasoning, tokenizer_chunks
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    chunkings = [tokenizer_chunks(harmony_tokens, text), [text]]
    assert through_sglang_reasoning("gpt-oss", "harmony_json", sglang_tools(TOOLS), text, chunkings) == expected


def test_vllm_serves_gpt_oss_only_through_its_own_harmony_parser(smollm2):
    """For a model whose config type is `gpt_oss`, vLLM 0.32 builds its Harmony parser around the
    tool parser and refuses any but its stub `openai`, at startup: no plugin parser serves there."""
    pytest.importorskip("vllm")
    from vllm.parser.parser_manager import ParserManager
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    with pytest.raises(TypeError, match="Harmony requires GptOssToolParser"):
        ParserManager.get_parser(
            tool_parser_name="harmony_json", enable_auto_tools=True, is_harmony=True, tokenizer=smollm2
        )
    served = ParserManager.get_parser(tool_parser_name="harmony_json", enable_auto_tools=True, tokenizer=smollm2)
    assert served is not None  # any other model type: the usual path, with this parser


def test_arguments_written_twice_encoded_are_the_object():
    text = harmony.write([("get_weather", {})]).replace("{}", '"{\\"city\\": \\"Oslo\\"}"')
    assert json.loads(parse("harmony_json", text, TOOLS).calls[0].arguments_json) == {"city": "Oslo"}
