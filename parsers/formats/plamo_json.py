"""`plamo_json`: PLaMo 3's tool requests, each a name and JSON arguments between tags spelled as
`<|plamo:begin_X:plamo|>` / `<|plamo:end_X:plamo|>`.

Grammar, as this machine reads it::

    output   := (text | think | requests | request)*
    think    := BEGIN_THINK text END_THINK                # reasoning: text, never a call
    requests := BEGIN_REQUESTS ws (request ws)* [END_REQUESTS]
    request  := BEGIN_REQUEST ws BEGIN_NAME NAME END_NAME ws ARGS ws JSON-object ws [END_ARGS] ws [END_REQUEST]
    ARGS     := BEGIN_ARGS [CONSTRAIN "json"] [MSG]

with BEGIN_X = `<|plamo:begin_X:plamo|>` and END_X = `<|plamo:end_X:plamo|>` for X in
`tool_requests`, `tool_request`, `tool_name`, `tool_arguments` and `think`, CONSTRAIN =
`<|plamo:constrain|>` and MSG = `<|plamo:msg|>`. The tags are not single tokens: PLaMo 3's
tokenizer writes each as the special tokens `<|plamo:begin_` or `<|plamo:end_`, the tag's word, and
`:plamo|>`, so decoding must keep special tokens (the adapters do). The model writes ARGS in full
(`<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>`); clients of PLaMo's
API have seen it without CONSTRAIN, and without both. NAME is the text between its tags, trimmed
(no `<` in it, at most TOOLCALL_PARSERS_MAX_NAME characters). `<|plamo:tag|>`, which ends a turn,
is text.

The section machine (calls without the section around them, a missing END_ARGS, END_REQUEST or
END_REQUESTS once the arguments are complete, broken calls as text up to where they broke, a cut-off
call as text) is `token_sections`, shared with Kimi K2 and DeepSeek; this module reads the header.
vLLM starts PLaMo 3 in its reasoning when thinking is on (the prompt opens it), so the output may
begin with reasoning that only END_THINK closes: a reasoning parser in front takes it out; without
one it is content, as everything outside a call is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import ANY_SPACE, NotACall
from .constraints import Element, json_value, tag
from .spec import Call, ConstraintRequest, Format
from .token_sections import HEAD, SectionStream, auto_sections, required_sections


def plamo_tag(word: str, end: bool = False) -> str:
    return f"<|plamo:{'end' if end else 'begin'}_{word}:plamo|>"


BEGIN_REQUESTS, END_REQUESTS = plamo_tag("tool_requests"), plamo_tag("tool_requests", end=True)
BEGIN_REQUEST, END_REQUEST = plamo_tag("tool_request"), plamo_tag("tool_request", end=True)
BEGIN_NAME, END_NAME = plamo_tag("tool_name"), plamo_tag("tool_name", end=True)
BEGIN_ARGS, END_ARGS = plamo_tag("tool_arguments"), plamo_tag("tool_arguments", end=True)
THINK_MARKERS = (plamo_tag("think"), plamo_tag("think", end=True))
CONSTRAIN_JSON, MSG, EOT = "<|plamo:constrain|>json", "<|plamo:msg|>", "<|plamo:tag|>"
ARGS_IN_FULL = f"{BEGIN_ARGS}{CONSTRAIN_JSON}{MSG}"
TOKENS = ("<|plamo:begin_", "<|plamo:end_", ":plamo|>", "<|plamo:constrain|>", MSG, EOT)
"""The special tokens the tags are written with."""
_NAME, _AFTER_NAME, _ARGS_MARK = "plamo.name", "plamo.after_name", "plamo.args_mark"
_NAME_CHARS = re.compile(r"[^<]*")


class PlamoJsonStream(SectionStream):
    """Incremental parser for one response in PLaMo 3's tool-request format (the header: the name
    between its tags, then the arguments' opener)."""

    format_name = "plamo_json"
    section_begins, section_ends = (BEGIN_REQUESTS,), (END_REQUESTS,)
    call_begin, call_end = BEGIN_REQUEST, END_REQUEST
    args_space = ANY_SPACE

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._name: list[str] = []
        self._name_len = 0
        self._args_marks: tuple[str, ...] = ()  # what may still follow BEGIN_ARGS
        self._readers.update(
            {
                HEAD: self._scan_head,
                _NAME: self._scan_name,
                _AFTER_NAME: self._scan_after_name,
                _ARGS_MARK: self._scan_args_mark,
            }
        )

    def _open_head(self) -> None:
        self._name, self._name_len = [], 0

    def _scan_head(self, text: str, pos: int) -> int | None:
        """Whitespace, then the name's opening tag."""
        if (at := self._markup_ws(text, pos, self._raw, ANY_SPACE)) > pos:
            return at
        return self._expect(text, pos, BEGIN_NAME, _NAME, "no tool name after the request's tag")

    def _scan_name(self, text: str, pos: int) -> int | None:
        """The name, consumed as it comes, up to its closing tag; past its bound the call breaks
        right there, at a position the text fixes."""
        room = self.limits.max_name + 2 - self._name_len  # its surrounding whitespace, trimmed
        end = _NAME_CHARS.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        if end > pos:
            if end - pos > room:
                self._raw.append(text[pos : pos + room])
                raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", pos + room)
            self._name.append(text[pos:end])
            self._raw.append(text[pos:end])
            self._name_len += end - pos
            return end
        return self._expect(text, pos, END_NAME, _AFTER_NAME, "the tool name does not end with its tag")

    def _scan_after_name(self, text: str, pos: int) -> int | None:
        """Whitespace, then the arguments' opener; the call starts there."""
        if (at := self._markup_ws(text, pos, self._raw, ANY_SPACE)) > pos:
            return at
        found = self._expect(text, pos, BEGIN_ARGS, _ARGS_MARK, "no arguments after the tool name")
        if found is not None:
            self._args_marks = (CONSTRAIN_JSON, MSG)
        return found

    def _scan_args_mark(self, text: str, pos: int) -> int | None:
        """What may follow BEGIN_ARGS (CONSTRAIN then MSG, each optional), then the arguments."""
        if self._args_marks and text[pos] == "<":
            found = self._literal_at(text, pos, self._args_marks)
            if found is None:
                return None
            if found:
                self._raw.append(found)
                self._args_marks = self._args_marks[self._args_marks.index(found) + 1 :]
                return pos + len(found)
        name = "".join(self._name).strip()
        if not name:
            raise NotACall("the call names no tool", pos)
        try:
            self._index = self._start_call(name)
        except NotACall as err:
            raise NotACall(str(err), pos) from None
        self._start_args()
        return pos

    def _expect(self, text: str, pos: int, marker: str, state: str, why: str) -> int | None:
        found = self._literal_at(text, pos, (marker,))
        if found is None:
            return None
        if not found:
            raise NotACall(why, pos)
        self._raw.append(found)
        self._state = state
        return pos + len(found)

    def _value_tail(self, text: str, pos: int) -> int | None:
        """END_ARGS after the value (it may be missing)."""
        found = self._literal_at(text, pos, (END_ARGS,))
        return None if found is None else pos + len(found)

    def _tail_at_end(self, rest: str) -> str:
        return "" if END_ARGS.startswith(rest) else rest  # END_ARGS, cut off


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """One section, each request in full, as PLaMo 3 writes them."""
    body = "".join(
        f"{BEGIN_REQUEST}{BEGIN_NAME}{name}{END_NAME}{ARGS_IN_FULL}"
        f"{json.dumps(arguments, ensure_ascii=False)}{END_ARGS}{END_REQUEST}"
        for name, arguments in calls
    )
    return f"{BEGIN_REQUESTS}{body}{END_REQUESTS}"


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One tag per tool: the request with its name and JSON arguments."""
    return [
        tag(
            f"{BEGIN_REQUEST}{BEGIN_NAME}{name}{END_NAME}{ARGS_IN_FULL}",
            json_value(request.parameters(name)),
            f"{END_ARGS}{END_REQUEST}",
        )
        for name in names
    ]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    return required_sections(request, _call_tags, BEGIN_REQUESTS, END_REQUESTS)


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    return auto_sections(request, _call_tags, (BEGIN_REQUESTS,), END_REQUESTS, BEGIN_REQUEST)


def _writes_name(name: str) -> bool:
    # the name ends at the first `<`, and is trimmed
    return "<" not in name and name == name.strip()


FORMAT = Format(
    "plamo_json",
    "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>f"
    "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{..}"
    "... (PLaMo 3)",
    PlamoJsonStream,
    write,
    markers=(
        BEGIN_REQUESTS,
        END_REQUESTS,
        BEGIN_REQUEST,
        END_REQUEST,
        BEGIN_NAME,
        END_NAME,
        BEGIN_ARGS,
        END_ARGS,
        *TOKENS,
    ),
    special_tokens=TOKENS,
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    vllm_names=("plamo3",),
    models="PLaMo 3 (Preferred Networks)",
)
