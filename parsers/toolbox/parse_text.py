"""`toolcall-parsers parse`: a finished output through a format, whole or as a stream of deltas.

Streaming shows what a server would send: `--tokenizer DIR` cuts the text into real token deltas
(each delta is the text the tokens so far add, held while it ends in a partial character, as a
detokenizer does), `--chunk N` into N-character pieces. The streamed events folded into a result
must equal `parse()` of the whole text (the design's invariant 7); a difference is a failure.
A text that holds a marker but no valid call is a failure too, with the reasons the parser logged.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import get_format, parse
from ..core.events import CallArgs, CallEnd, CallStart, Event, ParseResult, Text, build_result


@dataclass
class ParseReport:
    """A parse and, when streamed, its events; `rejected` holds what the parser logged as not a call."""

    result: ParseResult
    events: list[tuple[int, Event]] = field(default_factory=list)
    """(delta number, event) when streamed."""
    streamed_result: ParseResult | None = None
    rejected: list[str] = field(default_factory=list)

    @property
    def stream_differs(self) -> bool:
        return self.streamed_result is not None and _comparable(self.streamed_result) != _comparable(self.result)

    @property
    def marker_without_call(self) -> bool:
        return not self.result.calls and bool(self.rejected)


def _comparable(result: ParseResult) -> tuple[Any, ...]:
    # Ids are minted per run; everything else must agree.
    return result.content, [(c.index, c.name, c.arguments_json) for c in result.calls]


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def chunk_deltas(text: str, size: int) -> Iterator[str]:
    if size < 1:
        raise ValueError("--chunk must be at least 1")
    for at in range(0, len(text), size):
        yield text[at : at + size]


def token_deltas(text: str, tokenizer: Any) -> Iterator[str]:
    """The text each token adds, as vLLM's incremental detokenizer streams it: special tokens kept;
    the text of the tokens since the last delta is decoded against the tokens before them (so a
    tokenizer's spacing rules see their context), and held while it ends in a partial UTF-8
    character (U+FFFD) until a later token completes it. Each step decodes only the tokens since
    the last delta and the ones before them: linear."""
    ids = tokenizer.encode(text, add_special_tokens=False)
    prefix = read = 0  # the tokens [prefix, read) were sent already, as context for what follows

    def decode(part: list[int]) -> str:
        return tokenizer.decode(part, skip_special_tokens=False)

    for end in range(1, len(ids) + 1):
        before = decode(ids[prefix:read])
        now = decode(ids[prefix:end])
        if len(now) > len(before) and not now.endswith("\ufffd"):
            yield now[len(before) :]
            prefix, read = read, end


def parse_text(
    fmt: str, text: str, tools: Any = None, deltas: Iterator[str] | None = None, streaming: Any = None
) -> ParseReport:
    """parse() of `text`; with `deltas`, also the events of feeding them one by one."""
    get_format(fmt)  # ValueError naming the formats for an unknown name
    collect = _Collect()
    log = logging.getLogger("toolcall_parsers")
    log.addHandler(collect)
    try:
        report = ParseReport(parse(fmt, text, tools=tools))
        rejected = list(collect.messages)
        if deltas is not None:
            stream = get_format(fmt).stream(tools, streaming=streaming)
            fed = []
            for number, delta in enumerate(deltas):
                fed.append(delta)
                report.events += [(number, e) for e in stream.feed(delta)]
            report.events += [(len(fed), e) for e in stream.close()]
            if "".join(fed) != text:
                raise ValueError("the deltas do not add up to the text (the tokenizer does not round-trip it)")
            report.streamed_result = build_result([e for _, e in report.events])
        report.rejected = rejected
    finally:
        log.removeHandler(collect)
    return report


def event_json(delta: int, event: Event) -> dict[str, Any]:
    kind = {Text: "text", CallStart: "call_start", CallArgs: "call_args", CallEnd: "call_end"}[type(event)]
    return {"delta": delta, "event": kind, **dataclasses.asdict(event)}


def result_json(result: ParseResult) -> dict[str, Any]:
    return dataclasses.asdict(result)
