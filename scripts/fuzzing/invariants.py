"""The invariants of docs/design.md that are visible from outside, checked on one input.

`Checker` feeds a text to a fresh stream under several chunkings (with a time limit and the parser's
log routed to a counter) and reports every `Violation`: exceptions, events that are ill formed or
differ between chunkings, arguments that do not decode to themselves, lost content, a result that is
not the generated document's, hangs and floods of log records. Only the public API is used:
`parse`, `get_format(name).stream(tools, id_factory)` with `feed` / `close`, the events and
`build_result`.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core.events import build_result

from .generate import content_matches
from .values import Chunks, Event, Expected, Tools

INVARIANTS: dict[str, str] = {
    "raises": "1 never raises: feed/close raised, or returned something else than a list of events",
    "internal_error": "1 never raises: the parser's safety net caught (and logged) an exception of its own",
    "chunking": "2 chunking invariance: merged events differ between chunkings, or parse() != the whole feed",
    "well_formed": "3 events well formed",
    "arguments": "4 monotone arguments: fragments == arguments_json, json.loads(arguments_json) == arguments",
    "indexes": "5 the finished result's call indexes are 0..n-1",
    "nothing_lost": "6 nothing lost: no CallStart -> content == text.strip(); content is a subsequence of text",
    "expected": "7 a valid generated document parses to exactly its content and calls",
    "hang": "8 cost: no answer within the time limit",
    "slow": "8 cost: cost per character far above the median (reported, not failed)",
    "log_bound": "9 log records per response above the bound",
}
REPORT_ONLY = frozenset({"slow"})


def counter_ids(name: str, index: int) -> str:
    """Deterministic ids, so that events from different chunkings compare equal."""
    return f"call_{index}"


class Hang(BaseException):
    """Raised by the SIGALRM watchdog; a BaseException so the parsers' `except Exception` lets it pass."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang


@contextmanager
def watchdog() -> Iterator[None]:
    """Install the SIGALRM handler that turns an over-long run into `Hang` (restored afterwards)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class LogCounter(logging.Handler):
    """Counts the parser's log records for one response and keeps the exceptions its safety net logged."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0
        self.errors: list[str] = []

    def handle(self, record: logging.LogRecord) -> bool:  # no lock, no formatting: single-threaded and fast
        self.count += 1
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(describe(record.exc_info[1]))
        return True

    def emit(self, record: logging.LogRecord) -> None:
        pass


@contextmanager
def capture_logs() -> Iterator[LogCounter]:
    """Route the `toolcall_parsers` logger (INFO and up) to a counter only, and restore it afterwards."""
    logger = logging.getLogger("toolcall_parsers")
    saved = (logger.handlers[:], logger.propagate, logger.level)
    counter = LogCounter()
    logger.handlers = [counter]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        yield counter
    finally:
        logger.handlers, logger.propagate = saved[0], saved[1]
        logger.setLevel(saved[2])


def describe(exc: BaseException) -> str:
    """`Type at file:line` of the innermost frame in the package: stable enough to tell bugs apart."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "parsers" in f.filename or "toolcall_parsers" in f.filename] or frames
    where = f" at {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
    return f"{type(exc).__name__}{where}"


@dataclass
class Violation:
    invariant: str
    kind: str  # a coarse class: what went wrong, without the input's details
    message: str
    chunks: Chunks | None = None  # the chunking it happened on; None: the whole text at once

    @property
    def key(self) -> tuple[str, str]:
        return self.invariant, self.kind


@dataclass
class Options:
    """What to check and how hard; one instance is shared by a run's checker, fuzzer and shrinker."""

    timeout: float = 2.0
    log_check: bool = True
    max_log_lines: int = 12
    char_limit: int = 300
    char_every: int = 1  # the one-character chunking on every n-th input under char_limit
    parse_every: int = 8
    shrink_seconds: float = 5.0
    max_per_invariant: int = 3
    slow_factor: float = 25.0
    probe_every: float = 20.0  # seconds between scaling probes (0: none)
    probe_length: int = 250_000  # a probe repeats an input up to at least this many characters
    out: Path | None = None
    progress: bool = True
    hard_watchdog: bool = False
    written_only: bool = False  # every block written by the spec's writer (no grammar-aware generator)


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2 :]


