"""Fold an OpenAI Chat Completions stream into what a client reads, checking the delta rules.

One accumulator for every tool and test that reads a stream (the smoke command, the load test, the
end-to-end and serving-layer tests), so all of them check the same rules:

- the first delta of a call (a new `index`) carries its id, `type="function"` and its name;
- later deltas of that call carry neither id nor name;
- indexes first appear in order 0, 1, ..., n-1;
- argument fragments are strings, and their concatenation is the call's arguments (a JSON object,
  checked by `problems_with_arguments` once the stream is done).

It takes chunks as the `openai` client yields them (objects), as parsed SSE JSON (dicts), or single
deltas (`add_delta`, e.g. vLLM's `DeltaMessage`); a breach of a rule is recorded in `problems`, never
raised, so a tool can report it and a test can assert there is none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


@dataclass
class StreamedCall:
    """One call as a client rebuilt it from the stream."""

    index: int
    id: str | None
    name: str | None
    arguments: str = ""

    def pair(self) -> tuple[str, Any]:
        """(name, decoded arguments); the arguments text where it is not JSON."""
        try:
            return self.name or "", json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return self.name or "", self.arguments


@dataclass
class StreamFold:
    """The message a client rebuilds from a stream: content, reasoning, calls, finish reason, the
    usage's completion tokens, and every breach of the delta rules (`problems`)."""

    content_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    by_index: dict[int, StreamedCall] = field(default_factory=dict)
    finish: str | None = None
    tokens: int = 0
    problems: list[str] = field(default_factory=list)

    def add_chunk(self, chunk: Any) -> None:
        """One streamed chunk (`openai` object or SSE JSON dict): every choice's delta."""
        usage = _get(chunk, "usage")
        if usage:
            self.tokens = _get(usage, "completion_tokens") or self.tokens
        for choice in _get(chunk, "choices") or []:
            self.add_delta(_get(choice, "delta"), _get(choice, "finish_reason"))

    def add_delta(self, delta: Any, finish_reason: str | None = None) -> None:
        """One delta (a choice's `delta`, or a vLLM `DeltaMessage`)."""
        self.finish = finish_reason or self.finish
        if delta is None:
            return
        self.content_parts.append(_get(delta, "content") or "")
        self.reasoning_parts.append(_get(delta, "reasoning_content") or _get(delta, "reasoning") or "")
        for tc in _get(delta, "tool_calls") or []:
            self._add_call_delta(tc)

    def _add_call_delta(self, tc: Any) -> None:
        index, function = _get(tc, "index"), _get(tc, "function")
        name, fragment = _get(function, "name"), _get(function, "arguments")
        call = self.by_index.get(index)
        if call is None:
            if index != len(self.by_index):
                self.problems.append(f"call index {index} after {sorted(self.by_index)}")
            if not (_get(tc, "id") and _get(tc, "type") == "function" and name):
                self.problems.append(f"first delta of call {index} lacks id/type/name: {tc}")
            call = self.by_index[index] = StreamedCall(index, _get(tc, "id"), name)
        elif _get(tc, "id") or name:
            self.problems.append(f"later delta of call {index} repeats id/name: {tc}")
        if fragment is None:
            return
        if not isinstance(fragment, str):
            self.problems.append(f"arguments of {call.name!r} are not a JSON string (a {type(fragment).__name__})")
            return
        call.arguments += fragment

    @property
    def content(self) -> str | None:
        return "".join(self.content_parts) or None

    @property
    def reasoning(self) -> str | None:
        return "".join(self.reasoning_parts) or None

    @property
    def calls(self) -> list[StreamedCall]:
        return [self.by_index[i] for i in sorted(self.by_index)]

    def pairs(self) -> list[tuple[str, Any]]:
        """(name, decoded arguments) per call, in index order."""
        return [call.pair() for call in self.calls]

    def problems_with_arguments(self) -> list[str]:
        """The calls whose concatenated fragments are not a JSON object."""
        return arguments_problems((call.name, call.arguments) for call in self.calls)

    def all_problems(self) -> list[str]:
        """Delta-rule breaches and arguments that are not a JSON object."""
        return self.problems + self.problems_with_arguments()


def arguments_problems(calls: Iterable[tuple[str | None, str]]) -> list[str]:
    """One problem per (name, arguments text) whose arguments are not a JSON object (a call cut by
    max_tokens, a broken stream): the same words for every endpoint (`replies`)."""
    problems = []
    for name, arguments in calls:
        try:
            value = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            problems.append(f"arguments of {name!r} are not JSON: {arguments[:80]!r}")
            continue
        if not isinstance(value, dict):
            problems.append(f"arguments of {name!r} are not a JSON object: {arguments[:80]!r}")
    return problems


def fold_stream(chunks: Any) -> StreamFold:
    """Every chunk of a (synchronous) stream, folded."""
    fold = StreamFold()
    for chunk in chunks:
        fold.add_chunk(chunk)
    return fold


async def fold_async_stream(chunks: Any) -> StreamFold:
    """Every chunk of an async stream (`openai.AsyncOpenAI`), folded."""
    fold = StreamFold()
    async for chunk in chunks:
        fold.add_chunk(chunk)
    return fold
