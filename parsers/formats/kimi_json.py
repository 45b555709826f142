"""`kimi_json`: Kimi K2 / K2.5 / K2.6, calls in a section of special tokens, each named by its id.

Grammar, as this machine reads it::

    output  := (text | think | section | call)*
    think   := "<think>" text "</think>"                    # reasoning: text, never a call
    section := SECTION_BEGIN ws (call ws | SECTION_BEGIN ws)* [SECTION_END]
    call    := CALL_BEGIN hws ID hws ARG_BEGIN hws [args hws] [CALL_END]
    args    := a JSON object, or a JSON string holding one, or null   # none at all: {}
    ID      := [^\\s<]{1,max_name+32}                        # functions.NAME:IDX, as the model writes it
    ws      := [ \\t\\r\\n]*        hws := \\s*

    SECTION_BEGIN := "<|tool_calls_section_begin|>" | "<|tool_call_section_begin|>"   (singular: seen in
    SECTION_END   := "<|tool_calls_section_end|>"   | "<|tool_call_section_end|>"      the wild)
    CALL_BEGIN, ARG_BEGIN, CALL_END := "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"

A call without a section around it is read the same (the section's begin is missing), and a section
the end of the output cuts off keeps the calls that closed. Once a call's JSON value is complete the
call stands: `<|tool_call_end|>` may be missing (before the next call, the section's end, text, or the
end of the output). A `SECTION_BEGIN` inside a section starts a new one; after a call, text that is
not a marker ends the section (its end is missing) and is content.

The name is in the id. `functions.NAME:IDX` or `NAME:IDX` gives NAME (the last `:digits` is the
counter, `functions.` a prefix taken off once). Where the request declares tools, two more spellings
are read: the id is a declared name after an optional `functions` / `functions.` and before optional
digits (`functionsexec5`, Kimi-K2.5 with some agents); an id that names none (`call_3`, `0`, an empty
id: Kimi's template writes a client's own ids into history, and the model then writes such ids) calls
the one tool declared, or, among several, the one tool the complete arguments fit (every key a
declared property, every required one there; a tool without properties fits anything), the call then
held until its arguments end. Any other id, or arguments that fit no tool or more than one, is not a
call.

What is not a call is text: a section that holds no call (empty, or followed by prose) with its
markers, a call that breaks (an id holding whitespace or running past the bound, no tool in it,
arguments that are not an object, a call the core refuses) up to where it broke; reading goes on
there, so a later call still counts. Markers inside `<think>..</think>` are text.

Kimi K2-Thinking writes its tool-call section inside a think block it never closes. A call opener
inside `<think>` (a section's begin, or a call's without one) holds what follows, and our reasoning
split (`core.reasoning`, the rule of our reasoning parser) settles it: the block's closer after it
means the call was drafted in reasoning, and the whole block is text; the end of the output
inside the block means the model called, and the calls are read from there (the block's text
before them is text). So the tool parser alone gives an operator the calls that vLLM's and
SGLang's `kimi_k2` return, while a drafted call (the block closed after it) never runs, exactly
as with our reasoning parser in front; the held calls come at the end of the output.

The machine is the family's (`token_sections.SectionStream`); this module is its header and ids.

Ids: the model's own (the header, trimmed) is the call's id, since Kimi's template writes it back in
history and matches tool results by it; an empty id, or one already used in the response, gets one
of the factory's (by default `functions.NAME:INDEX`, as vLLM makes them for Kimi), unique too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.ids import IdFactory, ResponseIds
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls
from ..core.reasoning import Reasoning, ReasoningSplit
from ..core.stream import ANY_SPACE, NotACall
from .constraints import Element, const, json_value, regex, sequence, tag
from .spec import Call, CallTag, ConstraintRequest, Format
from .token_sections import HEAD, SECTION, TEXT, SectionStream, auto_sections, required_sections

SECTION_BEGIN, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
SECTION_BEGIN_SINGULAR, SECTION_END_SINGULAR = "<|tool_call_section_begin|>", "<|tool_call_section_end|>"
CALL_BEGIN, ARG_BEGIN, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
SECTION_BEGINS = (SECTION_BEGIN, SECTION_BEGIN_SINGULAR)
SECTION_ENDS = (SECTION_END, SECTION_END_SINGULAR)
THINK_MARKERS = ("<think>", "</think>")

_ID_CHARS = re.compile(r"[^\s<]*")
_ID_SLACK = 32  # the id's characters beyond the name's bound: `functions.` and the counter
_NAME_AND_COUNTER = re.compile(r"(?:functions\.)?(.+):[0-9]+")
_DIGITS = "0123456789"

_ID, _AFTER_ID, _THINK, _HELD = "kimi.id", "kimi.after_id", "kimi.think", "kimi.held"
CALL_OPENERS = (SECTION_BEGIN, SECTION_BEGIN_SINGULAR, CALL_BEGIN)
"""What opens calls inside an unclosed think block (a section's begin, or a call's without one)."""


def kimi_call_id(name: str, index: int) -> str:
    """`functions.NAME:INDEX`, the id vLLM makes for Kimi models (the index is the response's)."""
    return f"functions.{name}:{index}"


def _fits(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """Whether arguments fit a tool's parameters: every key a property, every required one there."""
    properties = schema.get("properties")
    required = schema.get("required")
    if isinstance(required, list) and not all(key in arguments for key in required if isinstance(key, str)):
        return False
    return not isinstance(properties, dict) or all(key in properties for key in arguments)


class KimiJsonStream(SectionStream):
    """Incremental parser for one response in Kimi K2's tool-call format (the header: the id, then
    `<|tool_call_argument_begin|>`)."""

    format_name = "kimi_json"
    section_begins, section_ends = SECTION_BEGINS, SECTION_ENDS
    call_begin, call_end = CALL_BEGIN, CALL_END
    args_space = ANY_SPACE
    calls_in_think = True
    """Whether a call opener inside an unclosed think block holds what follows (see the module
    docstring); off in the machine that reads the held text, so holds never nest."""

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = THINK_MARKERS,
    ) -> None:
        own_think = think_markers if self.calls_in_think else None
        super().__init__(tools, id_factory or kimi_call_id, think_markers=None if own_think else think_markers)
        self._id: list[str] = []
        self._id_len = 0
        self._deferred: list[str] | None = None  # arguments of a call whose tool they must name
        self._kept: str | None = None
        self._ids = ResponseIds(self._id_factory, kimi_call_id)
        self._readers.update({HEAD: self._scan_head, _ID: self._scan_id, _AFTER_ID: self._scan_after_id})
        self._think = own_think
        self._tool_list = tools
        self._hold: ReasoningSplit | None = None  # _HELD: the split reading the held text
        self._hold_text: list[str] = []  # _HELD: the text from the call opener on
        if own_think:
            self._outside = OutsideCalls(self._text, [*SECTION_BEGINS, CALL_BEGIN, own_think[0]], None)
            self._in_think = MarkerScanner([own_think[1], *CALL_OPENERS])
            self._readers.update({_THINK: self._scan_think, _HELD: self._scan_held})

    # -- think blocks, and calls opened inside one ------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        if self._think is None:
            return super()._scan_text(text, pos)
        m, at = self._outside.read(text, pos)
        if m is None:
            return at
        if m.group() == self._think[0]:  # a think block: text, as it comes
            self._text(m.group())
            self._state = _THINK
        elif m.group() == self.call_begin:  # a call without a section around it
            self._section_calls = 0
            self._open_call()
        else:
            self._section_calls = 0
            self._raw = [m.group()]
            self._state = SECTION
        return at

    def _scan_think(self, text: str, pos: int) -> int | None:
        """Inside a think block: text up to its closer; a call opener holds what follows."""
        m = self._in_think.search(text, pos)
        end = m.start() if m is not None else self._in_think.releasable(text, pos)
        self._text(text[pos:end])
        if m is None:
            return end if end > pos else None
        if m.group() == self._think[1]:  # type: ignore[index]
            self._text(m.group())
            self._state = TEXT
            return m.end()
        self._hold = _HELD_READER.reasoning_split("opened")
        self._hold_text = []
        self._state = _HELD
        return m.start()

    def _scan_held(self, text: str, pos: int) -> int | None:
        """Held after a call opener inside the block, until the split says: the block's closer
        came (all of it was text; the answer after the closer is read on), or the output ends
        (`_close`)."""
        assert self._hold is not None
        pieces = self._hold.feed(text[pos:])
        self._hold_text.append(text[pos:])
        if not self._hold.ended:
            return len(text)
        answer = "".join(piece.text for piece in pieces if not isinstance(piece, Reasoning))
        held = "".join(self._hold_text)
        self._text(held[: len(held) - len(answer)])
        self._hold, self._hold_text = None, []
        self._state = TEXT
        return len(text) - len(answer)

    def _close(self) -> None:
        if self._state == _THINK:
            self._state = TEXT  # a partial closer or opener at the end: text
        elif self._state == _HELD:
            assert self._hold is not None
            pieces = self._hold.close(calls=_HELD_READER.call_reading(self._tool_list))
            answer = "".join(piece.text for piece in pieces if not isinstance(piece, Reasoning))
            held = "".join(self._hold_text)
            self._text(held[: len(held) - len(answer)])  # the block's text before the calls
            self._hold, self._hold_text = None, []
            self._state = TEXT
            # The calls, read as the split's reading found them: a think block after them is text.
            self._outside = OutsideCalls(self._text, [*SECTION_BEGINS, CALL_BEGIN], self._think)
            self._think = None
            self._text_in, self._step_at, self._step_mark = answer, 0, len(self._out)
            self._feed(answer)
        super()._close()

    def _pending_text(self) -> str:
        return "".join(self._hold_text) + super()._pending_text()

    # -- the header: the id ------------------------------------------------------------------------

    def _open_head(self) -> None:
        self._id, self._id_len = [], 0

    def _scan_head(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos, self._raw, ANY_SPACE)
        if at > pos:
            return at
        self._state = _AFTER_ID if text[pos] == "<" else _ID
        return pos

    def _scan_id(self, text: str, pos: int) -> int | None:
        """The id, consumed as it comes; past its bound the call breaks right there, at a position
        the text fixes, so no chunking changes what follows."""
        room = self.limits.max_name + _ID_SLACK - self._id_len
        end = _ID_CHARS.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        too_long = end - pos > room
        if too_long:
            end = pos + room
        self._id.append(text[pos:end])
        self._raw.append(text[pos:end])
        self._id_len += end - pos
        if too_long:
            raise NotACall("the call id is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        if end < len(text):
            self._state = _AFTER_ID
        return end

    def _scan_after_id(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos, self._raw, ANY_SPACE)
        if at > pos:
            return at
        found = self._literal_at(text, pos, (ARG_BEGIN,))
        if found is None:
            return None
        if not found:
            what = "whitespace inside the call id" if text[pos] != "<" else "no argument marker after the call id"
            raise NotACall(what, pos)
        self._raw.append(ARG_BEGIN)
        self._announce(pos + len(ARG_BEGIN))
        return pos + len(ARG_BEGIN)

    def _announce(self, at: int) -> None:
        """Start the call whose arguments begin at `at`. A call that names no tool, or that the
        core refuses (see `_start_call`), is text up to there."""
        call_id = "".join(self._id)
        self._kept = self._ids.free(call_id)
        self._start_args()
        name = self._name_in(call_id)
        if name is not None:
            self._start(name, at)
        elif len(self.tools.schemas) > 1:
            self._deferred = []  # the arguments will tell
        else:
            raise NotACall(f"the call id {call_id!r} names no tool", at)

    def _start(self, name: str, at: int) -> None:
        """Announce the call to `name`; a refused one is text up to `at`."""
        if len(name) > self.limits.max_name:
            raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", at)
        try:
            self._index = self._start_call(name, self._kept)
        except NotACall as err:
            raise NotACall(str(err), at) from None
        if self._kept is not None:
            self._ids.keep(self._kept)

    def _value_done(self, arguments: dict[str, Any], at: int) -> dict[str, Any]:
        """A call whose id named no tool: its arguments are complete, so they name it, or it is
        text up to `at`."""
        deferred, self._deferred = self._deferred, None
        if deferred is None:
            return arguments
        fits = [name for name, schema in self.tools.schemas.items() if _fits(schema, arguments)]
        if len(fits) != 1:
            raise NotACall(f"the call id names no tool, and its arguments fit {len(fits)} tools", at)
        self._start(fits[0], at)
        self._call_args(self._index, "".join(deferred))
        return arguments

    def _name_in(self, call_id: str) -> str | None:
        """The tool an id names (see the module docstring), or None."""
        m = _NAME_AND_COUNTER.fullmatch(call_id)
        if m is not None:
            return m.group(1)
        declared = self.tools.schemas
        if not declared:
            return None
        rest = call_id.removeprefix("functions").removeprefix(".")
        for spelled in (call_id, rest):
            if spelled in declared:
                return spelled
        base = rest.rstrip(_DIGITS)
        if base != rest and base.removesuffix(":") in declared:
            return base.removesuffix(":")
        if len(declared) == 1:
            return next(iter(declared))
        return None

    def _send(self, fragment: str) -> None:
        if self._deferred is not None:
            self._deferred.append(fragment)
        else:
            self._call_args(self._index, fragment)

    # -- ids and breaks ----------------------------------------------------------------------------

    def _reset_call(self) -> None:
        self._deferred = None

    def _make_id(self, name: str, index: int) -> str:
        """The factory's id, unless the response already used it: then `functions.NAME:N`."""
        return self._ids.make(name, index)


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """One section, each call with the id `functions.NAME:IDX` (IDX counting the calls), as Kimi's
    template writes calls whose ids vLLM made."""
    body = "".join(
        f"{CALL_BEGIN}{kimi_call_id(name, i)}{ARG_BEGIN}{json.dumps(arguments, ensure_ascii=False)}{CALL_END}"
        for i, (name, arguments) in enumerate(calls)
    )
    return f"{SECTION_BEGIN}{body}{SECTION_END}"


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One tag per tool: `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{..}<|tool_call_end|>`."""
    index = regex("[0-9]{1,4}")  # unbounded, a weak model writes digits on
    return [
        tag(
            f"{CALL_BEGIN}functions.{name}:",
            sequence(index, const(ARG_BEGIN), json_value(request.parameters(name))),
            CALL_END,
        )
        for name in names
    ]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    return required_sections(request, _call_tags, SECTION_BEGIN, SECTION_ENDS)


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    return auto_sections(request, _call_tags, SECTION_BEGINS, SECTION_ENDS, CALL_BEGIN)


def may_call(text: str) -> bool:
    """Whether `text` may hold a call whose id names a tool only the request's tools tell."""
    return CALL_BEGIN in text


def _writes_name(name: str) -> bool:
    # `functions.NAME:IDX` reads back as NAME for any name without whitespace or `<`
    return _ID_CHARS.fullmatch(name) is not None


FORMAT = Format(
    "kimi_json",
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{..}"
    "<|tool_call_end|><|tool_calls_section_end|>",
    KimiJsonStream,
    write,
    markers=(SECTION_BEGIN, CALL_BEGIN, ARG_BEGIN, CALL_END, SECTION_END, SECTION_BEGIN_SINGULAR, SECTION_END_SINGULAR),
    special_tokens=(SECTION_BEGIN, CALL_BEGIN, ARG_BEGIN, CALL_END, SECTION_END),
    required_constraint=required_constraint,
    call_tag=CallTag(
        f"{SECTION_BEGIN}{CALL_BEGIN}functions.{{name}}:0{ARG_BEGIN}", CALL_END + SECTION_END, SECTION_BEGIN
    ),
    own_ids=True,
    needs_declared_tools=may_call,
    writes_name=_writes_name,
    auto_constraint=auto_constraint,
    vllm_names=("kimi_k2",),
    sglang_names=("kimi_k2",),
    models="Kimi K2 / K2.5 / K2.6",
    reasoning_openers=CALL_OPENERS,
)


class _ThinkTextStream(KimiJsonStream):
    """The machine that reads held text (the split's probe, its reading at the end): a think block
    in it is text, never held again."""

    calls_in_think = False


_HELD_READER = replace(FORMAT, stream_class=_ThinkTextStream)
"""The format as the split of a held call reads it."""
