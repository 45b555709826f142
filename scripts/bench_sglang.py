"""Our SGLang detectors against SGLang's own, in one run, through SGLang's real function-call layer.

Per-delta cost (the default): every detector runs inside `FunctionCallParser` as SGLang's serving
layer drives it (`parse_stream_chunk` per delta, `parse_stream_end` at the end), on the same
workloads as `scripts/bench.py` (one `write_file` call whose `content` is 1K..64K characters of code,
cut into the real token deltas of SmolLM2's tokenizer with the format's markers added as tokens).
`floor` is a detector that returns each delta as text; `floor_calls` returns each delta as the
arguments of one call (the least a detector that streams arguments costs). CPU microseconds per
delta, the best of `--repeat` runs; ratios against `floor`. A built-in whose next size would take
longer than `--budget` seconds (projected from its growth so far) is reported as too slow. Each
cell says whether the client got the model's arguments back (`ok`) or not (`wrong`).

    python scripts/bench_sglang.py [--sizes 1024,16384,65536] [--repeat 3] [--workloads hermes_json,...]

`--corpus` instead runs the corpus of every registered format (tests/corpus) through our detectors
and SGLang's built-ins for the same models (`BUILTINS`, the spec's `sglang_names`), as the serving
layer uses them (non-streaming behind `has_tool_call`; streaming folded as a client does), in four
modes (non-streaming, one character per delta, random 1-7 character deltas, SmolLM2 token deltas),
and counts the cases whose result equals the corpus's expected content (trimmed) and calls (names
and decoded arguments). Built-ins run with `SGLANG_FORWARD_UNKNOWN_TOOLS=1`, so calls to tools the
case does not declare do not count against them.

    python scripts/bench_sglang.py --corpus
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench import WORKLOADS, code_of_length, project, token_deltas, workload_tokenizer
from toolcall_parsers.formats import FORMATS

CLOCK = time.process_time
"""CPU time: machines here are shared, and a busy neighbour must not look like a parser's cost."""
FLOORS = ("floor", "floor_calls")
BUILTINS: dict[str, tuple[str, ...]] = {name: fmt.sglang_names for name, fmt in FORMATS.items() if fmt.sglang_names}
"""SGLang's own detectors for the models of each of ours (the spec's `sglang_names`). A format with
none is measured against the floors (and in the corpus, alone)."""
WRITE_FILE = {
    "type": "function",
    "function": {
        "name": "write_file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],  # the tool-block formats map the arguments by it
        },
    },
}


def setup_sglang() -> None:
    """Load SGLang's plugins (ours among them) and register the two floors."""
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins

    load_plugins()

    class PassThrough(BaseFormatDetector):
        def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
            return StreamingParseResult(normal_text=text)

        def has_tool_call(self, text: str) -> bool:
            return False

        def structure_info(self) -> Any:
            raise NotImplementedError

        def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
            return StreamingParseResult(normal_text=new_text)

    class PassThroughAsArguments(PassThrough):
        """Every delta becomes arguments of one call: the least a detector that streams calls costs."""

        started = False

        def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
            name = None if self.started else "write_file"
            self.started = True
            return StreamingParseResult(calls=[ToolCallItem(tool_index=0, name=name, parameters=new_text)])

    FunctionCallParser.ToolCallParserEnum["floor"] = PassThrough
    FunctionCallParser.ToolCallParserEnum["floor_calls"] = PassThroughAsArguments


def sglang_tools(tools: list[dict[str, Any]]) -> list[Any]:
    from sglang.srt.entrypoints.openai.protocol import Tool

    return [Tool.model_validate(t) for t in tools]


