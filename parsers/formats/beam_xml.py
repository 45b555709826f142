"""`beam_xml`: the Beam model's channel messages, a call being a message to the tool whose body is
XML parameters: `<|start|>assistant to=f<|channel|>analysis <|constrain|>xml<|message|>
<rfl:parameter name="p">\\nv\\n</rfl:parameter><|call|>` (one line; the break is this page's).

Grammar, as this machine reads it::

    output    := (text | message)*
    message   := [START ROLE] header MESSAGE body [CLOSER]
    header    := [ws "to=" NAME] [CHANNEL WORD] [ws "to=" NAME] [ws [CONSTRAIN] WORD] ws
    call      := a message to NAME: (ws parameter)* ws [CLOSER]
    parameter := PARAM_OPEN '"' KEY '">' ["\\n"] VALUE ["\\n"] [PARAM_CLOSE]

with START = `<|start|>`, CHANNEL = `<|channel|>`, CONSTRAIN = `<|constrain|>`, MESSAGE =
`<|message|>` and CLOSER = `<|call|>`, `<|end|>` or `<|return|>` (Harmony's special tokens, taken
as Beam's: its tokenizer is not public), PARAM_OPEN = `<rfl:parameter name=` and PARAM_CLOSE = `</rfl:parameter>`.
ROLE is `assistant`; NAME and WORD run up to whitespace or `<`; KEY is one line without `"`, `<`,
`>`. The prompt ends with `<|start|>assistant`, so the reply's first message begins at its channel
or at ` to=`; the message machine (what breaks a header) is `channel_messages`, as `harmony_json`'s.

A message with a recipient is a call to the tool of that name, taken as written (Beam addresses
tools by their own names: `to=weather.lookup`), unless its constraint names another body than `xml`;
messages without one (the `analysis` reasoning, the `final` answer) are text with their markup, as
SGLang's `beam` tool parser leaves them for its reasoning parser. A value is raw text typed by the
tool's schema (`core.xml_parameters`, as in every XML format); the line break after its open tag and
the one before its end are framing. What ends a value: PARAM_CLOSE followed (after whitespace) by
the next parameter, a closer or the end of the output (elsewhere it is part of the value); the next
parameter's open tag right after a line break of the value (Beam's close is one token that starts
with a line break, so once the model writes that break as text the close no longer fits and it opens
the next parameter instead, as SGLang's template reads it); or the message's closer, a special token no value
holds (its close dropped; SGLang drops such a parameter, this reads its value). A call stands once
its closer comes, or at the end of the output after a complete parameter (the closer `<|call|>` is a
stop token engines may drop, or the output cuts it part-way: that part is text); a call the output
cuts off inside a value or before any parameter, and a body that is not parameters, are text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from ..core.typed_values import decoded_string
from ..core.xml_parameters import ParameterValueReader, ValueEnd
from .call_blocks import raw_value
from .channel_messages import BARE_TRIGGER, ChannelStream, bare_calls, calls_after_prompt
from .constraints import Element, const, declared_arguments, optional, regex, sequence, structural, tag, triggered
from .harmony_json import CALL_END, CHANNEL, CLOSERS, CONSTRAIN, END, MESSAGE, PLAIN_THINK, RETURN, START
from .spec import Call, ConstraintRequest, Format

PARAM_OPEN, PARAM_CLOSE = "<rfl:parameter name=", "</rfl:parameter>"
VALUE_ENDS = (
    ValueEnd(PARAM_CLOSE, followers=("<rfl:parameter", *CLOSERS), at_end_of_output=True),
    *(ValueEnd(brk + PARAM_OPEN, kept=len(brk)) for brk in ("\n", "\r\n")),
    *(ValueEnd(closer, kept=0) for closer in CLOSERS),
)
_PARAMS, _KEY, _VALUE = "beam.params", "beam.key", "beam.value"

_WORD = r"[^\s<]+"
_HEADER = re.compile(
    rf"(?:{re.escape(START)}(?P<role>{_WORD}))?"
    rf"\s*(?:to=(?P<to>{_WORD}))?"
    rf"\s*(?:{re.escape(CHANNEL)}{_WORD})?"
    rf"\s*(?:to=(?P<to_after>{_WORD}))?"
    rf"\s*(?:(?P<constrain>{re.escape(CONSTRAIN)})?(?P<word>{_WORD}))?\s*"
)
_KEY_TAG = re.compile(r'"([^"<>\n]*)(">|"|)')


class BeamXmlStream(ChannelStream):
    """Incremental parser for one response of Beam's channel messages (headers read by
    `channel_messages`, parameter values by `core.xml_parameters`)."""

    format_name = "beam_xml"
    openers = (START, CHANNEL)
    header_tokens = (CHANNEL, CONSTRAIN)
    header_ends = (MESSAGE,)
    bare_header = re.compile(r"[ \t]*(?:t(?:o(?:=[^\s<]*[ \t]*)?)?)?")

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = PLAIN_THINK
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._index = -1
        self._schema: dict[str, Any] = {}
        self._arguments: dict[str, Any] = {}
        self._param = ""
        self._value = ParameterValueReader(VALUE_ENDS, self._send, self._raw_append, self.limits, framing_newlines=True)
        self._readers.update({_PARAMS: self._scan_params, _KEY: self._scan_key, _VALUE: self._scan_value})

    def _decide(self, header: str, end: str) -> str | None:
        m = _HEADER.fullmatch(header)
        if m is None or m["role"] not in (None, "assistant") or (m["to"] and m["to_after"]):
            return None
        if m["word"] and m["constrain"] and m["word"] != "xml":
            return None  # a body in another language (`<|constrain|>json`)
        return m["to"] or m["to_after"] or None

    # -- the call's body: its parameters -----------------------------------------------------------

    def _open_call(self, name: str) -> None:
        self._index = self._start_call(name)
        properties = self.tools.schemas.get(name, {}).get("properties")
        self._schema = properties if isinstance(properties, dict) else {}
        self._arguments = {}
        self._state = _PARAMS

    def _send(self, fragment: str) -> None:
        self._call_args(self._index, fragment)

    def _raw_append(self, text: str) -> None:
        self._raw.append(text)

    def _scan_params(self, text: str, pos: int) -> int | None:
        """Between parameters: whitespace, the next parameter, or the message's closer."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._literal_at(text, pos, (PARAM_OPEN, *CLOSERS))
        if found is None:
            return None
        if not found:
            raise NotACall("the call's body is not parameters", pos)
        if found != PARAM_OPEN:
            self._finish()
            return pos + len(found)
        self._raw.append(found)
        self._state = _KEY
        return pos + len(found)

    def _scan_key(self, text: str, pos: int) -> int | None:
        """The parameter's quoted KEY and its `>` (held back while it may go on: bounded)."""
        bound = min(len(text), pos + self.limits.max_name + 3)
        m = _KEY_TAG.match(text, pos, bound)
        if m is None:
            raise NotACall("a parameter without its quoted name", pos)
        if m[2] != '">':
            if m.end() == len(text):
                return None
            raise NotACall("a malformed parameter tag", pos)
        self._raw.append(m.group())
        name = decoded_string(m[1])
        if not name:
            raise NotACall("a parameter with an empty name", m.end())
        if name in self._arguments:
            self._warn(f"parameter {name!r} given twice in one call; the last one wins")
        try:
            self._send(("," if self._arguments else "{") + '"' + json_string_body(name) + '": ')
        except NotACall as err:  # the call's size bound: the tag's text is kept, read on after it
            raise NotACall(str(err), m.end()) from None
        self._arguments[name] = None
        self._param = name
        self._value.begin(self._schema.get(name) if self.tools else None)
        self._state = _VALUE
        return m.end()

    def _scan_value(self, text: str, pos: int) -> int | None:
        at, end, value = self._value.read(text, pos)
        if end is not None:
            self._arguments[self._param] = value
            self._state = _PARAMS
        return at

    def _finish(self) -> None:
        self._send("}" if self._arguments else "{}")
        self._end_call(self._index, self._arguments)
        self._call_done()

    def _close_call(self) -> None:
        cut = not self._buf or any(closer.startswith(self._buf) for closer in CLOSERS)  # only the closer missing
        try:
            end, value = self._value.end_of_output() if self._state == _VALUE and cut else (None, None)
            if end is not None:
                self._arguments[self._param] = value
                self._state = _PARAMS
            if self._state == _PARAMS and self._arguments:
                self._finish()
                self._text(self._buf)
                return
        except NotACall as err:  # the arguments' size bound
            self._reject(str(err), self._pending_text() + self._buf)
            return
        self._reject("the output ended inside a tool call", self._pending_text() + self._buf)

    def _pending_text(self) -> str:
        pending = self._value.pending() if self._state == _VALUE else ""
        return super()._pending_text() + pending


