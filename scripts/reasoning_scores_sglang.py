"""Reasoning and calls together, through SGLang's real serving layer: ours against SGLang's own.

For every format whose models reason in think blocks and each SGLang reasoning parser its models are
served with, the reasoning documents of `fuzzing.reasoning` (the scenarios but those whose prompt
closed the block, which SGLang cannot be told; and `--random N` fuzz documents per format) go
through `OpenAIServingChat.handle_request` (the harness of tests/test_e2e_sglang_serving.py: SGLang's
real argument parsing, our format's chat template, the model scripted), finished and streamed in
the token deltas of SmolLM2's tokenizer with the format's think and call markers added as tokens
(`tokenizer_for`).
A document passes when the finished and the streamed answer both equal what it expects (reasoning,
content, calls; the whitespace at the ends of reasoning and content aside); "agree" counts the
documents whose two answers are equal, right or not. Three compositions per row:

- ours: `--reasoning-parser F --tool-call-parser F` (F our format);
- SGLang: SGLang's reasoning parser with SGLang's tool parser for the format;
- SGLang + ours: SGLang's reasoning parser with our tool parser.

Where the document's prompt opened the block, SGLang must force reasoning; which request switch
does that differs per parser (`enable_thinking`, `thinking`, `thinking_mode`, `reasoning_effort`),
so the serving layer's one decision (`_get_reasoning_from_request`) is set from the document:
forced for "opened", not for "before". Parsers that hard-code it keep their own (`deepseek-r1`,
`minimax`, `qwen3-thinking`: always; `kimi`: never). Requests carry `reasoning_effort="high"`,
which picks K2 Horizon's `<ifm|think>` markers (the documents' first pair).

    python scripts/reasoning_scores_sglang.py [--formats a,b] [--random 10] [--show-cases]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzzing.reasoning import Doc, random_document, reasoning_formats, scenarios
from helpers import leaves_no_trace, token_chunks
from test_e2e_sglang_serving import ScriptedEngine, Stack, _respond, import_serving_chat
from toolcall_parsers import FORMATS, get_format, parse

Answer = tuple[str | None, str | None, list[tuple[str, Any]]]

GENERIC = "deepseek-r1"
"""SGLang's generic `<think>` parser, for a format whose models have no reasoning parser of their own
(the vLLM table uses vLLM's `deepseek_r1` likewise)."""

SGLANG_REASONING: dict[str, tuple[tuple[str, str | None], ...]] = {
    "apertus_json": (("apertus2509", "apertus2509"),),
    "cohere_json": (("cohere_command4", "cohere_command4"),),
    "deepseek_dsml": (("deepseek-v3", "deepseekv32"), ("deepseek-v4", "deepseekv4"), ("deepseek-v41", "deepseekv41")),
    "deepseek_json": (("deepseek-r1", "deepseekv3"), ("deepseek-v3", "deepseekv31")),
    "dots_xml": (("dots", "dots"),),
    "gemma_calls": (("gemma4", "gemma4"),),
    "gigachat_gcml": (("gigachat35", "gigachat35"),),
    "gigachat_json": ((GENERIC, "gigachat3"),),
    "glm_xml": (("glm45", "glm45"), ("ling3", "ling3"), ("poolside_v1", "poolside_v1")),
    "hermes_json": (("qwen3", "qwen"), ("qwen3-thinking", "qwen"), ("deepseek-r1", "hermes")),
    "hunyuan_xml": (("hunyuan", "hunyuan"),),
    "ifm_xml": (("k2_horizon", "k2_horizon"),),
    "internlm_json": (("interns1", "interns1"),),
    "iquest_xml": (("iquest_q1", "iquest_q1"),),
    "kimi_json": (("kimi_k2", "kimi_k2"),),
    "kimi_xtml": (("kimi_k3", "kimi_k3"),),
    "lfm2_pythonic": ((GENERIC, "lfm2"),),
    "llama_json": ((GENERIC, "llama3"),),
    "llama_pythonic": ((GENERIC, "pythonic"),),
    "minicpm5_xml": (("qwen3", "minicpm5"),),
    "minimax3_xml": (("minimax-m3", "minimax-m3"),),
    "minimax_xml": (("minimax", "minimax-m2"), ("minimax-append-think", "minimax-m2")),
    "mistral_json": (("mistral", "mistral"),),
    "qwen_xml": (
        ("qwen3", "qwen3_coder"),
        ("mimo", "mimo"),
        ("step3p5", "step3p5"),
        ("nanbeige", "nanbeige"),
        ("nemotron_3", "qwen3_coder"),
        ("granite_thinking_parser", "qwen3_coder"),
    ),
    "step3_xml": (("step3", "step3"),),
}
"""Our format -> (SGLang reasoning parser, SGLang tool parser) its models are served with, from
/work/shared/reference/reasoning-parsers-by-format.md (SGLang's registry and template detection);
a format missing here gets `GENERIC` and its first SGLang tool parser, if it has one."""


ENCODED = {"deepseekv32", "deepseekv4", "deepseekv41", "kimi_k3"}
"""SGLang tool parsers that switch its chat serving to a chat encoding adapter of its own (srt/
entrypoints/openai/chat_encoding.py `resolve_chat_encoding_spec`): the prompt is encoded and the
output read from token ids by SGLang's Python encoder, past both parsers; a scripted output cannot
be read that way, so those compositions are not scored."""


def pairs_for(fmt: str) -> tuple[tuple[str, str | None], ...]:
    names = FORMATS[fmt].sglang_names
    return SGLANG_REASONING.get(fmt) or ((GENERIC, names[0] if names else None),)


def miswritten(doc: Doc) -> bool:
    """The document's reasoning holds the block's closer outside any call: the closer would end the
    block there (xlam_json's first marker is `</think>`, which `marker_in_closed_prose` names as
    the call opener in its prose), so what it expects is not what its text says."""
    closers = [closer for _, closer in FORMATS[doc.fmt].think_pairs]
    reasoning = doc.reasoning or ""
    return any(closer in reasoning for closer in closers) and not parse(doc.fmt, reasoning).calls


def documents(fmt: str, count: int) -> list[Doc]:
    rng = random.Random(f"reasoning-{fmt}")
    docs = [d for d in scenarios(fmt) if d.start != "closed"] + [random_document(rng, fmt) for _ in range(count)]
    return [d for d in docs if not miswritten(d)]


def normal(answer: Answer) -> Answer:
    """Reasoning and content compared without the whitespace at their ends (SGLang's reasoning
    parsers keep a block's line breaks; a passthrough request keeps the content's)."""
    reasoning, content, calls = answer
    return (reasoning or "").strip() or None, (content or "").strip() or None, calls


class Compositions(Stack):
    """The harness's stack, with the tool parser chosen apart from the template's format: SGLang's
    parsers are served with our format's chat template too (the documents are scripted outputs)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._composed: dict[tuple[str, str, str], Any] = {}

    def tokenizer_for(self, fmt: str) -> Any:
        """SmolLM2's tokenizer with the format's own think and call markers as single tokens (its
        special tokens as special ones), and no other format's: some SGLang detectors find their
        markers in the vocabulary (Hunyuan's suffixed tags, which a bare `<think>` would shadow)."""
        from transformers import AutoTokenizer

        spec = FORMATS[fmt]
        tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        markers = [m for pair in spec.think_pairs for m in pair] + list(spec.markers)
        tokenizer.add_tokens([m for m in markers if m not in spec.special_tokens])
        if spec.special_tokens:
            tokenizer.add_special_tokens({"additional_special_tokens": list(spec.special_tokens)})
        return tokenizer

    def composed(self, fmt: str, tool: str, reasoning: str) -> Any:
        """`--tool-call-parser tool --reasoning-parser reasoning --chat-template <fmt's>`."""
        key = (fmt, tool, reasoning)
        if key not in self._composed:
            from sglang.srt.parser.template_manager import TemplateManager

            with leaves_no_trace():
                tokenizer = self.tokenizer_for(fmt)
                engine = ScriptedEngine(self.server_args, tokenizer, tool, reasoning)
                templates = TemplateManager()
                templates.initialize_templates(
                    engine, self.model_path, chat_template=str(get_format(fmt).template_path)
                )
                self._composed[key] = (self.serving_chat.OpenAIServingChat(engine, templates), engine)
        return self._composed[key]

    def answer(self, serving: Any, engine: Any, doc: Doc, stream: bool) -> Answer:
        from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

        tokenizer = engine.tokenizer
        deltas = token_chunks(lambda t: tokenizer.encode(t, add_special_tokens=False), tokenizer.decode, doc.text)
        engine.deltas, engine.finish = (deltas if stream else [doc.text]), "stop"
        serving._get_reasoning_from_request = lambda request: doc.start == "opened"
        messages = [{"role": "user", "content": "Go."}]
        request = ChatCompletionRequest(
            model="m",
            messages=messages,
            tools=doc.tools,
            tool_choice=doc.tool_choice,
            reasoning_effort="high",
            stream=stream,
        )
        with leaves_no_trace():
            got = asyncio.run(_respond(serving, request, stream))
        if "error" in got:
            raise RuntimeError(got["error"])
        calls = [(name, _arguments(arguments)) for _, name, arguments in got["calls"]]
        return normal((got["reasoning"], got["content"], calls))


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def passes(stack: Compositions, composition: Any, doc: Doc) -> tuple[bool, bool, str]:
    """Whether the composition answers `doc` right, finished and streamed; whether its two answers
    agree; why not, if not."""
    serving, engine = composition
    want = normal(doc.expected())
    try:
        done = stack.answer(serving, engine, doc, stream=False)
        streamed = stack.answer(serving, engine, doc, stream=True)
    except Exception as exc:  # an engine's parser raising is a failure of that composition
        return False, False, f"raised {type(exc).__name__}: {exc}"
    if done == streamed == want:
        return True, True, ""
    return False, done == streamed, f"finished {done!r}" + ("" if done == streamed else f"\n    streamed {streamed!r}")


def score(stack: Compositions, composition: Any, docs: list[Doc], label: str, show: bool) -> str:
    good = agree = 0
    for doc in docs:
        ok, same, why = passes(stack, composition, doc)
        good += ok
        agree += same
        if not ok and show:
            print(
                f"  {label}: {doc.name}: {why[:400]}\n    text={doc.text[:200]!r}\n    want={normal(doc.expected())!r}"
            )
    return f"{good}/{len(docs)} ({agree} agree)"


def new_stack() -> Compositions:
    """As the serving tests' fixture: plugins loaded before SGLang's arguments are parsed."""
    from prepare_model import ensure_model
    from sglang.srt.plugins import load_plugins

    model = str(ensure_model())
    load_plugins()
    with leaves_no_trace():
        serving_chat = import_serving_chat()
        from sglang.srt.runtime_context import publish
        from sglang.srt.server_args import prepare_server_args

        server_args = prepare_server_args(
            ["--model-path", model, "--device", "cpu", "--tool-call-parser", "hermes_json"]
        )
        publish(server_args, role="tokenizer")
    return Compositions(serving_chat, server_args, model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--formats", help="comma-separated formats (default: every think-block format)")
    parser.add_argument("--random", type=int, default=10, help="fuzz documents per format (default 10)")
    parser.add_argument("--show-cases", action="store_true", help="print each failing document")
    args = parser.parse_args()
    with leaves_no_trace():  # SGLang's first import sets process-wide variables: keep them out
        import sglang  # noqa: F401
    stack = new_stack()
    logging.disable(logging.CRITICAL)
    names = args.formats.split(",") if args.formats else reasoning_formats()
    print("| format | SGLang reasoning parser | docs | ours | SGLang | SGLang + ours |")
    print("|---|---|---|---|---|---|")
    for fmt in names:
        docs = documents(fmt, args.random)
        ours = score(stack, stack.composed(fmt, fmt, fmt), docs, f"{fmt} ours", args.show_cases)
        for reasoning, tool in pairs_for(fmt):
            engine = "-"
            if tool in ENCODED:
                engine = f"n/a ({tool}: SGLang's own encoder, not its parsers)"
            elif tool is not None:
                label = f"{fmt} {reasoning}+{tool}"
                engine = score(stack, stack.composed(fmt, tool, reasoning), docs, label, args.show_cases)
            mixed = score(stack, stack.composed(fmt, fmt, reasoning), docs, f"{fmt} {reasoning}+ours", args.show_cases)
            name = f"{reasoning} (+ {tool})" if tool else reasoning
            print(f"| {fmt} | {name} | {len(docs)} | {ours} | {engine} | {mixed} |", flush=True)


if __name__ == "__main__":
    main()
