"""Reasoning and calls together, through vLLM's real composition: ours against the engine's.

For every format whose models reason in think blocks and each vLLM reasoning parser its models are
served with, the reasoning documents of `fuzzing.reasoning` (the scenarios, and `--random N` fuzz
documents per format) go through `ParserManager.get_parser(tool_parser_name=..,
reasoning_parser_name=..)`, finished (`parse`) and streamed (`parse_delta`, one token per delta of
SmolLM2's tokenizer with the format's markers and think markers added as tokens, the prompt's token
ids those of a chat template that leaves reasoning where the document says). A document passes when
the finished and the streamed answer both equal what it expects (reasoning, content, calls; the
whitespace at the ends of reasoning and content aside); "agree" counts the documents whose two
answers are equal, right or not. Three compositions per row:

- ours: `--reasoning-parser F --tool-call-parser F` (F our format);
- engine: the engine's reasoning parser with the engine's tool parser for the format;
- engine + ours: the engine's reasoning parser with our tool parser.

    python scripts/reasoning_scores.py [--formats a,b] [--random 20] [--show-cases]
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench import WORKLOADS, token_deltas, workload_tokenizer
from fuzzing.reasoning import Doc, random_document, reasoning_formats, scenarios
from toolcall_parsers.formats import FORMATS
from toolcall_parsers.toolbox.openai_stream import StreamFold

Answer = tuple[str | None, str | None, list[tuple[str, Any]]]

ENGINE_REASONING: dict[str, tuple[str, ...]] = {
    "apertus_json": (),
    "cohere_json": ("cohere_command3", "cohere_command4"),
    "deepseek_dsml": ("deepseek_v4", "deepseek_v41", "deepseek_r1"),
    "deepseek_json": ("deepseek_r1", "deepseek_v3"),
    "dots_xml": ("qwen3",),
    "gemma_calls": ("gemma4",),
    "gigachat_gcml": ("deepseek_r1",),
    "gigachat_json": ("deepseek_r1",),
    "glm_xml": ("glm45", "glm47", "ling3", "poolside_v1"),
    "granite_fc_json": ("granite",),
    "granite_json": ("granite",),
    "hermes_json": ("qwen3", "deepseek_r1", "ernie45"),
    "hunyuan_xml": ("hy_v3", "hy_v4"),
    "ifm_xml": ("k2_horizon",),
    "internlm_json": ("deepseek_r1",),
    "iquest_xml": ("deepseek_r1",),
    "jamba_json": ("hunyuan_a13b",),
    "kimi_json": ("kimi_k2",),
    "kimi_xtml": ("kimi_k3",),
    "lfm2_pythonic": ("deepseek_r1",),
    "llama_json": ("deepseek_r1",),
    "llama_pythonic": ("deepseek_r1", "olmo3"),
    "longcat_json": ("deepseek_r1",),
    "markdown_tools": ("deepseek_r1",),
    "minicpm5_xml": ("qwen3",),
    "minimax3_xml": ("minimax_m3",),
    "minimax_xml": ("minimax_m2", "minimax_m2_append_think"),
    "mistral_json": ("mistral",),
    "olmo3_pythonic": ("olmo3",),
    "phi4_json": ("deepseek_r1",),
    "plamo_json": ("plamo3",),
    "qwen_xml": ("qwen3", "mimo", "step3p5"),
    "seed_xml": ("seed_oss",),
    "step3_xml": ("step3",),
    "tagged": ("deepseek_r1",),
    "xlam_json": ("deepseek_r1",),
    "xml_tools": ("deepseek_r1",),
}
"""Our format -> the vLLM reasoning parsers its models are served with (the family's own; for a
family with none, `deepseek_r1`, vLLM's generic `<think>` parser)."""


def reasoning_tokenizer(fmt: str) -> Any:
    """The bench's tokenizer of the format with its think markers added as single tokens."""
    tokenizer = workload_tokenizer(WORKLOADS[fmt])
    spec = FORMATS[fmt]
    markers = [m for pair in spec.think_pairs for m in pair if m not in spec.special_tokens]
    tokenizer.add_tokens(markers)
    return tokenizer


def chat_template(doc: Doc) -> str:
    """A ChatML template whose generation prompt leaves reasoning where `doc.start` says."""
    opener, closer = FORMATS[doc.fmt].think_markers
    tail = {"before": "", "opened": f"{opener}\n", "closed": f"{opener}\n\n{closer}\n\n"}[doc.start]
    return (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n" + tail.replace("{", "{{ '{' }}") + "{% endif %}"
    )


def request_for(doc: Doc) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    extra: dict[str, Any] = {"tools": doc.tools}
    if doc.tools is not None:
        extra["tool_choice"] = doc.tool_choice
    return ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", **extra)


def normal(answer: Answer) -> Answer:
    """Reasoning and content compared without the whitespace at their ends (the engines' reasoning
    parsers keep a block's line breaks; a passthrough request keeps the content's)."""
    reasoning, content, calls = answer
    return (reasoning or "").strip() or None, (content or "").strip() or None, calls


def build(parser_cls: Any, tokenizer: Any, request: Any) -> Any:
    """The parser for one request, as vLLM's chat serving layer builds it (`_make_parser`): with the
    request's template arguments, which hold `add_generation_prompt` and the like besides the
    request's own."""
    kwargs = request.build_chat_params(None, "auto").chat_template_kwargs
    return parser_cls(tokenizer, request.tools, chat_template_kwargs=kwargs, model_config=None)


def finished(parser_cls: Any, tokenizer: Any, doc: Doc) -> Answer:
    request = request_for(doc)
    parser = build(parser_cls, tokenizer, request)
    reasoning, content, calls = parser.parse(doc.text, request, enable_auto_tools=True)
    return normal((reasoning, content, [(c.name, _arguments(c.arguments)) for c in calls or []]))


def streamed(parser_cls: Any, tokenizer: Any, doc: Doc, deltas: list[tuple[str, list[int]]] | None = None) -> Answer:
    request = request_for(doc)
    parser = build(parser_cls, tokenizer, request)
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": "x"}], add_generation_prompt=True, tokenize=False
    )
    prompt = tokenizer.encode(rendered, add_special_tokens=False)
    fold = StreamFold()
    deltas = deltas or token_deltas(tokenizer, doc.text)
    for i, (text, ids) in enumerate(deltas):
        last = i == len(deltas) - 1
        fold.add_delta(parser.parse_delta(text, list(ids), request, prompt_token_ids=prompt, finished=last))
    if fold.problems:  # a delta a client could not rebuild (an id or name repeated, an index skipped)
        raise AssertionError(f"stream breaks OpenAI's delta rules: {fold.problems}")
    called = [(call.name, _arguments(call.arguments)) for call in fold.calls]
    return normal((fold.reasoning, fold.content, called))


def _arguments(text: str) -> Any:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return text


def composed(tool: str, reasoning: str, tokenizer: Any) -> Any:
    from vllm.parser.parser_manager import ParserManager

    return ParserManager.get_parser(
        tool_parser_name=tool, reasoning_parser_name=reasoning, enable_auto_tools=True, tokenizer=tokenizer
    )


def passes(parser_cls: Any, tokenizer: Any, doc: Doc) -> tuple[bool, bool, str]:
    """Whether the composition answers `doc` right, finished and streamed; whether its two answers
    agree; why not, if not."""
    tokenizer.chat_template = chat_template(doc)
    want = normal(doc.expected())
    try:
        done = finished(parser_cls, tokenizer, doc)
        stream = streamed(parser_cls, tokenizer, doc)
    except Exception as exc:  # an engine's parser raising is a failure of that composition
        return False, False, f"raised {type(exc).__name__}: {exc}"
    if done == stream == want:
        return True, True, ""
    return False, done == stream, f"finished {done!r}" + ("" if done == stream else f"\n    streamed {stream!r}")


def documents(fmt: str, count: int) -> list[Doc]:
    rng = random.Random(f"reasoning-{fmt}")
    return scenarios(fmt) + [random_document(rng, fmt) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--formats", help="comma-separated formats (default: every think-block format)")
    parser.add_argument("--random", type=int, default=20, help="fuzz documents per format (default 20)")
    parser.add_argument("--show-cases", action="store_true", help="print each failing document")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    names = args.formats.split(",") if args.formats else reasoning_formats()
    print("| format | vLLM reasoning parser | docs | ours | engine | engine + ours |")
    print("|---|---|---|---|---|---|")
    for fmt in names:
        tokenizer = reasoning_tokenizer(fmt)
        docs = documents(fmt, args.random)
        ours = _score(composed(fmt, fmt, tokenizer), tokenizer, docs, f"{fmt} ours", args.show_cases)
        for reasoning in ENGINE_REASONING.get(fmt) or ("-",):
            if reasoning == "-":
                print(f"| {fmt} | - | {len(docs)} | {ours} | - | - |")
                continue
            engine_tools = FORMATS[fmt].vllm_names[:1]
            engine = "-"
            if engine_tools:
                cls = _try(composed, engine_tools[0], reasoning, tokenizer)
                engine = _score(cls, tokenizer, docs, f"{fmt} {reasoning}+{engine_tools[0]}", args.show_cases)
            cls = _try(composed, fmt, reasoning, tokenizer)
            mixed = _score(cls, tokenizer, docs, f"{fmt} {reasoning}+ours", args.show_cases)
            label = f"{reasoning} (+ {engine_tools[0]})" if engine_tools else reasoning
            print(f"| {fmt} | {label} | {len(docs)} | {ours} | {engine} | {mixed} |")


def _try(build: Any, *args: Any) -> Any:
    try:
        return build(*args)
    except Exception as exc:
        return exc


def _score(parser_cls: Any, tokenizer: Any, docs: list[Doc], label: str, show: bool) -> str:
    if isinstance(parser_cls, Exception):
        return f"refused ({type(parser_cls).__name__})"
    good = agree = 0
    for doc in docs:
        ok, same, why = passes(parser_cls, tokenizer, doc)
        good += ok
        agree += same
        if not ok and show:
            want = normal(doc.expected())
            print(f"  {label}: {doc.name}: {why[:400]}\n    text={doc.text[:200]!r}\n    want={want!r}")
    return f"{good}/{len(docs)} ({agree} agree)"


if __name__ == "__main__":
    main()