def merge(events: list[Event]) -> list[Event]:
    """Join adjacent Text events and same-call CallArgs events (linear: pieces are joined once)."""
    out: list[Event] = []
    pieces: list[str] = []
    for event in events:
        last = out[-1] if out else None
        if type(event) is Text and type(last) is Text:
            pieces.append(event.text)
            continue
        if type(event) is CallArgs and type(last) is CallArgs and last.index == event.index:
            pieces.append(event.fragment)
            continue
        _flush(out, pieces)
        out.append(event)
        pieces = [event.text] if type(event) is Text else [event.fragment] if type(event) is CallArgs else []
    _flush(out, pieces)
    return out


def _flush(out: list[Event], pieces: list[str]) -> None:
    if len(pieces) > 1:
        last = out[-1]
        out[-1] = Text("".join(pieces)) if type(last) is Text else CallArgs(last.index, "".join(pieces))  # type: ignore[union-attr]


def same(a: Any, b: Any) -> bool:
    """JSON equality that tells True from 1 and a string from a number (numbers compare by value).
    Iterative: arguments may nest far deeper than Python's recursion limit."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        tx, ty = type(x), type(y)
        if tx in (int, float) and ty in (int, float):
            if not (x == y or (x != x and y != y)):
                return False
        elif tx is not ty:
            return False
        elif tx is dict:
            if x.keys() != y.keys():
                return False
            stack.extend((v, y[k]) for k, v in x.items())
        elif tx is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_KIND = "arguments_json holds a lone surrogate"


def check_arguments(arguments_json: str, arguments: Any) -> tuple[str, str] | None:
    """(kind, message) when an ended call's arguments break invariant 4."""
    if type(arguments) is not dict:
        return "arguments is not a dict", short(arguments)
    try:
        arguments_json.encode("utf-8")
    except UnicodeEncodeError as err:
        return SURROGATE_KIND, f"{err}: {short(arguments_json)}"
    try:
        loaded = json.loads(arguments_json, parse_constant=_no_constant)
    except RecursionError:
        return "arguments_json nests too deep to load", short(arguments_json)
    except ValueError as err:
        return "arguments_json is not JSON", f"{err}: {short(arguments_json)}"
    if not same(loaded, arguments):
        return "json.loads(arguments_json) != arguments", f"{short(arguments_json)} vs {short(arguments)}"
    return None


def check_events(events: list[Any]) -> list[tuple[str, str, str]]:
    """Invariants 1 (types), 3 (well formed) and 4 (arguments) over one run's events."""
    problems: list[tuple[str, str, str]] = []
    fragments: dict[int, list[str]] = {}
    ended: dict[int, Any] = {}
    last = -1
    for n, event in enumerate(events):
        kind = type(event)
        if kind is CallArgs:
            if event.index not in fragments:
                problems.append(("well_formed", "CallArgs for an index never started", f"event {n}: {event!r}"))
            elif event.index in ended:
                problems.append(("well_formed", "CallArgs after CallEnd", f"event {n}: {short(event)}"))
            elif type(event.fragment) is not str:
                problems.append(("raises", "CallArgs.fragment is not a str", f"event {n}: {short(event)}"))
            else:
                fragments[event.index].append(event.fragment)
        elif kind is Text:
            if type(event.text) is not str:
                problems.append(("raises", "Text.text is not a str", f"event {n}: {short(event)}"))
        elif kind is CallStart:
            if type(event.index) is not int or event.index <= last:
                problems.append(("well_formed", "CallStart index not increasing", f"event {n}: {event!r} after {last}"))
                continue
            if type(event.id) is not str or not event.id or type(event.name) is not str or not event.name:
                problems.append(("well_formed", "CallStart with an empty id or name", f"event {n}: {short(event)}"))
            last = event.index
            fragments[event.index] = []
        elif kind is CallEnd:
            if event.index not in fragments:
                problems.append(("well_formed", "CallEnd for an index never started", f"event {n}: {event!r}"))
            elif event.index in ended:
                problems.append(("well_formed", "CallEnd twice", f"event {n}: {short(event)}"))
            else:
                ended[event.index] = event.arguments
        else:
            problems.append(("raises", "an event of an unknown type", f"event {n}: {short(event)}"))
    for index, arguments in ended.items():
        bad = check_arguments("".join(fragments[index]), arguments)
        if bad:
            problems.append(("arguments", bad[0], f"call {index}: {bad[1]}"))
    return problems


