# ruff: noqa: RUF001, RUF002  (DeepSeek's marker is spelled with U+FF5C, the fullwidth bar)
"""`deepseek_dsml`: DeepSeek V3.2, V4 and V4.1 DSML tool calls, values typed by their `string`
attribute and the tool's schema.

Grammar, as this machine reads it (`D` is `｜DSML｜`, one token in DeepSeek's vocabulary)::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := "<" D BLOCK ">" ws (invoke ws)* ["</" D BLOCK ">"]   # the end may be missing after invokes
    invoke    := "<" D S "invoke" ATTRS ">" ws body ws "</" D S "invoke>"
               | "<" D S "invoke" ATTRS "/>"             # a call without arguments
    body      := (parameter ws)* | OBJECT                # parameters, or all arguments as one JSON object
    parameter := "<" D S "parameter" ATTRS ">" VALUE "</" D S "parameter>"
    ATTRS     := (\\s+ NAME '="' [^"]* '"')* \\s*          # at most 2 * max_name + 64 characters

BLOCK and S are the model's dialect, fixed by the block's opening tag: `function_calls` (V3.2) and
`tool_calls` (V4) with S empty, ` calls` (V4.1) with S a space (V4.1 writes `<｜DSML｜ invoke`).
An invoke names its tool in `name`; a parameter its key in `name`, and what VALUE is in `string`:
`"true"` is the raw text verbatim (`02134` stays a string); `"false"` says JSON, and the value is
typed by the tool's schema (`core.typed_values`: JSON of the types it admits, the raw text where it
is not JSON of one of them, so a `string="false"` value that is not JSON is kept as written); a
missing `string` is the same as `"false"`; any other `string` breaks the invoke (the system prompt's
own example, `string="true|false"`, is not a call). VALUE has no escaping, so a `</｜DSML｜parameter>`
ends it only when the next parameter, the invoke's end or the end of the output follows (after
whitespace); otherwise it is
part of the value; a `</｜DSML｜invoke>` before the next invoke or the block's end inside a value
means the model dropped the parameter's close: the invoke is text up to there and the block goes on
(a broken self-closing invoke ends at its `/>` the same way). SGLang's detectors read the inline
OBJECT body too, and so does this.

An invoke outside a block is text: DeepSeek's encoders always write the block, and the markup a
model echoes in prose (explaining DSML) must not become a call; for the same reason markdown code is
text (a fenced block, and a block tag right after a backtick: inline code), as SGLang's V4 detector
reads it. Inside `<think>..</think>` markup is text, and a block opened in reasoning that never
closes stays text: the reasoning parser owns it. A `</think>` with no `<think>` before it (the
generation prompt opened the reasoning) is text like any other, and a block before it is a call:
splitting reasoning from content is the reasoning parser's work. vLLM's `deepseek_v4` reasoning
parser ends the reasoning at a block's tag and hands the rest on, so a `</think>` right after a block
of calls (only whitespace between) is the end of the reasoning the block interrupted: dropped, as
vLLM's own DSML parser drops it; any other `</think>` is text.

The block machine (broken invokes are text up to their end and the others still count; a block with
no invoke, and an invoke the end of the output cuts off, are text, unless only its closing tags are
missing after a complete parameter or JSON body; values stream) is `call_blocks`,
shared with `minimax_xml`, `qwen_xml` and `kimi_xtml`; this module reads ATTRS, the dialects and
the JSON body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.ids import IdFactory
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import NotACall, shorten
from ..core.xml_parameters import ParameterValueReader, ValueEnd, ends_inside
from .call_blocks import XmlBlockStream, XmlBlockTags, raw_value, tag_attributes
from .constraints import Element, const, json_value, one_of, optional, repeated, sequence, structural, tag, triggered
from .spec import Call, ConstraintRequest, Format

DSML = "｜DSML｜"
_QUOTE_OR_END = re.compile('[">]')
_STRING = {"true": {"type": "string"}, "false": None}
"""What a parameter's `string` says its value is typed by (None: the tool's schema)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """One model generation's spelling of the tags, and the xgrammar style of its parameters."""

    tags: XmlBlockTags
    param_close: str
    style: str

    @property
    def value_ends(self) -> list[ValueEnd]:
        """The parameter's close before the next parameter, the invoke's close or the end of the
        output; or the invoke's close before the next invoke or the block's end: the model dropped
        the parameter's close, and the invoke is broken there (`unclosed_value_ends_call`), not
        running on into the next one."""
        tags = self.tags
        return [
            ValueEnd(self.param_close, followers=(tags.param_open, tags.call_close), at_end_of_output=True),
            ValueEnd(tags.call_close, followers=(tags.end, tags.call_open)),
        ]


