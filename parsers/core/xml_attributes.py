"""A tag's attributes, `key="value"` pairs, as DeepSeek's DSML and Kimi K3's XTML write them::

    ATTRS := (\\s+ NAME '="' [^"]* '"')* \\s*       # at most 2 * max_name + 64 characters

A value holds no `"` (the formats escape it, each its own way: decoding is the format's). ATTRS
stream in as the model writes them, so the reader consumes them as they come, holding back only a
partial end of the tag; past the bound the tag breaks where the text says (at the bound), so no
chunking changes what follows.
"""

from __future__ import annotations

import re

from .limits import Limits
from .logs import shorten
from .markers import MarkerScanner
from .stream import NotACall

_ATTRS = re.compile(r'(?:\s++[A-Za-z_][\w.:-]*+="[^"]*+")*+\s*+')  # possessive: never backtracks
_ATTR = re.compile(r'([A-Za-z_][\w.:-]*)="([^"]*)"')


def tag_attributes(attrs: str) -> dict[str, str] | None:
    """A tag's `key="value"` pairs, or None where ATTRS holds anything else."""
    return dict(_ATTR.findall(attrs)) if _ATTRS.fullmatch(attrs) is not None else None


class AttributesReader:
    """ATTRS up to the literal that ends the tag (Kimi K3's `<|sep|>`); one tag at a time."""

    __slots__ = ("_bound", "_end", "_end_scanner", "_parts", "_read")

    def __init__(self, end: str, limits: Limits) -> None:
        self._end = end
        self._end_scanner = MarkerScanner([end])
        self._bound = 2 * limits.max_name + 64
        self._parts: list[str] = []  # the ATTRS read so far, and their length (bounded)
        self._read = 0

    def read(self, text: str, pos: int, raw: list[str]) -> tuple[int | None, dict[str, str] | None]:
        """Consume ATTRS from `pos`, and the tag's end, into `raw` (the tag's text if it breaks):
        (where reading stops, None to hold back a partial end; the pairs once the end is read).
        Raises NotACall past the bound (reading goes on at the bound) or for malformed ATTRS (after
        the end)."""
        room = self._bound - self._read
        end = text.find(self._end, pos, pos + room + len(self._end))
        if end < 0:
            if len(text) - pos >= room + len(self._end):
                raw.append(text[pos : pos + room])
                self._parts, self._read = [], 0
                raise NotACall("the tag's attributes are too long (TOOLCALL_PARSERS_MAX_NAME)", pos + room)
            cut = min(self._end_scanner.releasable(text, pos), pos + room)  # a partial end waits
            self._parts.append(text[pos:cut])
            self._read += cut - pos
            raw.append(text[pos:cut])
            return (cut if cut > pos else None), None
        attrs = "".join(self._parts) + text[pos:end]
        self._parts, self._read = [], 0
        after = end + len(self._end)
        raw.append(text[pos:after])
        if (pairs := tag_attributes(attrs)) is None:
            raise NotACall(f"malformed attributes {shorten(attrs)}", after)
        return after, pairs
