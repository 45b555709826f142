"""The shared half of every format machine: event output, content trimming, ids, never raising.

A format subclasses `FormatStream` and implements `_feed(text)` and `_close()`, reporting what it
recognises through `_text`, `_start_call`, `_call_args`, `_end_call` and `_reject`. This class turns
that into the public `feed()` / `close()` contract:

- Content is trimmed at both ends of the response the same way in streaming and in `parse()`:
  leading whitespace is never sent, and whitespace is held back until real text follows it (then
  sent), so whitespace next to a call or at the end never reaches the client.
- Call indexes run 0..n-1 over the whole response; ids come from the engine's factory.
- Nothing raises into the engine: an internal error is logged with the format name and the rest of
  the output is passed through as text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from .events import CallArgs, CallEnd, CallStart, Event, Text, merge_text
from .ids import IdFactory, random_call_id
from .tools import ToolIndex

logger = logging.getLogger("toolcall_parsers")

_SPAN_LIMIT = 200


def shorten(span: str) -> str:
    """A span for a log line: the ends of a long one, repr-quoted."""
    if len(span) > _SPAN_LIMIT:
        span = span[: _SPAN_LIMIT // 2] + " ... " + span[-_SPAN_LIMIT // 2 :]
    return repr(span)


class NotACall(Exception):
    """Raised by a format's reader: the text it is reading turns out not to be a call. `rest` is
    the text not consumed yet (None: the text the reader was given)."""

    def __init__(self, reason: str, rest: str | None = None) -> None:
        super().__init__(reason)
        self.rest = rest


class FormatStream:
    """Base of the incremental parsers; one instance parses one response.

    A format is a table of readers, one per state (as in h11): `_readers[_state](text)` consumes what
    it can, possibly changes `_state`, and returns the rest for the next reader. Text a reader cannot
    judge yet goes to `_buf` and comes back, with more, on the next feed. A reader raising NotACall
    hands over to `_recover`, which returns what is left to read.
    """

    format_name = "?"
    _readers: dict[int, Callable[[str], str]]
    _state: int

    def __init__(self, tools: Any = None, id_factory: IdFactory | None = None) -> None:
        self.tools = ToolIndex(tools)
        self._id_factory = id_factory or random_call_id
        self._out: list[Event] = []
        self._sent_text = False
        self._held_whitespace: list[str] = []
        self._next_index = 0
        self._failed = False
        self._closed = False
        self._buf = ""  # held back by the current reader until more text comes

    # -- public contract ----------------------------------------------------------------------

    def feed(self, text: str) -> list[Event]:
        """Consume the next piece of model output; return the events it makes unambiguous."""
        if self._closed:
            raise RuntimeError(f"{self.format_name}: feed() after close()")
        if not text:
            return []
        if self._failed:
            self._text(text)
        else:
            try:
                self._feed(text)
            except Exception:  # a bug of ours must not take the engine down
                self._fail(text)
        return self._drain()

    def close(self) -> list[Event]:
        """End of output: release held text and settle unfinished blocks."""
        if self._closed:
            return []
        self._closed = True
        if not self._failed:
            try:
                self._close()
            except Exception:
                self._fail("")
        self._held_whitespace.clear()
        return self._drain()

    # -- for the formats ----------------------------------------------------------------------

    def _feed(self, text: str) -> None:
        if self._buf:
            text = self._buf + text
            self._buf = ""
        readers = self._readers
        while text:
            try:
                text = readers[self._state](text)
            except NotACall as err:
                text = self._recover(err, text)

    def _recover(self, err: NotACall, text: str) -> str:
        raise err

    def _close(self) -> None:
        raise NotImplementedError

    def _pending_text(self) -> str:
        """Text the format holds back and has not reported yet (released when it fails)."""
        return ""

    def _text(self, text: str) -> None:
        if not text:
            return
        if not self._sent_text:
            text = text.lstrip()
            if not text:
                return
        body = text.rstrip()
        if not body:
            self._held_whitespace.append(text)
            return
        if self._held_whitespace:
            self._out.append(Text("".join(self._held_whitespace)))
            self._held_whitespace.clear()
        self._out.append(Text(body))
        self._sent_text = True
        if len(body) < len(text):
            self._held_whitespace.append(text[len(body) :])

    def _start_call(self, name: str, call_id: str | None = None) -> int:
        """Announce a call; `call_id` is a model-written id the format decided to keep."""
        index = self._next_index
        self._next_index += 1
        if not self.tools.knows(name):
            self._warn(f"call to {name!r}, which is not among the request's tools")
        self._out.append(CallStart(index, call_id or self._make_id(name, index), name))
        return index

    def _make_id(self, name: str, index: int) -> str:
        return self._id_factory(name, index)

    def _call_args(self, index: int, fragment: str) -> None:
        if fragment:
            self._out.append(CallArgs(index, fragment))

    def _end_call(self, index: int, arguments: dict[str, Any]) -> None:
        self._out.append(CallEnd(index, arguments))

    def _reject(self, reason: str, span: str) -> None:
        """A span that looked like a call is not one: log why, and return it as text."""
        if span:
            self._warn(f"{reason}; kept as text: {shorten(span)}")
            self._text(span)

    def _warn(self, message: str) -> None:
        logger.warning("%s: %s", self.format_name, message)

    # -- internals ----------------------------------------------------------------------------

    def _fail(self, text: str) -> None:
        logger.exception("%s: internal parser error; passing the rest of the output through", self.format_name)
        self._failed = True
        try:
            pending = self._pending_text()
        except Exception:
            pending = ""
        self._text(pending + text)

    def _drain(self) -> list[Event]:
        out = merge_text(self._out)
        self._out = []
        return out
