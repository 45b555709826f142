"""`LineStartStream`: the stream of a format whose calls may start a line (Llama's JSON objects, its
pythonic call lists), written once for `llama_json` and `llama_pythonic`.

Its content passes the line-start hold (`core.lines.LineStarts`: a line's break and indentation wait
until the line shows whether a call starts it), and the call being read is a reader object that owns
its state and its end of input (`read_eof`) and says what it holds back (`pending`). At the end of
the output the reader ends the call, or the markup read outside a reader is text; then the hold is
released.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from .ids import IdFactory
from .lines import LineStarts
from .stream import FormatStream


class EndingReader(Protocol):
    """What the stream asks of the reader of a call at the end of the output."""

    def read_eof(self, rest: str) -> None: ...

    def pending(self) -> str: ...


Reader = TypeVar("Reader", bound=EndingReader)


class LineStartStream(FormatStream, Generic[Reader]):
    """A format stream with a line-start hold and one reader at a time (see the module docstring)."""

    def __init__(self, tools: Any = None, id_factory: IdFactory | None = None) -> None:
        super().__init__(tools, id_factory)
        self._lines = LineStarts(super()._text)
        self._raw: list[str] = []  # markup read outside a reader: text if no call follows it
        self._call_reader: Reader | None = None  # the call (or call list) being read

    def _text(self, text: str) -> None:
        """Every piece of content goes out here, through the line-start hold."""
        if self._failed:
            super()._text(text)
        else:
            self._lines.text(text)

    def _close(self) -> None:
        rest, self._buf = self._buf, ""
        if self._call_reader is not None:
            self._call_reader.read_eof(rest)
        else:
            self._text("".join(self._raw) + rest)
        self._lines.release()
        self._raw, self._call_reader = [], None

    def _pending_text(self) -> str:
        reader = self._call_reader
        return self._lines.pending() + (reader.pending() if reader is not None else "".join(self._raw))
