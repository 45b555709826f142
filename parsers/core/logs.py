"""The package's one logger, and the two rules every line it writes follows.

- **Bounded.** A line is at most `MAX_LINE` characters whatever part of it comes from the request or
  the output (a tool name, a parameter name, a span); spans are shortened where they are written
  (`shorten`), and a filter on the logger cuts any line still too long, so no caller can forget.
- **Silenced only where asked.** Tools that parse on purpose what they know is broken (detection
  probes, a load test's reference results) silence the parsers for their own block: the silence is
  per thread and task (a context variable) and counts nested blocks, so detection in one thread
  never hides another request's warnings, and the first of two overlapping blocks to end does not
  lift the other's silence. The operator's level is never touched (assigning a logger's level
  directly would also skip the reset of its cached enabled-levels).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

logger = logging.getLogger("toolcall_parsers")

MAX_LINE = 2000
"""Most characters of one log line's message."""
_SPAN_LIMIT = 200
_SILENCE: ContextVar[int] = ContextVar("toolcall_parsers_silence", default=0)


def shorten(span: str, limit: int = _SPAN_LIMIT) -> str:
    """A span for a log line: the ends of a long one, repr-quoted."""
    if len(span) > limit:
        span = span[: limit // 2] + " ... " + span[-limit // 2 :]
    return repr(span)


@contextmanager
def logs_silenced() -> Iterator[None]:
    """The parsers' log lines dropped for the block, in this thread or task only."""
    token = _SILENCE.set(_SILENCE.get() + 1)
    try:
        yield
    finally:
        _SILENCE.reset(token)


class _Discipline(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _SILENCE.get():
            return False
        message = record.getMessage()
        if len(message) > MAX_LINE:
            half = MAX_LINE // 2
            record.msg, record.args = (
                f"{message[:half]} ... [{len(message) - MAX_LINE} characters cut] ... {message[-half:]}",
                None,
            )
        return True


if not any(isinstance(f, _Discipline) for f in logger.filters):
    logger.addFilter(_Discipline())
