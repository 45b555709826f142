"""`inkling_json`: Inkling's typed messages, a call being a message whose content kind is
`<|content_invoke_tool_json|>` and whose body is `{"name": .., "args": {..}}`.

Grammar, as this machine reads it::

    output   := (text | call)*
    call     := [MODEL [NAME]] INVOKE_JSON ws call-object ws [END]
    call-object := {"name", "args"} | {"name", "arguments"} | {"name", "parameters"}   # keys in any order

with MODEL = `<|message_model|>`, INVOKE_JSON = `<|content_invoke_tool_json|>` and END =
`<|end_message|>` or `<|content_model_end_sampling|>`, all single special tokens of Inkling's
tokenizer. NAME, between the message's opener and its content kind, is metadata the engines drop:
the tool is the one the JSON names. Inkling's prompt ends with MODEL, so the output may begin with
NAME (no whitespace in it) and the content kind. The message machine (what breaks a header) is
`channel_messages`; the call object is read by `core.json_calls` (name first or not, `args` given
as an object, a JSON string holding one, or `null`).

Once the call object is complete the call stands, END may be missing (the end of the output, or
text after it), and what follows is content; `args` missing is `{}`, as vLLM reads it. A body that
is not a call object (an array of numbers, no name, broken JSON) and a call cut off by the end of
the output are text. Every other message is text with its markup: the reply's text
(`<|content_text|>`), reasoning (`<|content_thinking|>`, which a reasoning parser in front takes
out), `<|content_invoke_tool_text|>` (a raw-text invocation, which names no tool: vLLM shows it as
text, SGLang as a call with an empty name) and `<|content_tool_error|>`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import CallShape, JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.outside import ThinkMarkers
from ..core.stream import JSON_SPACE
from .channel_messages import ChannelStream, calls_after_prompt
from .constraints import Element, json_value, structural, tag, triggered
from .spec import Call, ConstraintRequest, Format

MODEL, INVOKE_JSON = "<|message_model|>", "<|content_invoke_tool_json|>"
END, END_SAMPLING = "<|end_message|>", "<|content_model_end_sampling|>"
CONTENT_TEXT, CONTENT_THINKING = "<|content_text|>", "<|content_thinking|>"
INVOKE_TEXT, TOOL_ERROR = "<|content_invoke_tool_text|>", "<|content_tool_error|>"
ENDS = (END, END_SAMPLING)
SHAPE = CallShape(frozenset({"name"}), frozenset({"args", "arguments", "parameters"}), None)
PLAIN_THINK = ("<think>", "</think>")
"""Reasoning written as plain text, read as every format reads it: text, never a call."""
_JSON, _AFTER = "inkling.json", "inkling.after"


class InklingJsonStream(ChannelStream):
    """Incremental parser for one response of Inkling's typed messages."""

    format_name = "inkling_json"
    openers = (MODEL, INVOKE_JSON)
    header_ends = (INVOKE_JSON,)
    bare_header = re.compile(r"[^\s<]*")

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = PLAIN_THINK
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._reader: JsonCallReader | None = None
        self._readers.update({_JSON: self._scan_json, _AFTER: self._scan_after})

    def _decide(self, header: str, end: str) -> str | None:
        return ""  # every header that reaches INVOKE_JSON opens a call; the body names the tool

    def _open_call(self, name: str) -> None:
        self._reader = JsonCallReader(
            self._start_call, self._call_args, self._end_call, self.limits, "".join(self._raw), SHAPE
        )
        self._raw = []
        self._state = _JSON

    def _scan_json(self, text: str, pos: int) -> int | None:
        assert self._reader is not None
        try:
            stop, done = self._reader.feed(text, pos)
        except JsonSyntaxError as err:
            self._raw = self._reader.unfinished
            self._reader = None
            self._reject(f"not a valid call ({err})", "".join(self._raw))
            self._call_done()
            return err.pos
        if done:
            self._reader = None
            self._state = _AFTER
        return stop if stop > pos or done else None

    def _scan_after(self, text: str, pos: int) -> int | None:
        """The call object is complete, so the call stands: whitespace, then the message's end, or
        what follows instead (the end is missing)."""
        at = JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if at > pos:
            return at
        end = self._literal_at(text, pos, ENDS)
        if end is None:
            return None
        self._call_done()
        return pos + len(end)

    def _close_call(self) -> None:
        if self._state == _AFTER:
            self._text(self._buf)
        else:
            unfinished = self._reader.unfinished if self._reader is not None else self._raw
            self._reject("the output ended inside a tool call", "".join(unfinished) + self._buf)
        self._reader = None

    def _pending_text(self) -> str:
        return "".join(self._reader.unfinished if self._reader is not None else self._raw)


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """One message per call, the tool's name in its header, as Inkling writes a call."""
    return "".join(
        f"{MODEL}{name}{INVOKE_JSON}{json.dumps({'name': name, 'args': arguments}, ensure_ascii=False)}{END}"
        for name, arguments in calls
    )


def _call_tags(request: ConstraintRequest, names: list[str], opener: str = f"{MODEL}{{name}}") -> list[Element]:
    """Per tool: its call message from `opener` (the tool's name in it) on."""
    tags = []
    for name in names:
        begin = (
            opener.format(name=name) + INVOKE_JSON + "{" + f'"name": {json.dumps(name, ensure_ascii=False)}, "args": '
        )
        tags.append(tag(begin, json_value(request.parameters(name)), "}" + END))
    return tags


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One or more call messages (at most one if `single`), the first continuing the message the
    prompt's `<|message_model|>` opened (its header: the tool's name) or a message of its own."""
    own = _call_tags(request, request.names)
    return structural(calls_after_prompt(request, [*_call_tags(request, request.names, "{name}"), *own], own))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text and messages, where each call content kind calls a declared tool
    (as SGLang's own constraint for Inkling triggers on that token)."""
    return triggered(request, [INVOKE_JSON], _call_tags(request, list(request.schemas), ""))


_WRITES_NAME = re.compile(r"[^\s<]+")


def _writes_name(name: str) -> bool:
    # the header's NAME is metadata, but a name the header cannot hold would end it
    return _WRITES_NAME.fullmatch(name) is not None


FORMAT = Format(
    "inkling_json",
    '<|message_model|>NAME<|content_invoke_tool_json|>{"name": .., "args": {..}}<|end_message|> (Inkling)',
    InklingJsonStream,
    write,
    markers=(MODEL, INVOKE_JSON, END, END_SAMPLING),
    special_tokens=(MODEL, INVOKE_JSON, END, END_SAMPLING),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    vllm_names=("inkling",),
    sglang_names=("inkling",),
    models="Inkling",
    reasoning_openers=(),
    think_blocks=False,
)