def run_stream(name: str, tools: list[Any], deltas: list[str], clock: Callable[[], float] = CLOCK) -> tuple[float, Any]:
    """Stream `deltas` through a fresh `FunctionCallParser`; the time, and what a client read."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    parser = FunctionCallParser(tools, name)
    out = []
    gc.collect()
    gc.disable()  # the results kept for checking would make the collector's passes grow with the run
    try:
        start = clock()
        for delta in deltas:
            out.append(parser.parse_stream_chunk(delta))
        out.append(parser.parse_stream_end())
        elapsed = clock() - start
    finally:
        gc.enable()
    return elapsed, fold(out)


def fold(results: list[tuple[str, list[Any]]]) -> tuple[str, list[tuple[str | None, str]]]:
    """What an OpenAI client accumulates: the content, and per index the name and the arguments."""
    content: list[str] = []
    calls: dict[int, list[Any]] = {}
    for text, items in results:
        content.append(text or "")
        for item in items:
            entry = calls.setdefault(item.tool_index, [None, ""])
            entry[0] = entry[0] or item.name
            entry[1] += item.parameters or ""
    return "".join(content), [(calls[i][0], calls[i][1]) for i in sorted(calls)]


def arguments_right(calls: list[tuple[str | None, str]], code: str) -> bool:
    try:
        return len(calls) == 1 and json.loads(calls[0][1])["content"] == code
    except (ValueError, KeyError, TypeError):
        return False


# -- per-delta cost --------------------------------------------------------------------------------


def run_workloads(args: argparse.Namespace) -> None:
    setup_sglang()
    sizes = [int(s) for s in args.sizes.split(",")]
    tools = sglang_tools([WRITE_FILE])
    for workload_name in args.workloads.split(","):
        workload = WORKLOADS[workload_name]
        tokenizer = workload_tokenizer(workload)
        names = [*FLOORS, workload.ours, *BUILTINS.get(workload.ours, ())]
        rows: dict[str, dict[int, tuple[float, bool] | str]] = {n: {} for n in names}
        history: dict[str, list[tuple[int, float]]] = {n: [] for n in names}
        for size in sizes:
            code = code_of_length(size)
            deltas = [text for text, _ in token_deltas(tokenizer, workload.text(code))]
            for name in names:
                projected = project(history[name], size)
                if projected is not None and projected > args.budget:
                    rows[name][size] = f"too slow (~{projected:.0f} s a run)"
                    continue
                runs = [run_stream(name, tools, deltas) for _ in range(args.repeat)]
                seconds = min(t for t, _ in runs)
                history[name].append((size, seconds))
                rows[name][size] = (seconds / len(deltas) * 1e6, arguments_right(runs[0][1][1], code))
            if not rows[workload.ours][size][1]:  # type: ignore[index]
                raise RuntimeError(f"{workload.ours}: streamed arguments differ from the model's")
            print(f"# {workload_name} {size:>6} chars: {len(deltas)} deltas", file=sys.stderr)
        print_table(workload_name, workload.ours, names, sizes, rows)


def print_table(title: str, ours: str, names: list[str], sizes: list[int], rows: dict[str, dict[int, Any]]) -> None:
    label = {s: f"{s // 1024}K" for s in sizes}
    print(f"\n{title}: CPU microseconds per delta (ratio to floor), through SGLang's FunctionCallParser\n")
    print("| detector | " + " | ".join(label[s] for s in sizes) + f" | {label[sizes[-1]]} / {label[sizes[0]]} |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for name in names:
        cells = []
        for size in sizes:
            cell = rows[name][size]
            if isinstance(cell, str):
                cells.append(cell)
                continue
            micros, right = cell
            verdict = "" if name in FLOORS else (" ok" if right else " wrong")
            cells.append(f"{micros:.1f} ({micros / rows['floor'][size][0]:.2f}x){verdict}")
        first, last = rows[name][sizes[0]], rows[name][sizes[-1]]
        growth = f"{last[0] / first[0]:.2f}x" if not isinstance(last, str) else "-"
        shown = f"**{name}**" if name == ours else f"SGLang `{name}`" if name not in FLOORS else name
        print(f"| {shown} | " + " | ".join(cells) + f" | {growth} |")
    for other in names[len(FLOORS) + 1 :]:
        ratios = [
            f"{label[s]} {rows[other][s][0] / rows[ours][s][0]:.1f}x"
            for s in sizes
            if not isinstance(rows[other][s], str)
        ]
        print(f"\n{ours} is faster than SGLang's {other} by: {', '.join(ratios)}")


# -- the corpus ------------------------------------------------------------------------------------

MODES = ("non-streaming", "chars", "random", "tokens")


def client_result(name: str, tools: list[Any], text: str, mode: str, deltas: list[str]) -> Any:
    """What a client reads from detector `name` for `text`: (content, [(name, arguments)])."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    if mode == "non-streaming":
        parser = FunctionCallParser(tools, name)
        if not parser.has_tool_call(text):  # serving_chat `_process_tool_calls`: the text stays
            return text, []
        content, calls = parser.parse_non_stream(text)
        return content, [(c.name, c.parameters) for c in calls]
    return run_stream(name, tools, deltas)[1]


