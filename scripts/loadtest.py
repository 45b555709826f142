"""Load test for a vLLM OpenAI-compatible server running one of our tool-call parsers.

Many requests at once, streamed and not, each forcing an exact raw model output through vLLM's
structured outputs (a regex of the text, `tool_choice="auto"`, temperature 0), so the real
detokenizer, serving layer and parser run on real token deltas under concurrency. Every answer is
compared exactly with `toolcall_parsers.parse(FORMAT, raw, tools)`: content, calls (name and decoded
arguments), finish reason, and for streams OpenAI's delta rules. The point is to catch what unit tests
cannot: state shared between requests, parsers built per process, memory that grows with traffic.

    python scripts/loadtest.py --base-url http://127.0.0.1:8000/v1 --parser hermes_json
    python scripts/loadtest.py --start hermes_json --concurrency 64 --requests 1000
    python scripts/loadtest.py --start hermes_json --server-args "--api-server-count 2"

Exit status 0 only when every request finished without error or mismatch. Only 127.0.0.1 / localhost
servers are accepted: the tool is meant for a server you started, not for someone else's.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import shlex
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
from toolcall_parsers import FORMATS, ParseResult, parse
from toolcall_parsers.core.events import CallStart
from toolcall_parsers.core.logs import logs_silenced
from toolcall_parsers.detect import PROBE_TOOLS
from toolcall_parsers.toolbox.forced import forced_body
from toolcall_parsers.toolbox.openai_stream import fold_async_stream

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))  # prepare_model, vllm_server (imported only by --start)

LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
MESSAGES = [{"role": "user", "content": "What is the weather in Paris? Also search the web."}]
TOOLS = PROBE_TOOLS  # two tools: one with an optional integer, one with a string
# Quotes, a backslash, newlines, markers of every format, non-ASCII and an astral character: what
# breaks escaping, string-awareness and byte-split detokenization. No tab or `&~#`: their escaped regex
# forms depend on the structured-output backend, which is not what this test is about.
LONG = (
    'She said "meet at 5" and left.\nPath: C:\\temp\\x\n'
    "Markers as data: </tool_call> [TOOL_CALLS] </TOOL_CALLS> </invoke> ] } )\n"
    "Unicode: café Münster 東京 😀 — done."
)
Call = tuple[str, dict[str, Any]]
CALL_A: Call = ("get_weather", {"city": "Paris", "days": 3})
CALL_B: Call = ("search", {"query": "vLLM tool parsers"})
CALL_LONG: Call = ("search", {"query": LONG})


# -- the pool of raw outputs -------------------------------------------------------------------
# Every format's calls are written by its spec's one writer (`Format.write`); its malformed outputs
# come from its corpus file (`tests/corpus/<name>.jsonl`: cases that expect no call), chosen by what
# an eager stream does with them, else from a cut of its own written text. Nothing here names a format.

CORPUS = ROOT / "tests" / "corpus"
UNFORCEABLE = frozenset("\t\r&~#")
"""Characters whose escaped regex forms depend on the structured-output backend (see `LONG`)."""
MALFORMED_MAX = 300
"""Longest malformed sample taken from a corpus file (characters): a few dozen tokens to force."""


def readable(fmt: str, call: Call) -> Call:
    """`call` as the format can write it for `TOOLS`: whole, or, for formats that fill only a tool's
    positional parameters (gptme's blocks: its required strings, in order), just those."""
    if _reads_back(fmt, call):
        return call
    name, arguments = call
    schema = next(t["function"]["parameters"] for t in TOOLS if t["function"]["name"] == name)
    positional = [
        key
        for key in schema.get("required", [])
        if schema["properties"].get(key, {}).get("type") == "string" and key in arguments
    ]
    narrowed = (name, {key: arguments[key] for key in positional})
    if not _reads_back(fmt, narrowed):
        raise SystemExit(f"{fmt}: its writer does not read back {call} nor {narrowed}")
    return narrowed


def _reads_back(fmt: str, call: Call) -> bool:
    with logs_silenced():
        result = parse(fmt, FORMATS[fmt].write([call]), TOOLS)
    return [(c.name, c.arguments) for c in result.calls] == [call]


def announces_a_call(fmt: str, text: str) -> bool:
    """Does an eager stream (one that shows a call as soon as it is named) start a call in `text`?"""
    stream = FORMATS[fmt].stream(TOOLS, streaming="eager")
    with logs_silenced():
        events = [e for char in text for e in stream.feed(char)] + stream.close()
    return any(isinstance(e, CallStart) for e in events)


def _no_call(fmt: str, text: str) -> bool:
    with logs_silenced():
        return not parse(fmt, text, TOOLS).calls


def _corpus_texts(fmt: str) -> list[str]:
    """The format's corpus cases that expect no call and that a forced decode can write, shortest
    first: malformed, unfinished and look-alike blocks."""
    path = CORPUS / f"{fmt}.jsonl"
    if not path.exists():
        return []
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = {
        case["text"]
        for case in cases
        if not case["expected"]["calls"]
        and 0 < len(case["text"]) <= MALFORMED_MAX
        and not UNFORCEABLE & set(case["text"])
        and case["text"].strip() == case["text"]
    }
    return sorted(texts, key=lambda t: (len(t), t))


def _cuts(fmt: str) -> list[str]:
    """Prefixes of the format's own text for one call, longest first: a generic break."""
    written = FORMATS[fmt].write([readable(fmt, CALL_A)])
    return [written[:cut].rstrip() for cut in range(len(written) - 1, 0, -1) if written[:cut].strip()]


def malformed(fmt: str) -> tuple[str, str]:
    """Two broken outputs of `fmt` that hold no call: one whose call never starts (no name is ever
    announced, even by an eager stream), and one that an eager stream announces before it breaks
    (the default, exact policy must hold it back: the known streaming gap, counted apart unless
    --strict-malformed). From the corpus where it has them, else cuts of the format's own text."""
    markers, names = FORMATS[fmt].markers, [t["function"]["name"] for t in TOOLS]
    never = starts = None
    for text in [*_corpus_texts(fmt), *_cuts(fmt)]:
        if (never is not None and starts is not None) or not _no_call(fmt, text):
            continue
        if announces_a_call(fmt, text):
            starts = starts or text
        elif never is None and any(word in text for word in (*markers, *names)):  # a call was meant
            never = text
    if never is None or starts is None:
        raise SystemExit(f"{fmt}: no malformed sample found (corpus or cuts of its text)")
    return never, starts


@dataclass(frozen=True)
class Entry:
    """One raw model output of the pool, with the calls it is written to contain."""

    name: str
    raw: str
    intended: tuple[Call, ...] = ()
    known_gap: bool = False


def pool(fmt: str) -> list[Entry]:
    """The fixed pool of raw outputs for a format: the shapes a client meets, and two broken ones."""
    write = FORMATS[fmt].write
    call_a, call_b, call_long = (readable(fmt, call) for call in (CALL_A, CALL_B, CALL_LONG))
    never_starts, starts_then_breaks = malformed(fmt)
    return [
        Entry("plain", "Paris is sunny today, 21 °C. No tool needed."),
        Entry("one_call", "Let me check.\n" + write([call_a]), (call_a,)),
        Entry("two_calls", write([call_a, call_b]), (call_a, call_b)),
        Entry("long_string", "Searching for that.\n" + write([call_long]), (call_long,)),
        Entry("malformed", "I tried.\n" + never_starts),
        Entry("malformed_started", starts_then_breaks, known_gap=True),
    ]


def expected_results(fmt: str, entries: list[Entry]) -> list[ParseResult]:
    """parse() of each entry: the reference every answer is compared with. Fails when parse() itself
    does not find the calls an entry was written with (then the parser, not the server, is wrong)."""
    results = []
    for entry in entries:
        with logs_silenced():  # the malformed entries are logged, by design
            result = parse(fmt, entry.raw, TOOLS)
        found = tuple((c.name, c.arguments) for c in result.calls)
        if found != entry.intended:
            raise SystemExit(
                f"parse({fmt!r}) of pool entry {entry.name!r} found {found}, written with {entry.intended}"
            )
        results.append(result)
    return results


# -- one request ---------------------------------------------------------------------------------


@dataclass
class Seen:
    """What a client got: the message content, calls as (id, name, arguments text), finish reason."""

    content: str | None
    calls: list[tuple[str | None, str | None, str]]
    finish: str | None
    tokens: int = 0
    delta_problems: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    """One request: its pool entry and mode, how long it took, and what went wrong, if anything."""

    entry: str
    streamed: bool
    latency: float
    tokens: int = 0
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    known_gap: bool = False


def _describe(exc: BaseException) -> str:
    """The exception and its causes: the openai client wraps the transport error that explains it."""
    parts: list[str] = []
    cause: BaseException | None = exc
    while cause is not None and len(parts) < 4:
        parts.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__ or cause.__context__
    return " <- ".join(parts)[:500]


def _request(model: str, raw: str, max_tokens: int) -> dict[str, Any]:
    return {
        "model": model,
        "messages": MESSAGES,
        "tools": TOOLS,
        "tool_choice": "auto",
        "temperature": 0,
        "max_tokens": max_tokens,
        "extra_body": forced_body(raw),
    }


async def fetch_plain(client: openai.AsyncOpenAI, model: str, raw: str, max_tokens: int) -> Seen:
    response = await client.chat.completions.create(**_request(model, raw, max_tokens))
    choice = response.choices[0]
    calls = [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
    tokens = response.usage.completion_tokens if response.usage else 0
    return Seen(choice.message.content, calls, choice.finish_reason, tokens)


async def fetch_stream(client: openai.AsyncOpenAI, model: str, raw: str, max_tokens: int) -> Seen:
    """Stream and rebuild the message the way a client does, noting every breach of OpenAI's delta
    rules (the toolbox's one accumulator, `openai_stream`)."""
    stream = await client.chat.completions.create(
        **_request(model, raw, max_tokens), stream=True, stream_options={"include_usage": True}
    )
    fold = await fold_async_stream(stream)
    calls = [(c.id, c.name, c.arguments) for c in fold.calls]
    return Seen(fold.content or "", calls, fold.finish, fold.tokens, list(fold.problems))


def compare(expected: ParseResult, seen: Seen) -> list[str]:
    """Differences between what the client got and parse(): content (stripped as parse() strips it, so
    None and "" are the same answer), (name, arguments) pairs, finish reason, ids."""
    problems = list(seen.delta_problems)
    content = (seen.content or "").strip() or None
    if content != expected.content:
        problems.append(f"content {content!r} != {expected.content!r}")
    got: list[Call] = []
    for _, name, arguments in seen.calls:
        try:
            got.append((name or "", json.loads(arguments)))
        except json.JSONDecodeError:
            problems.append(f"arguments of {name!r} are not JSON: {arguments!r}")
    want = [(c.name, c.arguments) for c in expected.calls]
    if got != want:
        problems.append(f"calls {got!r} != {want!r}")
    ids = [i for i, _, _ in seen.calls]
    if not all(ids) or len(set(ids)) != len(ids):
        problems.append(f"call ids missing or repeated: {ids}")
    finish = "tool_calls" if expected.calls else "stop"
    if seen.finish != finish:
        problems.append(f"finish_reason {seen.finish!r} != {finish!r}")
    return problems


# -- the load ---------------------------------------------------------------------------------------


@dataclass
class Options:
    """One run; the defaults are the command line's (timeouts in seconds)."""

    fmt: str
    model: str | None = None
    concurrency: int = 64
    requests: int = 1000
    seed: int = 0
    timeout: float = 300.0
    deadline: float = 3600.0
    max_tokens: int = 400
    strict_malformed: bool = False
    server_pid: int | None = None
    progress: bool = True


def make_plan(entries: list[Entry], requests: int, seed: int) -> list[tuple[int, bool]]:
    """(entry index, streamed) for each request: every entry in both modes equally often, shuffled."""
    combos = [(i, streamed) for i in range(len(entries)) for streamed in (False, True)]
    plan = [combos[n % len(combos)] for n in range(requests)]
    random.Random(seed).shuffle(plan)
    return plan


class Progress:
    """tqdm when it is installed, else one stderr line rewritten at most once a second."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.done, self.enabled, self._last = total, 0, enabled, 0.0
        self._bar = None
        if enabled:
            with contextlib.suppress(ImportError):
                from tqdm import tqdm

                self._bar = tqdm(total=total, file=sys.stderr, unit="req", mininterval=1.0, dynamic_ncols=True)

    def update(self, errors: int, mismatches: int) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.set_postfix(errors=errors, mismatches=mismatches, refresh=False)
            self._bar.update(1)
        elif self.enabled and (time.monotonic() - self._last >= 1.0 or self.done == self.total):
            self._last = time.monotonic()
            print(f"\r{self.done}/{self.total} errors={errors} mismatches={mismatches}", end="", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            print(file=sys.stderr)


async def run_requests(
    client: openai.AsyncOpenAI, model: str, opts: Options, entries: list[Entry], expected: list[ParseResult]
) -> tuple[list[Outcome], float]:
    """Run the plan with `concurrency` requests in flight; stop starting new ones at the deadline and
    cancel what is still running then. Returns the outcomes and the wall time."""
    plan = iter(make_plan(entries, opts.requests, opts.seed))
    outcomes: list[Outcome] = []
    progress = Progress(opts.requests, opts.progress)
    counts = {"errors": 0, "mismatches": 0}
    start = time.monotonic()
    deadline = start + opts.deadline

    async def one(index: int, streamed: bool) -> Outcome:
        entry, t0 = entries[index], time.monotonic()
        outcome = Outcome(entry.name, streamed, 0.0, known_gap=entry.known_gap)
        fetch = fetch_stream if streamed else fetch_plain
        try:
            seen = await asyncio.wait_for(fetch(client, model, entry.raw, opts.max_tokens), opts.timeout)
            outcome.tokens = seen.tokens
            outcome.problems = compare(expected[index], seen)
        except asyncio.CancelledError:
            outcome.error = "cancelled at the overall deadline"
            raise
        except Exception as exc:  # any failure of one request is counted, never fatal
            outcome.error = _describe(exc)
        finally:
            outcome.latency = time.monotonic() - t0
            outcomes.append(outcome)
            counts["errors"] += outcome.error is not None
            counts["mismatches"] += bool(outcome.problems) and (opts.strict_malformed or not entry.known_gap)
            progress.update(counts["errors"], counts["mismatches"])
        return outcome

    async def worker() -> None:
        for index, streamed in plan:
            if time.monotonic() >= deadline:
                return
            await one(index, streamed)

    workers = [asyncio.create_task(worker()) for _ in range(opts.concurrency)]
    _, pending = await asyncio.wait(workers, timeout=max(0.0, deadline - time.monotonic()))
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    progress.close()
    return outcomes, time.monotonic() - start


# -- the server's memory ------------------------------------------------------------------------------


def _listens_on(proc: Any, port: int | None) -> bool:
    import psutil

    try:
        return any(c.laddr and c.laddr.port == port and c.status == "LISTEN" for c in proc.net_connections("tcp"))
    except psutil.Error:
        return False


def server_processes(base_url: str, pid: int | None) -> list[Any]:
    """The server's processes: `pid` and its descendants, else every process holding the listening
    socket of the URL's port, and their descendants. Asked per process because with several API
    servers the parent and each child share one socket, which a system-wide table gives to one PID."""
    try:
        import psutil
    except ImportError:
        return []
    if pid is not None:
        roots = [psutil.Process(pid)]
    else:
        port = urlsplit(base_url).port
        roots = [proc for proc in psutil.process_iter() if _listens_on(proc, port)]
    found: dict[int, Any] = {}
    for root in roots:
        with contextlib.suppress(psutil.Error):
            for proc in [root, *root.children(recursive=True)]:
                found[proc.pid] = proc
    return list(found.values())


def rss_mib(base_url: str, pid: int | None) -> dict[str, Any] | None:
    """Summed RSS of the server's processes (shared pages count once per process, as `ps` shows)."""
    procs = server_processes(base_url, pid)
    if not procs:
        return None
    import psutil

    per_process = {}
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            per_process[f"{proc.pid} {proc.name()}"] = round(proc.memory_info().rss / 2**20, 1)
    return {"total": round(sum(per_process.values()), 1), "processes": per_process}


# -- putting it together -------------------------------------------------------------------------------


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _latency_ms(outcomes: list[Outcome]) -> dict[str, float | None]:
    """Nearest-rank percentiles of the requests that finished without error."""
    values = [o.latency * 1000 for o in outcomes if o.error is None]
    quantiles = {"p50": 0.5, "p95": 0.95, "max": 1.0}
    return {k: None if (v := _percentile(values, q)) is None else round(v) for k, q in quantiles.items()}


def summarize(opts: Options, base_url: str, model: str, outcomes: list[Outcome], wall: float) -> dict[str, Any]:
    """The figures of a run, with a few examples of what went wrong (entry, mode, the differences)."""
    gap = [o for o in outcomes if o.problems and o.known_gap and not opts.strict_malformed]
    bad = [o for o in outcomes if o.problems and not (o.known_gap and not opts.strict_malformed)]
    errors = [o for o in outcomes if o.error]
    done = [o for o in outcomes if o.error is None]
    examples = [f"{o.entry} streamed={o.streamed}: {o.error}" for o in errors[:3]]
    examples += [f"{o.entry} streamed={o.streamed}: {'; '.join(o.problems)}" for o in bad[:5]]
    examples += [f"(known gap) {o.entry} streamed={o.streamed}: {'; '.join(o.problems)}" for o in gap[:1]]
    return {
        "format": opts.fmt,
        "base_url": base_url,
        "model": model,
        "concurrency": opts.concurrency,
        "requests": opts.requests,
        "completed": len(done),
        "not_started": opts.requests - len(outcomes),
        "errors": len(errors),
        "mismatches": len(bad),
        "known_gap": len(gap),
        "known_gap_entries": sorted({o.entry for o in gap}),
        "streamed": sum(o.streamed for o in outcomes),
        "wall_s": round(wall, 1),
        "requests_per_s": round(len(done) / wall, 2) if wall else None,
        "completion_tokens_per_s": round(sum(o.tokens for o in done) / wall, 1) if wall else None,
        "latency_ms": _latency_ms(outcomes),
        "latency_ms_streamed": _latency_ms([o for o in outcomes if o.streamed]),
        "latency_ms_plain": _latency_ms([o for o in outcomes if not o.streamed]),
        "examples": examples,
    }


async def load(base_url: str, opts: Options) -> dict[str, Any]:
    """Run one load test against a server already up; returns the summary (see `summarize`)."""
    entries = pool(opts.fmt)
    expected = expected_results(opts.fmt, entries)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", timeout=opts.timeout, max_retries=0)
    async with client:
        model = opts.model or (await client.models.list()).data[0].id
        rss_before = rss_mib(base_url, opts.server_pid)
        outcomes, wall = await run_requests(client, model, opts, entries, expected)
        rss_after = rss_mib(base_url, opts.server_pid)
    summary = summarize(opts, base_url, model, outcomes, wall)
    summary["rss_mib_before"], summary["rss_mib_after"] = rss_before, rss_after
    return summary


def passed(summary: dict[str, Any]) -> bool:
    return not (summary["errors"] or summary["mismatches"] or summary["not_started"])


def server_args(fmt: str, extra: str = "") -> list[str]:
    """`vllm serve` flags for one of our formats: parser, our template, then the operator's flags."""
    template = ROOT / "chat_templates" / f"{fmt}.jinja"
    return [
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        fmt,
        "--chat-template",
        str(template),
        *shlex.split(extra),
    ]


@contextlib.contextmanager
def started_server(fmt: str, extra: str = "") -> Iterator[str]:
    """A local `vllm serve` with SmolLM2-135M for `fmt`, stopped (whole process group) on exit.
    `--api-server-count` needs vLLM's CLI code path; everything else runs as the e2e tests run it."""
    from prepare_model import ensure_model
    from vllm_server import vllm_cli_server, vllm_server

    args = server_args(fmt, extra)
    launch = vllm_cli_server if any(a.startswith(("--api-server-count", "-asc")) for a in args) else vllm_server
    with launch(ensure_model(), args) as base_url:
        yield base_url


SUMMARY_TEXT = """\
format {format} at {base_url} (model {model})
requests {requests} ({streamed} streamed), concurrency {concurrency}, completed {completed}, not started {not_started}
errors {errors}, mismatches {mismatches}, known-gap {known_gap} {known_gap_entries}
wall {wall_s} s, {requests_per_s} req/s, {completion_tokens_per_s} completion tokens/s
latency ms: p50 {latency_ms[p50]}, p95 {latency_ms[p95]}, max {latency_ms[max]} \
(streamed p50 {latency_ms_streamed[p50]} p95 {latency_ms_streamed[p95]}; \
plain p50 {latency_ms_plain[p50]} p95 {latency_ms_plain[p95]})
server RSS MiB: before {rss_before}, after {rss_after}"""


def _print_summary(summary: dict[str, Any]) -> None:
    def mem(rss: dict[str, Any] | None) -> str:
        return "unknown" if rss is None else f"{rss['total']} ({len(rss['processes'])} processes)"

    rss = {"rss_before": mem(summary["rss_mib_before"]), "rss_after": mem(summary["rss_mib_after"])}
    print(SUMMARY_TEXT.format_map({**summary, **rss}))
    for example in summary["examples"]:
        print(f"  {example}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--base-url", help="e.g. http://127.0.0.1:8000/v1 (local servers only)")
    target.add_argument("--start", choices=sorted(FORMATS), help="start vllm serve with this parser and template")
    parser.add_argument("--parser", choices=sorted(FORMATS), help="the server's format (default: --start's)")
    parser.add_argument("--server-args", default="", help='extra flags for --start, e.g. "--api-server-count 2"')
    parser.add_argument("--model", help="model name (default: the server's first model)")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per request")
    parser.add_argument("--deadline", type=float, default=3600.0, help="seconds for the whole run")
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--strict-malformed", action="store_true", help="count the known streaming gap as mismatch")
    parser.add_argument("--server-pid", type=int, help="server PID for RSS (default: the processes on the port)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    fmt = args.parser or args.start
    if fmt is None:
        parser.error("--parser is required with --base-url")
    if args.start and args.parser and args.parser != args.start:
        parser.error("--parser and --start name different formats")
    if args.base_url and urlsplit(args.base_url).hostname not in LOCAL_HOSTS:
        parser.error("only 127.0.0.1 / localhost servers are load-tested")
    if min(args.concurrency, args.requests) < 1:
        parser.error("--concurrency and --requests must be positive")
    fields = ("model", "concurrency", "requests", "seed", "timeout", "deadline", "max_tokens", "strict_malformed")
    opts = Options(
        fmt, server_pid=args.server_pid, progress=not args.no_progress, **{k: getattr(args, k) for k in fields}
    )

    with contextlib.ExitStack() as stack:
        base_url = args.base_url
        if args.start:
            print(f"starting vllm serve --tool-call-parser {fmt} {args.server_args}".rstrip(), file=sys.stderr)
            base_url = stack.enter_context(started_server(fmt, args.server_args))
        summary = asyncio.run(load(base_url, opts))
    summary["options"] = asdict(opts)
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
    else:
        _print_summary(summary)
    return 0 if passed(summary) else 1


if __name__ == "__main__":
    sys.exit(main())
