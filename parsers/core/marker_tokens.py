"""Markers that are special tokens: which occurrences in the text the model generated as the token.

Where the tokenizer has a format's start marker as one special token, the same characters written
out by ordinary tokens (a model quoting the marker in prose) are text, not a marker. Only the engine
knows which token ids it generated: with each piece of text it says where in that piece each marker
token begins, and the format counts a marker only at one of those positions, in the same piece or
not.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable


class GeneratedMarkers:
    """The response offsets of the generated marker tokens a format has not reached yet, and where
    in the response the text it is reading starts (what it held back, then the new piece)."""

    __slots__ = ("_fed", "_offsets", "_read_from")

    def __init__(self) -> None:
        self._offsets: deque[int] = deque()
        self._fed = 0  # characters fed so far
        self._read_from = 0

    def piece(self, text: str, held: int, offsets: Iterable[int]) -> None:
        """A piece of text comes, marker tokens beginning at `offsets` in it; the format reads it
        after the `held` characters it held back before."""
        self._offsets.extend(sorted(self._fed + offset for offset in offsets))
        self._read_from = self._fed - held
        self._fed += len(text)

    def generated_at(self, pos: int) -> bool:
        """Whether a marker token was generated at `pos` in the text being read. The tokens before
        it are passed over: one inside a call's JSON, or in reasoning, is no marker."""
        offset, offsets = self._read_from + pos, self._offsets
        while offsets and offsets[0] < offset:
            offsets.popleft()
        if offsets and offsets[0] == offset:
            offsets.popleft()
            return True
        return False
