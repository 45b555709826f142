"""`harmony_json`: gpt-oss's Harmony messages, a call being a message to a function with its JSON
arguments as the body: `<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json
<|message|>{..}<|call|>` (one line; the break is this page's).

Grammar, as this machine reads it::

    output   := (text | message)*
    message  := [START ROLE] header MESSAGE body [CLOSER]
    header   := [ws "to=" RECIPIENT] [CHANNEL WORD] [ws "to=" RECIPIENT] [ws [CONSTRAIN] WORD] ws
    call     := a message to a function: ws JSON-object ws [CLOSER] | CLOSER   # no body: {}

with START = `<|start|>`, CHANNEL = `<|channel|>`, CONSTRAIN = `<|constrain|>`, MESSAGE =
`<|message|>` and CLOSER = `<|call|>`, `<|end|>` or `<|return|>`, all single special tokens of
gpt-oss's tokenizer (`o200k_harmony`); ROLE is `assistant`, RECIPIENT and WORD run up to
whitespace or `<`. A message starts at START or at CHANNEL (the message the prompt's
`<|start|>assistant` opened starts at its channel, or at ` to=` right at the output's start). The
message machine (what breaks a header) is `channel_messages`.

The recipient says whether a message is a call, as vLLM's Harmony parser reads it: `functions.NAME`
calls NAME; `assistant`, `user` and the built-in tools (`python`, `browser.*`, `container.*`) are
not calls; any other recipient is a call to the tool of that name (`to=math.sum`, and bare names
gpt-oss writes without `functions.`). A call's channel is `commentary` (its usual) or any other.
The body is one JSON object (a JSON string holding one, or `null`, is read as in every JSON
format); once it is complete the call stands, its closer may be missing (vLLM and SGLang both drop
the stop token `<|call|>` from the text unless told otherwise), and what follows it is content. A
body that is not a JSON object, and a call the end of the output cuts off, are text.

The messages that are not calls (`analysis` reasoning, a `commentary` preamble, the `final`
answer, messages to built-in tools or other roles) are text with their markup, never calls:
SGLang's `gpt-oss` reasoning parser in front hands on the answers' text alone, and the calls'
messages as written. A header that breaks (a line break, another token) is text, as in
`<|channel|>final {"answer": 1}<|return|>`, which vLLM returns as text too.

vLLM (0.32, 0.33 and 0.34 alike) does not hand gpt-oss output to a tool parser: for a model whose
config says `gpt_oss` it builds its one Harmony parser, which reads token ids with `openai_harmony`
and refuses any tool parser but its stub `openai` (at startup: "cannot be used with the
tokenizer"); a subclass of that stub passes the check and is never called. So this format does not
claim vLLM's `openai`: an operator could not put it in its place, and a name that cannot be served
should not be offered. It serves SGLang (`--tool-call-parser harmony_json`, where `gpt-oss` would
be), vLLM for models of another config type that write Harmony, and the toolbox.

In SGLang 0.5.23 the detokenizer keeps the stop token `<|call|>` only for its own `gpt-oss` parser,
and its `gpt-oss` reasoning parser never hands on a call message that lacks it: with
`--reasoning-parser gpt-oss` in front, a call that ends the output is lost before any tool parser
sees it. Without a reasoning parser this format reads it (and the reasoning is content, with its
markup).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader
from ..core.outside import ThinkMarkers
from ..core.stream import JSON_SPACE, NotACall
from .channel_messages import BARE_TRIGGER, ChannelStream, bare_calls, calls_after_prompt
from .constraints import Element, json_value, optional, sequence, structural, tag, triggered
from .spec import Call, ConstraintRequest, Format

START, CHANNEL, CONSTRAIN, MESSAGE = "<|start|>", "<|channel|>", "<|constrain|>", "<|message|>"
CALL_END, END, RETURN = "<|call|>", "<|end|>", "<|return|>"
CLOSERS = (CALL_END, END, RETURN)
PLAIN_THINK = ("<think>", "</think>")
"""Reasoning written as plain text, read as every format reads it: text, never a call (gpt-oss
reasons in its `analysis` channel)."""
_ARGS_START, _ARGS, _AFTER = "harmony.args_start", "harmony.args", "harmony.after"

_WORD = r"[^\s<]+"
_HEADER = re.compile(
    rf"(?:{re.escape(START)}(?P<role>{_WORD}))?"
    rf"\s*(?:to=(?P<to>{_WORD}))?"
    rf"\s*(?:{re.escape(CHANNEL)}(?P<channel>{_WORD}))?"
    rf"\s*(?:to=(?P<to_after>{_WORD}))?"
    rf"\s*(?:(?:{re.escape(CONSTRAIN)})?{_WORD})?\s*"
)
_NOT_FUNCTIONS = frozenset({"assistant", "user", "system", "developer"})
_BUILT_IN_TOOLS = frozenset({"python", "browser", "container"})


def function_name(recipient: str) -> str | None:
    """The tool a message's recipient calls, or None where it is not a function."""
    if recipient.startswith("functions."):
        return recipient[len("functions.") :] or None
    if recipient in _NOT_FUNCTIONS or recipient.split(".", 1)[0] in _BUILT_IN_TOOLS:
        return None
    return recipient


