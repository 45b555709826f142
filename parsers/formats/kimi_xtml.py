"""`kimi_xtml`: Kimi K3's XTML, an XML-like markup whose brackets are special tokens.

Grammar, as this machine reads it::

    output   := (text | think | CHANNEL | tools)*
    think    := "<|open|>think<|sep|>" text [THINK_CLOSE]      # reasoning: text, never a call
              | "<think>" text "</think>"                       # the same, markers kept as text
    CHANNEL  := "<|open|>response<|sep|>" | "<|close|>response<|sep|>" | "<|close|>message<|sep|>"
              | THINK_CLOSE | "<|end_of_msg|>"                 # THINK_CLOSE = "<|close|>think<|sep|>"
    tools    := TOOLS_OPEN ws (call ws)* [TOOLS_CLOSE]        # TOOLS_CLOSE may be missing after calls
    call     := "<|open|>call" ATTRS SEP ws ((argument ws)* | json ws) "<|close|>call<|sep|>"
    argument := "<|open|>argument" ATTRS SEP VALUE "<|close|>argument<|sep|>"
    json     := "<|open|>json" ATTRS SEP ws OBJECT ws "<|close|>json<|sep|>"   # all arguments, as JSON
    ATTRS    := (\\s+ NAME '="' [^"]* '"')* \\s*             # at most 2 * max_name + 64 characters

with TOOLS_OPEN = `<|open|>tools<|sep|>`, SEP = `<|sep|>`; `<|open|>`, `<|close|>` and `<|sep|>` are
special tokens (the engines keep them: `skip_special_tokens` and `spaces_between_special_tokens` off).

K3's encoder (`encoding_k3.py`, no Jinja) renders an assistant turn as channels: reasoning in `think`,
the reply in `response`, calls in `tools` after it, then `<|close|>message<|sep|>`; the generation
prompt opens `think` or `response`, so the output holds the channels' closing markup. The channel
markers frame the content and are dropped, as both engines drop the response and message ones (the
reasoning parser takes `think`; without one, its text is content); anything else outside a call is
content.

A call names its tool in `tool`; `index` is the call's 1-based position in the turn, not an id: K3
binds a tool result to its call by that position (`<|open|>message role="tool" tool=".." index=".."`),
so ids are the engine's. Attribute values are escaped (`&amp;`, `&quot;`; the other XML entities are
read too, as `core.xml_entities` reads them). An argument's `type` says what its VALUE is: `string` is the
raw text verbatim (`02134` stays a string); `number`, `integer`, `boolean`, `null`, `object`, `array`
are JSON text (one that does not read as its type stays a string); a missing or unknown `type` leaves
the value to the tool's schema (`core.typed_values`). VALUE has no escaping, so a
`<|close|>argument<|sep|>` ends it only when the next argument, the call's end or the end of the
output follows (after whitespace); otherwise it, like any `<|close|>`-looking text, is part of the
value. The `json` element is how the encoder writes arguments it could not read as an object;
xLLM's tests show the model writing it too.

The block machine (broken calls are text up to their end and the others still count; a block with no
call, and a call the end of the output cuts off, are text, unless only its closing markup is missing
after a complete argument or `json` element, as when the output stops after
`<|close|>argument<|sep|>`; values stream) is `call_blocks`, shared with
the other XML formats; ATTRS are read by `core.xml_attributes`; this module reads the channels and
what a tag's ATTRS open.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import NotACall
from ..core.typed_values import decoded_string, schema_types
from ..core.xml_attributes import AttributesReader
from ..core.xml_entities import decode_entities
from ..core.xml_parameters import ValueEnd, ends_inside
from .call_blocks import NAME, VALUE, XmlBlockStream, XmlBlockTags, raw_value
from .constraints import (
    Element,
    const,
    finite_number,
    json_value,
    one_of,
    optional,
    regex,
    repeated,
    sequence,
    structural,
    tag,
    triggered,
)
from .spec import Call, ConstraintRequest, Format

OPEN, CLOSE, SEP = "<|open|>", "<|close|>", "<|sep|>"
TOOLS_OPEN, TOOLS_CLOSE = f"{OPEN}tools{SEP}", f"{CLOSE}tools{SEP}"
CALL_OPEN, CALL_CLOSE = f"{OPEN}call", f"{CLOSE}call{SEP}"
ARG_OPEN, ARG_CLOSE = f"{OPEN}argument", f"{CLOSE}argument{SEP}"
JSON_OPEN, JSON_CLOSE = f"{OPEN}json", f"{CLOSE}json{SEP}"
RESPONSE_OPEN, RESPONSE_CLOSE = f"{OPEN}response{SEP}", f"{CLOSE}response{SEP}"
MESSAGE_CLOSE, END_OF_MSG = f"{CLOSE}message{SEP}", "<|end_of_msg|>"
THINK_OPEN, THINK_CLOSE = f"{OPEN}think{SEP}", f"{CLOSE}think{SEP}"
CHANNEL_MARKERS = (RESPONSE_OPEN, RESPONSE_CLOSE, MESSAGE_CLOSE, THINK_CLOSE, END_OF_MSG)
"""The content's framing, dropped (a lone THINK_CLOSE: the prompt opened the reasoning)."""
PLAIN_THINK = ("<think>", "</think>")
"""Reasoning written as plain text, read as every format reads it: text with its markers, never a call."""
THINK_PAIRS = ((THINK_OPEN, THINK_CLOSE), PLAIN_THINK)
"""The reasoning the format reads, K3's own `think` channel first: the stream reads the channel (its
markers dropped) and the plain pair as text; our reasoning parser splits on both, so K3's reasoning,
opened by the generation prompt or by the model, is reasoning and not content."""

