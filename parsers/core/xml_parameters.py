"""Reading one raw-text parameter value of an XML-like tool-call format, up to the tag that ends it.

Formats such as MiniMax-M2's and Qwen3-Coder's write a parameter as an open tag, the value as raw
text with no escaping, and a close tag: `<parameter name="p">VALUE</parameter>`,
`<parameter=p>\\nVALUE\\n</parameter>`. With no escaping, a value may hold the close tag itself (a
file that holds XML), so a tag ends the value only where what follows it says so:

- An end tag with followers (`</parameter>` followed, after whitespace, by the next `<parameter` or
  the function's close) ends the value only when one of them follows; otherwise the tag and the
  whitespace after it are part of the value. An end may also accept the end of the output as its
  follower (`ValueEnd.at_end_of_output`).
- An end tag without followers ends the value wherever it stands, or only at the start of a line
  (`ValueEnd.line_start`): Qwen3-Coder models sometimes drop a `</parameter>`, and the next
  parameter's open tag on its own line then ends the value. Such a tag is left for the format to
  read (`ValueEnd.kept`: how much of it belongs to the value's markup).
- An end tag may allow a drifted spelling (`ValueEnd.drift`): a model whose grammar drifted writes
  `</parameter1>`, `</parameter_function>` or a cut `</parameter`; such a spelling is read like the
  tag itself, so it ends the value only where one of the tag's followers comes next, and is part of
  the value anywhere else (a value ending in `</parameters>` and then closed stays whole). What is
  held back for it is bounded: the tag and at most `DRIFT_CHARS` characters.
- With `framing_newlines`, one line break right after the open tag and one right before the end are
  markup (Qwen3-Coder's template writes the value on its own lines), not data. Both are written
  alike: after an opening `\r\n` (one line break, `core/lines.py`), a closing `\r\n` is framing
  too, so a value written with `\r\n` line breaks keeps no stray `\r`; after an opening `\n`, as
  the template writes it, only the `\n` is, so a value that ends with `\r` reads back as written.
  Without them every character between the tags is data (Seed-OSS's template writes a value right
  between its tags, so a code edit's final newline is the file's), except that an end may take the
  line break right before it as markup (`ValueEnd.after_break`): the one a template writes after a
  close tag the model then dropped (`x\\n<parameter=` is `x`, `</parameter>\\n` having lost its tag).

The value is typed by its JSON schema and streamed by `core.typed_values.ValueWriter`. What the
reader holds back is bounded: a partial end tag or follower (both short), and with framing
newlines (or an end that takes the line break before it) one line break, or with framing newlines
a `\r` that may start one; whitespace after an end tag is consumed as it arrives, never held.
A size bound of the call's arguments crossed inside a value is reported where the value ends (a
place the text fixes), so the outcome does not depend on how the text was chunked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .limits import Limits
from .lines import HeldBreak, break_at, trailing_break
from .markers import MarkerScanner, literal_at
from .stream import ANY_SPACE, DeferredBound, NotACall
from .typed_values import ValueWriter

DRIFT_CHARS = 32
"""Most characters a drifted end tag adds after the tag's stem (`ValueEnd.drift`)."""
_DRIFT = re.compile(f"[A-Za-z0-9_]{{0,{DRIFT_CHARS}}}>?")


@dataclass(frozen=True, slots=True)
class ValueEnd:
    """A tag that may end a parameter's value (see the module docstring)."""

    tag: str
    followers: tuple[str, ...] = ()
    """What must follow the tag (after whitespace) for it to end the value; none: it always does."""
    at_end_of_output: bool = False
    """The end of the output, right after the tag and its whitespace, ends the value too."""
    line_start: bool = False
    """A tag without followers ends the value only at the start of a line of the value."""
    kept: int | None = None
    """How many characters of a tag without followers the value's markup takes (None: all); the rest
    is left for the format to read."""
    drift: bool = False
    """`tag` is a stem (`</parameter`, with followers): it may go on with up to DRIFT_CHARS word
    characters and a `>`, or stop there, and reads the same in every spelling."""
    after_break: bool = False
    """One line break right before the tag is markup, framing newlines or not: the break the
    template writes after the value's close tag, which the model dropped (see the module docstring)."""


