# ruff: noqa: RUF002  (DeepSeek's markers are spelled with U+FF5C, the fullwidth bar)
"""The named-JSON family: a call is its name, a separator, then its JSON arguments, each call opened
by a marker of its own and the calls perhaps held in a section. DeepSeek V3.1's template writes it
(`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{..}<｜tool▁call▁end｜>` in a section), so do R1's (a type
word before the name, a fence around the arguments), Kimi K2's (`functions.NAME:0`, a counter after
the name) and Mistral's (`[TOOL_CALLS]NAME[ARGS]{..}`, no end marker, an id after `[CALL_ID]`).

Grammar, as this machine reads it (the family's, `token_sections.SectionStream`, with this header)::

    output  := (text | think | section | call)*
    section := SECTION_BEGIN ws (call ws | SECTION_BEGIN ws)* [SECTION_END]   # where there are sections
    call    := CALL_BEGIN ws [PREFIX] NAME ws [COUNTER DIGITS ws] [ID_MARKER ws ID ws] SEP ws args ws [TAIL] [CALL_END]
    args    := a JSON object, or a JSON string holding one, or null   # none at all: {} (where a marker follows)
    NAME    := [^\\s S]{1,max_name}     S: each marker's first character that is no word character
    ID      := [^\\s S]{1,max_name}     DIGITS := [0-9]{1,9}

What the section machine gives every format of it holds here too: a call without a section is read
the same; once the JSON value is complete the call stands, and TAIL and CALL_END may be missing; a
section or a call that breaks is text up to where it broke, and reading goes on there; markers inside
reasoning are text. Where the template writes an id after the name, the model's id (trimmed) is the
call's id when the response has not used it; where it writes a counter, the header as written
(`functions.NAME:0`) is. A format of the family is one `NamedJson` value: its stream class, writer,
`required` and strict `auto` constraints and `Format` come from it. Formats derived from a chat
template that writes such calls are values of it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.ids import IdFactory, ResponseIds
from ...core.stream import NotACall
from ..constraints import Element, const, json_value, optional, regex, repeated, sequence, structural, tag, triggered
from ..spec import Call, CallTag, Constraint, ConstraintRequest, Format, Writer
from ..token_sections import HEAD, SectionStream, auto_sections, required_sections
from . import format_stream

_NAME, _AFTER_NAME, _DIGITS, _ID = "named.name", "named.after_name", "named.digits", "named.id"
MAX_DIGITS = 9
"""The longest counter read: a weak model writes digits on, and a counter past it breaks the call."""


class NamedJsonStream(SectionStream):
    """Incremental parser for one response of a named-JSON format; `NamedJson.stream_class` sets
    its markers (class attributes, read stripped of whitespace)."""

    name_prefix = ""
    counter = ""
    id_marker = ""
    separator = ""
    tail = ""
    follows: tuple[str, ...] = ()
    """What may follow a name, each once: the counter, the id's marker, the separator."""
    name_chars: re.Pattern[str] = re.compile(r"\S*")
    """A name's or an id's characters: none of whitespace and `NamedJson.stops`."""

    def __init__(self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: Any = None) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._after_name = self.follows
        self._openers = (self.call_begin, *self.section_begins)
        self._opener_starts = {m[0] for m in self._openers}
        self._ids = ResponseIds(self._id_factory, lambda name, n: f"call_{n}")
        self._header: list[str] = []  # what was read of the header: the prefix (or ""), name, counter; an id
        self._name = ""
        self._call_id: str | None = None  # the model's, where its header holds one
        self._part_len = 0
        self._tailed = False  # the tail after the arguments was read
        self._readers.update(
            {
                HEAD: self._scan_prefix,
                _NAME: self._scan_name,
                _AFTER_NAME: self._scan_after_name,
                _DIGITS: self._scan_digits,
                _ID: self._scan_id,
            }
        )

    # -- the header ------------------------------------------------------------------------------

    def _open_head(self) -> None:
        self._header, self._name, self._call_id, self._part_len, self._tailed = [], "", None, 0, False
        self._reset_call()

    def _scan_prefix(self, text: str, pos: int) -> int | None:
        """Whitespace, then the prefix where the model writes it (it may leave it out), then the name."""
        at = self._markup_ws(text, pos, self._raw)
        if at > pos:
            return at
        found = self._literal_at(text, pos, (self.name_prefix,)) if self.name_prefix else ""
        if found is None:
            return None
        self._raw.append(found)
        self._header.append(found)  # part of an id the counter makes, not of the name
        self._state = _NAME
        return pos + len(found)

    def _read_part(self, text: str, pos: int, chars: re.Pattern[str], bound: int, too_long: str) -> int:
        """A name, id or counter, consumed as it comes into the header; past `bound` the call breaks
        right there, for the reason `too_long`."""
        room = bound - self._part_len
        end = chars.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        if end - pos > room:
            self._raw.append(text[pos : pos + room])
            raise NotACall(too_long, pos + room)
        self._header.append(text[pos:end])
        self._raw.append(text[pos:end])
        self._part_len += end - pos
        return end

    def _scan_name(self, text: str, pos: int) -> int | None:
        too_long = "the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)"
        end = self._read_part(text, pos, self.name_chars, self.limits.max_name, too_long)
        if end < len(text):
            if not self._part_len:
                raise NotACall("the call names no tool", pos)
            self._name = "".join(self._header[1:])
            self._state = _AFTER_NAME
        return end

    def _scan_after_name(self, text: str, pos: int) -> int | None:
        """Whitespace, then the counter, the id's marker (each once) or the separator."""
        at = self._markup_ws(text, pos, self._raw)
        if at > pos:
            return at
        found = self._literal_at(text, pos, self._after_name)
        if found is None:
            return None
        if not found:
            raise NotACall(f"no {self.separator!r} after the tool's name", pos)
        self._raw.append(found)
        self._part_len = 0
        if found == self.separator:
            self._start(pos + len(found))
            return pos + len(found)
        self._after_name = tuple(m for m in self._after_name if m != found)  # each once
        if found == self.counter:
            self._header.append(found)
            self._state = _DIGITS
        else:
            self._header = []
            self._state = _ID
        return pos + len(found)

    def _scan_digits(self, text: str, pos: int) -> int | None:
        end = self._read_part(text, pos, _DIGIT_RUN, MAX_DIGITS, f"the call's counter runs past {MAX_DIGITS} digits")
        if end < len(text):
            if not self._part_len:
                raise NotACall(f"no number after {self.counter!r}", pos)
            self._call_id = "".join(self._header)  # the prefix as written, the name, the counter
            self._state = _AFTER_NAME
        return end

    def _scan_id(self, text: str, pos: int) -> int | None:
        if not self._part_len and (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at  # whitespace before the id
        too_long = "the call's id is too long (TOOLCALL_PARSERS_MAX_NAME)"
        end = self._read_part(text, pos, self.name_chars, self.limits.max_name, too_long)
        if end < len(text):
            self._call_id = "".join(self._header)
            self._state = _AFTER_NAME
        return end

    def _start(self, at: int) -> None:
        kept = self._ids.free(self._call_id)
        try:
            self._index = self._start_call(self._name, kept)
        except NotACall as err:
            raise NotACall(str(err), at) from None
        if kept is not None:
            self._ids.keep(kept)
        self._start_args()

    def _make_id(self, name: str, index: int) -> str:
        return self._ids.make(name, index)

    def _reset_call(self) -> None:
        self._after_name = self.follows

    # -- the arguments and after them -------------------------------------------------------------

    def _scan_args_start(self, text: str, pos: int) -> int | None:
        """A call's or a section's begin where the arguments belong: they are missing, and the call
        breaks there (a `[` that opens Mistral's marker is no JSON array)."""
        if text[pos] in self._opener_starts:
            found = self._literal_at(text, pos, self._openers)
            if found is None:
                return None
            if found:
                raise NotACall("a call's begin where its arguments belong", pos)
        return super()._scan_args_start(text, pos)

    def _value_tail(self, text: str, pos: int) -> int | None:
        """The tail the template writes after the arguments (which may be missing), once."""
        if not self.tail or self._tailed:
            return pos
        found = self._literal_at(text, pos, (self.tail,))
        if found is None:
            return None
        self._tailed = bool(found)
        return pos + len(found)

    def _tail_at_end(self, rest: str) -> str:
        """The output ended in the tail, cut off: it is markup."""
        return "" if self.tail and not self._tailed and self.tail.startswith(rest) else rest


_DIGIT_RUN = re.compile("[0-9]*")


@dataclass(frozen=True)
class NamedJson:
    """One format of the family, as data. Markers as the template writes them, whitespace
    included (the writer writes them so, the reader takes any whitespace around each):
    `call_begin` opens a call, `name_prefix` stands between it and the name, `counter` (then the
    call's index) and `id_marker` (then its id) may follow the name, `separator` stands between
    the header and the arguments, `tail` after them, `call_end` closes the call (may be none);
    `section` holds the calls (begin, end), where there are sections; `between` is written between
    two calls. The rest is the `Format`'s own (`spec.Format`)."""

    name: str
    summary: str
    call_begin: str
    separator: str
    call_end: str = ""
    section: tuple[str, str] | None = None
    name_prefix: str = ""
    counter: str = ""
    id_marker: str = ""
    tail: str = ""
    between: str = ""
    think: tuple[str, str] = ("<think>", "</think>")
    models: str = ""

    def __post_init__(self) -> None:
        if not self.call_begin.strip() or not self.separator.strip():
            raise ValueError(f"{self.name}: a named-JSON format needs a call's begin and a separator")

    @property
    def markers(self) -> tuple[str, ...]:
        """The markers read, opener first (stripped of the whitespace the template writes)."""
        begin, end = self.section or ("", "")
        call = (self.call_begin, self.name_prefix, self.id_marker, self.separator, self.tail, self.call_end)
        return tuple(m.strip() for m in (begin, *call, end) if m.strip())

    @property
    def stops(self) -> str:
        """The characters that end a name or an id: the first of each marker (but the prefix) that
        is no word character (a marker that starts with a letter, after whitespace, is told apart
        by that whitespace)."""
        begin, end = self.section or ("", "")
        spelled = (begin, end, self.call_begin, self.call_end, self.tail, self.counter, self.id_marker, self.separator)
        firsts = {m.strip()[0] for m in spelled if m.strip()}
        return "".join(sorted(c for c in firsts if not (c.isalnum() or c == "_")))

    def stream_class(self, module: str) -> type[NamedJsonStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        begin, end = self.section or ("", "")
        return format_stream(
            NamedJsonStream,
            self.name,
            module,
            "the named-JSON family",
            self.think,
            section_begins=(begin.strip(),) if begin.strip() else (),
            section_ends=(end.strip(),) if end.strip() else (),
            call_begin=self.call_begin.strip(),
            call_end=self.call_end.strip(),
            name_prefix=self.name_prefix,
            counter=self.counter.strip(),
            id_marker=self.id_marker.strip(),
            separator=self.separator.strip(),
            tail=self.tail.strip(),
            follows=tuple(m.strip() for m in (self.counter, self.id_marker, self.separator) if m.strip()),
            name_chars=re.compile(f"[^\\s{re.escape(self.stops)}]*"),
        )

    def _header(self, name: str, index: int) -> str:
        counter = f"{self.counter}{index}" if self.counter else ""
        return f"{self.call_begin}{self.name_prefix}{name}{counter}{self.separator}"

    def write(self, calls: Sequence[Call]) -> str:
        """The calls as the template writes them, in one section where there are sections; without
        ids (the id is a client's, which the template writes back from history; the engine makes one)."""
        body = self.between.join(
            f"{self._header(name, i)}{json.dumps(arguments, ensure_ascii=False)}{self.tail}{self.call_end}"
            for i, (name, arguments) in enumerate(calls)
        )
        begin, end = self.section or ("", "")
        return f"{begin}{body}{end}"

    def writes_name(self, name: str) -> bool:
        """A name reads back where it holds no whitespace and none of the characters that end it."""
        return bool(name) and not any(c.isspace() or c in self.stops for c in name)

    def call_tags(self, request: ConstraintRequest, names: list[str]) -> list[Element]:
        """One tag per tool: its header, the arguments as JSON, the tail and the call's end; a
        counter of 1-4 digits; an id of nine letters and digits (Mistral's), or none, as the writer
        writes it."""
        tags = []
        for name in names:
            parts = [regex("[0-9]{1,4}")] if self.counter else []
            if self.id_marker:
                parts.append(optional(sequence(const(self.id_marker), regex("[A-Za-z0-9]{9}"))))
            parts += [const(self.separator), json_value(request.parameters(name))]
            if self.tail:
                parts.append(const(self.tail))
            header = f"{self.call_begin}{self.name_prefix}{name}{self.counter}"
            tags.append(tag(header, sequence(*parts), self.call_end))
        return tags

    def constraints(self) -> tuple[Constraint, Constraint]:
        """`required`: one section of one or more calls (at most one if `single`), or the calls
        alone where there are no sections; strict `auto`: free text where a section's begin or a
        call's begin opens them."""
        begin, end = self.section or ("", "")

        def required(request: ConstraintRequest) -> dict[str, Any]:
            if self.section:
                return required_sections(request, self.call_tags, begin, end, self.between)
            return structural(repeated(request, self.call_tags(request, request.names), self.between))

        def auto(request: ConstraintRequest) -> dict[str, Any]:
            if self.section:
                return auto_sections(request, self.call_tags, [begin], end, self.call_begin, self.between)
            return triggered(request, [self.call_begin], self.call_tags(request, list(request.schemas)))

        return required, auto

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        required, auto = self.constraints()
        writer: Writer = self.write
        begin, end = self.section or ("", "")
        plain = not (self.counter or self.id_marker)
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            writer,
            markers=self.markers,
            required_constraint=required,
            auto_constraint=auto,
            call_tag=CallTag(
                f"{begin}{self.call_begin}{self.name_prefix}{{name}}{self.separator}",
                f"{self.tail}{self.call_end}{end}",
                begin.strip() or self.call_begin.strip(),
            )
            if plain
            else None,
            writes_name=self.writes_name,
            own_ids=bool(self.counter),
            models=self.models,
            spec=self,
        )
