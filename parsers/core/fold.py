"""One fold of a format machine's events into what both engines keep per stream.

vLLM's `ToolParser` and SGLang's `BaseFormatDetector` keep the same two records of a stream's calls
(`prev_tool_call_arr`: the name and arguments of each call; `streamed_args_for_tool`: the arguments
sent) and flush what they think is missing at the end of a stream. Both records get a call's whole
arguments once the call ends (appending per delta would copy the growing string every time); until
then both hold "", equally consistent, so that flush adds nothing. Each adapter then only spells the
folded deltas in its engine's shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .events import CallArgs, CallEnd, CallStart, Event, Text


@dataclass(slots=True)
class CallDelta:
    """What one increment says of one call: its first delta names it (`name`, `id`), later ones
    carry argument fragments only."""

    index: int
    name: str | None
    id: str | None
    arguments: str = ""


@dataclass(slots=True)
class Folded:
    """One increment: the content, the call deltas (fragments of a call merged), and which calls
    started and ended in it."""

    content: str
    calls: list[CallDelta]
    started: list[int] = field(default_factory=list)
    ended: list[int] = field(default_factory=list)


class CallRecords:
    """The arguments sent for the call in progress, and the fold that keeps the engine object's
    records (`owner.prev_tool_call_arr`, `owner.streamed_args_for_tool`: read on every fold, since
    the engine owns those lists)."""

    def __init__(self, owner: Any) -> None:
        self._owner = owner
        self._sent: list[str] = []

    def fold(self, events: list[Event]) -> Folded:
        prev_tool_call_arr: list[dict[str, Any]] = self._owner.prev_tool_call_arr
        streamed_args_for_tool: list[str] = self._owner.streamed_args_for_tool
        content: list[str] = []
        out = Folded("", [])
        calls = out.calls
        for event in events:
            if isinstance(event, Text):
                content.append(event.text)
            elif isinstance(event, CallArgs):
                self._sent.append(event.fragment)
                last = calls[-1] if calls else None
                if last is not None and last.index == event.index:
                    last.arguments += event.fragment
                else:
                    calls.append(CallDelta(event.index, None, None, event.fragment))
            elif isinstance(event, CallStart):
                prev_tool_call_arr.append({"name": event.name, "arguments": ""})
                streamed_args_for_tool.append("")
                self._sent = []
                calls.append(CallDelta(event.index, event.name, event.id))
                out.started.append(event.index)
            elif isinstance(event, CallEnd):
                sent = "".join(self._sent)
                prev_tool_call_arr[-1]["arguments"] = streamed_args_for_tool[-1] = sent
                out.ended.append(event.index)
        out.content = "".join(content)
        return out


def finished_records(calls: list[Any]) -> list[dict[str, Any]]:
    """`prev_tool_call_arr` for a finished response (`ToolCall`s of a `ParseResult`)."""
    return [{"name": c.name, "arguments": c.arguments_json} for c in calls]
