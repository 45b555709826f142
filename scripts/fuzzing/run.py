"""The driver: fuzz each format (`fuzz_format`), shrink and save what breaks, print the summary;
replay and re-shrink saved reproducers; the command line of `scripts/fuzz.py`."""

from __future__ import annotations

import argparse
import faulthandler
import hashlib
import json
import multiprocessing
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_parsers import get_format
from toolcall_parsers.formats import FORMATS

from .generate import Case
from .invariants import (
    INVARIANTS,
    REPORT_ONLY,
    Checker,
    Hang,
    LogCounter,
    Options,
    Violation,
    capture_logs,
    short,
    watchdog,
)
from .mutate import make_case, random_split
from .shrink import shrink, shrink_document
from .values import Expected

DESCRIPTION = "Grammar-aware fuzzer for every registered wire format, checking the parser contract from outside."


@dataclass
class Stats:
    """One format's run: inputs, time, violations counted per invariant, and the saved reproducers."""

    fmt: str
    inputs: int = 0
    seconds: float = 0.0  # fuzzing time, shrinking excluded
    cpu_seconds: float = 0.0  # the same in CPU time: the rate on a shared machine
    shrink_seconds: float = 0.0
    shrink_cpu_seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)  # inputs with a violation of each invariant
    saved: list[dict[str, Any]] = field(default_factory=list)
    largest: int = 0

    @property
    def rate(self) -> float:
        return self.inputs / self.seconds if self.seconds else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.inputs / self.cpu_seconds if self.cpu_seconds else 0.0

    def add(self, other: Stats) -> None:
        self.inputs += other.inputs
        self.seconds = max(self.seconds, other.seconds)
        self.cpu_seconds += other.cpu_seconds
        self.shrink_seconds += other.shrink_seconds
        for k, v in other.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v
        self.saved += other.saved
        self.largest = max(self.largest, other.largest)

    def failures(self) -> int:
        return sum(v for k, v in self.counts.items() if k not in REPORT_ONLY)


