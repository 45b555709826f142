"""The family machine of calls in a section of special tokens, JSON arguments after a header:
Kimi K2's `kimi_json` and DeepSeek's `deepseek_json` configure it.

    output  := (text | think | section | call)*
    think   := THINK_OPEN text THINK_CLOSE                 # reasoning: text, never a call
    section := SECTION_BEGIN ws (call ws | SECTION_BEGIN ws)* [SECTION_END]
    call    := CALL_BEGIN header ws [args ws] [tail] [CALL_END]   # header and tail: the format's
    args    := a JSON object, or a JSON string holding one, or null; none at all: {}

What the family shares: a call without a section around it is read the same (the section's begin
is missing); a section that the end of the output cuts off keeps the calls that closed; once a call's
JSON value is complete the call stands, its end marker may be missing (before the next call, the
section's end, text, or the end of the output); a section's begin inside a section starts a new one;
after a call, text that is not a marker ends the section and is content. A section that holds no
call, with its markers, and a call that breaks, up to where it broke, are text; reading goes on
there, so a later call still counts. Markers inside reasoning are text.

A format subclasses `SectionStream` with its markers, adds the readers of its header (from
`HEAD`, ending in `_start_args`), and may take the arguments' fragments (`_send`), settle the
complete value (`_value_done`), and read what follows the value before the call's end (`_value_tail`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader
from ..core.outside import OutsideCalls
from ..core.stream import JSON_SPACE, FormatStream, NotACall
from .constraints import Element, repeated, structural, tag, triggered
from .spec import ConstraintRequest

TEXT, SECTION, ARGS_START, ARGS, AFTER_VALUE, HEAD = "text", "section", "args_start", "args", "after_value", "head"
"""The family's states, by name; a format's header starts at HEAD and names its own further states."""


class SectionStream(FormatStream):
    """Incremental parser for one response of a special-token section format."""

    section_begins: tuple[str, ...] = ()
    section_ends: tuple[str, ...] = ()
    call_begin = ""
    call_end = ""
    args_space: re.Pattern[str] = JSON_SPACE
    """The whitespace allowed before the arguments."""

    def __init__(self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: Any = None) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [*self.section_begins, self.call_begin], think_markers)
        self._in_section = (self.call_begin, *self.section_ends, *self.section_begins)
        self._after_args = tuple(m for m in (self.call_end, *self._in_section) if m)  # a call may have no end
        self._empty_args = tuple(m for m in (self.call_end, *self.section_ends) if m)
        self._empty_starts = {m[0] for m in self._empty_args}  # where a call may end with no arguments
        self._state = TEXT
        self._raw: list[str] = []  # the section's markup while it holds no call, then the current call's
        self._section_calls = 0  # calls finished in the current section
        self._index = -1
        self._args: ArgumentsReader | None = None
        self._done_args: dict[str, Any] = {}
        self._readers = {
            TEXT: self._scan_text,
            SECTION: self._scan_section,
            ARGS_START: self._scan_args_start,
            ARGS: self._scan_args,
            AFTER_VALUE: self._scan_after_value,
        }

    # -- for the formats ---------------------------------------------------------------------------

    def _open_head(self) -> None:
        """A call's begin was read: reset the header's state (the state is HEAD)."""

    def _start_args(self) -> None:
        """The header is read: the arguments come next."""
        self._state = ARGS_START

    def _empty_allowed(self) -> bool:
        """Whether the call may end with no arguments at all (`{}`)."""
        return True

    def _send(self, fragment: str) -> None:
        """A stable piece of the arguments' JSON text."""
        self._call_args(self._index, fragment)

    def _value_done(self, arguments: dict[str, Any], at: int) -> dict[str, Any]:
        """The value is complete (at `at`): the call's arguments. May raise NotACall."""
        return arguments

    def _value_tail(self, text: str, pos: int) -> int | None:
        """Markup the format allows after the value, before the call's end: where it ends (`pos`
        when there is none), or None to hold the text back."""
        return pos

    def _tail_at_end(self, rest: str) -> str:
        """The output ended after a complete value with `rest` unread: what of it is text."""
        return rest

    def _reset_call(self) -> None:
        """The call broke: forget the format's own state of it."""

    # -- outside calls, and between them -----------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._section_calls = 0
            if m.group() == self.call_begin:  # a call without a section around it
                self._open_call()
            else:
                self._raw = [m.group()]
                self._state = SECTION
        return at

    def _scan_section(self, text: str, pos: int) -> int | None:
        """Between calls: whitespace, then a call, the section's end, a new section, or, after a
        call, text (the section's end is missing; its calls stand)."""
        at = self._markup_ws(text, pos, self._raw)
        if at > pos:
            return at
        found = self._literal_at(text, pos, self._in_section)
        if found is None:
            return None
        if found == self.call_begin:
            self._open_call()
        elif found in self.section_ends:
            self._end_section(found)
        elif found:  # a section's begin again: a new section
            if self._section_calls == 0:
                self._raw.append(found)
            else:
                self._raw, self._section_calls = [found], 0
        elif self._section_calls == 0:
            raise NotACall("no call after the section's begin", pos)
        else:
            self._raw = []  # whitespace next to the finished calls
            self._state = TEXT
            return pos
        return pos + len(found)

    def _open_call(self) -> None:
        if self._section_calls > 0:
            self._raw = []  # whitespace between calls
        self._raw.append(self.call_begin)
        self._state = HEAD
        self._open_head()

    def _end_section(self, marker: str) -> None:
        if self._section_calls == 0:
            self._reject("a tool-call section without a call", "".join(self._raw) + marker)
        self._raw = []
        self._section_calls = 0
        self._state = TEXT

    # -- the arguments -----------------------------------------------------------------------------

    def _scan_args_start(self, text: str, pos: int) -> int | None:
        """Whitespace, then the JSON value, or no arguments at all (the call's or the section's end
        right there: `{}`)."""
        at = self._markup_ws(text, pos, self._raw, self.args_space)
        if at > pos:
            return at
        if text[pos] in self._empty_starts and self._empty_allowed():
            found = self._literal_at(text, pos, self._empty_args)
            if found is None:
                return None
            if not found:
                raise NotACall("no arguments after the header", pos)
            self._send("{}")
            self._finish_call(self._value_done({}, pos))
            if found in self.section_ends:
                self._end_section(found)
            return pos + len(found)
        self._args = ArgumentsReader(self._send, self.limits)
        self._state = ARGS
        return pos

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        stop, done = self._args.read(text, pos, self._raw)
        if not done:
            return stop if stop > pos else None
        self._done_args = self._value_done(self._args.arguments, stop)
        self._state = AFTER_VALUE
        return stop

    def _scan_after_value(self, text: str, pos: int) -> int | None:
        """The value is complete, so the call stands: its end marker, or what comes instead."""
        ws_end = JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if ws_end > pos:
            return ws_end  # whitespace next to the call
        tail = self._value_tail(text, pos)
        if tail is None or tail > pos:
            return tail
        found = self._literal_at(text, pos, self._after_args)
        if found is None:
            return None
        self._finish_call(self._done_args)
        if found and found == self.call_end:
            return pos + len(found)
        if found in self.section_ends:
            self._end_section(found)
            return pos + len(found)
        return pos  # the next call, a section, or text: the section's reader takes it

    def _finish_call(self, arguments: dict[str, Any]) -> None:
        self._end_call(self._index, arguments)
        self._section_calls += 1
        self._raw = []
        self._args = None
        self._state = SECTION

    # -- breaks and the end ------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The section or call broke: its text up to the break is text, and reading goes on there."""
        self._reject(str(err), "".join(self._raw))
        self._raw = []
        self._args = None
        self._section_calls = 0
        self._reset_call()
        self._state = TEXT
        return pos if err.pos is None else err.pos

    def _close(self) -> None:
        state = self._state
        if state == ARGS and self._args is not None and self._args.finish(self._buf):
            try:
                self._done_args = self._value_done(self._args.arguments, len(self._buf))
                self._buf = ""  # `null` at the very end
                state = AFTER_VALUE
            except NotACall as err:
                self._warn(str(err))
        if state == AFTER_VALUE and self._args is not None:
            self._buf = self._tail_at_end(self._buf)
            self._finish_call(self._done_args)  # the end marker is missing: the value ended it
            state = SECTION
        if state == TEXT or (state == SECTION and self._section_calls > 0):
            self._text(self._buf)
        else:
            self._reject("the output ended inside a tool call", "".join(self._raw) + self._buf)
        self._raw = []
        self._buf = ""

    def _pending_text(self) -> str:
        return "".join(self._raw)


# -- the constraints ---------------------------------------------------------------------------------

CallTags = Callable[[ConstraintRequest, list[str]], list[Element]]
"""A format's tags for calls to the named tools, one each."""


def _section(
    request: ConstraintRequest, calls: list[Element], begin: str, end: str | Sequence[str], between: str = ""
) -> Element:
    return tag(begin, repeated(request, calls, between), end)


def required_sections(
    request: ConstraintRequest, call_tags: CallTags, begin: str, end: str | Sequence[str], between: str = ""
) -> dict[str, Any]:
    """One section of one or more calls (at most one if `single`), `between` written between two."""
    return structural(_section(request, call_tags(request, request.names), begin, end, between))


def auto_sections(
    request: ConstraintRequest,
    call_tags: CallTags,
    begins: Sequence[str],
    end: str | Sequence[str],
    call_begin: str,
    between: str = "",
) -> dict[str, Any]:
    """Strict `auto`: free text, where whatever the parser reads as a call opener (a section's begin,
    in each spelling, or a call's begin with no section around it) opens calls to declared tools."""
    calls = call_tags(request, list(request.schemas))
    sections = [_section(request, calls, b, end, between) for b in begins]
    return triggered(request, [*begins, call_begin], [*sections, *calls])