TAGS = XmlBlockTags(TOOLS_OPEN, TOOLS_CLOSE, CALL_OPEN, CALL_CLOSE, ARG_OPEN, call_word="call")
VALUE_END = ValueEnd(ARG_CLOSE, followers=(ARG_OPEN, CALL_CLOSE), at_end_of_output=True)

_TYPES = {"string", "number", "integer", "boolean", "null", "object", "array"}
_XTML_TYPE = {"integer": "number"}  # the encoder writes every number as `number`


def escape_attr(value: str) -> str:
    """As K3's encoder escapes an attribute: `&` first, then `"`."""
    return value.replace("&", "&amp;").replace('"', "&quot;")


class KimiXtmlStream(XmlBlockStream):
    """Incremental parser for one response in Kimi K3's XTML (the block machine is `call_blocks`;
    this reads the channels, content or reasoning, and what a tag's ATTRS open)."""

    format_name = "kimi_xtml"
    tags = TAGS
    json_close = JSON_CLOSE

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK_PAIRS
    ) -> None:
        super().__init__(tools, id_factory, None, [VALUE_END])
        pairs = [] if not think_markers else [think_markers] if isinstance(think_markers[0], str) else think_markers
        plain = [pair for pair in pairs if tuple(pair) != (THINK_OPEN, THINK_CLOSE)]  # the channel is read below
        self._content = OutsideCalls(self._text, [TOOLS_OPEN, THINK_OPEN, *CHANNEL_MARKERS], plain)
        self._reasoning = OutsideCalls(self._text, [THINK_CLOSE], None)  # text (never a call) up to its close
        self._outside = self._content  # the channel being read
        self._attrs = AttributesReader(SEP, self.limits)

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None and m.group() == TOOLS_OPEN:
            self._open_block(TOOLS_OPEN)
        elif m is not None:  # a channel marker, dropped: it opens reasoning, or it frames content
            self._outside = self._reasoning if m.group() == THINK_OPEN else self._content
        return at

    def _scan_name(self, text: str, pos: int) -> int | None:
        """A tag's ATTRS (`core.xml_attributes`), then what the tag opens."""
        at, pairs = self._attrs.read(text, pos, self._raw)
        if pairs is None:
            return at
        values = {key: decode_entities(value) for key, value in pairs.items()}
        if self._on_name == self._open_call:
            name = values.get("tool", "")
            if len(name) > self.limits.max_name:
                raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", at)
            try:
                self._named(name)
            except NotACall as err:
                raise NotACall(str(err) or "a call without a tool", at) from None
        elif self._on_name == self._open_json:
            self._open_json()
        elif "key" not in values:
            raise NotACall("an argument without a key attribute", at)
        else:
            try:
                self._open_argument(values["key"], values.get("type"))
            except NotACall as err:  # the call's size bound: the tag's text is kept, read on after it
                raise NotACall(str(err), at) from None
        return at

    # -- a call's arguments as one JSON object: its `json` element -------------------------------

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Between arguments; before the first, a `json` element may hold them all."""
        if self._arguments or text[pos] != "<":
            return super()._scan_call(text, pos)
        found = self._literal_at(text, pos, (JSON_OPEN,))
        if found is None:
            return None
        if not found:
            return super()._scan_call(text, pos)
        self._raw.append(JSON_OPEN)
        self._on_name = self._open_json
        self._state = NAME
        return pos + len(JSON_OPEN)

    # -- argument elements -------------------------------------------------------------------------

    def _open_argument(self, key: str, kind: str | None) -> None:
        """An argument's key is the JSON key as written; its `type` (else the schema) types it."""
        key = decoded_string(key)  # the key a client reads from the JSON sent
        if key in self._arguments:
            self._warn(f"argument {key!r} given twice in one call; the last one wins")
        self._call_args(self._key, (", " if self._arguments else "{") + '"' + json_string_body(key) + '": ')
        self._arguments[key] = None
        self._param = key
        kind = kind.strip().lower() if kind is not None else None
        if kind in _TYPES:
            schema: Any = {"type": kind}
        else:
            schema = self._schema.get(key) if self.tools else None
        self._value.begin(schema)
        self._state = VALUE


# -- the spec --------------------------------------------------------------------------------------


def _xtml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