def is_subsequence(pieces: list[str], text: str) -> bool:
    """Whether the pieces, in order, are a subsequence of `text` (whole pieces first, then by char)."""
    pos = 0
    for piece in pieces:
        i = text.find(piece, pos)
        if i < 0:
            break
        pos = i + len(piece)
    else:
        return True
    pos = 0
    find = text.find
    for c in "".join(pieces):
        pos = find(c, pos) + 1
        if not pos:
            return False
    return True


def events_equal(a: list[Event], b: list[Event]) -> bool:
    return a == b or repr(a) == repr(b)  # repr: NaN arguments are equal to themselves


def first_difference(a: list[Event], b: list[Event]) -> tuple[str, str]:
    """(class, message) of where two merged event lists part: the class names the event types."""
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if repr(x) != repr(y):
            return (
                f"events differ: {type(x).__name__} vs {type(y).__name__}",
                f"event {n}: whole {short(x)} vs {short(y)}",
            )
    more = a[len(b) :] or b[len(a) :]
    return "events differ: one has more", f"whole has {len(a)} events, chunked {len(b)}: next {short(more[:1])}"


class Checker:
    """Runs one format's parser on a text under several chunkings and reports every violation."""

    def __init__(self, fmt: str, options: Options, log: LogCounter) -> None:
        self.fmt = fmt
        self.format = get_format(fmt)
        self.options = options
        self.log = log
        self.elapsed = 0.0  # the last whole run's time
        self.chunked_elapsed = 0.0  # the first chunked run's time (the random split)
        self.timed_chunks: Chunks = []

    def run(
        self, text: str, chunks: Chunks, tools: Tools, found: list[Violation], streaming: str | None = None
    ) -> list[Any] | None:
        """Feed `chunks` to a fresh stream and close it, under the time limit: its raw events, or None
        when it raised or hung. Per-run checks (1, 3, 4, 9) are appended to `found`."""
        where = None if len(chunks) == 1 and chunks[0] == text else chunks
        log = self.log
        log.count = 0
        log.errors.clear()
        events: list[Any] = []
        started = time.thread_time()  # CPU time (the machine may be shared); process_time is a slow syscall here
        signal.setitimer(signal.ITIMER_REAL, self.options.timeout)
        try:
            stream = self.format.stream(tools, counter_ids, streaming=streaming)
            for chunk in chunks:
                out = stream.feed(chunk)
                if type(out) is not list:
                    raise TypeError(f"feed() returned {type(out).__name__}")
                events += out
            out = stream.close()
            if type(out) is not list:
                raise TypeError(f"close() returned {type(out).__name__}")
            events += out
        except Hang:
            found.append(Violation("hang", "timeout", f"no answer within {self.options.timeout}s", where))
            return None
        except Exception as exc:
            found.append(Violation("raises", describe(exc), short(exc, 300), where))
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            elapsed = time.thread_time() - started
        if where is None:
            self.elapsed = elapsed
        elif not self.timed_chunks:
            self.chunked_elapsed, self.timed_chunks = elapsed, chunks
        for error in dict.fromkeys(log.errors):
            found.append(Violation("internal_error", error, f"logged by the parser's safety net: {error}", where))
        if self.options.log_check and log.count > self.options.max_log_lines:
            message = f"{log.count} log records for one response (bound {self.options.max_log_lines})"
            found.append(Violation("log_bound", "too many log records", message, where))
        for invariant, kind, message in check_events(events):
            found.append(Violation(invariant, kind, message, where))
        return events

    def timed(self, text: str, chunks: Chunks, tools: Tools, limit: float | None = None) -> float | None:
        """CPU seconds for one more run of `chunks` (violations ignored) within `limit` wall seconds
        (default: the time limit); None when it does not finish."""
        saved = self.options.timeout
        self.options.timeout = limit or saved
        try:
            started = time.thread_time()
            found: list[Violation] = []
            self.run(text, chunks, tools, found)
            hung = any(v.invariant == "hang" for v in found)
            return None if hung else time.thread_time() - started
        finally:
            self.options.timeout = saved

    def _streamed_past_the_bound(self, text: str, chunks: Chunks, tools: Tools) -> bool:
        """Whether the chunked run differs only because a call was shown once its arguments passed
        the streaming bound and then broke (a documented limit, docs/limits.md: such a call cannot
        be taken back): under the `complete` policy, which shows a call only once it ends, the
        whole text and the chunks read alike."""
        ignored: list[Violation] = []
        timing = self.elapsed, self.chunked_elapsed, self.timed_chunks  # the runs the cost checks time
        whole = self.run(text, [text], tools, ignored, streaming="complete")
        chunked = self.run(text, chunks, tools, ignored, streaming="complete")
        self.elapsed, self.chunked_elapsed, self.timed_chunks = timing
        return whole is not None and chunked is not None and events_equal(merge(whole), merge(chunked))

    def check(
        self,
        text: str,
        tools: Tools,
        chunkings: list[Chunks],
        expected: Expected | None = None,
        check_parse: bool = True,
    ) -> list[Violation]:
        """Every invariant for `text`: the whole text, then each chunking against it. One violation
        per (invariant, kind)."""
        found: list[Violation] = []
        self.elapsed = self.chunked_elapsed = 0.0
        self.timed_chunks = []
        whole = self.run(text, [text], tools, found)
        merged = merge(whole) if whole is not None else None
        if whole is not None and not any(v.invariant in ("well_formed", "raises") for v in found):
            self._check_result(text, tools, whole, expected, check_parse, found)
        for chunks in chunkings:
            events = self.run(text, chunks, tools, found)
            if events is not None and merged is not None:
                chunked = merge(events)
                if not events_equal(merged, chunked) and not self._streamed_past_the_bound(text, chunks, tools):
                    found.append(Violation("chunking", *first_difference(merged, chunked), chunks))
        unique: dict[tuple[str, str], Violation] = {}
        for violation in found:
            if violation.kind == SURROGATE_KIND:  # two bugs: passing a raw one through, or making one
                raw = SURROGATE.search(text) is not None
                violation.kind += " (the input has a raw one)" if raw else " (made from an escape)"
            unique.setdefault(violation.key, violation)
        return list(unique.values())

    def _check_result(
        self,
        text: str,
        tools: Tools,
        events: list[Any],
        expected: Expected | None,
        check_parse: bool,
        found: list[Violation],
    ) -> None:
        """Invariants 2 (parse), 5, 6 and 7 on the finished result of the whole text."""
        result = build_result(events)
        indexes = [c.index for c in result.calls]
        if indexes != list(range(len(indexes))):
            found.append(Violation("indexes", "result indexes not 0..n-1", f"indexes {indexes}"))
        content = result.content
        if get_format(self.fmt).stream_class.keeps_whitespace:
            # the generator's expectations are trimmed; the exact whitespace of a format that keeps
            # it is the property tests' (tests/test_properties.py, helpers.content_of)
            content = (content or "").strip() or None
        if not any(type(e) is CallStart for e in events) and content != (text.strip() or None):
            found.append(Violation("nothing_lost", "no call, content != text", f"content {short(content)}"))
        pieces = [e.text for e in events if type(e) is Text]
        if not is_subsequence(pieces, text):
            found.append(Violation("nothing_lost", "content not in the input", f"content {short(''.join(pieces))}"))
        if check_parse:
            signal.setitimer(signal.ITIMER_REAL, self.options.timeout)
            try:
                parsed = parse(self.fmt, text, tools, counter_ids)
            except Hang:
                found.append(Violation("hang", "timeout", f"parse() gave no answer within {self.options.timeout}s"))
                parsed = None
            except Exception as exc:
                found.append(Violation("raises", describe(exc), f"parse(): {short(exc, 300)}"))
                parsed = None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if parsed is not None and parsed != result and repr(parsed) != repr(result):
                found.append(Violation("chunking", "parse() differs", f"parse() {short(parsed)} vs {short(result)}"))
        if expected is not None:
            want_content, want_calls = expected
            if not content_matches(content, want_content):
                found.append(
                    Violation("expected", "content differs", f"want {short(want_content)}, got {short(content)}")
                )
            got = [(c.name, c.arguments, c.id) for c in result.calls]
            if len(got) != len(want_calls) or not all(
                g[0] == w[0] and w[2] in (None, g[2]) and same(g[1], w[1])
                for g, w in zip(got, want_calls, strict=False)
            ):
                found.append(Violation("expected", "calls differ", f"want {short(want_calls)}, got {short(got)}"))
