# ruff: noqa: RUF001, RUF002, RUF003  (DeepSeek's markers are spelled with U+FF5C, the fullwidth bar)
"""`deepseek_json`: DeepSeek V3 / V3-0324 / R1-0528 and V3.1 / V3.2-Exp, JSON calls in a section of
special tokens. One machine reads both generations; what follows a call's begin tells them apart.

Grammar, as this machine reads it::

    output  := (text | think | section | call)*
    think   := "<think>" text "</think>"                  # reasoning: text, never a call
    section := CALLS_BEGIN ws (call ws)* [CALLS_END]
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
the arguments. Where the wrapper is the only key, its value an object, and the request declares the
tool with no property of that name, the inner object is the arguments (streamed too: a call whose
first key is a wrapper waits for its value to end). Undeclared tools and tools that do have such a
property get the object as written.

Ids: DeepSeek writes none; the engine's ids are used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader
from ..core.json_lexer import json_text
from ..core.outside import OutsideCalls
from ..core.stream import JSON_SPACE, FormatStream, NotACall
from .spec import Call, CallTag, ConstraintRequest, Format

CALLS_BEGIN, CALLS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
THINK_MARKERS = ("<think>", "</think>")
V3_TYPE = "function"
FENCES, FENCE_END = ("```json", "```"), "```"
WRAPPERS = ("arguments", "input")

_IN_SECTION = (CALL_BEGIN, CALLS_END, CALLS_BEGIN)
_AFTER_ARGS = (CALL_END, *_IN_SECTION)
_EMPTY_ARGS = (CALL_END, CALLS_END)
_NAME_CHARS = re.compile(r"[^\s<`]*")
_FIRST_KEY = re.compile(r'\{[ \t\r\n]*"((?:[^"\\]|\\.)*)"')
_MAYBE_KEY = re.compile(r'\{[ \t\r\n]*(?:"(?:[^"\\]|\\.)*\\?)?')
_KEY_BOUND = 64  # characters of an object's start to look at for a wrapper key

_TEXT, _SECTION, _HEAD, _AFTER_WORD, _V3_NAME, _FENCE, _ARGS_START, _ARGS, _AFTER_VALUE = range(9)


class DeepSeekJsonStream(FormatStream):
    """Incremental parser for one response in DeepSeek's special-token JSON calls."""

    format_name = "deepseek_json"

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: Any = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [CALLS_BEGIN, CALL_BEGIN], think_markers)
        self._state = _TEXT
        self._raw: list[str] = []  # the section's markup while it holds no call, then the current call's
        self._section_calls = 0
        self._word: list[str] = []  # the name (V3.1) or the type (V3) before the separator
        self._word_len = 0
        self._v3 = False  # the call is in V3's form; `_fenced`: its arguments open with a fence
        self._fenced = False
        self._index = -1
        self._name = ""
        self._done_args: dict[str, Any] = {}
        self._args: ArgumentsReader | None = None
        self._head: list[str] | None = None  # the arguments' start while a wrapper key may open them
        self._wrapper: str | None = None
        self._wrapped: list[str] = []
        self._readers = {
            _TEXT: self._scan_text,
            _SECTION: self._scan_section,
            _HEAD: self._scan_word,
            _AFTER_WORD: self._scan_after_word,
            _V3_NAME: self._scan_word,
            _FENCE: self._scan_fence,
            _ARGS_START: self._scan_args_start,
            _ARGS: self._scan_args,
            _AFTER_VALUE: self._scan_after_value,
        }

    # -- outside calls, and between them ---------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._section_calls = 0
            if m.group() == CALL_BEGIN:
                self._open_call()
            else:
                self._raw = [m.group()]
                self._state = _SECTION
        return at

    def _scan_section(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos, self._raw)
        if at > pos:
            return at
        found = self._literal_at(text, pos, _IN_SECTION)
        if found is None:
            return None
        if found == CALL_BEGIN:
            self._open_call()
        elif found == CALLS_END:
            self._end_section(found)
        elif found:  # a section's begin again: a new section
            if self._section_calls == 0:
                self._raw.append(found)
            else:
                self._raw, self._section_calls = [found], 0
        elif self._section_calls == 0:
            raise NotACall("no call after the section's begin", pos)
        else:
            self._raw = []  # the section's end is missing: what follows is text
            self._state = _TEXT
            return pos
        return pos + len(found)

    def _open_call(self) -> None:
        if self._section_calls > 0:
            self._raw = []
        self._raw.append(CALL_BEGIN)
        self._word, self._word_len, self._v3, self._fenced = [], 0, False, False
        self._state = _HEAD

    def _end_section(self, marker: str) -> None:
        if self._section_calls == 0:
            self._reject("a tool-call section without a call", "".join(self._raw) + marker)
        self._raw, self._section_calls = [], 0
        self._state = _TEXT

    # -- the header ------------------------------------------------------------------------------

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
        if self._state == _HEAD:
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
            self._state = _ARGS_START
        return at

    def _start(self, name: str, at: int) -> None:
        if not name:
            raise NotACall("the call names no tool", at)
        try:
            self._index = self._start_call(name)
        except NotACall as err:
            raise NotACall(str(err), at) from None
        self._name = name

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
        self._state = _ARGS_START
        return pos

    # -- the arguments ---------------------------------------------------------------------------

    def _scan_args_start(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos, self._raw)
        if at > pos:
            return at
        if text[pos] == "<" and not self._v3:
            found = self._literal_at(text, pos, _EMPTY_ARGS)
            if found is None:
                return None
            if not found:
                raise NotACall("no arguments after the separator", pos)
            self._call_args(self._index, "{}")
            self._finish_call({})
            if found == CALLS_END:
                self._end_section(found)
            return pos + len(found)
        self._args = ArgumentsReader(self._send, self.limits)
        self._head, self._wrapper, self._wrapped = [], None, []
        self._state = _ARGS
        return pos

    def _send(self, fragment: str) -> None:
        """Arguments as they come; held while their first key may be a wrapper to take off."""
        if self._wrapper is not None:
            self._wrapped.append(fragment)
            return
        if self._head is None:
            self._call_args(self._index, fragment)
            return
        self._head.append(fragment)
        head = "".join(self._head)
        m = _FIRST_KEY.match(head)
        if m is not None and self._unwraps(m.group(1)):
            self._wrapper, self._wrapped, self._head = m.group(1), self._head, None
        elif m is not None or len(head) > _KEY_BOUND or not _MAYBE_KEY.fullmatch(head):
            self._head = None
            self._call_args(self._index, head)

    def _unwraps(self, key: str) -> bool:
        schema = self.tools.schemas.get(self._name)
        if schema is None or key not in WRAPPERS:
            return False
        properties = schema.get("properties")
        return not isinstance(properties, dict) or key not in properties

    def _arguments(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The value is complete: send what was held, the wrapper taken off where it is the only key."""
        head, wrapper, self._head, self._wrapper = self._head, self._wrapper, None, None
        if head:
            self._call_args(self._index, "".join(head))
        if wrapper is None:
            return arguments
        inner = arguments.get(wrapper)
        if len(arguments) == 1 and isinstance(inner, dict):
            self._call_args(self._index, json_text(inner))
            return inner
        self._call_args(self._index, "".join(self._wrapped))
        return arguments

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        stop, done = self._args.read(text, pos, self._raw)
        if not done:
            return stop if stop > pos else None
        self._done_args = self._arguments(self._args.arguments)
        self._state = _AFTER_VALUE
        return stop

    def _scan_after_value(self, text: str, pos: int) -> int | None:
        """The value is complete, so the call stands: V3's closing fence, then the call's end marker,
        or what comes instead."""
        ws_end = JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if ws_end > pos:
            return ws_end
        if self._fenced:
            found = self._literal_at(text, pos, (FENCE_END,))
            if found is None:
                return None
            self._fenced = False
            if found:
                return pos + len(found)
        found = self._literal_at(text, pos, _AFTER_ARGS)
        if found is None:
            return None
        self._finish_call(self._done_args)
        if found == CALL_END:
            return pos + len(found)
        if found == CALLS_END:
            self._end_section(found)
            return pos + len(found)
        return pos

    def _finish_call(self, arguments: dict[str, Any]) -> None:
        self._end_call(self._index, arguments)
        self._section_calls += 1
        self._raw, self._args = [], None
        self._state = _SECTION

    # -- breaks and the end ----------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        self._reject(str(err), "".join(self._raw))
        self._raw, self._args, self._head, self._wrapper = [], None, None, None
        self._section_calls = 0
        self._state = _TEXT
        return pos if err.pos is None else err.pos

    def _close(self) -> None:
        state = self._state
        if state == _ARGS and self._args is not None and self._args.finish(self._buf):
            self._done_args = self._arguments(self._args.arguments)
            self._buf, state = "", _AFTER_VALUE  # `null` at the very end
        if state == _AFTER_VALUE:
            if self._fenced and FENCE_END.startswith(self._buf):
                self._buf = ""  # the closing fence, cut off
            self._finish_call(self._done_args)
            state = _SECTION
        if state == _TEXT or (state == _SECTION and self._section_calls > 0):
            self._text(self._buf)
        else:
            self._reject("the output ended inside a tool call", "".join(self._raw) + self._buf)
        self._raw, self._buf = [], ""

    def _pending_text(self) -> str:
        return "".join(self._raw)


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


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[dict[str, Any]]:
    """One tag per tool: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{..}<｜tool▁call▁end｜>`."""
    return [
        {
            "type": "tag",
            "begin": f"{CALL_BEGIN}{name}{SEP}",
            "content": {"type": "json_schema", "json_schema": request.parameters(name)},
            "end": CALL_END,
        }
        for name in names
    ]


def _section(request: ConstraintRequest, names: list[str]) -> dict[str, Any]:
    calls = {
        "type": "tags_with_separator",
        "tags": _call_tags(request, names),
        "separator": "",
        "at_least_one": True,
        "stop_after_first": request.single,
    }
    return {"type": "tag", "begin": CALLS_BEGIN, "content": calls, "end": CALLS_END}


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One section of one or more calls in V3.1's form (at most one if `single`)."""
    return {"type": "structural_tag", "format": _section(request, request.names)}


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where a section's begin, or a call's begin with no section around
    it, opens calls to declared tools in V3.1's form (V3's form is never admitted, so it is held too)."""
    names = list(request.schemas)
    tags = [_section(request, names), *_call_tags(request, names)]
    triggered = {"type": "triggered_tags", "triggers": [CALLS_BEGIN, CALL_BEGIN], "tags": tags}
    return {"type": "structural_tag", "format": {**triggered, "stop_after_first": request.single}}


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
    required=required_constraint,
    auto=auto_constraint,
    call_tag=CallTag(f"{CALLS_BEGIN}{CALL_BEGIN}{{name}}{SEP}", CALL_END + CALLS_END, CALLS_BEGIN),
    writes_name=_writes_name,
    vllm_names=("deepseek_v3", "deepseek_v31"),
    sglang_names=("deepseekv3", "deepseekv31"),
)
