"""The ATEM family: `<atem:function_calls>` blocks of invokes, each in a channel message addressed to
the tool (`<|start|>assistant to=TOOL<|message|>..<|eom|>`), the recipients of the other messages
saying what they are (reasoning, the answer, text). `muse_atem`'s docstring states the grammar and
every decided case. A format of the family is data: one `AtemFormat` (its recipients) gives its
stream class (`AtemStream` with them), writer, constraints and `Format`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.ids import IdFactory
from ...core.markers import MarkerScanner
from ...core.outside import OutsideCalls, ThinkMarkers
from ...core.xml_parameters import ValueEnd
from ..call_blocks import TEXT, XmlBlockTags, named_parameters, raw_value
from ..channel_messages import BARE_TRIGGER, HeaderReader, bare_calls, calls_after_prompt
from ..constraints import Element, const, sequence, structural, tag, triggered
from ..minimax_xml import MiniMaxXmlStream, writable_values, writes_name
from ..spec import Call, Constraint, ConstraintRequest, Format
from . import format_stream

START, MESSAGE, EOM, EOT = "<|start|>", "<|message|>", "<|eom|>", "<|eot|>"
CLOSERS = (EOM, EOT)
BLOCK_OPEN, BLOCK_CLOSE = "<atem:function_calls>", "</atem:function_calls>"
INVOKE_OPEN, INVOKE_CLOSE = "<atem:invoke name=", "</atem:invoke>"
PARAM_OPEN, PARAM_CLOSE = "<atem:parameter name=", "</atem:parameter>"
TAGS = XmlBlockTags(BLOCK_OPEN, BLOCK_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, call_word="invoke")
VALUE_END = ValueEnd(PARAM_CLOSE, followers=("<atem:parameter", INVOKE_CLOSE), at_end_of_output=True)
MARKERS = (START, MESSAGE, EOM, EOT, BLOCK_OPEN, BLOCK_CLOSE, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE)
PLAIN_THINK = ("<think>", "</think>")
"""Reasoning written as plain text, read as every format reads it: text, never a call (Muse
Glimmer reasons in messages to `self`)."""
OTHER_OPENERS = ((MESSAGE, None),)
"""Kept out of strict free text: a message may end where the output does (no closer), so free text
follows a reasoning body, where ` to=TOOL<|message|>` completes a tool's header for the parser."""
NOT_TOOLS = frozenset({"self", "user", "commentary"})
"""Recipients whose messages are not calls (reasoning, the answer, a preamble)."""

_TRAILING_TO = re.compile(r"[ \t]+to=[^\s<]+\Z")
"""A recipient at the end of a body's text, which a `<|message|>` right after it makes a header."""
_MAY_BECOME_TO = re.compile(r"[ \t]+(?:t(?:o(?:=[^\s<]*)?)?)?\Z")
"""What may still grow into such a recipient: held back."""
_HEADER = re.compile(r"(?:<\|start\|>\s*assistant)?[ \t]*(?:to=(?P<to>[^\s<]+))?[ \t]*")
# A header, the body of a message that is not a call, a tool's message before its block, and after the block.
_HEADER_STATE, _TEXT_BODY = "atem.header", "atem.text_body"
_TOOL_BODY, _AFTER_BLOCK = "atem.tool_body", "atem.after_block"


