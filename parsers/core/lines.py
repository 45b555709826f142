"""Line breaks, defined once for every format where a line break is framing.

A line break is `\\n` or `\\r\\n`, and a `\\r\\n` is always ONE line break: where a line break is
framing (the one before a line-start call, after an opening tag or fence line, before a closing tag
or fence), all of a `\\r\\n` is framing, never only its `\\n` (which would leave a stray `\\r` in the
text or the value). A lone `\\r` breaks no line. A `\\r` that ends the text read so far may be the
first half of a `\\r\\n`, so it waits (one character) until the next piece shows.

- `next_break` / `BREAK_PATTERN`: where the next line break is (a format whose text also stops at
  other characters puts the pattern into its own regex, so one search finds the nearer);
  `break_at`, `trailing_break`, `before_break`: the break at a position, at the end, before a `\\n`.
- `LineStarts`: the line-start hold, for formats where what starts a line may be a call (Llama's
  JSON objects and call lists): a line's break and indentation wait until the line shows whether a
  call starts it; then they are that call's markup, else text.
- `HeldBreak`: the held break, for bodies whose last line break is framing when their end follows
  it (a fenced block's body, an XML element's, a parameter value's): it waits until what follows
  shows whether it was text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

BREAK_PATTERN = r"\r?\n|\r\Z"
"""A line break, or a `\\r` that ends the text (it may start a `\\r\\n`: the caller holds it)."""
_BREAK = re.compile(BREAK_PATTERN)
_INDENT = re.compile(r"[ \t]*")


def next_break(text: str, pos: int) -> tuple[int, str]:
    """The first line break at or after `pos`: (where it starts, the break, `\\n` or `\\r\\n`). None in
    `text`: (where the line's text surely ends, ""): the end of `text`, or the `\\r` that ends it."""
    m = _BREAK.search(text, pos)
    if m is None:
        return len(text), ""
    found = m.group()
    return m.start(), ("" if found == "\r" else found)


def break_at(text: str, pos: int) -> int | None:
    """How long the line break at `pos` (< len(text)) is: 2 (`\\r\\n`), 1 (`\\n`) or 0 (none); None
    for a `\\r` that ends `text`, which may still become a `\\r\\n`."""
    c = text[pos]
    if c == "\n":
        return 1
    if c != "\r":
        return 0
    if pos + 1 == len(text):
        return None
    return 2 if text[pos + 1] == "\n" else 0


def trailing_break(text: str) -> int:
    """How long the line break that ends `text` is: 2 (`\\r\\n`), 1 (`\\n`) or 0."""
    if not text.endswith("\n"):
        return 0
    return 2 if text.endswith("\r\n") else 1


def before_break(line: str) -> str:
    """A line's text, `line` being what came before its `\\n`: a `\\r` right before the `\\n` is part
    of the line break."""
    return line[:-1] if line.endswith("\r") else line


class LineStarts:
    """The line-start hold: content goes out through `text`, and at a line start its line break and
    indentation are held (consumed, never re-read) until the line shows whether a call starts it:
    `take` gives them to that call, `release` sends them as text. A `\\r` that ends the text so far
    is held too (one character): it may start a `\\r\\n`. The output's start is a line start."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._held: list[str] | None = []  # at a line start: its break and indentation; None mid-line
        self._cr = False  # mid-line: a `\r` that ended the text so far, not sent yet

    @property
    def at_line_start(self) -> bool:
        return self._held is not None

    def text(self, text: str) -> None:
        """Content, in order."""
        if not text:
            return
        if self._cr:  # the held `\r` goes out with what follows it, or joins its line break
            self._cr, text = False, "\r" + text
        newline = text.rfind("\n")
        if self._held is not None:
            if newline < 0 and _INDENT.fullmatch(text):
                self._held.append(text)  # more indentation
                return
            self.release()
        if newline >= 0 and _INDENT.fullmatch(text, newline + 1):  # the text ends at a line start
            cut = newline - 1 if newline > 0 and text[newline - 1] == "\r" else newline
            self._emit(text[:cut])
            self._held = [text[cut:]]
        elif text.endswith("\r"):
            self._emit(text[:-1])
            self._cr = True
        else:
            self._emit(text)

    def release(self) -> None:
        """What is held is text after all; reading goes on mid-line."""
        if self._held:
            self._emit("".join(self._held))
        if self._cr:
            self._emit("\r")
        self._held, self._cr = None, False

    def take(self) -> str:
        """What starts here takes the held line break and indentation (returned; "" mid-line, where
        a held `\\r` is text: it breaks no line). Reading goes on mid-line."""
        if self._cr:
            self.release()
        held, self._held = "".join(self._held or ()), None
        return held

    def pending(self) -> str:
        """What is held, not sent yet."""
        return "".join(self._held or ()) + ("\r" if self._cr else "")


class HeldBreak:
    """The held break: the line break that ends a body read so far, framing if the body's end follows
    it and text otherwise, held (consumed, never re-read) until what follows shows which."""

    __slots__ = ("held",)

    def __init__(self) -> None:
        self.held = ""

    def hold(self, line_break: str) -> str:
        """A line break ends the body so far: it is held, and the one held before it, which is text
        after all, is returned."""
        before, self.held = self.held, line_break
        return before

    def release(self) -> str:
        """Text follows: the held line break is text (returned)."""
        held, self.held = self.held, ""
        return held

    def drop(self) -> None:
        """The body's end follows: the held line break was framing."""
        self.held = ""
