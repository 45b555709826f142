"""Reading a block's body up to the markup that ends it: a CommonMark fenced block's lines up to its
closing fence line, and an XML element's text up to its end tag.

Both readers have one shape (h11's readers): `read(text, pos)` consumes what it can and returns where
it stopped, or None to hold the rest back; `closed` says the closing markup has been read. Every
piece read goes to `emit` as it is read (a format keeps a call block's text, to return it as text
if the block is not a call; a content fence's text goes out as text). When the body is a value, its
content also goes to `content` (`gptme_blocks.BlockBody`): text through `write`, each line break
through `hold_break`, since the line break before the closing markup is framing, not content.
Line breaks are `core.lines`': a `\\r\\n` is one line break, and a `\\r` that ends the text read
so far waits for the next piece.

**Fences.** A fence is at most 3 spaces, then a run of 3 or more backticks or of 3 or more tildes.
A block opened by one ends at its closing fence line: at most 3 spaces, a run of the opening fence's
character at least as long, then only spaces, tabs or `\\r`, then `\\n` or the end of the output. Any
other line, a shorter fence or one of the other character included, is content. A run longer than
MAX_FENCE is no fence here (CommonMark sets no limit): the bound keeps what a line start holds back
short.

**Elements.** An element's text runs to the first `</NAME>`, XML entities decoded
(`core.xml_entities`; a bare `<` or `&` is text); one line break right after the start tag is
framing too. What is held back: a partial end tag or entity.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from .lines import BREAK_PATTERN, next_break
from .markers import literal_at
from .xml_entities import entity_at

MAX_FENCE = 64
"""The longest run of backticks or tildes that is a fence (so a line start holds back at most 67)."""

_FENCE_HEAD = re.compile(rf" {{0,3}}(?:`{{1,{MAX_FENCE + 1}}}|~{{1,{MAX_FENCE + 1}}})?")
_TRAILING = re.compile(r"[ \t\r]*")
_ELEMENT_STOP = re.compile(f"[<&]|{BREAK_PATTERN}")


class BodyContent(Protocol):
    """Where a body's content goes when it is a value (`gptme_blocks.BlockBody`)."""

    def write(self, data: str) -> None: ...

    def hold_break(self, line_break: str) -> None: ...


def fence_at(text: str, pos: int) -> tuple[str, int] | None:
    """At a line start: (the fence run, where the line's head ends), "" for no fence; None while the
    head reaches the end of `text` and may still grow (at most 3 + MAX_FENCE + 1 characters)."""
    m = _FENCE_HEAD.match(text, pos)
    assert m is not None
    run = m.group().lstrip(" ")
    if m.end() == len(text) and len(run) <= MAX_FENCE:
        return None
    return (run if 3 <= len(run) <= MAX_FENCE else ""), m.end()


# A fence's lines: at a line start; mid-line; after a run that may close the block.
_LINE_START, _LINE, _CLOSING = "line_start", "line", "closing"


class FencedLines:
    """The lines of a block opened by the fence `run`, read from a line start (or, `at_line_start`
    False, from mid-line) up to and including its closing fence line."""

    def __init__(
        self,
        run: str,
        emit: Callable[[str], None],
        content: BodyContent | None = None,
        *,
        at_line_start: bool = True,
    ) -> None:
        self._char, self._len = run[0], len(run)
        self._emit = emit
        self._content = content
        self._state = _LINE_START if at_line_start else _LINE
        self._closing: list[str] = []  # the line of a run that may close the block, read so far
        self.closed = False

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`, at most up to the closing line's `\\n`; None to hold `text[pos:]` back (a
        line's head that may grow into a fence, or a `\\r` that may start a line break)."""
        if self._state == _LINE_START:
            return self._line_start(text, pos)
        if self._state == _CLOSING:
            return self._after_run(text, pos)
        return self._line(text, pos)

    def read_eof(self, rest: str) -> bool:
        """The end of the output, `rest` being what was held back: whether it closes the block (then
        `rest` is read); if not, `rest` is left to the caller."""
        if self._state == _LINE_START and rest:
            run = rest.lstrip(" ")
            if self._closes(run) and run == self._char * len(run):
                self._emit(rest)
                self._state = _CLOSING
        return self._state == _CLOSING

    def _closes(self, run: str) -> bool:
        return run[:1] == self._char and self._len <= len(run) <= MAX_FENCE

    def _line_start(self, text: str, pos: int) -> int | None:
        head = fence_at(text, pos)
        if head is None:
            return None
        run, end = head
        if not self._closes(run):
            self._state = _LINE
            return self._line(text, pos)
        self._closing = [text[pos:end]]
        self._emit(text[pos:end])
        self._state = _CLOSING
        return end

    def _line(self, text: str, pos: int) -> int | None:
        """A line's text up to its line break (`\\n` or `\\r\\n`), which the content holds."""
        end, line_break = next_break(text, pos)
        if not line_break and end == pos:
            return None  # only the `\r` is left
        self._emit(text[pos:end])
        if self._content is not None:
            self._content.write(text[pos:end])
        if not line_break:
            return end
        self._emit(line_break)
        if self._content is not None:
            self._content.hold_break(line_break)
        self._state = _LINE_START
        return end + len(line_break)

    def _after_run(self, text: str, pos: int) -> int | None:
        """After a run that may close the block: spaces (read), then the line's end closes it;
        anything else makes the line content."""
        end = _TRAILING.match(text, pos).end()  # type: ignore[union-attr]
        if end > pos:
            self._closing.append(text[pos:end])
            self._emit(text[pos:end])
            return end
        if text[pos] == "\n":
            self._emit("\n")
            self.closed = True
            return pos + 1
        if self._content is not None:
            self._content.write("".join(self._closing))
        self._closing = []
        self._state = _LINE
        return self._line(text, pos)


class ElementText:
    """An XML element's text after its start tag, read up to and including `end_tag`. The end of
    the output leaves it unclosed."""

    def __init__(self, end_tag: str, emit: Callable[[str], None], content: BodyContent) -> None:
        self._end_tag = end_tag
        self._emit = emit
        self._content = content
        self._started = False  # something was read: a line break is no longer the framing first one
        self.closed = False

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`, at most up to the end tag; None to hold `text[pos:]` back (a partial end
        tag or entity, or a `\\r` that may start a line break)."""
        m = _ELEMENT_STOP.search(text, pos)
        if m is None or m.start() > pos:
            end = len(text) if m is None else m.start()
            self._data(text[pos:end], text[pos:end])
            return end
        stop = m.group()
        if stop == "\r":
            return None  # a `\r` at the end: it may start a `\r\n`
        if stop[-1] == "\n":
            self._emit(stop)
            if self._started:
                self._content.hold_break(stop)
            self._started = True
            return pos + len(stop)
        if stop == "&":
            entity = entity_at(text, pos)
            if entity is None:
                return None
            decoded, end = entity
            self._data(text[pos:end], decoded)
            return end
        end_tag = literal_at(text, pos, (self._end_tag,))
        if end_tag is None:
            return None
        if not end_tag:
            self._data("<", "<")
            return pos + 1
        self._emit(end_tag)
        self.closed = True
        return pos + len(end_tag)

    def _data(self, read: str, data: str) -> None:
        """Content: `read` as written, `data` as it reads."""
        self._emit(read)
        self._content.write(data)
        self._started = True