def passes(result: Any, expected: dict[str, Any]) -> bool:
    content, calls = result
    try:
        got_calls = [{"name": n, "arguments": json.loads(a) if a else {}} for n, a in calls]
    except ValueError:
        return False
    return ((content or "").strip() or None, got_calls) == (expected["content"], expected["calls"])


CASE_SECONDS = 10
"""A detector that takes longer on one case and mode fails it (SGLang's `gemma4` loops, growing,
streaming `[[<|"|>a]b<|"|>, ..]`): the pass goes on."""


class _CaseTimeout(Exception):
    pass


def _out_of_time(signum: int, frame: Any) -> None:
    raise _CaseTimeout


def passes_safely(name: str, tools: list[Any], text: str, mode: str, deltas: list[str], expected: Any) -> bool:
    """`passes`, where a detector that raises (SGLang's `minimax-m3` raises a TypeError on some
    malformed nesting) or runs past CASE_SECONDS fails the case instead of ending the run."""
    previous = signal.signal(signal.SIGALRM, _out_of_time)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        return passes(client_result(name, tools, text, mode, deltas), expected)
    except _CaseTimeout:
        print(f"{name}: {mode}: no result in {CASE_SECONDS} s: {text[:60]!r}", file=sys.stderr)
        return False
    except Exception as err:  # any detector bug is a failed case, named once
        print(f"{name}: {mode}: raised {type(err).__name__}: {err}", file=sys.stderr)
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def corpus_counts(
    formats: list[str], modes: tuple[str, ...] = MODES, engine_tests: bool = False
) -> dict[str, dict[str, Any]]:
    """Per format and detector: cases passed per mode, in every mode, and the number of cases."""
    from helpers import load_corpus

    setup_sglang()
    base_tools = [WRITE_FILE, {"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    counts: dict[str, dict[str, Any]] = {}
    for fmt in formats:
        cases = load_corpus(fmt, engine_tests=engine_tests)
        tokenizer = workload_tokenizer(WORKLOADS[fmt])
        for name in (fmt, *BUILTINS.get(fmt, ())):
            per_mode = dict.fromkeys(modes, 0)
            every = 0
            for case in cases:
                text, tools = case["text"], sglang_tools(case["tools"] or base_tools)
                chunkings = {
                    "non-streaming": [text],
                    "chars": list(text),
                    "random": random_split(text, seed=0),
                    "tokens": [t for t, _ in token_deltas(tokenizer, text)] if text else [],
                }
                ok = [passes_safely(name, tools, text, m, chunkings[m], case["expected"]) for m in modes]
                for mode, good in zip(modes, ok, strict=True):
                    per_mode[mode] += good
                every += all(ok)
            counts.setdefault(fmt, {})[name] = {"modes": per_mode, "all": every, "cases": len(cases)}
    return counts


def random_split(text: str, seed: int, longest: int = 7) -> list[str]:
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(text):
        n = rng.randint(1, longest)
        chunks.append(text[i : i + n])
        i += n
    return chunks


def run_corpus(args: argparse.Namespace) -> None:
    os.environ["SGLANG_FORWARD_UNKNOWN_TOOLS"] = "1"
    counts = corpus_counts(args.formats.split(","), engine_tests=args.engine_tests)
    print("\nCorpus cases whose result equals the expected one, through SGLang's FunctionCallParser\n")
    print("| format | detector | " + " | ".join(MODES) + " | all modes |")
    print("|---|---|" + "---|" * (len(MODES) + 1))
    for fmt, detectors in counts.items():
        for name, c in detectors.items():
            cells = [f"{c['modes'][m]}/{c['cases']}" for m in MODES]
            shown = f"**{name}**" if name == fmt else f"SGLang `{name}`"
            print(f"| {fmt} | {shown} | " + " | ".join(cells) + f" | {c['all']}/{c['cases']} |")


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--sizes", default="1024,16384,65536")
    cli.add_argument("--repeat", type=int, default=3)
    cli.add_argument("--workloads", default=",".join(WORKLOADS))
    cli.add_argument("--budget", type=float, default=120, help="CPU seconds one run of a detector may take")
    cli.add_argument("--corpus", action="store_true", help="corpus pass counts instead of the per-delta tables")
    cli.add_argument("--formats", default=",".join(FORMATS), help="with --corpus")
    cli.add_argument("--engine-tests", action="store_true", help="with --corpus: only the engines' own test cases")
    args = cli.parse_args()
    if args.corpus:
        run_corpus(args)
    else:
        run_workloads(args)


if __name__ == "__main__":
    main()
