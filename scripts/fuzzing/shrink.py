"""Shrinking a violation: delta debugging over characters, then chunks, then tools; a generated
document's expectation holds only for whole parts, so those are shrunk by dropping parts."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .generate import Case, assemble
from .invariants import Checker, Violation
from .values import Chunks, Tools


def ddmin(units: list[Any], fails: Callable[[list[Any]], bool], deadline: float) -> list[Any]:
    """Delta debugging (complements only): the smallest list found that still fails, by `deadline`."""
    n = 2
    while len(units) >= 2 and time.monotonic() < deadline:
        size = -(-len(units) // n)
        for start in range(0, len(units), size):
            trial = units[:start] + units[start + size :]
            if time.monotonic() >= deadline:
                return units
            if fails(trial):
                units = trial
                n = max(n - 1, 2)
                break
        else:
            if n >= len(units):
                break
            n = min(len(units), n * 2)
    return units


def sweep(units: list[Any], fails: Callable[[list[Any]], bool], deadline: float) -> list[Any]:
    """Remove windows of 16 down to 1 units wherever that still fails: takes out the small balanced
    pieces (`"a":1,`) that ddmin's halves cannot remove one unit at a time."""
    for width in (16, 8, 4, 3, 2, 1):
        start = 0
        while start + width <= len(units):
            if time.monotonic() >= deadline:
                return units
            trial = units[:start] + units[start + width :]
            if fails(trial):
                units = trial
            else:
                start += 1
    return units


def _units(chunks: Chunks) -> list[tuple[str, int]]:
    return [(c, k) for k, chunk in enumerate(chunks) for c in chunk]


def _rebuild(units: list[tuple[str, int]]) -> tuple[str, Chunks]:
    chunks: list[list[str]] = []
    last = None
    for c, k in units:
        if k != last:
            chunks.append([])
            last = k
        chunks[-1].append(c)
    joined = ["".join(chunk) for chunk in chunks]
    return "".join(joined), joined or [""]


def shrink(checker: Checker, case: Case, violation: Violation, deadline: float) -> tuple[str, Tools, Chunks]:
    """The smallest (text, tools, chunks) that still shows a violation with the same key."""
    key = violation.key
    chunks = violation.chunks or [case.text]

    def fails(text: str, tools: Tools, chunks: Chunks) -> bool:
        chunkings = [] if len(chunks) == 1 and chunks[0] == text else [chunks]
        return any(v.key == key for v in checker.check(text, tools, chunkings))

    tools = case.tools
    if not fails(case.text, tools, chunks):
        return case.text, tools, chunks  # not reproducible alone (load, or it needs the other chunking)

    def fails_units(units: list[tuple[str, int]]) -> bool:
        text, chunks = _rebuild(units)
        return fails(text, tools, chunks)

    units = ddmin(_units(chunks), fails_units, deadline)
    if len(units) <= 2000:
        units = sweep(units, fails_units, deadline)
    text, chunks = _rebuild(units)
    i = 0
    while i < len(chunks) - 1 and time.monotonic() < deadline:
        trial = [*chunks[:i], chunks[i] + chunks[i + 1], *chunks[i + 2 :]]
        if fails(text, tools, trial):
            chunks = trial
        else:
            i += 1
    if tools and fails(text, None, chunks):
        tools = None
    k = 0
    while tools and k < len(tools) and time.monotonic() < deadline:
        trial_tools = tools[:k] + tools[k + 1 :]
        if fails(text, trial_tools or None, chunks):
            tools = trial_tools or None
        else:
            k += 1
    return text, tools, chunks


def shrink_document(checker: Checker, case: Case, violation: Violation, deadline: float) -> Case:
    """A valid document's expectation only holds for whole parts: drop parts while it still fails."""
    assert case.parts is not None
    parts = case.parts
    i = 0
    while i < len(parts) and time.monotonic() < deadline:
        trial = parts[:i] + parts[i + 1 :]
        doc = assemble(case.fmt, trial)
        if trial and any(v.key == violation.key for v in checker.check(doc.text, doc.tools, [], doc.expected)):
            parts = trial
        else:
            i += 1
    doc = assemble(case.fmt, parts)
    doc.index = case.index
    return doc