def dialect(block: str, space: str, style: str, prefix: str = DSML) -> Dialect:
    """The tags of a block named `block`, each tag's word after `prefix` and `space` (`gigachat_gcml`
    spells them with its own prefix)."""
    invoke, parameter = f"{prefix}{space}invoke", f"{prefix}{space}parameter"
    tags = XmlBlockTags(
        f"<{prefix}{block}>", f"</{prefix}{block}>", f"<{invoke}", f"</{invoke}>", f"<{parameter}", "invoke"
    )
    return Dialect(tags, f"</{parameter}>", style)


V32 = dialect("function_calls", "", "deepseek_xml")
V4 = dialect("tool_calls", "", "deepseek_xml")
V41 = dialect(" calls", " ", "deepseek_v4_1_xml")
DIALECTS = (V4, V32, V41)


def quoted(dialects: Sequence[Dialect]) -> tuple[tuple[str, str], ...]:
    """Markdown code, read as text like reasoning: a fenced block, and a block's tag right after a
    backtick (inline code), so markup a model quotes in prose is never a call."""
    return (("```", "```"), ("~~~", "~~~"), *(("`" + d.tags.start, "`") for d in dialects))


class DeepSeekDsmlStream(XmlBlockStream):
    """Incremental parser for one response in DeepSeek's DSML (the block machine is `call_blocks`;
    this picks the dialect at the block's tag, reads ATTRS and the JSON body)."""

    format_name = "deepseek_dsml"
    tags = V4.tags
    unclosed_value_ends_call = False
    dialects: tuple[Dialect, ...] = DIALECTS
    """The dialects read, the default first (`gigachat_gcml` reads its own)."""

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers, self.dialects[0].value_ends)
        pairs = [] if not think_markers else [think_markers] if isinstance(think_markers[0], str) else think_markers
        self._think_close = pairs[0][1] if pairs else ""  # type: ignore[index]
        starts = [d.tags.start for d in self.dialects] + [self._think_close] * bool(self._think_close)
        self._outside = OutsideCalls(self._text, starts, [*pairs, *quoted(self.dialects)])
        self._dialects = {
            d.tags.start: (
                d.tags,
                MarkerScanner([d.tags.call_close, d.tags.end]),
                ParameterValueReader(d.value_ends, self._send_args, self._keep, self.limits),
            )
            for d in self.dialects
        }
        self._attrs: list[str] = []  # the ATTRS read so far (their length is bounded)
        self._attrs_len = 0
        self._quoted = False  # inside an attribute's quotes
        self._after_block = False  # only whitespace since a block with calls ended: a `</think>` here is dropped

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None and m.group() == self._think_close:  # no reasoning open
            if self._after_block:
                self._after_block = False  # right after a block: the end of the reasoning it interrupted
            else:
                self._text(m.group())  # text, like any other
            return at
        if m is not None:  # the block's tag fixes the dialect of everything in it
            self.tags, self._skip_scanner, self._value = self._dialects[m.group()]
            self._open_block(m.group())
        return at

    def _end_block(self) -> None:
        super()._end_block()
        self._after_block = self._block_calls > 0

    def _text(self, text: str) -> None:
        if text.strip():
            self._after_block = False
        super()._text(text)

    def _scan_name(self, text: str, pos: int) -> int | None:
        """ATTRS up to the `>` outside quotes, consumed as they come; past the bound the invoke breaks
        where the text says (at the bound), so no chunking changes what follows."""
        bound = pos + 2 * self.limits.max_name + 64 - self._attrs_len
        at, stop = pos, min(len(text), bound)
        while (m := _QUOTE_OR_END.search(text, at, stop)) is not None:
            at = m.end()
            if m.group() == '"':
                self._quoted = not self._quoted
            elif not self._quoted:
                attrs = "".join(self._attrs) + text[pos : m.start()]
                self._attrs, self._attrs_len = [], 0
                self._raw.append(text[pos:at])
                self._attributes(attrs, at)
                return at
        self._raw.append(text[pos:stop])
        if stop == bound:
            raise NotACall("the tag's attributes are too long (TOOLCALL_PARSERS_MAX_NAME)", bound)
        self._attrs.append(text[pos:stop])
        self._attrs_len += stop - pos
        return stop if stop > pos else None

    def _attributes(self, attrs: str, resume: int) -> None:
        """A tag's ATTRS are complete: open its invoke (a self-closing one ends there) or parameter."""
        closed = attrs.endswith("/")
        values = tag_attributes(attrs[:-1] if closed else attrs)
        ended = closed and self._on_name == self._open_call  # an invoke that breaks here ends here
        if values is None:
            raise NotACall(f"malformed attributes {shorten(attrs)}", resume, ended=ended)
        if self._on_name == self._open_call:
            name = values.get("name", "")
            if len(name) > self.limits.max_name:
                raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", resume, ended=ended)
            try:
                self._named(name)
            except NotACall as err:
                raise NotACall(str(err) or "an invoke without a name", resume, ended=ended) from None
            if closed:
                self._end_call_element()
            return
        kind = values.get("string", "false").lower()
        if closed or "name" not in values or kind not in _STRING:
            raise NotACall(f"not a parameter tag {shorten(attrs)}", resume)
        try:
            self._open_param(values["name"], _STRING[kind])
        except NotACall as err:  # the call's size bound: the tag's text is kept, read on after it
            raise NotACall(str(err), resume) from None

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Between parameters; before the first, the invoke's arguments may come as one JSON object."""
        if text[pos] == "{" and not self._arguments:
            self._open_json()
            return pos
        return super()._scan_call(text, pos)

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        self._attrs, self._attrs_len, self._quoted = [], 0, False
        return super()._recover(err, text, pos)


