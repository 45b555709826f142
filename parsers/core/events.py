"""The events a format machine returns, and the finished result built from them.

Events are small immutable values, as in h11: tests build them directly and compare them. A call is
announced by `CallStart`, its arguments' JSON text arrives in `CallArgs` fragments that are never
retracted, and `CallEnd` closes it with the decoded arguments. A call that started but was never
ended (its block turned out malformed or the output stopped inside it) has no `CallEnd`; its raw text
then comes back as `Text`, so nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Text:
    """Content outside any recognised call."""

    text: str


@dataclass(frozen=True, slots=True)
class CallStart:
    """A call's name is known; `id` is the id the client should see."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class CallArgs:
    """A piece of the call's arguments JSON text; the pieces concatenate to `arguments_json`."""

    index: int
    fragment: str


@dataclass(frozen=True, slots=True)
class CallEnd:
    """The call is complete; `arguments` is the decoded JSON object."""

    index: int
    arguments: dict[str, Any]


Event = Text | CallStart | CallArgs | CallEnd


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One finished call, in the order it appeared in the response."""

    index: int
    id: str
    name: str
    arguments: dict[str, Any]
    arguments_json: str


@dataclass(slots=True)
class ParseResult:
    """What a finished response holds: the text outside calls and the calls themselves."""

    content: str | None
    calls: list[ToolCall] = field(default_factory=list)


def merge_text(events: list[Event]) -> list[Event]:
    """Join adjacent `Text` and same-call `CallArgs` events, so that event lists from different
    chunkings of one text compare equal. Each run is joined once (linear in its length)."""
    if len(events) < 2:
        return events
    merged: list[Event] = []
    run: list[str] = []  # the pieces of the run of Text, or of one call's CallArgs, being joined
    head: Event | None = None  # the run's first event
    for event in events:
        if (
            head is not None
            and type(event) is type(head)
            and (
                isinstance(event, Text) or (isinstance(event, CallArgs) and event.index == head.index)  # type: ignore[union-attr]
            )
        ):
            run.append(event.text if isinstance(event, Text) else event.fragment)  # type: ignore[union-attr]
            continue
        if head is not None:
            merged.append(_joined(head, run))
        head, run = None, []
        if isinstance(event, (Text, CallArgs)):
            head, run = event, [event.text if isinstance(event, Text) else event.fragment]
        else:
            merged.append(event)
    if head is not None:
        merged.append(_joined(head, run))
    return merged


def _joined(head: Event, run: list[str]) -> Event:
    if len(run) == 1:
        return head
    if isinstance(head, Text):
        return Text("".join(run))
    assert isinstance(head, CallArgs)
    return CallArgs(head.index, "".join(run))


def build_result(events: list[Event]) -> ParseResult:
    """Fold a whole response's events into its `ParseResult`. Calls without `CallEnd` are not calls,
    and hold no index: the calls returned are numbered 0..n-1 in order."""
    text_parts: list[str] = []
    started: dict[int, CallStart] = {}
    fragments: dict[int, list[str]] = {}
    calls: list[ToolCall] = []
    for event in events:
        if isinstance(event, Text):
            text_parts.append(event.text)
        elif isinstance(event, CallStart):
            started[event.index] = event
            fragments[event.index] = []
        elif isinstance(event, CallArgs):
            fragments[event.index].append(event.fragment)
        else:
            start = started[event.index]
            arguments_json = "".join(fragments[event.index])
            calls.append(ToolCall(len(calls), start.id, start.name, event.arguments, arguments_json))
    content = "".join(text_parts)  # trimmed by the stream already, unless its format keeps whitespace
    return ParseResult(content or None, calls)