class HarmonyJsonStream(ChannelStream):
    """Incremental parser for one response of gpt-oss's Harmony messages."""

    format_name = "harmony_json"
    openers = (START, CHANNEL)
    header_tokens = (CHANNEL, CONSTRAIN)
    header_ends = (MESSAGE,)
    bare_header = re.compile(r"[ \t]*(?:t(?:o(?:=[^\s<]*[ \t]*)?)?)?")

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = PLAIN_THINK
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._index = -1
        self._args: ArgumentsReader | None = None
        self._done: dict[str, Any] | None = None
        self._readers.update({_ARGS_START: self._scan_args_start, _ARGS: self._scan_args, _AFTER: self._scan_after})

    def _decide(self, header: str, end: str) -> str | None:
        m = _HEADER.fullmatch(header)
        if m is None or m["role"] not in (None, "assistant") or (m["to"] and m["to_after"]):
            return None
        recipient = m["to"] or m["to_after"]
        return function_name(recipient) if recipient else None

    # -- the call's body: its arguments ------------------------------------------------------------

    def _open_call(self, name: str) -> None:
        self._index = self._start_call(name)
        self._done = None
        self._state = _ARGS_START

    def _send(self, fragment: str) -> None:
        self._call_args(self._index, fragment)

    def _scan_args_start(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] == "<":
            closer = self._literal_at(text, pos, CLOSERS)
            if closer is None:
                return None
            if not closer:
                raise NotACall("the call's body is not JSON", pos)
            self._send("{}")  # a call with no body at all
            self._finish({})
            return pos + len(closer)
        self._args = ArgumentsReader(self._send, self.limits)
        self._state = _ARGS
        return pos

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        stop, done = self._args.read(text, pos, self._raw)
        if done:
            self._done = self._args.arguments
            self._state = _AFTER
        return stop if stop > pos or done else None

    def _scan_after(self, text: str, pos: int) -> int | None:
        """The arguments are complete, so the call stands: whitespace, then its closer, or what
        follows instead (the closer is missing)."""
        at = JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
        if at > pos:
            return at
        closer = self._literal_at(text, pos, CLOSERS)
        if closer is None:
            return None
        assert self._done is not None
        self._finish(self._done)
        return pos + len(closer)

    def _finish(self, arguments: dict[str, Any]) -> None:
        self._end_call(self._index, arguments)
        self._args = None
        self._call_done()

    def _close_call(self) -> None:
        if self._state == _ARGS and self._args is not None and self._args.finish(self._buf):
            self._done, self._buf = self._args.arguments, ""  # `null` at the very end
            self._state = _AFTER
        if self._state == _AFTER and self._done is not None:
            self._finish(self._done)
            self._text(self._buf)
        else:
            self._reject("the output ended inside a tool call", "".join(self._raw) + self._buf)


# -- the spec --------------------------------------------------------------------------------------


def _head(name: str) -> str:
    return f"{START}assistant to=functions.{name}{CHANNEL}commentary json{MESSAGE}"


def write(calls: Sequence[Call]) -> str:
    """One message per call, as gpt-oss's template writes a call into the history."""
    return "".join(f"{_head(name)}{json.dumps(arguments, ensure_ascii=False)}{CALL_END}" for name, arguments in calls)


_CALL_ENDS = [CALL_END, ""]
"""`<|call|>` is a stop token: decoding may end the call with it, or stop there (vLLM's own
Harmony constraint ends its tags the same way)."""


def _call_tags(request: ConstraintRequest, names: list[str], *, first: bool = False) -> list[Element]:
    """Per tool: the template's header (`first`: continuing the message the generation prompt
    opened), and, where a message begins anew, the one gpt-oss writes most (the channel first)."""
    tags = []
    for name in names:
        value = json_value(request.parameters(name))
        if first:
            tags.append(tag(f" to=functions.{name}{CHANNEL}commentary json{MESSAGE}", value, _CALL_ENDS))
            continue
        tags.append(tag(_head(name), value, _CALL_ENDS))
        tags.append(tag(f"{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}", value, _CALL_ENDS))
    return tags


_ANY_TEXT: Element = {"type": "any_text", "excludes": [START, CHANNEL, MESSAGE, CALL_END]}
"""A message's free body: the parser reads a message token in it as the next message (which may be
a call), so the body holds none."""


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Reasoning first if the model wants it, then one or more call messages (at most one if
    `single`), the first continuing the message the generation prompt `<|start|>assistant` opened
    or a message of its own."""
    reasoning = tag(f"{CHANNEL}analysis{MESSAGE}", _ANY_TEXT, f"{END}{START}assistant")
    own = _call_tags(request, request.names)
    calls = calls_after_prompt(request, [*_call_tags(request, request.names, first=True), *own], own)
    return structural(sequence(optional(reasoning), calls))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: text, where a message that names a function calls a declared tool. Every
    `<|start|>` and `<|channel|>` opens a message: a call, or one of the messages that are not
    (reasoning, a preamble, the final answer: free text up to their closer)."""
    others = [
        tag(f"{opener}{CHANNEL}{channel}{MESSAGE}", _ANY_TEXT, [END, RETURN, ""])
        for opener in (f"{START}assistant", "")
        for channel in ("analysis", "commentary", "final")
    ]
    names = list(request.schemas)
    bare = bare_calls(_call_tags(request, names, first=True))
    return triggered(request, [START, CHANNEL, BARE_TRIGGER], [*_call_tags(request, names), *others, *bare])


_WRITES_NAME = re.compile(r"[^\s<]+")


def _writes_name(name: str) -> bool:
    # `to=functions.NAME` reads back as NAME for any name without whitespace or `<`
    return _WRITES_NAME.fullmatch(name) is not None


FORMAT = Format(
    "harmony_json",
    "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{..}<|call|> (gpt-oss)",
    HarmonyJsonStream,
    write,
    markers=(START, CHANNEL, CONSTRAIN, MESSAGE, CALL_END, END, RETURN),
    special_tokens=(START, CHANNEL, CONSTRAIN, MESSAGE, CALL_END, END, RETURN),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    sglang_names=("gpt-oss",),
    models="gpt-oss-20b / gpt-oss-120b (Harmony)",
    reasoning_openers=(),
    think_blocks=False,
)
