"""Our detectors through SGLang's real OpenAI serving layer, end to end but for the model.

`OpenAIServingChat.handle_request` runs as in a server: SGLang's real argument parsing and config
(`prepare_server_args`, `publish`), the SmolLM2 model folder's real config and tokenizer, our chat
template loaded by SGLang's `TemplateManager` (`--chat-template`), request validation, prompt
rendering, the tool-call constraint turned into sampling parameters, then `_generate_chat_stream` /
`_build_chat_response` with `FunctionCallParser`, the stream-end flush, the unstreamed-arguments
check, finish reasons and SSE chunks. Only the model is missing: `ScriptedEngine` stands in for
SGLang's TokenizerManager (the part that talks to the scheduler) and plays a given output, as
accumulated text (SGLang's default) or as deltas (`incremental_streaming_output`). What a client
reads must equal our own `parse()`.

No SGLang server starts on this CPU machine (its model runner needs a GPU build); the GPU check is
`scripts/gpu_smoke.py --engine sglang`.
"""

from __future__ import annotations

import asyncio
import enum
import importlib.machinery
import json
import re
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from helpers import corpus_cases, corpus_ids, leaves_no_trace, needs, run_chunks, token_chunks
from test_sglang_adapter import BASE_TOOLS, PROSE, REQUIRED_SAMPLES, accepts
from toolcall_parsers import FORMATS, get_format, parse
from toolcall_parsers.core.events import CallEnd, CallStart
from toolcall_parsers.toolbox.openai_stream import StreamFold