def write(calls: Sequence[Call]) -> str:
    """One tools channel, as K3's encoder renders a turn's calls: `index` from 1, strings raw,
    everything else JSON."""
    body = []
    for i, (name, arguments) in enumerate(calls, start=1):
        args = "".join(
            f'{ARG_OPEN} key="{escape_attr(k)}" type="{_xtml_type(v)}"{SEP}{raw_value(v)}{ARG_CLOSE}'
            for k, v in arguments.items()
        )
        body.append(f'{CALL_OPEN} tool="{escape_attr(name)}" index="{i}"{SEP}{args}{CALL_CLOSE}')
    return f"{TOOLS_OPEN}{''.join(body)}{TOOLS_CLOSE}"


def _string(schema: Any, loose: bool) -> Element:
    """A raw string value: one of its `enum` / `const` values, else any text without `<|close|>`
    (the value's end; the raw channel cannot say a pattern or a length)."""
    values = schema.get("enum", [schema["const"]] if "const" in schema else None) if isinstance(schema, dict) else None
    if loose or not isinstance(values, list) or not 0 < len(values) <= 256:
        return {"type": "any_text", "excludes": [CLOSE]}
    if not all(isinstance(v, str) and CLOSE not in v for v in values):
        return {"type": "any_text", "excludes": [CLOSE]}
    return one_of([const(v) for v in values])


def _argument(key_begin: str, schema: Any, loose: bool) -> Element:
    """One tag per type the schema admits: `<|open|>argument key=".." type="T"<|sep|>VALUE`."""
    types = set(schema_types(schema)) or _TYPES - {"integer"}
    types = sorted(types - {"integer"} if "number" in types else types)
    single = isinstance(schema, dict) and len(types) == 1 and not any(k in schema for k in ("anyOf", "oneOf"))
    tags = []
    for kind in types:
        if kind == "string":
            content = _string(schema, loose or not single)
        else:
            shown = schema if single and not loose else {"type": kind}
            content = finite_number(shown) or json_value(shown)
        tags.append(tag(f'{key_begin}" type="{_XTML_TYPE.get(kind, kind)}"{SEP}', content, ARG_CLOSE))
    return one_of(tags)


def _arguments(parameters: dict[str, Any], pinned: bool) -> Element:
    """A pinned tool's arguments in its declared order (the required ones present), then any others
    its schema allows; an unpinned tool's: any arguments."""
    properties = parameters.get("properties") if pinned else None
    properties = properties if isinstance(properties, dict) else {}
    required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
    elements: list[Element] = []
    for key, schema in properties.items():
        argument = _argument(f'{ARG_OPEN} key="{escape_attr(key)}', schema, False)
        elements.append(argument if key in required else optional(argument))
    if not pinned or parameters.get("additionalProperties", True) is not False:
        free = sequence(const(f'{ARG_OPEN} key="'), regex(r'[^"&\s<>|]+'), _argument("", None, True))
        elements.append({"type": "star", "content": free})
    if not elements:
        return const("")
    return elements[0] if len(elements) == 1 else sequence(*elements)


def _calls(request: ConstraintRequest, names: list[str]) -> Element:
    calls = [
        tag(
            f'{CALL_OPEN} tool="{escape_attr(name)}" index="',
            sequence(
                regex("[1-9][0-9]{0,3}"), const(f'"{SEP}'), _arguments(request.parameters(name), request.pins(name))
            ),
            CALL_CLOSE,
        )
        for name in names
    ]
    return tag(TOOLS_OPEN, repeated(request, calls), TOOLS_CLOSE)


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """The calls at once: the channel the generation prompt opened (`think` or `response`) closed,
    then one tools channel of one or more calls (at most one if `single`), then the message's close.
    No text comes first, as in every format's `required`: a grammar that let a model write a reply
    (or reasoning) of any length first would not make it call (with a reasoning parser, the
    reasoning comes before the grammar applies)."""
    framing = [optional(const(THINK_CLOSE)), optional(const(RESPONSE_OPEN)), optional(const(RESPONSE_CLOSE))]
    return structural(sequence(*framing, _calls(request, request.names), optional(const(MESSAGE_CLOSE))))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where `<|open|>tools<|sep|>` (the only opener the parser reads)
    opens calls to declared tools."""
    return triggered(request, [TOOLS_OPEN], [_calls(request, list(request.schemas))])


def _writes_name(name: str) -> bool:
    # `tool="NAME"` reads back for any name (escaped); the constraint spells it escaped too
    return SEP not in name


FORMAT = Format(
    "kimi_xtml",
    '<|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>argument key="p" type="string"<|sep|>v'
    "<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    KimiXtmlStream,
    write,
    markers=(TOOLS_OPEN, CALL_OPEN, ARG_OPEN, ARG_CLOSE, CALL_CLOSE, TOOLS_CLOSE, JSON_OPEN, JSON_CLOSE),
    special_tokens=(OPEN, CLOSE, SEP),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    writes_value=lambda value: not ends_inside([VALUE_END], raw_value(value), ARG_CLOSE),  # no escaping (docstring)
    typed_values=True,
    vllm_names=("kimi_k3",),
    sglang_names=("kimi_k3",),
    models="Kimi K3 (XTML)",
)
