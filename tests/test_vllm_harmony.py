"""gpt-oss under vLLM: what a plugin can do on vLLM's Harmony path, in vLLM's real classes fed
gpt-oss's own tokens (`o200k_harmony`, through `openai_harmony`).

For a model whose config type is `gpt_oss`, the serving layer composes its parser with
`ParserManager.get_parser(..., is_harmony=True)`: that is vLLM's one `HarmonyParser` class whatever
`--tool-call-parser` names, it checks at startup that the tool parser is vLLM's stub
`GptOssToolParser` (`openai`), and it parses the token ids itself. So `harmony_json` is refused
there, and a class made to pass the check (our parser declared as a subclass of the stub) passes
it and is never called: the client gets vLLM's answer. No format of ours may therefore claim a
vLLM name that serves only there. vLLM 0.33.0 and 0.34.0 have the same Harmony path
(docs/vllm.md#gpt-oss-harmony). On vLLM's ordinary path (a model of another config type that
writes Harmony) the same tokens do reach `harmony_json`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from helpers import needs
from test_harmony_json import harmony_tokens  # noqa: F401
from test_vllm_adapter import complete_through, make_request, plugins, stream_through  # noqa: F401
from toolcall_parsers import FORMATS, parse

pytestmark = needs("vllm")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
REASONING = 'We need to use the get_weather function. Provide city "Berlin".'
OUTPUT = (
    f"<|channel|>analysis<|message|>{REASONING}<|end|>\n"
    '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Berlin"}'
)
"""gpt-oss-20b's output for a weather question (kekzl/imp PR #1719, the corpus case
`imp-1719-call-without-stop-token`): reasoning, then a call. Its stop token `<|call|>` ends the
generated ids; the text vLLM hands on leaves it out."""


def stubbed_harmony_json() -> type:
    """What a plugin could register to pass vLLM's Harmony check: our parser, declared a subclass
    of vLLM's stub."""
    from toolcall_parsers.vllm.parsers import HarmonyJsonToolParser
    from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser

    class StubbedHarmonyJson(HarmonyJsonToolParser, GptOssToolParser):
        pass

    return StubbedHarmonyJson


@pytest.fixture
def harmony_class_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """`get_parser(..., is_harmony=True)` writes the chosen classes onto vLLM's `HarmonyParser`
    itself; put them back after the test."""
    from vllm.parser.harmony import HarmonyParser

    for name in ("tool_parser_cls", "reasoning_parser_cls", "tool_strict_level"):
        monkeypatch.setattr(HarmonyParser, name, HarmonyParser.__dict__.get(name), raising=False)


def gpt_oss_parser(name: str, tokenizer: Any, request: Any) -> Any:
    """The parser vLLM's serving layer builds per request for a `gpt_oss` model under
    `--tool-call-parser name`, after its startup check with the served tokenizer."""
    from vllm.parser.parser_manager import ParserManager

    cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True, is_harmony=True, tokenizer=tokenizer)
    return cls(tokenizer, request.tools, model_config=None)


def harmony_answers(name: str, tokenizer: Any, request: Any, ids: Sequence[int]) -> tuple[Any, ...]:
    """(finished answer, streamed answer, our parser inside it fed?) of vLLM's Harmony path: the
    finished (reasoning, content, calls) and the stream's one token per delta, folded."""
    finished = gpt_oss_parser(name, tokenizer, request)
    reasoning, content, calls = finished.parse(
        tokenizer.decode(list(ids)), request, enable_auto_tools=True, model_output_token_ids=ids
    )
    streaming = gpt_oss_parser(name, tokenizer, request)
    streamed: dict[str, Any] = {"content": "", "calls": {}}
    for i, token in enumerate(ids):
        delta = streaming.parse_delta(
            tokenizer.decode([token]), [token], request, prompt_token_ids=[1], finished=i == len(ids) - 1
        )
        streamed["content"] += (delta and delta.content) or ""
        for call in (delta and delta.tool_calls) or []:
            streamed["calls"].setdefault(call.index, [call.function.name, ""])[1] += call.function.arguments or ""
    fed = any(
        getattr(p.tool_parser, "_stream", None) is not None or getattr(p.tool_parser, "prev_tool_call_arr", None)
        for p in (finished, streaming)
    )
    calls_now = [(c.name, json.loads(c.arguments)) for c in calls or []]
    streamed_calls = [(n, json.loads(a)) for n, a in streamed["calls"].values()]
    return (reasoning, content, calls_now), (streamed["content"] or None, streamed_calls), fed


