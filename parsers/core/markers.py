"""Finding markers in streamed text, and holding back a marker that is still arriving.

A marker such as `<tool_call>` may be split across deltas (`<tool_` then `call>`). Text is released
only when it can no longer become part of a marker: the scanner reports the earliest complete marker,
or, when there is none, how long the suffix is that could still grow into one. That suffix is the only
thing held back, so the hold-back is bounded by the longest marker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def literal_at(text: str, pos: int, literals: Iterable[str]) -> str | None:
    """Which of `literals` the text at `pos` is: that literal (the first one given, where several
    match); None while `text[pos:]` is a proper prefix of one, which more text may complete (hold it
    back); "" when it is none of them (a mismatch)."""
    rest = len(text) - pos
    partial = False
    for literal in literals:
        if text.startswith(literal, pos):
            return literal
        partial = partial or (rest < len(literal) and literal.startswith(text[pos:]))
    return None if partial else ""


class MarkerScanner:
    """Searches text for the earliest of a fixed set of literal markers."""

    def __init__(self, markers: Iterable[str]) -> None:
        self.markers = tuple(sorted(set(markers), key=len, reverse=True))
        if not self.markers or not all(self.markers):
            raise ValueError("markers must be non-empty strings")
        self._pattern = re.compile("|".join(re.escape(m) for m in self.markers))
        self._proper_prefixes = {m[:i] for m in self.markers for i in range(1, len(m))}
        self._first_chars = {m[0] for m in self.markers}
        self._first_char = self.markers[0][0]
        self._longest = len(self.markers[0])

    def search(self, text: str, start: int = 0) -> re.Match[str] | None:
        """The earliest complete marker at or after `start` (the longest one where markers overlap)."""
        return self._pattern.search(text, start)

    def partial_len(self, text: str, start: int = 0) -> int:
        """Length of the longest suffix of `text[start:]` that is a proper prefix of a marker (0 if none)."""
        window = min(self._longest - 1, len(text) - start)
        if window <= 0:
            return 0
        floor = len(text) - window
        if len(self._first_chars) == 1:  # the usual case: every marker starts with "<" or "["
            first = text.find(self._first_char, floor)
        else:
            first = min((i for c in self._first_chars if (i := text.find(c, floor)) >= 0), default=-1)
        if first < 0:
            return 0
        for begin in range(first, len(text)):
            if text[begin:] in self._proper_prefixes:
                return len(text) - begin
        return 0

    def releasable(self, text: str, start: int = 0) -> int:
        """Where the text that can no longer become a marker ends (no complete marker in it)."""
        return len(text) - self.partial_len(text, start)