class Fuzzer:
    """Fuzzes one format: generates, checks, shrinks and saves what breaks, keeps statistics."""

    def __init__(self, fmt: str, options: Options, seed: int, log: LogCounter) -> None:
        self.fmt = fmt
        self.options = options
        self.seed = seed
        self.checker = Checker(fmt, options, log)
        self.stats = Stats(fmt)
        self.seen_keys: set[tuple[str, str]] = set()
        self.seen_texts: set[tuple[str, str]] = set()
        self.costs: list[float] = []
        self.chunked_costs: list[float] = []
        self.next_probe = time.monotonic() + options.probe_every
        self.probe_case: Case | None = None  # the densest input in markup since the last probe
        self.probe_density = 0.0

    def check_case(self, case: Case, rng: random.Random) -> list[Violation]:
        text = case.text
        chunkings = [random_split(rng, text)] if len(text) > 1 else []
        if 1 < len(text) < self.options.char_limit and (len(text) < 64 or case.index % self.options.char_every == 0):
            chunkings.append(list(text))
        parse_now = self.options.parse_every > 0 and case.index % self.options.parse_every == 0
        try:
            return self.checker.check(text, case.tools, chunkings, case.expected, parse_now)
        except Hang:  # the alarm went off between a run and its disarming
            return [Violation("hang", "timeout", "timer fired outside a run")]

    def one(self, index: int) -> None:
        case, rng = make_case(self.fmt, self.seed, index, self.options.written_only)
        self.stats.largest = max(self.stats.largest, len(case.text))
        if len(case.text) > 5000 and self.options.out is not None:
            inflight = {"format": self.fmt, "seed": self.seed, "index": index, "length": len(case.text)}
            (self.options.out / f"inflight-{self.fmt}.json").write_text(json.dumps(inflight))
        found = [self.confirm_hang(case, v) if v.invariant == "hang" else v for v in self.check_case(case, rng)]
        self.stats.inputs += 1
        if len(case.text) >= 1000:
            found += self.cost(case)
        if self.options.probe_every and len(case.text) >= 200:
            self.probe(case)
        for invariant in {v.invariant for v in found}:
            self.stats.counts[invariant] = self.stats.counts.get(invariant, 0) + 1
        for violation in found:
            self.report(case, violation)

    def confirm_hang(self, case: Case, hang: Violation) -> Violation:
        """A run over the wall-clock limit hangs only if it also needs that much CPU time: on a busy
        machine it is re-run with ten times the limit and, if it finishes, reported as slow."""
        cpu = self.checker.timed(case.text, hang.chunks or [case.text], case.tools, 10 * self.options.timeout)
        if cpu is None or cpu >= self.options.timeout:
            return hang
        message = f"over {self.options.timeout}s of wall time on a busy machine, but {cpu:.3f} CPU seconds"
        return Violation("slow", "over the time limit only under load", message, hang.chunks)

    def cost(self, case: Case) -> list[Violation]:
        """Invariant 8 (report only): a cost per character far above the median of the big inputs,
        confirmed by timing the run again (the machine may just have been busy)."""
        n = len(case.text)
        flagged = []
        for costs, value, label, chunks in (
            (self.costs, self.checker.elapsed / n, "whole", [case.text]),
            (self.chunked_costs, self.checker.chunked_elapsed / n, "chunked", self.checker.timed_chunks),
        ):
            if not value or not chunks:
                continue
            costs.append(value)
            if len(costs) < 20:
                continue
            median = statistics.median(costs[-400:])
            if value > self.options.slow_factor * median and value * n > 0.05:
                value = min(value, (self.checker.timed(case.text, chunks, case.tools) or value * n) / n)
            if value > self.options.slow_factor * median and value * n > 0.05:
                flagged.append(
                    Violation(
                        "slow",
                        f"{label} cost per character",
                        f"{label}: {value * 1e6:.2f} us/char over {n} chars, median {median * 1e6:.2f} us/char",
                    )
                )
        return flagged

    def probe(self, case: Case) -> None:
        """Keep the input densest in markup (each marker or bracket may be a span of its own, and a
        per-span cost that grows with the text is what the probe looks for); probe it when due."""
        text = case.text
        density = sum(text.count(c) for c in "<[{(\n") / len(text)
        if density > self.probe_density:
            self.probe_case, self.probe_density = case, density
        if time.monotonic() < self.next_probe or self.probe_case is None:
            return
        probed, self.probe_case, self.probe_density = self.probe_case, None, 0.0
        for violation in self.scaling(probed):
            self.stats.counts["slow"] = self.stats.counts.get("slow", 0) + 1
            self.report(probed, violation)
        self.next_probe = time.monotonic() + self.options.probe_every

    def scaling(self, case: Case) -> list[Violation]:
        """Invariant 8 (report only): the input repeated k times must cost about k times as much, fed
        whole. Generated inputs stay under about 100K characters, where a quadratic term is still
        small next to the median; repeated to a quarter million characters it is not."""
        k = -(-self.options.probe_length // len(case.text))
        times = [self.checker.timed(case.text, [case.text], case.tools) for _ in range(3)]
        if any(t is None for t in times):
            return []
        one = min(t for t in times if t is not None)
        big = case.text * k
        many = self.checker.timed(big, [big], case.tools, 20 * self.options.timeout)
        if many is not None and (many < 0.2 or many < 3 * k * one):  # 3x: cache and GC effects are not it
            return []
        spent = "over the time limit" if many is None else f"{many:.2f} CPU s"
        message = f"{len(case.text)} chars: {one * 1e3:.2f} ms; {k} times repeated ({len(big)} chars): {spent}"
        return [Violation("slow", "superlinear in the length (whole text)", message)]

    def report(self, case: Case, violation: Violation) -> None:
        """Shrink, save and print a violation, unless its invariant's cap is reached."""
        invariant = violation.invariant
        saved_here = sum(1 for r in self.stats.saved if r["invariant"] == invariant)
        new_class = violation.key not in self.seen_keys
        cap = self.options.max_per_invariant
        if not (saved_here < cap or (new_class and saved_here < 3 * cap)):
            return
        self.seen_keys.add(violation.key)
        started, started_cpu = time.monotonic(), time.thread_time()
        budget = max(self.options.shrink_seconds, 10 * self.options.timeout if invariant == "hang" else 0)
        deadline = started + budget
        text, tools, chunks, expected = case.text, case.tools, violation.chunks, case.expected
        if invariant == "expected" and case.parts:
            doc = shrink_document(self.checker, case, violation, deadline)
            text, tools, chunks, expected = doc.text, doc.tools, None, doc.expected
            confirm = self.checker.check(text, tools, [], expected)
            violation = next((v for v in confirm if v.key == violation.key), violation)
        elif invariant not in REPORT_ONLY and budget > 0:
            text, tools, chunks = shrink(self.checker, case, violation, deadline)
            if len(chunks) == 1 and chunks[0] == text:
                chunks = None
            confirm = self.checker.check(text, tools, [chunks] if chunks else [])
            violation = next((v for v in confirm if v.key == violation.key), violation)
        self.stats.shrink_seconds += time.monotonic() - started
        self.stats.shrink_cpu_seconds += time.thread_time() - started_cpu
        if (invariant, text + repr(chunks)) in self.seen_texts:
            return
        self.seen_texts.add((invariant, text + repr(chunks)))
        record = {
            "format": self.fmt,
            "invariant": invariant,
            "invariant_doc": INVARIANTS[invariant],
            "kind": violation.kind,
            "message": violation.message,
            "text": text,
            "tools": tools,
            "chunks": chunks,
            "expected": expected_json(expected) if invariant == "expected" else None,
            "seed": self.seed,
            "index": case.index,
            "origin": case.origin,
            "original_length": len(case.text),
        }
        if self.options.out is not None:
            digest = hashlib.sha1((text + repr(chunks) + invariant).encode("utf-8", "surrogatepass")).hexdigest()
            path = self.options.out / f"{self.fmt}-{invariant}-{digest[:10]}.json"
            path.write_text(json.dumps(record, indent=1, ensure_ascii=True))
            record["path"] = str(path)
        self.stats.saved.append(record)
        if self.options.progress:
            print(render(record), flush=True)


def expected_json(expected: Expected | None) -> dict[str, Any] | None:
    if expected is None:
        return None
    content, calls = expected
    return {"content": content, "calls": [{"name": n, "arguments": a, "id": i} for n, a, i in calls]}


def expected_from_json(data: dict[str, Any] | None) -> Expected | None:
    if not data:
        return None
    return data["content"], [(c["name"], c["arguments"], c["id"]) for c in data["calls"]]


def render(record: dict[str, Any]) -> str:
    """A reproducer as printed: invariant, kind, message, exact text and chunking."""
    lines = [
        f"VIOLATION {record['format']} [{record['invariant_doc']}] {record['kind']}",
        f"  message: {record['message']}",
        f"  text:    {short(record['text'], 600)}",
        f"  chunks:  {short(record['chunks'], 600) if record['chunks'] else 'whole text'}",
    ]
    if record["tools"]:
        lines.append(f"  tools:   {short(record['tools'], 300)}")
    if record.get("expected"):
        lines.append(f"  expected: {short(record['expected'], 300)}")
    lines.append(f"  from:    seed {record['seed']} input {record['index']} ({record['origin']})")
    if "path" in record:
        lines.append(f"  saved:   {record['path']}")
    return "\n".join(lines)


def fuzz_format(
    fmt: str,
    options: Options,
    seed: int = 0,
    inputs: int | None = None,
    seconds: float | None = None,
    start: int = 0,
    shard: int = 0,
    shards: int = 1,
) -> Stats:
    """Fuzz one format until `inputs` inputs (this shard takes every `shards`-th index) or `seconds`
    of wall time, whichever comes first."""
    with capture_logs() as log, watchdog():
        fuzzer = Fuzzer(fmt, options, seed, log)
        began = last_report = time.monotonic()
        began_cpu = time.thread_time()
        end_index = start + inputs if inputs is not None else None
        index = start + shard
        if options.hard_watchdog:
            faulthandler.dump_traceback_later(30 * options.timeout + 60, exit=True)
        while end_index is None or index < end_index:
            fuzzer.one(index)
            index += shards
            if fuzzer.stats.inputs % 32 == 0:
                now = time.monotonic()
                if seconds is not None and now - began >= seconds:
                    break
                if now - last_report >= 2.0:
                    last_report = now
                    fuzzer.stats.seconds = now - began - fuzzer.stats.shrink_seconds
                    fuzzer.stats.cpu_seconds = time.thread_time() - began_cpu - fuzzer.stats.shrink_cpu_seconds
                    if options.hard_watchdog:
                        faulthandler.dump_traceback_later(30 * options.timeout + 60, exit=True)
                    if options.progress:
                        print(progress_line(fuzzer.stats, index), file=sys.stderr, flush=True)
        if options.hard_watchdog:
            faulthandler.cancel_dump_traceback_later()
        fuzzer.stats.seconds = time.monotonic() - began - fuzzer.stats.shrink_seconds
        fuzzer.stats.cpu_seconds = time.thread_time() - began_cpu - fuzzer.stats.shrink_cpu_seconds
        if options.out is not None:
            (options.out / f"inflight-{fmt}.json").unlink(missing_ok=True)
        return fuzzer.stats


def progress_line(stats: Stats, index: int) -> str:
    counts = " ".join(f"{k}={v}" for k, v in sorted(stats.counts.items()))
    rates = f"{stats.rate:.0f}/s ({stats.cpu_rate:.0f} per CPU second)"
    return f"[fuzz] {stats.fmt}: {stats.inputs} inputs (next {index}), {rates}; {counts or 'no violations'}"


def _shard(job: tuple[str, Options, int, int | None, float | None, int, int, int]) -> Stats:
    return fuzz_format(*job)


def summary_table(all_stats: list[Stats]) -> str:
    """One line per format: inputs, rates (wall and CPU), exceptions, hangs, violations per invariant."""
    columns = [k for k in INVARIANTS if any(s.counts.get(k) for s in all_stats)]
    widths = (("format", 16), ("inputs", 9), ("inputs/s", 10), ("/CPU s", 8), ("exceptions", 11), ("hangs", 7))
    lines = ["".join(f"{h:<{w}}" if h == "format" else f"{h:>{w}}" for h, w in widths) + f"{'largest':>9}  violations"]
    for s in all_stats:
        violations = ", ".join(f"{k}={s.counts[k]}" for k in columns if s.counts.get(k)) or "none"
        exceptions = s.counts.get("raises", 0) + s.counts.get("internal_error", 0)
        cells = f"{s.fmt:<16}{s.inputs:>9}{s.rate:>10.0f}{s.cpu_rate:>8.0f}{exceptions:>11}{s.counts.get('hang', 0):>7}"
        lines.append(f"{cells}{s.largest:>9}  {violations}")
    return "\n".join(lines)


def replay(paths: list[str], options: Options) -> int:
    """Check saved reproducers again (their own chunking and the whole text): 1 if any still fails."""
    failed = 0
    with capture_logs() as log, watchdog():
        for path in paths:
            record = json.loads(Path(path).read_text())
            checker = Checker(record["format"], options, log)
            chunks = record.get("chunks")
            expected = expected_from_json(record.get("expected"))
            found = checker.check(record["text"], record.get("tools"), [chunks] if chunks else [], expected)
            print(f"{path}: " + ("; ".join(f"{v.invariant}: {v.kind}: {v.message}" for v in found) or "passes"))
            failed += bool(found)
    return 1 if failed else 0


def reshrink(paths: list[str], options: Options) -> int:
    """Shrink saved reproducers again with this run's budget, rewriting them in place."""
    with capture_logs() as log, watchdog():
        for path in paths:
            record = json.loads(Path(path).read_text())
            checker = Checker(record["format"], options, log)
            case = Case(record["format"], record["text"], record.get("tools"), record.get("origin", ""))
            violation = Violation(record["invariant"], record["kind"], record["message"], record.get("chunks"))
            if violation.invariant in REPORT_ONLY or violation.invariant == "expected":
                continue
            text, tools, chunks = shrink(checker, case, violation, time.monotonic() + options.shrink_seconds)
            found = checker.check(text, tools, [] if len(chunks) == 1 and chunks[0] == text else [chunks])
            shrunk = next((v for v in found if v.key == violation.key), None)
            if shrunk is None or len(text) >= len(record["text"]):
                print(f"{path}: not smaller ({len(record['text'])} chars)")
                continue
            record.update(text=text, tools=tools, message=shrunk.message)
            record["chunks"] = None if len(chunks) == 1 and chunks[0] == text else chunks
            Path(path).write_text(json.dumps(record, indent=1, ensure_ascii=True))
            print(render(record | {"path": path}))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=DESCRIPTION)
    ap.add_argument("--format", default="all", help=f"one of {', '.join(FORMATS)}, or all")
    ap.add_argument("--seconds", type=float, help="wall time per format (default 10 unless --inputs is given)")
    ap.add_argument("--inputs", type=int, help="inputs per format")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="index of the first input (to replay a range)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--jobs", type=int, default=1, help="processes per format")
    ap.add_argument("--timeout", type=float, default=2.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--max-log-lines", type=int, default=12)
    ap.add_argument("--no-log-check", action="store_true", help="do not check the log bound (invariant 6)")
    ap.add_argument("--char-limit", type=int, default=300, help="feed inputs shorter than this one char at a time")
    ap.add_argument("--char-every", type=int, default=1, help="... on every n-th such input (always under 64 chars)")
    ap.add_argument("--shrink-seconds", type=float, default=5.0)
    ap.add_argument("--max-per-invariant", type=int, default=3, help="reproducers saved per invariant and format")
    ap.add_argument("--replay", nargs="+", metavar="JSON", help="check saved reproducers instead of fuzzing")
    ap.add_argument("--shrink", nargs="+", metavar="JSON", help="shrink saved reproducers again (--shrink-seconds)")
    ap.add_argument(
        "--written-only",
        action="store_true",
        help="every block from the format's writer, as for a format without a grammar-aware generator",
    )
    args = ap.parse_args(argv)
    options = Options(
        timeout=args.timeout,
        log_check=not args.no_log_check,
        max_log_lines=args.max_log_lines,
        char_limit=args.char_limit,
        char_every=max(1, args.char_every),
        shrink_seconds=args.shrink_seconds,
        max_per_invariant=args.max_per_invariant,
        out=args.out,
        hard_watchdog=True,
        written_only=args.written_only,
    )
    if args.replay:
        return replay(args.replay, options)
    if args.shrink:
        return reshrink(args.shrink, options)
    formats = list(FORMATS) if args.format == "all" else [args.format]
    for fmt in formats:
        try:
            get_format(fmt)
        except ValueError as err:  # the message lists the known formats
            ap.error(str(err))
    seconds = args.seconds if args.seconds is not None or args.inputs is not None else 10.0
    args.out.mkdir(parents=True, exist_ok=True)
    all_stats = []
    for fmt in formats:
        jobs = [(fmt, options, args.seed, args.inputs, seconds, args.start, k, args.jobs) for k in range(args.jobs)]
        if args.jobs == 1:
            parts = [_shard(jobs[0])]
        else:
            with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
                parts = pool.map(_shard, jobs)
        stats = Stats(fmt)
        for part in parts:
            stats.add(part)
        all_stats.append(stats)
        print(progress_line(stats, -1), file=sys.stderr, flush=True)
    print("\n" + summary_table(all_stats))
    classes = [(s.fmt, r) for s in all_stats for r in s.saved]
    if classes:
        print("\nreproducers:")
        for fmt, r in classes:
            print(f"  {fmt:<15} {r['invariant']:<15} {r['kind']:<45} {short(r['text'], 90)}")
    return 1 if any(s.failures() for s in all_stats) else 0


if __name__ == "__main__":
    sys.exit(main())
