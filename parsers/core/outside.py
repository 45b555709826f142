"""Text outside tool calls, shared by the formats.

Releases text to the stream, holds back only a suffix that may still grow into a marker, finds the
format's start markers, and passes reasoning blocks (`<think>..</think>` by default; a format may name
several kinds, as Mistral's `[THINK]..[/THINK]` and Magistral's plain-text `<think>..</think>`) through
as text, so that nothing written inside reasoning starts a call.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .markers import MarkerScanner

ThinkMarkers = tuple[str, str] | Sequence[tuple[str, str]] | None
"""One (open, close) pair of reasoning markers, several, or None."""


class OutsideCalls:
    """Scans the text between calls for the next start marker."""

    def __init__(self, emit: Callable[[str], None], starts: Sequence[str], think: ThinkMarkers) -> None:
        self._emit = emit
        self._starts = frozenset(starts)
        pairs = [] if not think else [think] if isinstance(think[0], str) else list(think)
        self._closers = {opener: MarkerScanner([closer]) for opener, closer in pairs}  # type: ignore[misc]
        self._outside = MarkerScanner([*starts, *self._closers])
        self._inside: MarkerScanner | None = None  # inside reasoning: the scanner for its closer

    @property
    def in_think(self) -> bool:
        return self._inside is not None

    def scan(self, text: str, pos: int) -> tuple[re.Match[str] | None, int]:
        """Release the text from `pos` to the next start marker: (the marker, the position after
        it); or (None, the position up to which text was released), the rest of `text` being a
        partial marker to hold back."""
        end = len(text)
        while pos < end:
            scanner = self._inside or self._outside
            m = scanner.search(text, pos)
            if m is None:
                cut = scanner.releasable(text, pos)
                self._emit(text[pos:cut])
                return None, cut
            self._emit(text[pos : m.start()])
            if self._inside is None and m.group() in self._starts:
                return m, m.end()
            self._emit(m.group())  # entering or leaving reasoning
            self._inside = None if self._inside is not None else self._closers[m.group()]
            pos = m.end()
        return None, pos

    def read(self, text: str, pos: int) -> tuple[re.Match[str] | None, int | None]:
        """`scan` for a format's text reader: (the marker, the position after it), or (None, where
        the reader stops: None when only a partial marker is left to hold back)."""
        m, at = self.scan(text, pos)
        if m is None and at == pos:
            return None, None
        return m, at