pytestmark = [needs("sglang"), pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")]

CASES = corpus_cases()
INCREMENTAL = {(fmt, case["id"]) for fmt in FORMATS for case in [c for f, c in CASES if f == fmt][::3]}
"""The cases also streamed in the serving layer's incremental mode: one in three per format (every case
is streamed in its default mode, and every chunking is proven on the detector)."""
SGLANG_ID = re.compile(r"call_[0-9a-f]{24}")


def import_serving_chat() -> Any:
    """Import `sglang.srt.entrypoints.openai.serving_chat`. Through SGLang's model configs it
    imports `torchvision` at module level (`multimodal/internvl_utils.py`), which cannot be
    installed next to vLLM's CPU torch (PyPI's torchvision is built for CUDA torch and breaks
    `import vllm`). Nothing on the chat and tool-call path uses it, so an empty placeholder stands
    in during this import only, and is removed after; transformers' own torchvision checks run
    first, against the real environment."""
    import transformers.models.auto.processing_auto  # noqa: F401

    def placeholder(name: str) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__path__ = []
        return module

    class InterpolationMode(enum.Enum):
        BICUBIC = "bicubic"

    names = ("torchvision", "torchvision.transforms", "torchvision.transforms.functional")
    root, transforms, functional = (placeholder(n) for n in names)
    root.transforms, transforms.functional = transforms, functional
    transforms.InterpolationMode = functional.InterpolationMode = InterpolationMode
    installed = {n: sys.modules[n] for n in names if n in sys.modules}
    sys.modules.update(zip(names, (root, transforms, functional), strict=True))
    try:
        from sglang.srt.entrypoints.openai import serving_chat
    finally:
        for name in names:
            sys.modules.pop(name, None)
        sys.modules.update(installed)
    return serving_chat


class ScriptedEngine:
    """Stands in for SGLang's TokenizerManager: keeps what the serving layer reads of it (config,
    tokenizer, model config) and answers `generate_request` with the scripted output, the way the
    real one streams it (accumulated text, or deltas with `incremental_streaming_output`)."""

    def __init__(self, server_args: Any, tokenizer: Any, tool_call_parser: str, reasoning_parser: str | None) -> None:
        from sglang.srt.configs.model_config import ModelConfig

        self.server_args = server_args
        self.tokenizer = tokenizer
        self.model_config = ModelConfig.from_server_args(server_args)
        self.served_model_name = "m"
        self.request_logger = types.SimpleNamespace(log_requests=False, log_requests_level=0)
        self.parsers = {"tool_call_parser": tool_call_parser, "reasoning_parser": reasoning_parser}
        self.requests: list[Any] = []
        self.deltas: list[str] = []
        self.finish = "stop"

    def config_value(self, name: str) -> Any:
        from sglang.srt.runtime_context import get_context

        return self.parsers[name] if name in self.parsers else get_context().config_leaf(name)

    def create_abort_task(self, request: Any) -> None:
        return None

    async def generate_request(self, adapted_request: Any, raw_request: Any):
        from sglang.srt.runtime_context import get_serving

        self.requests.append(adapted_request)
        deltas = self.deltas or [""]
        finish = {"type": self.finish, "matched": 2 if self.finish == "stop" else None}
        meta = {"id": "chatcmpl-1", "prompt_tokens": 1, "weight_version": "default"}
        if not adapted_request.stream:
            yield {"index": 0, "text": "".join(deltas), "meta_info": {**meta, "finish_reason": finish}}
            return
        incremental = get_serving().incremental_streaming_output
        sent = ""
        for i, delta in enumerate(deltas):
            sent += delta
            last = i == len(deltas) - 1
            info = {**meta, "completion_tokens": i + 1, "finish_reason": finish if last else None}
            yield {"index": 0, "text": delta if incremental else sent, "meta_info": info}


class Stack:
    """One `OpenAIServingChat` per format, over a shared server config and tokenizer."""

    def __init__(self, serving_chat: Any, server_args: Any, model_path: str) -> None:
        self.serving_chat, self.server_args, self.model_path = serving_chat, server_args, model_path
        self.tokenizer = self.new_tokenizer()
        self._servings: dict[tuple[str, str | None], tuple[Any, ScriptedEngine]] = {}

    def new_tokenizer(self) -> Any:
        """SmolLM2's tokenizer with the formats' markers as single tokens (special where Mistral's
        are); one per format, since SGLang's TemplateManager installs the chat template into it."""
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        tokenizer.add_tokens(
            ["<think>", "</think>", "<tool_call>", "</tool_call>", "<minimax:tool_call>", "</minimax:tool_call>"]
        )
        tokenizer.add_special_tokens({"additional_special_tokens": ["[TOOL_CALLS]", "[ARGS]"]})
        return tokenizer

    def serving(self, fmt: str, reasoning: str | None = None) -> tuple[Any, ScriptedEngine]:
        """The serving layer of a server started with `--tool-call-parser fmt --chat-template <ours>`
        (and `--reasoning-parser reasoning`)."""
        if (fmt, reasoning) not in self._servings:
            from sglang.srt.parser.template_manager import TemplateManager

            with leaves_no_trace():
                engine = ScriptedEngine(self.server_args, self.new_tokenizer(), fmt, reasoning)
                templates = TemplateManager()
                template = str(get_format(fmt).template_path)
                templates.initialize_templates(engine, self.model_path, chat_template=template)
                serving = self.serving_chat.OpenAIServingChat(engine, templates)
            self._servings[fmt, reasoning] = (serving, engine)
        return self._servings[fmt, reasoning]

    def run(
        self,
        fmt: str,
        deltas: list[str],
        stream: bool,
        finish: str = "stop",
        reasoning: str | None = None,
        **request: Any,
    ) -> dict[str, Any]:
        """One request through `handle_request`; returns what the client read."""
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

        serving, engine = self.serving(fmt, reasoning)
        engine.deltas, engine.finish = deltas, finish
        fields = {"model": "m", "messages": [{"role": "user", "content": "Go."}], "tools": BASE_TOOLS, **request}
        chat_request = ChatCompletionRequest(**fields, stream=stream)
        with leaves_no_trace():  # SGLang's request path sets environment variables too (torch's cache dir)
            response = asyncio.run(_respond(serving, chat_request, stream))
        if "error" in response:
            return response
        response["prompt"] = engine.tokenizer.decode(engine.requests[-1].input_ids)
        response["sampling_params"] = engine.requests[-1].sampling_params
        return response


async def _respond(serving: Any, request: Any, stream: bool) -> dict[str, Any]:
    response = await serving.handle_request(request, None)
    if not hasattr(response, "choices") and not hasattr(response, "body_iterator"):
        return {"error": json.loads(response.body)["message"]}
    if not stream:
        choice = response.choices[0]
        calls = [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
        return {
            "content": choice.message.content or None,
            "reasoning": choice.message.reasoning_content or None,
            "calls": calls,
            "finish_reason": choice.finish_reason,
        }
    fold = StreamFold()  # the toolbox's one accumulator: it checks OpenAI's delta rules
    async for event in response.body_iterator:
        for line in event.split("\n"):
            if line.startswith("data: ") and line != "data: [DONE]":
                fold.add_chunk(json.loads(line[len("data: ") :]))
    assert not fold.problems, fold.problems
    return {
        "content": fold.content,
        "reasoning": fold.reasoning,
        "calls": [(c.id, c.name, c.arguments) for c in fold.calls],
        "finish_reason": fold.finish,
    }


@pytest.fixture(scope="module")
def stack(smollm2_dir):
    from sglang.srt.plugins import load_plugins

    load_plugins()  # as launch_server does, before its arguments are parsed
    with leaves_no_trace():
        serving_chat = import_serving_chat()
        from sglang.srt.runtime_context import publish
        from sglang.srt.server_args import prepare_server_args

        args = ["--model-path", str(smollm2_dir), "--device", "cpu", "--tool-call-parser", "hermes_json"]
        server_args = prepare_server_args(args)
        publish(server_args, role="tokenizer")
    return Stack(serving_chat, server_args, str(smollm2_dir))


def check_client(got: dict[str, Any], fmt: str, text: str, tools: list[dict[str, Any]], mode: str) -> None:
    expected = parse(fmt, text, tools)
    assert got["content"] == expected.content, mode
    shown = got["calls"]
    assert all(SGLANG_ID.fullmatch(c[0]) for c in shown) and len({c[0] for c in shown}) == len(shown), mode
    # A call streamed past the policy's bound that then broke cannot be taken back (the vLLM test
    # compares the same way): which shown calls finished depends on the text only, not the chunking.
    events = run_chunks(fmt, [text], tools)
    started = [e.index for e in events if isinstance(e, CallStart)]
    finished = {e.index for e in events if isinstance(e, CallEnd)}
    if mode == "complete":
        started = sorted(finished)
    finished_calls = [c[1:] for i, c in zip(started, shown, strict=True) if i in finished]
    assert finished_calls == [(c.name, c.arguments_json) for c in expected.calls], mode
    all_finished = len(finished) == len(started)
    assert got["finish_reason"] == ("tool_calls" if shown and all_finished else "stop"), mode


@pytest.mark.parametrize(("fmt", "case"), CASES, ids=corpus_ids(CASES))
def test_corpus_through_the_serving_layer(stack, fmt, case):
    from sglang.srt.runtime_context import get_serving

    text, tools = case["text"], case["tools"] or BASE_TOOLS
    got = stack.run(fmt, [text], stream=False, tools=tools)
    if "error" in got:  # SGLang validates the request's tool schemas first (the corpus has broken ones)
        assert "invalid 'parameters' schema" in got["error"] and case["id"] == "garbage-schemas"
        return
    check_client(got, fmt, text, tools, "complete")
    tokens = token_chunks(lambda t: stack.tokenizer.encode(t, add_special_tokens=False), stack.tokenizer.decode, text)
    # any chunking is proven on the detector (tests/test_sglang_adapter.py); here the serving path
    check_client(stack.run(fmt, tokens, stream=True, tools=tools), fmt, text, tools, "tokens")
    if (fmt, case["id"]) in INCREMENTAL:
        with get_serving().override(incremental_streaming_output=True):
            check_client(stack.run(fmt, tokens, stream=True, tools=tools), fmt, text, tools, "tokens, incremental")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("request_fields", [{"tool_choice": "none"}, {"tools": None}])
def test_text_passes_untouched_without_tool_calling(stack, fmt, request_fields):
    text = f"  Here: {REQUIRED_SAMPLES[fmt][0]}  "
    for stream in (False, True):
        got = stack.run(fmt, list(text), stream=stream, **request_fields)
        assert (got["content"], got["calls"], got["finish_reason"]) == (text, [], "stop")


MINIMAX_CALL = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Oslo</parameter>\n</invoke>\n'
MINIMAX_CALL += "</minimax:tool_call>"
HERMES_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
KIMI_CALL = FORMATS["kimi_json"].write([("get_weather", {"city": "Oslo"})])


@pytest.mark.parametrize(
    ("fmt", "reasoning", "text"),
    [
        ("hermes_json", "qwen3", "<think>The user wants Oslo.</think>\n\nLet me look.\n" + HERMES_CALL),
        ("hermes_json", "deepseek-r1", "<think>I could use " + HERMES_CALL + " here.</think>\n\nThe answer is 4."),
        ("minimax_xml", "minimax", "Wants weather.\n</think>\n\nOk.\n" + MINIMAX_CALL),
        ("kimi_json", "kimi_k2", "<think>The user wants Oslo.</think>Let me look." + KIMI_CALL),
    ],
)
def test_with_a_reasoning_parser(stack, fmt, reasoning, text):
    """SGLang's reasoning parser runs first; ours reads what it leaves, streamed and not alike."""
    results = [stack.run(fmt, list(text), stream=s, reasoning=reasoning) for s in (False, True)]
    for got in results:
        after = text.split("</think>")[-1]
        expected = parse(fmt, after, BASE_TOOLS)
        assert got["content"] == expected.content
        assert [c[1:] for c in got["calls"]] == [(c.name, c.arguments_json) for c in expected.calls]
        assert got["reasoning"] and "Oslo" not in (got["content"] or "")
    assert [{k: v for k, v in r.items() if k in ("content", "reasoning")} for r in results] == [
        {"content": results[0]["content"], "reasoning": results[0]["reasoning"]}
    ] * 2


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_cut_off_output_keeps_finish_reason_length(stack, fmt):
    """A call cut by `max_tokens` (its text cut where parse() finds no call): text, and "length"."""
    written = "Checking.\n" + REQUIRED_SAMPLES[fmt][0]
    text = next(written[:n] for n in range(len(written) - 1, 0, -1) if not parse(fmt, written[:n], BASE_TOOLS).calls)
    expected = parse(fmt, text, BASE_TOOLS).content
    for stream in (False, True):
        got = stack.run(fmt, list(text), stream=stream, finish="length")
        assert (got["content"], got["calls"], got["finish_reason"]) == (expected, [], "length")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("choice", ["required", "named"])
def test_required_and_named_through_the_serving_layer(stack, fmt, choice):
    """The constraint SGLang derives for the request is compiled by its real xgrammar backend (over
    the same tokenizer) and accepts what the template teaches; our detector reads that output."""
    from sglang.srt.constrained.xgrammar_backend import XGrammarGrammarBackend

    tool_choice = "required" if choice == "required" else {"type": "function", "function": {"name": "get_weather"}}
    sample = REQUIRED_SAMPLES[fmt][0]
    expected = [(c.name, c.arguments_json) for c in parse(fmt, sample, BASE_TOOLS).calls]
    own = FORMATS[fmt].required_constraint is not None
    if not own:  # no grammar of its own: SGLang's JSON array, read by SGLang's own parser
        ((name, arguments),) = [(c.name, c.arguments) for c in parse(fmt, sample, BASE_TOOLS).calls]
        sample = json.dumps([{"name": name, "parameters": arguments}])
    for stream in (False, True):
        got = stack.run(fmt, list(sample), stream=stream, tool_choice=tool_choice)
        assert [c[1:] for c in got["calls"]] == expected, stream
        assert got["content"] is None and got["finish_reason"] == "tool_calls"
    params = got["sampling_params"]
    if not own:
        assert "get_weather" in params["json_schema"]
        return
    backend = XGrammarGrammarBackend(stack.tokenizer, vocab_size=len(stack.tokenizer))
    assert accepts(backend, stack.tokenizer, params["structural_tag"], sample)
    assert not accepts(backend, stack.tokenizer, params["structural_tag"], PROSE)


def test_mistral_ids_and_the_second_turn(stack):
    """SGLang gives a Mistral model's calls its own `call_<24 hex>` ids; sent back in the next turn,
    our template cuts them to Mistral's nine letters and digits (call and result alike), which
    mistral-common's own validator accepts and the raw id fails."""
    from mistral_common.exceptions import InvalidFunctionCallException, InvalidToolMessageException
    from mistral_common.protocol.instruct.messages import AssistantMessage, ToolMessage, UserMessage
    from mistral_common.protocol.instruct.tool_calls import FunctionCall, ToolCall
    from mistral_common.protocol.instruct.validator import MistralRequestValidatorV11, ValidationMode

    first = stack.run("mistral_json", [REQUIRED_SAMPLES["mistral_json"][0]], stream=False)
    [(call_id, name, arguments)] = first["calls"]
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
    ]  # fmt: skip
    second = stack.run("mistral_json", ["It is sunny."], stream=False, messages=messages)
    [sent_id] = re.findall(r"\[CALL_ID\](.*?)\[ARGS\]", second["prompt"])
    assert re.findall(r"\[TOOL_RESULTS\](.*?)\[TOOL_CONTENT\]", second["prompt"]) == [sent_id]
    assert sent_id == call_id.replace("_", "")[-9:]

    def history(tool_id: str) -> list[Any]:
        call = ToolCall(id=tool_id, function=FunctionCall(name=name, arguments=arguments))
        return [
            UserMessage(content="Weather in Paris?"),
            AssistantMessage(tool_calls=[call]),
            ToolMessage(tool_call_id=tool_id, content="sunny"),
        ]

    validator = MistralRequestValidatorV11(ValidationMode.serving)
    validator.validate_messages(history(sent_id))
    with pytest.raises((InvalidFunctionCallException, InvalidToolMessageException)):
        validator.validate_messages(history(call_id))


def test_the_torchvision_placeholder_is_gone_after_the_import(stack):
    assert "torchvision" not in sys.modules or getattr(sys.modules["torchvision"], "__file__", None)


def test_multi_tokenizer_workers_register_through_the_app_path():
    """With `--tokenizer-worker-num` > 1 SGLang's HTTP workers import the app by path
    (`SGLANG_HTTP_SERVER_APP_PATH`) and never run `load_plugins()`. In a fresh process, as such a
    worker: our app path registers the detectors and is SGLang's own app."""
    tests = Path(__file__).resolve().parent
    code = f"""
import sys
sys.path.insert(0, {str(tests)!r})
from test_e2e_sglang_serving import import_serving_chat
import_serving_chat()  # the torchvision placeholder, for this CPU machine only
from sglang.srt.function_call.function_call_parser import FunctionCallParser
assert "hermes_json" not in FunctionCallParser.ToolCallParserEnum
from uvicorn.importer import import_from_string
app = import_from_string("toolcall_parsers.sglang.app:app")
from sglang.srt.entrypoints import http_server
assert app is http_server.app
print(sorted(n for n in {list(FORMATS)!r} if n in FunctionCallParser.ToolCallParserEnum))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == str(sorted(FORMATS))