class AtemStream(MiniMaxXmlStream):
    """Incremental parser for one response of a format of the family: channel messages (headers
    read by `channel_messages`), blocks by `minimax_xml`'s machine with ATEM's tags. `AtemFormat`
    makes each format's subclass with its recipients."""

    format_name = "?"
    tags = TAGS
    parameter_ends = (VALUE_END,)
    not_tools: frozenset[str] = NOT_TOOLS
    """Recipients whose messages are never calls."""
    content_recipients: frozenset[str | None] = frozenset({"user"})
    """Recipients whose message bodies are content without their header and closer (the answer);
    the other messages that are no calls are text with their markup."""
    reasoning_recipients: frozenset[str | None] = frozenset({"self"})
    """Recipients whose messages are reasoning (None: a message without one), which a
    `to=TOOL<|message|>` at their end turns into that tool's message."""

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = PLAIN_THINK
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._outside = OutsideCalls(self._text, [START], think_markers)
        bare = re.compile(r"[ \t]*(?:t(?:o(?:=[^\s<]*[ \t]*)?)?)?")
        self._header = HeaderReader((), (MESSAGE,), bare, self.limits.max_name)
        self._header.open("", bare=True)
        self._body_marks = MarkerScanner((*CLOSERS, MESSAGE))
        self._in_tool = False  # reading a block in a message to a tool
        self._reasoning = False  # the body being read is reasoning (a message to `self`)
        self._answer = False  # the body being read is the answer (to `user`): its framing is dropped
        self._state = _HEADER_STATE
        self._readers.update(
            {
                _HEADER_STATE: self._scan_header,
                _TEXT_BODY: self._scan_text_body,
                _TOOL_BODY: self._scan_tool_body,
                _AFTER_BLOCK: self._scan_after_block,
            }
        )

    # -- messages ----------------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        """Outside messages: text up to the next message's START (a block here is text)."""
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._header.open(m.group())
            self._state = _HEADER_STATE
        return at

    def _scan_header(self, text: str, pos: int) -> int | None:
        header = self._header
        at = header.read(text, pos)
        if header.broken:
            self._text("".join(header.raw))
            self._state = TEXT
            return at
        if header.end is not None:
            m = _HEADER.fullmatch("".join(header.raw[:-1]))
            if m is not None and m["to"] and m["to"] not in self.not_tools:
                self._raw = header.raw
                self._state = _TOOL_BODY
            else:
                to = m["to"] if m is not None else None
                self._answer, self._reasoning = to in self.content_recipients, to in self.reasoning_recipients
                if not self._answer:
                    self._text("".join(header.raw))
                self._state = _TEXT_BODY
            header.raw = []
        return at

    def _scan_text_body(self, text: str, pos: int) -> int | None:
        """A message that is not a call: text, up to and with its closer (the answer's closer is
        dropped with its header). In reasoning, a
        `to=TOOL<|message|>` (Muse ends its reasoning so at times, without `<|eom|>`, as vLLM's
        tests record; `<|message|>` is never a body's) ends it and opens that tool's message: the
        ` to=..` run at the reasoning's end is held back until what follows it is known. Other
        bodies (an answer quoting a call's header) end only at their closer."""
        m = self._body_marks.search(text, pos)
        end = self._body_marks.releasable(text, pos) if m is None else m.start()
        window = max(pos, end - self.limits.max_name - 8)
        held = _TRAILING_TO if m is not None else _MAY_BECOME_TO
        tail = held.search(text, window, end) if self._reasoning else None
        if m is not None and m.group() == MESSAGE:
            if tail is None:
                self._text(text[pos : m.end()])  # a `<|message|>` with no header before it: text
                return m.end()
            self._text(text[pos : tail.start()])
            self._header.open("")
            self._header.raw.append(tail.group())
            self._state = _HEADER_STATE
            return tail.end()
        if m is None:
            cut = end if tail is None else tail.start()
            self._text(text[pos:cut])
            return cut if cut > pos else None
        self._text(text[pos : m.start() if self._answer else m.end()])
        self._state = TEXT
        return m.end()

    def _scan_tool_body(self, text: str, pos: int) -> int | None:
        """A message to a tool: whitespace, then its block; anything else makes the message text."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._literal_at(text, pos, (BLOCK_OPEN,))
        if found is None:
            return None
        if not found:
            self._text("".join(self._raw))
            self._raw = []
            self._answer = self._reasoning = False
            self._state = _TEXT_BODY
            return pos
        header = self._raw
        self._open_block(found)
        self._raw = [*header, found]
        self._in_tool = True
        return pos + len(found)

    def _end_block(self) -> None:
        held_calls = self._block_calls > 0
        super()._end_block()
        if self._in_tool and held_calls:
            self._state = _AFTER_BLOCK  # the message's closer is markup; after a block that was text, text
        self._in_tool = False

    def _scan_after_block(self, text: str, pos: int) -> int | None:
        """After a tool message's block: whitespace, then its closer (markup), or text."""
        at = self._markup_ws(text, pos, [])
        if at > pos:
            return at
        closer = self._literal_at(text, pos, CLOSERS)
        if closer is None:
            return None
        self._state = TEXT
        return pos + len(closer)

    def _open_call(self, name: str) -> None:
        head, dot, tail = name.partition(".")
        declared = self.tools.schemas
        if dot and head == tail and head in declared and name not in declared:
            name = head  # the template's doubled address, `NAME.NAME`
        super()._open_call(name)

    def _close(self) -> None:
        if self._state == _HEADER_STATE:
            self._text("".join(self._header.raw) + self._buf)
        elif self._state == _TOOL_BODY:
            self._text("".join(self._raw) + self._buf)
        elif self._state in (_TEXT_BODY, _AFTER_BLOCK):
            self._text(self._buf)
        else:
            super()._close()
            return
        self._raw, self._header.raw, self._buf = [], [], ""

    def _pending_text(self) -> str:
        return "".join(self._header.raw) if self._state == _HEADER_STATE else super()._pending_text()


# -- the spec --------------------------------------------------------------------------------------


