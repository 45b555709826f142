# ruff: noqa: RUF001, RUF002, RUF003  (DeepSeek's markers are spelled with U+FF5C, the fullwidth bar)
"""`deepseek_json`: DeepSeek V3 / V3-0324 / R1-0528 and V3.1 / V3.2-Exp, JSON calls in a section of
special tokens. One machine reads both generations; what follows a call's begin tells them apart.

Grammar, as this machine reads it::

    output  := (text | think | section | call)*
    think   := "<think>" text "</think>"                  # reasoning: text, never a call
    section := CALLS_BEGIN ws (call ws | CALLS_BEGIN ws)* [CALLS_END]
    call    := CALL_BEGIN (v3 | v31) [CALL_END]
    v3      := "function" SEP NAME ws [FENCE] ws args ws ["```"]      # V3, R1-0528: NAME\\n```json\\n{..}\\n```
    v31     := NAME SEP ws [args]                                    # V3.1, V3.2-Exp: NAME<sep>{..}
    args    := a JSON object, or a JSON string holding one, or null   # none at all (v31): {}
    NAME    := [^\\s<`]{1,max_name}     FENCE := "```json" | "```"     ws := [ \\t\\r\\n]*

    CALLS_BEGIN, CALLS_END := "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
    CALL_BEGIN, CALL_END, SEP := "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"

`function<｜tool▁sep｜>` opens V3's form, unless a JSON object follows at once (V3.1's call to a tool
named `function`). A call without a section around it is read the same; a section that the end of
the output (max_tokens) cuts off keeps the calls that closed. Once the JSON value is complete the call
stands: the closing fence and `<｜tool▁call▁end｜>` may be missing. After a call, text that is not a
marker ends the section and is content. A section holding no call, a call that breaks (no separator,
a name holding whitespace or too long, arguments that are not an object) is text up to where it
broke, and reading goes on there. Markers inside `<think>..</think>` (also an unclosed one) are text.

Wrapped arguments: DeepSeek models sometimes write `{"arguments": {..}}` or `{"input": {..}}` as
the arguments (sgl-project/sglang#38924). Where the wrapper is the only key and the request declares
the tool with no property of that name, what it holds is the arguments: an object, a JSON string
holding one, or a plain string when the tool has one property, a string (`{"arguments": "ls"}` for
`bash(command)`). The wrapper must be the first key, ending in the arguments' first 64 characters
(so the stream can tell early, the same in every chunking); such a call streams once its value
ends. Undeclared tools, tools that declare such a property (also through `$ref` or a union), and
wrappers next to other keys get the object as written.

The template writes V3.1's form, after V3.1's own template: it is what V3.1 / V3.2-Exp write and
what both engines' `deepseek_v31` read, and it puts no fence around the JSON. V3's form (V3 /
R1-0528, whose own templates write it into history) is read, never written. The machine is the family's
(`token_sections.SectionStream`); this module is the header and the fence, and a call's arguments go
out through `core/wrapped_arguments.py`, which takes a wrapper off.

Ids: DeepSeek writes none; the engine's ids are used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import partial
from typing import Any

from ..core.ids import IdFactory
from ..core.stream import NotACall
from ..core.wrapped_arguments import WrappedArguments
from .constraints import Element, json_value, tag
from .spec import Call, CallTag, ConstraintRequest, Format
from .token_sections import HEAD, SectionStream, auto_sections, required_sections

CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
THINK_MARKERS = ("<think>", "</think>")
V3_TYPE = "function"
FENCES, FENCE_END = ("```json", "```"), "```"
WRAPPERS = ("arguments", "input")

_NAME_CHARS = re.compile(r"[^\s<`]*")

_AFTER_WORD, _V3_NAME, _FENCE = "deepseek.after_word", "deepseek.v3_name", "deepseek.fence"


class DeepSeekJsonStream(SectionStream):
    """Incremental parser for one response in DeepSeek's special-token JSON calls (the header:
    `NAME<｜tool▁sep｜>`, or V3's `function<｜tool▁sep｜>NAME` and a fence)."""

    format_name = "deepseek_json"
    section_begins, section_ends = (CALLS_BEGIN,), (CALLS_END,)
    call_begin, call_end = CALL_BEGIN, CALL_END

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: Any = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._word: list[str] = []  # the name (V3.1) or the type (V3) before the separator
        self._word_len = 0
        self._v3 = False  # the call is in V3's form; `_fenced`: its arguments open with a fence
        self._fenced = False
        self._arguments: WrappedArguments | None = None  # the call's, once it starts
        self._readers.update(
            {
                HEAD: self._scan_word,
                _AFTER_WORD: self._scan_after_word,
                _V3_NAME: self._scan_word,
                _FENCE: self._scan_fence,
            }
        )

    # -- the header ------------------------------------------------------------------------------

    def _open_head(self) -> None:
        self._word, self._word_len, self._v3, self._fenced = [], 0, False, False

    def _scan_word(self, text: str, pos: int) -> int | None:
        """The word before the separator (V3.1's name, V3's type) or V3's name after it, consumed as
        it comes; past its bound the call breaks right there."""
        room = self.limits.max_name - self._word_len
        end = _NAME_CHARS.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        if end - pos > room:
            self._raw.append(text[pos : pos + room])
            raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", pos + room)
        self._word.append(text[pos:end])
        self._raw.append(text[pos:end])
        self._word_len += end - pos
        if end == len(text):
            return end
        if self._state == HEAD:
            self._state = _AFTER_WORD
        else:
            self._start("".join(self._word), end)
            self._state = _FENCE
        return end

    def _scan_after_word(self, text: str, pos: int) -> int | None:
        found = self._literal_at(text, pos, (SEP,))
        if found is None:
            return None
        if not found or not self._word_len:
            raise NotACall("no name and separator after the call's begin", pos)
        word = "".join(self._word)
        at = pos + len(SEP)
        if word == V3_TYPE and at == len(text):
            return None  # V3's name or V3.1's arguments: the next character tells
        self._raw.append(SEP)
        if word == V3_TYPE and text[at] != "{":
            self._v3, self._word, self._word_len = True, [], 0
            self._state = _V3_NAME
        else:
            self._start(word, at)
            self._start_args()
        return at

    def _start(self, name: str, at: int) -> None:
        if not name:
            raise NotACall("the call names no tool", at)
        try:
            self._index = self._start_call(name)
        except NotACall as err:
            raise NotACall(str(err), at) from None
        send = partial(self._call_args, self._index)
        self._arguments = WrappedArguments(send, self.tools.schemas.get(name), WRAPPERS, self.limits.max_depth)

    def _scan_fence(self, text: str, pos: int) -> int | None:
        """V3: whitespace after the name, then the fence that opens the arguments (or none)."""
        at = self._markup_ws(text, pos, self._raw)
        if at > pos:
            return at
        if text[pos] == "`" and not self._fenced:
            rest = text[pos : pos + len(FENCES[0])]
            if len(rest) < len(FENCES[0]) and FENCES[0].startswith(rest):
                return None  # "```" may still grow into "```json"
            found = next((fence for fence in FENCES if text.startswith(fence, pos)), "")
            if not found:
                raise NotACall("a broken fence before the arguments", pos)
            self._raw.append(found)
            self._fenced = True
            return pos + len(found)
        self._start_args()
        return pos

    # -- the arguments: a wrapper taken off ----------------------------------------------------------

    def _empty_allowed(self) -> bool:
        return not self._v3

    def _send(self, fragment: str) -> None:
        """Arguments as they come; held while their first key may be a wrapper to take off."""
        assert self._arguments is not None
        self._arguments.send(fragment)

    def _value_done(self, arguments: dict[str, Any], at: int) -> dict[str, Any]:
        assert self._arguments is not None
        return self._arguments.done(arguments)

    # -- after the value, and breaks ------------------------------------------------------------------

    def _value_tail(self, text: str, pos: int) -> int | None:
        """V3's closing fence (which may be missing)."""
        if not self._fenced:
            return pos
        found = self._literal_at(text, pos, (FENCE_END,))
        if found is None:
            return None
        self._fenced = False
        return pos + len(found)

    def _tail_at_end(self, rest: str) -> str:
        return "" if self._fenced and FENCE_END.startswith(rest) else rest  # the closing fence, cut off


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """One section in V3.1's form, `NAME<｜tool▁sep｜>{..}` per call, as the template writes it."""
    body = "".join(
        f"{CALL_BEGIN}{name}{SEP}{json.dumps(arguments, ensure_ascii=False)}{CALL_END}" for name, arguments in calls
    )
    return f"{CALLS_BEGIN}{body}{CALLS_END}"


