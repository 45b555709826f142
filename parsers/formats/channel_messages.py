"""The family machine of messages framed by special tokens, each with a header that says whether it
is a call: gpt-oss's Harmony (`harmony_json`) and Inkling's messages (`inkling_json`) configure it;
Muse Glimmer's (`muse_atem`), whose calls are XML blocks, reads its headers with `HeaderReader`.

    output  := (text | call | header-as-text)*
    call    := OPENER header END body [CLOSER]      # the first message may begin inside its header
    header  := (HEADER_TOKEN | header-char)*         # one line, at most max_name + 128 characters

The format decides what a complete header says (`_decide`, from the header's text and its END):
a call (its body is the call's arguments, read by the format's own named states), or not.
A message that is not a call (an answer, reasoning, a message to a built-in tool or to another
role) is text with its markup, as every input character that is not a call is: a reasoning parser
in front takes the reasoning out, as with `<think>`, and the client sees the rest as written.

A header that breaks (a line break, a token a header never holds, past its bound, the end of the
output) is text, and reading goes on where it broke. The prompt of these models ends with the
opener of the reply's first message, so the output may begin inside its header (`bare_header`:
every prefix of what may come before the header's first token then); an opener that is also an
END (Inkling's call token, written without the message's opener) is a header of its own.
Reasoning written as `<think>..</think>` (`think_markers`) is text with its markers, never a call.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.ids import IdFactory
from ..core.markers import literal_at
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import FormatStream, NotACall
from .constraints import Element, one_of, sequence
from .spec import ConstraintRequest

TEXT, HEADER = "text", "header"
"""The family's states, by name; a format reads a call's body in states of its own names."""

_HEADER_CHARS = re.compile(r"[^<\n]*")
_HEADER_SLACK = 128


class HeaderReader:
    """Reads one message header as it arrives, from its opener to the token that ends it: one line
    of at most max_name + 128 characters and the header's own tokens, each consumed once. After a
    `read`, `end` is the END read (the header is complete) or `broken` says it is no header; `raw`
    is its text."""

    def __init__(self, tokens: tuple[str, ...], ends: tuple[str, ...], bare: re.Pattern[str] | None, room: int) -> None:
        self._marks = (*tokens, *ends)
        self._ends = ends
        self._bare_pattern = bare
        self._room = room + _HEADER_SLACK
        self.raw: list[str] = []
        self._len = 0
        self._bare = False
        self.end: str | None = None
        self.broken = False

    def open(self, opener: str, *, bare: bool = False) -> None:
        """A header begins with `opener` ("" where the prompt opened it: `bare`)."""
        self.raw, self._len, self._bare = ([opener] if opener else []), 0, bare
        self.end, self.broken = None, False

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`: where reading stopped (at the break, if the header broke), or None to
        hold `text[pos:]` back (a partial token)."""
        if text[pos] != "<":
            end = _HEADER_CHARS.match(text, pos, pos + self._room - self._len + 1).end()  # type: ignore[union-attr]
            if end == pos:  # a line break
                self.broken = True
                return pos
            self.raw.append(text[pos:end])
            self._len += end - pos
            self.broken = self._len > self._room or (
                self._bare and not self._bare_pattern.fullmatch("".join(self.raw))  # type: ignore[union-attr]
            )
            return end
        token = literal_at(text, pos, self._marks)
        if token is None:
            return None
        if not token:
            self.broken = True
            return pos
        self.raw.append(token)
        self._bare = False
        if token in self._ends:
            self.end = token
        return pos + len(token)