# -- the spec --------------------------------------------------------------------------------------


def _head(name: str) -> str:
    return f"{START}assistant to={name}{CHANNEL}analysis {CONSTRAIN}xml{MESSAGE}"


def write(calls: Sequence[Call]) -> str:
    """One message per call, each value on its own lines, as Beam writes a call."""
    return "".join(
        _head(name)
        + "".join(f'{PARAM_OPEN}"{k}">\n{raw_value(v)}\n{PARAM_CLOSE}' for k, v in arguments.items())
        + CALL_END
        for name, arguments in calls
    )


_ANY_TEXT: Element = {"type": "any_text", "excludes": [START, CHANNEL, MESSAGE, CALL_END, "\n" + PARAM_OPEN]}
"""A message's free body or a raw value: the parser reads a message token in either as the next
message (which may be a call), and a parameter at a line start as the next parameter."""


def _parameters(parameters: dict[str, Any], pinned: bool) -> Element:
    """A pinned tool's declared keys in their order (the required ones present), each value any
    text where its schema admits a string and else JSON of its schema, then (unless the schema closes
    the object) any other keys; an unpinned tool: any keys with any text."""
    other = sequence(const(f'{PARAM_OPEN}"'), regex(r'[^"<>\n]+'), tag('">\n', _ANY_TEXT, PARAM_CLOSE))
    return declared_arguments(
        parameters,
        pinned,
        lambda key, value: tag(f'{PARAM_OPEN}"{key}">\n', value, PARAM_CLOSE),
        other,
        _ANY_TEXT,
        "\n",
    )