def _invoke(name: str, arguments: dict[str, Any]) -> str:
    params = "".join(f'{PARAM_OPEN}"{k}">{raw_value(v)}{PARAM_CLOSE}\n' for k, v in arguments.items())
    return f'{BLOCK_OPEN}\n{INVOKE_OPEN}"{name}">\n{params}{INVOKE_CLOSE}\n{BLOCK_CLOSE}'


def write(calls: Sequence[Call]) -> str:
    """One message per call, addressed to the tool, as Muse Glimmer's template writes a call."""
    return "".join(f"{START}assistant to={name}{MESSAGE}{_invoke(name, arguments)}{EOM}" for name, arguments in calls)


def _message(request: ConstraintRequest, name: str, head: str) -> Element:
    parameters = named_parameters(
        request.parameters(name),
        request.pins(name),
        PARAM_OPEN,
        PARAM_CLOSE + "\n",
        (PARAM_CLOSE, INVOKE_CLOSE, EOM, EOT, START, MESSAGE),  # a value never holds a message token
    )
    body = sequence(parameters, const(f"{INVOKE_CLOSE}\n{BLOCK_CLOSE}"))
    return tag(f'{head}to={name}{MESSAGE}{BLOCK_OPEN}\n{INVOKE_OPEN}"{name}">\n', body, [EOM, EOT, ""])


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One or more messages to tools (at most one if `single`), the first continuing the message
    the generation prompt `<|start|>assistant` opened, or a message of its own."""
    own = [_message(request, name, f"{START}assistant ") for name in request.names]
    first = [*(_message(request, name, " ") for name in request.names), *own]
    return structural(calls_after_prompt(request, first, own))


def auto_constraints(
    not_tools: frozenset[str], reasoning: frozenset[str | None]
) -> tuple[Constraint, Callable[[str], bool]]:
    """Strict `auto` and the names a format of the family writes, for the recipients `not_tools`
    that are no tool's, of which `reasoning` are reasoning (None: a message without one)."""

    def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
        """Strict `auto`: text, where a message to a declared tool holds its call (the other
        messages, `<|start|>assistant` without a tool's address, stay free). A reasoning message
        must end with its closer: at its end the parser reads ` to=TOOL<|message|>` as a tool's
        header, which its body keeps out, but xgrammar drops a body's excludes where the message
        may also end with the output."""
        names = list(request.schemas)
        messages = [_message(request, name, f"{START}assistant ") for name in names]
        others = []
        for to in (None, *sorted(not_tools)):
            head = f" to={to}" if to else ""
            ends = [EOM, EOT] if to in reasoning else [EOM, EOT, ""]
            body = {"type": "any_text", "excludes": [MESSAGE]}
            others.append(tag(f"{START}assistant{head}{MESSAGE}", body, ends))
        bare = bare_calls([_message(request, name, " ") for name in names])
        return triggered(request, [START, BARE_TRIGGER], [*messages, *others, *bare])

    def writes(name: str) -> bool:
        # the invoke's NAME as `minimax_xml` writes it, and the message's address (up to whitespace
        # or `<`, and not one of the channels that are no tool's)
        return writes_name(name) and re.fullmatch(r"[^\s<]+", name) is not None and name not in not_tools

    return auto_constraint, writes


@dataclass(frozen=True)
class AtemFormat:
    """One format of the family, as data: which recipients' messages are no calls (`not_tools`),
    which of them are the answer (`content_recipients`: content without their framing) and which
    reasoning (`reasoning_recipients`, None a message without one); the rest is the `Format`'s own.
    The markup (ATEM's tags, the message tokens) is the family's."""

    name: str
    summary: str
    not_tools: frozenset[str] = NOT_TOOLS
    content_recipients: frozenset[str | None] = frozenset({"user"})
    reasoning_recipients: frozenset[str | None] = frozenset({"self"})
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    def stream_class(self, module: str) -> type[AtemStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            AtemStream,
            self.name,
            module,
            "ATEM in channel messages",
            PLAIN_THINK,
            not_tools=self.not_tools,
            content_recipients=self.content_recipients,
            reasoning_recipients=self.reasoning_recipients,
        )

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        auto, writes = auto_constraints(self.not_tools, self.reasoning_recipients)
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            write,
            markers=(
                START,
                MESSAGE,
                EOM,
                EOT,
                BLOCK_OPEN,
                BLOCK_CLOSE,
                INVOKE_OPEN,
                INVOKE_CLOSE,
                PARAM_OPEN,
                PARAM_CLOSE,
            ),
            special_tokens=(START, MESSAGE, EOM, EOT),
            required_constraint=required_constraint,
            auto_constraint=auto,
            writes_name=writes,
            writes_value=writable_values((VALUE_END,), PARAM_CLOSE),
            other_openers=OTHER_OPENERS,
            typed_values=True,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            reasoning_openers=(),
            think_blocks=False,
        )