class ChannelStream(FormatStream):
    """Incremental parser for one response of a format of framed messages."""

    openers: tuple[str, ...] = ()
    """Tokens that open a message's header anywhere in the text."""
    header_tokens: tuple[str, ...] = ()
    """Tokens a header may hold."""
    header_ends: tuple[str, ...] = ()
    """Tokens that end a header: the body follows."""
    bare_header: re.Pattern[str] | None = None
    """Where the prompt opened the reply's first message: what may come before the header's first
    token then, as a pattern every prefix of it matches in full (None: the output starts outside)."""

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = None
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, self.openers, think_markers)
        self._header = HeaderReader(self.header_tokens, self.header_ends, self.bare_header, self.limits.max_name)
        self._raw: list[str] = []  # the call's text, returned if it breaks
        self._state = TEXT
        if self.bare_header is not None:
            self._header.open("", bare=True)
            self._state = HEADER
        self._readers = {TEXT: self._scan_text, HEADER: self._scan_header}

    # -- for the formats ---------------------------------------------------------------------------

    def _decide(self, header: str, end: str) -> str | None:
        """Whether the complete `header` (its opener included, `end` not) opens a call: the tool's
        name ("" where the body names it), or None (the message is text)."""
        raise NotImplementedError

    def _open_call(self, name: str) -> None:
        """A call's header is read (it is in `_raw`): set the state that reads its body. May raise
        NotACall (the call is refused); the header is then text."""
        raise NotImplementedError

    def _close_call(self) -> None:
        """The output ended in one of the call's states, with `_buf` unread."""
        raise NotImplementedError

    def _call_done(self) -> None:
        """The call's message is over: back to text."""
        self._raw = []
        self._state = TEXT

    # -- text and headers --------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._header.open(m.group())
            self._state = HEADER
            if m.group() in self.header_ends:
                self._header.end = m.group()
                self._header_end(m.end())
        return at

    def _scan_header(self, text: str, pos: int) -> int | None:
        at = self._header.read(text, pos)
        if self._header.broken:
            return self._not_a_header(at)  # type: ignore[arg-type]
        if self._header.end is not None:
            self._header_end(at)  # type: ignore[arg-type]
        return at

    def _not_a_header(self, pos: int) -> int:
        self._text("".join(self._header.raw))
        self._header.raw = []
        self._state = TEXT
        return pos

    def _header_end(self, at: int) -> None:
        """The header ended at `at`: a call's body follows, or the header is text."""
        header, end = self._header.raw, self._header.end
        assert end is not None
        name = self._decide("".join(header[:-1]), end)
        if name is None:
            self._not_a_header(at)
            return
        self._raw, self._header.raw = header, []
        try:
            self._open_call(name)
        except NotACall as err:
            raise NotACall(str(err), at) from None

    # -- breaks and the end ------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The call broke: its text up to the break is text, and reading goes on there."""
        self._reject(str(err), "".join(self._raw))
        self._raw = []
        self._state = TEXT
        return pos if err.pos is None else err.pos

    def _close(self) -> None:
        if self._state not in (TEXT, HEADER):
            self._close_call()
        else:
            self._text("".join(self._header.raw if self._state == HEADER else []) + self._buf)
        self._raw, self._header.raw = [], []
        self._buf = ""

    def _pending_text(self) -> str:
        return "".join(self._header.raw if self._state == HEADER else self._raw)


BARE_TRIGGER = "to="
"""Where the prompt opened the reply's first message (`<|start|>assistant`), the reply may begin
inside its header with the recipient (` to=functions.f<|channel|>..`): strict `auto` holds every
`to=` in free text to a call of a declared tool (`bare_calls`)."""


def bare_calls(first: list[Element]) -> list[Element]:
    """Strict `auto`'s tags for a call that continues the message the prompt opened (the `first`
    spellings of `required`), begun at `BARE_TRIGGER`: the header's leading blanks are free text."""
    return [{**element, "begin": element["begin"].lstrip(" \t")} for element in first]


def calls_after_prompt(request: ConstraintRequest, first: list[Element], more: list[Element]) -> Element:
    """The calls of a `required` constraint for a format whose prompt opens the reply's first
    message: one call in any of the `first` spellings (continuing that message, or a message of its
    own), then, unless the request allows one call, any number in the `more` spellings."""
    if request.single:
        return one_of(first)
    rest = {
        "type": "tags_with_separator",
        "tags": more,
        "separator": "",
        "at_least_one": False,
        "stop_after_first": False,
    }
    return sequence(one_of(first), rest)