def write_v3(calls: Sequence[Call]) -> str:
    """One section in V3's form (`function<｜tool▁sep｜>NAME` and a fenced json block), as DeepSeek
    V3 / R1-0528 write calls."""
    body = "".join(
        f"{CALL_BEGIN}{V3_TYPE}{SEP}{name}\n```json\n{json.dumps(arguments, ensure_ascii=False)}\n```{CALL_END}"
        for name, arguments in calls
    )
    return f"{CALLS_BEGIN}{body}{CALLS_END}"


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One tag per tool: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{..}<｜tool▁call▁end｜>`."""
    return [tag(f"{CALL_BEGIN}{name}{SEP}", json_value(request.parameters(name)), CALL_END) for name in names]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One section of one or more calls in V3.1's form (at most one if `single`)."""
    return required_sections(request, _call_tags, CALLS_BEGIN, CALLS_END)


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`, with a section's begin or a call's begin as the opener; V3's form is never
    admitted, so it is held too."""
    return auto_sections(request, _call_tags, [CALLS_BEGIN], CALLS_END, CALL_BEGIN)


def _writes_name(name: str) -> bool:
    # NAME<｜tool▁sep｜> reads back as NAME for any name without whitespace, `<` or a backtick
    return bool(name) and _NAME_CHARS.fullmatch(name) is not None


FORMAT = Format(
    "deepseek_json",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{..}<｜tool▁call▁end｜><｜tool▁calls▁end｜> "
    "(V3.1); V3's function<｜tool▁sep｜>NAME\\n```json\\n{..}\\n``` read too",
    DeepSeekJsonStream,
    write,
    markers=(CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END),
    special_tokens=(CALLS_BEGIN, CALL_BEGIN, SEP, CALL_END, CALLS_END),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    call_tag=CallTag(f"{CALLS_BEGIN}{CALL_BEGIN}{{name}}{SEP}", CALL_END + CALLS_END, CALLS_BEGIN),
    writes_name=_writes_name,
    vllm_names=("deepseek_v3", "deepseek_v31"),
    sglang_names=("deepseekv3", "deepseekv31"),
    models="DeepSeek V3 / V3-0324 / R1-0528, V3.1 / V3.2-Exp (special-token JSON)",
)
