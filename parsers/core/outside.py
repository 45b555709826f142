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
        self.in_think = False

    def scan(self, text: str, pos: int) -> tuple[re.Match[str] | None, int]:
        """Release the text from `pos` to the next start marker: (the marker, the position after
        it); or (None, the position up to which text was released), the rest of `text` being a
        partial marker to hold back."""
        end = len(text)
        while pos < end:
            scanner = self._inside if self.in_think else self._outside
            assert scanner is not None
            m = scanner.search(text, pos)
            if m is None:
                cut = scanner.releasable(text, pos)
                self._emit(text[pos:cut])
                return None, cut
            self._emit(text[pos : m.start()])
            if not self.in_think and m.group() in self._starts:
                return m, m.end()
            self._emit(m.group())  # entering or leaving reasoning
            self.in_think = not self.in_think
            pos = m.end()
        return None, pos

    def read(self, text: str, pos: int) -> tuple[re.Match[str] | None, int | None]:
        """`scan` for a format's text reader: (the marker, the position after it), or (None, where
        the reader stops: None when only a partial marker is left to hold back)."""
        m, at = self.scan(text, pos)
        if m is None and at == pos:
            return None, None
        return m, at
