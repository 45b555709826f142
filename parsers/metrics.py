"""Operator metrics: what the model writes, counted per response on the server's `/metrics`.

vLLM counts only whether a parser found a call (`vllm:tool_call_parser_invocations_total`). Ours
know every failure, and the adapters hand each response's count (`core.tally.Tally`, kept by the
stream as it reads) to `record_response` when the response ends, finished or streamed; reasoning
adapters hand theirs to `record_reasoning`. The counters live in prometheus_client's default
registry, the one `vllm serve` (and SGLang with `--enable-metrics`) exposes, so they appear there
with no flag beyond our parser. Labels are bounded: the engine, the format's name (ours, or the
derived parsers' `from_response_template` / `from_chat_template`), the mode and a fixed kind; never
a tool name or a request id. docs/operations.md says what each means and how to chart it.

Counting happens once per response (a response that never ends, a client gone mid-stream, is not
counted), so it costs nothing per delta. `TOOLCALL_PARSERS_METRICS=0` turns it off; without
prometheus_client it is off.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from .core.tally import KINDS, Tally

PREFIX = "toolcall_parsers:"
_LABELS = ("engine", "format", "mode")
_lock = threading.Lock()
_counters: dict[str, Any] | None = None


def enabled() -> bool:
    """Whether responses are counted (`TOOLCALL_PARSERS_METRICS`, on unless `0`)."""
    return os.environ.get("TOOLCALL_PARSERS_METRICS", "1") != "0" and _registered() is not None


def _registered() -> dict[str, Any] | None:
    """The counters, registered on first use (or found, where another import registered them)."""
    global _counters
    if _counters is not None:
        return _counters or None
    with _lock:
        if _counters is None:
            try:
                _counters = _register()
            except ImportError:  # no prometheus_client: nothing to count into
                _counters = {}
            except Exception:  # a name taken by another collector: counting off, said once
                from .core.logs import logger

                logger.warning("toolcall_parsers: operator metrics off (registration failed)", exc_info=True)
                _counters = {}
    return _counters or None


def _counter(name: str, documentation: str, labels: tuple[str, ...]) -> Any:
    from prometheus_client import REGISTRY, Counter

    try:
        return Counter(PREFIX + name, documentation, labels)
    except ValueError:  # registered already (a second import of this module, a test's reload)
        return REGISTRY._names_to_collectors[PREFIX + name + "_total"]


def _register() -> dict[str, Any]:
    return {
        "responses": _counter("responses", "Responses our tool parser read, finished or streamed.", _LABELS),
        "calls": _counter("calls", "Tool calls returned to the client.", _LABELS),
        "undeclared_calls": _counter(
            "undeclared_calls", "Calls returned that name a tool the request did not declare.", _LABELS
        ),
        "schema_failures": _counter(
            "schema_failures",
            "Calls whose arguments the tool's schema refuses: returned (strict=false), or given back "
            "as text (strict=true).",
            (*_LABELS, "strict"),
        ),
        "rejected": _counter(
            "rejected_blocks",
            "Spans that looked like a call and were given back as text, by reason.",
            (*_LABELS, "reason"),
        ),
        "rejected_chars": _counter(
            "rejected_chars", "Characters of the spans given back as text, by reason.", (*_LABELS, "reason")
        ),
        "reasoning": _counter(
            "reasoning_blocks",
            "Reasoning blocks split off: closed by the model, or unclosed (the output ended inside).",
            (*_LABELS, "end"),
        ),
    }


def record_response(engine: str, format_name: str, mode: str, tally: Tally) -> None:
    """One response's count (`mode`: "finished" or "streamed"). Never raises."""
    if not enabled():
        return
    try:
        counters = _registered()
        assert counters is not None
        labels = (engine, format_name, mode)
        counters["responses"].labels(*labels).inc()
        if tally.calls:
            counters["calls"].labels(*labels).inc(tally.calls)
        if tally.undeclared_calls:
            counters["undeclared_calls"].labels(*labels).inc(tally.undeclared_calls)
        if tally.schema_failures:
            counters["schema_failures"].labels(*labels, "false").inc(tally.schema_failures)
        if refused := tally.rejected.get("schema", 0):
            counters["schema_failures"].labels(*labels, "true").inc(refused)
        for kind, count in tally.rejected.items():
            counters["rejected"].labels(*labels, kind).inc(count)
            counters["rejected_chars"].labels(*labels, kind).inc(tally.rejected_chars.get(kind, 0))
    except Exception:  # a metrics backend's failure must never reach the engine
        from .core.logs import logger

        logger.debug("toolcall_parsers: metrics not recorded", exc_info=True)


def record_reasoning(engine: str, format_name: str, mode: str, end: str | None) -> None:
    """One response's reasoning block: `end` "closed" or "unclosed"; None (no block) counts nothing."""
    if end is None or not enabled():
        return
    try:
        counters = _registered()
        assert counters is not None
        counters["reasoning"].labels(engine, format_name, mode, end).inc()
    except Exception:
        from .core.logs import logger

        logger.debug("toolcall_parsers: metrics not recorded", exc_info=True)


__all__ = ["KINDS", "PREFIX", "enabled", "record_reasoning", "record_response"]
