"""How vLLM's built-in parsers score on our corpus, next to ours, through vLLM's real parser stack.

For each format, its corpus (tests/corpus/NAME.jsonl) runs through our parser and each vLLM built-in
that serves the same models (the spec's `vllm_names`), as the server runs them: `ParserManager`
classes, `parse()` for a finished response and `parse_delta()` per delta for a stream, folded as a
client does (content concatenated, each call's name and argument fragments joined). A case counts
when the result equals the case's expected content (trimmed) and calls (names and decoded
arguments). Modes: finished, one character per delta (a special token of the format whole), and
token deltas of SmolLM2's tokenizer with the format's markers added as tokens (special where the
models' are), as in scripts/bench.py.

    python scripts/corpus_scores.py [--formats kimi_json,...] [--cases] [--engine-tests]

`--engine-tests` counts only the cases transcribed from vLLM's and SGLang's own parser tests.

SGLang's detectors on the same corpus: `python scripts/bench_sglang.py --corpus`.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench import WORKLOADS, token_deltas, workload_tokenizer
from bench_sglang import passes  # the same rule for both engines' scores
from toolcall_parsers.formats import FORMATS

MODES = ("finished", "chars", "tokens")
BASE_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]


def _request(tools: list[dict[str, Any]]) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=tools)


def finished(parser_cls: Any, tokenizer: Any, tools: list[dict[str, Any]], text: str) -> tuple[Any, list[Any]]:
    request = _request(tools)
    parser = parser_cls(tokenizer, request.tools, model_config=None)
    _, content, calls = parser.parse(text, request, enable_auto_tools=True)
    return content, [(c.name, c.arguments) for c in calls or []]


def streamed(
    parser_cls: Any, tokenizer: Any, tools: list[dict[str, Any]], deltas: list[tuple[str, list[int]]]
) -> tuple[Any, list[Any]]:
    request = _request(tools)
    parser = parser_cls(tokenizer, request.tools, model_config=None)
    content, calls = "", {}
    for i, (text, ids) in enumerate(deltas):
        message = parser.parse_delta(text, ids, request, prompt_token_ids=[1], finished=i == len(deltas) - 1)
        if message is None:
            continue
        content += message.content or ""
        for call in message.tool_calls or []:
            name, arguments = calls.get(call.index, (None, ""))
            function = call.function
            calls[call.index] = (
                name or (function.name if function else None),
                arguments + ((function.arguments or "") if function else ""),
            )
    return content, [calls[i] for i in sorted(calls)]


def char_deltas(tokenizer: Any, text: str, specials: re.Pattern[str]) -> list[tuple[str, list[int]]]:
    """One delta per character, but a special token of the format is one delta with its one id: a
    model emits it as that token, never spelled out (a format that tells them apart, as
    `mistral_json` does by token id, reads a spelled-out marker as prose)."""
    deltas: list[tuple[str, list[int]]] = []
    pos = 0
    for m in specials.finditer(text):
        deltas += [(c, tokenizer.encode(c, add_special_tokens=False)) for c in text[pos : m.start()]]
        deltas.append((m.group(), tokenizer.encode(m.group(), add_special_tokens=False)))
        pos = m.end()
    return deltas + [(c, tokenizer.encode(c, add_special_tokens=False)) for c in text[pos:]]


def scores(fmt: str, show_cases: bool = False, engine_tests: bool = False) -> dict[str, dict[str, int]]:
    """Per parser (ours first): cases passed per mode and in every mode."""
    from helpers import load_corpus
    from vllm.parser.parser_manager import ParserManager

    tokenizer = workload_tokenizer(WORKLOADS[fmt])
    specials = re.compile(
        "|".join(map(re.escape, sorted(FORMATS[fmt].special_tokens, key=len, reverse=True))) or "(?!)"
    )
    counts: dict[str, dict[str, int]] = {}
    for name in (fmt, *FORMATS[fmt].vllm_names):
        parser_cls = ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True, tokenizer=tokenizer)
        row = dict.fromkeys((*MODES, "all"), 0)
        for case in load_corpus(fmt, engine_tests=engine_tests):
            text, tools = case["text"], case["tools"] or BASE_TOOLS
            ok = {}
            for mode in MODES:
                try:
                    if mode == "finished":
                        result = finished(parser_cls, tokenizer, tools, text)
                    else:
                        deltas = char_deltas(tokenizer, text, specials) if mode == "chars" else None
                        result = streamed(parser_cls, tokenizer, tools, deltas or token_deltas(tokenizer, text))
                    ok[mode] = passes(result, case["expected"])
                except Exception:  # a built-in that raises fails the case
                    ok[mode] = False
                row[mode] += ok[mode]
            row["all"] += all(ok.values())
            if show_cases and not all(ok.values()):
                print(f"  {name} {case['id']}: " + " ".join(m for m in MODES if not ok[m]), file=sys.stderr)
        counts[name] = row
    return counts


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    with_builtins = ",".join(name for name, fmt in FORMATS.items() if fmt.vllm_names)
    cli.add_argument("--formats", default=with_builtins)
    cli.add_argument("--cases", action="store_true", help="name the cases each parser gets wrong (stderr)")
    cli.add_argument("--engine-tests", action="store_true", help="only the cases from the engines' own tests")
    args = cli.parse_args()
    logging.disable(logging.CRITICAL)
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    print("| format | parser | cases | " + " | ".join(MODES) + " | all modes |")
    print("|---|---|---|" + "---|" * (len(MODES) + 1))
    for fmt in args.formats.split(","):
        from helpers import load_corpus

        total = len(load_corpus(fmt, engine_tests=args.engine_tests))
        for name, row in scores(fmt, args.cases, args.engine_tests).items():
            shown = f"**{name}**" if name == fmt else f"vLLM `{name}`"
            cells = " | ".join(f"{row[m]}" for m in (*MODES, "all"))
            print(f"| {fmt} | {shown} | {total} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
