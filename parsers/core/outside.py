"""Text outside tool calls, shared by the formats.

Releases text to the stream, holds back only a suffix that may still grow into a marker, finds the
format's start markers, and passes reasoning blocks (`<think>..</think>` by default) through as text,
so that nothing written inside reasoning starts a call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .markers import MarkerScanner


class OutsideCalls:
    """Scans the text between calls for the next start marker."""

    def __init__(self, emit: Callable[[str], None], starts: Sequence[str], think: tuple[str, str] | None) -> None:
        self._emit = emit
        self._starts = frozenset(starts)
        self._outside = MarkerScanner([*starts, *([think[0]] if think else [])])
        self._inside = MarkerScanner([think[1]]) if think else None
        self._in_think = False
        self.held = ""  # a suffix that may still become a marker

    def scan(self, text: str) -> tuple[re.Match[str] | None, str]:
        """Release the text before the next start marker: (the marker, the text after it), or
        (None, "") when `text` holds no start marker (a partial one is held)."""
        text = self.held + text
        self.held = ""
        while text:
            scanner = self._inside if self._in_think else self._outside
            assert scanner is not None
            before, m, self.held = scanner.split(text)
            self._emit(before)
            if m is None:
                return None, ""
            if not self._in_think and m.group() in self._starts:
                return m, text[m.end() :]
            self._emit(m.group())  # entering or leaving reasoning
            self._in_think = not self._in_think
            text = text[m.end() :]
        return None, ""

    def release(self) -> str:
        """End of output: the held suffix, which can no longer become a marker."""
        held, self.held = self.held, ""
        return held