def test_no_format_claims_a_name_vllm_serves_only_on_its_harmony_path():
    """A vLLM name whose parser is the stub `GptOssToolParser` does nothing outside vLLM's Harmony
    path, where no plugin parser runs: an operator could not put ours in its place."""
    from vllm.tool_parsers import ToolParserManager
    from vllm.tool_parsers.gptoss_tool_parser import GptOssToolParser

    registered = set(ToolParserManager.list_registered())
    claimed = [
        (fmt, name)
        for fmt, spec in FORMATS.items()
        for name in registered.intersection(spec.vllm_names)
        if issubclass(ToolParserManager.get_tool_parser(name), GptOssToolParser)
    ]
    assert claimed == []


def test_vllm_refuses_harmony_json_for_gpt_oss_at_startup(harmony_tokens, harmony_class_restored):  # noqa: F811
    from vllm.parser.harmony import HarmonyParser
    from vllm.parser.parser_manager import ParserManager

    with pytest.raises(TypeError, match="Harmony requires GptOssToolParser, got HarmonyJsonToolParser"):
        gpt_oss_parser("harmony_json", harmony_tokens, make_request(TOOLS))
    # The path looks no parser up by a name of its own: whatever is named, it is vLLM's one class.
    assert ParserManager.get_parser(tool_parser_name="openai", enable_auto_tools=True, is_harmony=True) is HarmonyParser


def test_a_subclass_of_the_stub_passes_the_check_and_is_never_called(
    harmony_tokens,  # noqa: F811
    harmony_class_restored,
    monkeypatch,
):
    """Registered and composed as a plugin's parser would be, the subclass passes vLLM's startup
    check; vLLM's Harmony parser then reads the tokens itself, so the client gets exactly what
    `openai` gives (here: the reasoning dropped, as no reasoning parser is named) and our parser
    inside is never fed, finished or streamed."""
    from vllm.tool_parsers import ToolParserManager

    monkeypatch.setitem(ToolParserManager.tool_parsers, "harmony_json_as_stub", stubbed_harmony_json())
    request = make_request(TOOLS)
    ids = harmony_tokens.encode(OUTPUT + "<|call|>")
    finished, streamed, fed = harmony_answers("harmony_json_as_stub", harmony_tokens, request, ids)
    assert not fed
    assert (finished, streamed, fed) == harmony_answers("openai", harmony_tokens, request, ids)
    assert finished == (None, None, [("get_weather", {"city": "Berlin"})]) and streamed == finished[1:]
    ours = parse("harmony_json", harmony_tokens.decode(ids), TOOLS)
    assert ours.content == f"<|channel|>analysis<|message|>{REASONING}<|end|>"  # what ours would have said


@pytest.mark.parametrize("group", [1, 4])
def test_the_same_tokens_reach_harmony_json_on_vllms_ordinary_path(harmony_tokens, group):  # noqa: F811
    """A model of another config type that writes Harmony: vLLM's usual composition runs ours on
    gpt-oss's token deltas, finished and streamed alike; the reasoning message is content with its
    markup (the channel formats read reasoning themselves, and vLLM's `openai_gptoss` reasoning
    parser works only inside the Harmony path)."""
    request = make_request(TOOLS)
    _, content, calls = complete_through(harmony_tokens, OUTPUT, request, fmt="harmony_json")
    assert content == f"<|channel|>analysis<|message|>{REASONING}<|end|>"
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", {"city": "Berlin"})]
    streamed = stream_through(harmony_tokens, OUTPUT, request, group=group, fmt="harmony_json")
    assert streamed["content"] == content
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == [(c.name, c.arguments) for c in calls]