def ends_inside(ends: Sequence[ValueEnd], value: str, after: str, *, line_start: bool = False) -> bool:
    """Whether raw `value`, written with `after` right after it (the writer's framing and close tag),
    holds a tag that ends it where it stands, by the rules above: nothing escapes a tag in a raw
    value, so a writer cannot write such a value (the formats' `writes_value`). `line_start`: the
    value starts a line (framing newlines). For tools and tests; linear in the value."""
    text = value + after
    scanner = MarkerScanner(end.tag for end in ends)
    by_tag = {end.tag: end for end in ends}
    pos = 0
    while (m := scanner.search(text, pos)) is not None and m.start() < len(value):
        end = by_tag[m.group()]
        pos = m.end()
        if end.followers or end.at_end_of_output:
            if end.drift:
                pos = _DRIFT.match(text, pos).end()  # type: ignore[union-attr]
            pos = ANY_SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if (end.at_end_of_output and pos == len(text)) or text.startswith(end.followers, pos):
                return True
        elif not end.line_start or (value[m.start() - 1] == "\n" if m.start() else line_start):
            return True
    return False


class ParameterValueReader:
    """Reads one value after another (`begin`, then `read` until it reports the end that closed it).

    `send(fragment)` passes a piece of the arguments JSON on (it may raise NotACall past the size
    bound); `keep(text)` records text read as part of the call, which the format returns as text if
    the call breaks.
    """

    def __init__(
        self,
        ends: Sequence[ValueEnd],
        send: Callable[[str], None],
        keep: Callable[[str], None],
        limits: Limits,
        *,
        framing_newlines: bool = False,
        python_values: bool = False,
    ) -> None:
        self._ends = {end.tag: end for end in ends}
        self._python = python_values  # values may be in Python's spelling (`core.typed_values`)
        self._scanner = MarkerScanner(self._ends)
        self._send = send
        self._keep = keep
        self._limits = limits
        self._framing = framing_newlines
        self._breaks = framing_newlines or any(end.after_break for end in ends)  # a trailing one may be markup
        self._writer: ValueWriter | None = None
        self._at_start = True  # nothing of the value read yet (a framing newline may come)
        self._line_start = False  # the value's text so far ends a line
        self._break = HeldBreak()  # a trailing line break not sent yet: markup if the value ends here
        self._crlf = False  # the value opened with a `\r\n`: a closing one is framing too
        self._end: ValueEnd | None = None  # an end tag read, waiting for what follows it
        self._closing: list[str] = []  # that tag and the whitespace after it, not yet known as markup
        self._drifting = False  # a drifted end tag's rest may still be arriving
        self._bound = DeferredBound(send)  # the arguments' size bound, acted on where the value ends

    def begin(self, schema: Any) -> None:
        """A new value, typed by `schema` (None: no schema)."""
        self._writer = ValueWriter(schema, self._limits, python=self._python)
        self._at_start = True
        self._line_start = False
        self._break = HeldBreak()
        self._crlf = False
        self._end = None
        self._closing = []
        self._drifting = False
        self._bound.reset()

    def pending(self) -> str:
        """Text read but neither kept nor sent: an end tag (and whitespace) still being judged."""
        return "".join(self._closing)

    def read(self, text: str, pos: int) -> tuple[int | None, ValueEnd | None, Any]:
        """Read value text from `pos`: (where reading goes on, or None to hold the rest; the end that
        closed the value, or None while it goes on; the value once it is closed). Raises NotACall
        (with the position where reading goes on) when the closed value breaks the call."""
        if self._end is not None:
            return self._read_after_end(text, pos)
        if self._at_start and self._framing:
            size = break_at(text, pos)
            if size is None:
                return None, None, None  # a `\r`: it may start the framing line break
            self._at_start = False
            self._crlf = size == 2
            if size:
                self._keep(text[pos : pos + size])
                self._line_start = True
                return pos + size, None, None
        self._at_start = False
        m = self._scanner.search(text, pos)
        if m is None:
            cut = self._scanner.releasable(text, pos)
            if self._crlf and cut == len(text) and text[cut - 1] == "\r":
                cut -= 1  # it may start a line break, which may be framing
            self._data(text[pos:cut])
            return (cut if cut > pos else None), None, None
        self._data(text[pos : m.start()])
        end = self._ends[m.group()]
        if end.followers or end.at_end_of_output:
            self._end = end
            self._closing = [m.group()]
            self._drifting = end.drift
            return m.end(), None, None
        if end.line_start and not self._line_start:
            self._data(m.group())
            return m.end(), None, None
        at = m.start() + (len(end.tag) if end.kept is None else end.kept)
        self._keep(text[m.start() : at])
        return at, end, self._close(at, end)

    def _read_after_end(self, text: str, pos: int) -> tuple[int | None, ValueEnd | None, Any]:
        """After an end tag with followers: whitespace (kept aside), then a follower closes the
        value; anything else makes the tag and the whitespace part of the value."""
        end = self._end
        assert end is not None
        if self._drifting:  # the rest of a drifted spelling: word characters, then maybe `>`
            rest = _DRIFT.match(text, pos).group()  # type: ignore[union-attr]
            if pos + len(rest) == len(text) and not rest.endswith(">"):
                return None, None, None  # it may go on (held: at most DRIFT_CHARS characters)
            self._drifting = False
            if rest:
                self._closing.append(rest)
                return pos + len(rest), None, None
        ws_end = ANY_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if ws_end > pos:
            self._closing.append(text[pos:ws_end])
            return ws_end, None, None
        follower = literal_at(text, pos, end.followers)
        if follower:
            return pos, end, self._close_with_tag(pos, end)
        if follower is None:
            return None, None, None  # a follower may be arriving
        data = "".join(self._closing)
        self._end = None
        self._closing = []
        self._drifting = False
        self._data(data)
        return self.read(text, pos)

    def end_of_output(self) -> tuple[ValueEnd | None, Any]:
        """The output ended here: the end this closes the value with (and the value), or None."""
        end = self._end
        if end is None or not end.at_end_of_output:
            return None, None
        return end, self._close_with_tag(None, end)

    def _close_with_tag(self, resume: int | None, end: ValueEnd) -> Any:
        self._keep("".join(self._closing))
        self._closing = []
        return self._close(resume, end)

    def _data(self, text: str) -> None:
        """Value text: kept, and sent (a trailing newline waits when it may be markup)."""
        if not text:
            return
        self._keep(text)
        self._line_start = text.endswith("\n")
        if self._breaks:  # a line break ending it waits: markup if the value ends right after it
            text = self._break.release() + text
            size = trailing_break(text) if self._crlf else int(self._line_start)
            if size:
                self._break.hold(text[-size:])
                text = text[:-size]
        self._send_data(text)

    def _send_data(self, text: str) -> None:
        if not text:
            return
        assert self._writer is not None
        fragment = self._writer.feed(text)
        self._bound.send(fragment)

    def _close(self, resume: int | None, end: ValueEnd) -> Any:
        """The value is complete, closed by `end` (a trailing newline waiting is markup if framing
        newlines or `end` say so, else data): send the rest of its JSON and return it. NotACall
        carries `resume`, where reading goes on."""
        held = self._break.release()
        if not (self._framing or end.after_break):
            self._send_data(held)
        writer, self._writer = self._writer, None
        self._end = None
        assert writer is not None
        try:
            self._bound.check()
            fragment, value = writer.finish()
            self._send(fragment)
        except NotACall as err:
            raise NotACall(str(err), resume) from None
        return value