# -- the spec --------------------------------------------------------------------------------------


def _parameter(dialect: Dialect, key: str, value: Any) -> str:
    kind = "true" if isinstance(value, str) else "false"
    return f'{dialect.tags.param_open} name="{key}" string="{kind}">{raw_value(value)}{dialect.param_close}'


def write(calls: Sequence[Call], dialect: Dialect = V4) -> str:
    """One block of invokes as DeepSeek V4's encoder writes a turn's calls: strings raw with
    `string="true"`, everything else JSON with `string="false"`, one tag a line."""
    tags = dialect.tags
    invokes = []
    for name, arguments in calls:
        params = "\n".join(_parameter(dialect, k, v) for k, v in arguments.items())
        invokes.append(f'{tags.call_open} name="{name}">\n{params}\n{tags.call_close}')
    return tags.start + "\n" + "\n".join(invokes) + "\n" + tags.end


def _block(request: ConstraintRequest, names: list[str], dialect: Dialect) -> Element:
    """A dialect's block of one or more invokes (at most one if `single`), the parameters as
    xgrammar's DeepSeek style renders a JSON schema."""
    tags = dialect.tags
    invokes = [
        tag(
            f'{tags.call_open} name="{name}">\n',
            json_value(request.parameters(name), dialect.style),
            f"{tags.call_close}\n",
        )
        for name in names
    ]
    return tag(tags.start + "\n", repeated(request, invokes), tags.end)


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One block, in the dialect the model picks (V4's, V3.2's or V4.1's), that ends the output; the
    blank line the encoder writes before a block may come first."""
    blocks = one_of([_block(request, request.names, d) for d in DIALECTS])
    return structural(sequence(optional(const("\n\n")), blocks))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where each block tag the parser reads opens invokes of declared
    tools that follow their schemas."""
    blocks = [_block(request, list(request.schemas), d) for d in DIALECTS]
    return triggered(request, [d.tags.start for d in DIALECTS], blocks)


def _writes_name(name: str) -> bool:
    # `name="NAME"`: no escaping, so no quote
    return '"' not in name


def writable_values(dialect: Dialect) -> Callable[[Any], bool]:
    """The values a writer of `dialect` writes so that they read back: none whose raw text holds a
    parameter's close before the next parameter or the invoke's close, or an invoke's close before
    the next invoke or the block's end (they end the value, the module docstring says), since VALUE
    has no escaping."""

    def readable(value: Any) -> bool:
        return not ends_inside(dialect.value_ends, raw_value(value), dialect.param_close)

    return readable


_TAGS = [
    (d.tags.start, d.tags.end, d.tags.call_open, d.tags.call_close, d.tags.param_open, d.param_close) for d in DIALECTS
]
MARKERS = tuple(dict.fromkeys(t for tags in _TAGS for t in tags))
"""V4's tags first (its block's tag opens), then what V3.2 and V4.1 spell differently."""

FORMAT = Format(
    "deepseek_dsml",
    '<｜DSML｜tool_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="p" string="true">v</｜DSML｜parameter>'
    "</｜DSML｜invoke></｜DSML｜tool_calls> (DeepSeek V3.2 / V4 / V4.1)",
    DeepSeekDsmlStream,
    write,
    markers=MARKERS,
    special_tokens=(),  # DSML is one token in DeepSeek's vocabulary, but not a special one: decoding keeps it
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    writes_value=writable_values(V4),
    typed_values=True,
    vllm_names=("deepseek_v32", "deepseek_v4", "deepseek_v41"),
    sglang_names=("deepseekv32", "deepseekv4", "deepseekv41"),
    models="DeepSeek V3.2, V4 / V4 Flash, V4.1 (DSML)",
)