def _call_tags(
    request: ConstraintRequest, names: list[str], *, first: bool = False, ends: Sequence[str] = (CALL_END, "")
) -> list[Element]:
    """Per tool, Beam's header (`first`: continuing the message the generation prompt opened).
    `<|call|>` is a stop token: decoding may end the call with it, or stop there, where nothing may
    follow the calls (`required`); in text (`auto`) only the token ends a call, so a parameter the
    schema refuses cannot follow the call as text."""
    return [
        tag(
            f" to={name}{CHANNEL}analysis {CONSTRAIN}xml{MESSAGE}" if first else _head(name),
            _parameters(request.parameters(name), request.pins(name)),
            list(ends),
        )
        for name in names
    ]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Reasoning first if the model wants it, then one or more call messages (at most one if
    `single`), the first continuing the message the generation prompt `<|start|>assistant` opened
    (as it does after the reasoning, whose closer opens the next message) or a message of its own."""
    reasoning = tag(f"{CHANNEL}analysis{MESSAGE}", _ANY_TEXT, f"{END}{START}assistant")
    own = _call_tags(request, request.names)
    calls = calls_after_prompt(request, [*_call_tags(request, request.names, first=True), *own], own)
    return structural(sequence(optional(reasoning), calls))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: text, where a message to a tool calls a declared one. Every `<|start|>` and
    `<|channel|>` opens a message: a call, or one that is not (reasoning, the final answer: free
    text up to its closer)."""
    others = [
        tag(f"{opener}{CHANNEL}{channel}{MESSAGE}", _ANY_TEXT, [END, RETURN, ""])
        for opener in (f"{START}assistant", "")
        for channel in ("analysis", "final")
    ]
    names = list(request.schemas)
    bare = bare_calls(_call_tags(request, names, first=True, ends=(CALL_END,)))
    return triggered(
        request, [START, CHANNEL, BARE_TRIGGER], [*_call_tags(request, names, ends=(CALL_END,)), *others, *bare]
    )


_VALUE_BREAKERS = (PARAM_CLOSE, "\n" + PARAM_OPEN, *CLOSERS)


def _writes_name(name: str) -> bool:
    # `to=NAME` reads back as NAME for any name without whitespace or `<`
    return re.fullmatch(r"[^\s<]+", name) is not None


def _writes_value(value: Any) -> bool:
    """A raw value cannot hold the tags that may end it."""
    text = raw_value(value)
    return not any(breaker in text for breaker in _VALUE_BREAKERS)


FORMAT = Format(
    "beam_xml",
    '<|start|>assistant to=f<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="p">\\nv\\n'
    "</rfl:parameter><|call|> (Beam)",
    BeamXmlStream,
    write,
    markers=(START, CHANNEL, CONSTRAIN, MESSAGE, CALL_END, END, RETURN, PARAM_OPEN, PARAM_CLOSE),
    special_tokens=(START, CHANNEL, CONSTRAIN, MESSAGE, CALL_END, END, RETURN),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    writes_value=_writes_value,
    typed_values=True,
    sglang_names=("beam",),
    models="Beam",
    reasoning_openers=(),
    think_blocks=False,
)
