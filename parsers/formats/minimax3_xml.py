"""`minimax3_xml`: MiniMax-M3 tool calls, a namespace token before every tag, each argument an element
named by its key, nested to any depth, typed by the tool's schema.

Grammar, as this machine reads it (NS is the namespace token `]<]minimax[>[`)::

    output   := (text | think | code | block)*
    think    := "<mm:think>" text "</mm:think>"          # everything inside is text, never a call
    code     := "```" text "```" | "~~~" text "~~~" | "`" START text "`"   # quoted markup: text
    block    := START ws (invoke ws)* [END]             # END may be missing after complete invokes
    invoke   := NS "<invoke name=" ws NAME ">" ws (element ws)* NS "</invoke>"
    element  := NS "<" KEY ">" content NS "</" KEY ">"  # reading and typing: `core.xml_elements`
    NAME     := '"' [^"]* '"' ws | "'" [^']* "'" ws | [^<>]*

with START = `NS<tool_call>` and END = `NS</tool_call>`; `ws` is any whitespace. MiniMax's template
writes `START\\n`, then each invoke as `NS<invoke name="f">NS<k>v NS</k>…NS</invoke>\\n`, then END;
a mapping's members are child elements named by their keys, a list's items `NS<item>` elements,
booleans `true` / `false`, a None member is left out, anything else as text. Several invokes in a
block, and several blocks, are parallel calls; an invoke without elements is `{}`.

Values are raw text with no escaping, typed as `minimax_xml` types them (`core.typed_values`: a
string schema keeps the text verbatim, `02134` stays a string; integers, numbers, booleans, null,
JSON objects and arrays as the schema says; no schema: `true`, `false`, `null`, strict JSON numbers,
JSON objects and arrays, else a string). An element with child elements is an array or an object by
its schema (arrays of objects, objects of arrays); with no schema, an array when every child is an
`item`. A key the tool does not declare is kept, typed as written. Which NS is markup is decided by
what follows it, so a string value may hold NS, another key's close tag, and its own close tag
unless NS follows that (after whitespace); see `core.xml_elements` for the exact rule.

A top-level key given twice in one invoke: the last wins (logged), as `minimax_xml` has it; vLLM and
SGLang collect the values in a list, which streamed arguments cannot do without retracting what was
sent (a nested key given twice is collected, as both engines read it: a nested value is sent whole).

Decided, for each malformed shape: an invoke that breaks the grammar (text beside child elements,
elements nested deeper than TOOLCALL_PARSERS_MAX_DEPTH, an invoke's close or the block's end inside
an element whose close the model dropped, junk between elements), is refused at its name, or passes
the size bound of its arguments, is text up to its `NS</invoke>`, and the other invokes still count;
a block that never holds an invoke, and an invoke the end of the output cuts off (max_tokens), are
text, the invokes that closed before it stay calls; anything else between invokes (a tag that is no
invoke, `NS<invoke>` with no name) ends the block there, the rest is text (as in `minimax_xml`). An
invoke outside a block is text (the template always writes the block, and markup echoed in prose
must not become a call); markup in reasoning and in markdown code is text. vLLM drops the text after
a block; it is kept here.

The call's name is known when its invoke tag closes; a top-level string value streams as it is
written, holding back only what could be a tag; other values are sent when their element closes;
`}` at `NS</invoke>` (as far as the core's streaming policy shows a call). The block machine (skipping
a broken invoke, blocks without END, cut-off calls) is `call_blocks`, the invoke's NAME is read as
`minimax_xml` reads it, the elements by `core.xml_elements`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import NotACall
from ..core.typed_values import decoded_string, type_value
from ..core.xml_elements import ElementReader, open_tag_at
from .call_blocks import CALL, XmlBlockTags
from .constraints import Element, repeated, structural, tag, triggered
from .minimax_xml import MiniMaxXmlStream
from .schema_styles import styled_arguments
from .spec import Call, ConstraintRequest, Format

NS = "]<]minimax[>["
START, END = f"{NS}<tool_call>", f"{NS}</tool_call>"
INVOKE_OPEN, INVOKE_CLOSE = f"{NS}<invoke name=", f"{NS}</invoke>"
TAGS = XmlBlockTags(START, END, INVOKE_OPEN, INVOKE_CLOSE, f"{NS}<", call_word="invoke")
THINK = ("<mm:think>", "</mm:think>")
QUOTED = (("```", "```"), ("~~~", "~~~"), ("`" + START, "`"))
"""Markdown code, read as text like reasoning: a fenced block, and a block's tag right after a backtick."""

_ELEMENT = "minimax3.element"


class MiniMax3XmlStream(MiniMaxXmlStream):
    """Incremental parser for one response in MiniMax-M3's format (the block machine is `call_blocks`,
    the invoke's NAME `minimax_xml`'s; this reads the argument elements)."""

    format_name = "minimax3_xml"
    tags = TAGS

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        pairs = [] if not think_markers else [think_markers] if isinstance(think_markers[0], str) else think_markers
        self._outside = OutsideCalls(self._text, [START], [*pairs, *QUOTED])  # type: ignore[list-item]
        self._elements = ElementReader(NS, (INVOKE_CLOSE, END), self._send_args, self._keep, self.limits)
        self._readers[_ELEMENT] = self._scan_element

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Between an invoke's elements: the next element's open tag, or the invoke's close."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        close = self._literal_at(text, pos, (INVOKE_CLOSE,))
        if close:  # not kept: if the call breaks here, SKIP reads the tag as text
            self._end_call_element()
            return pos + len(close)
        tag = open_tag_at(text, pos, NS, self.limits.max_name)
        if close is None or tag is None:
            return None
        if not tag:
            raise NotACall(f"unexpected {text[pos : pos + 20]!r}")
        name, at = tag
        self._open_element(name)  # before the tag is kept: if it refuses, SKIP reads the tag as text
        self._raw.append(text[pos:at])
        return at

    def _open_element(self, name: str) -> None:
        key = decoded_string(name)  # the key a client reads from the JSON sent
        if key in self._arguments:
            self._warn(f"argument {key!r} given twice in one invoke; the last one wins")
        separator = ", " if self._arguments else "{"
        self._call_args(self._key, separator + '"' + json_string_body(key) + '": ')
        self._arguments[key] = None
        self._param = key
        self._elements.begin(name, self._schema.get(key) if self.tools else None)
        self._state = _ELEMENT

    def _scan_element(self, text: str, pos: int) -> int | None:
        at, done, value = self._elements.read(text, pos)
        if done:
            self._arguments[self._param] = value
            self._state = CALL
        return at

    def _pending_text(self) -> str:
        return super()._pending_text() + (self._elements.pending() if self._state == _ELEMENT else "")


# -- the spec --------------------------------------------------------------------------------------


def _xml(value: Any) -> str:
    """A value as MiniMax's template renders it: members and items as elements, None members left
    out, booleans as JSON, anything else as its text."""
    if isinstance(value, dict):
        return "".join(f"{NS}<{k}>{_xml(v)}{NS}</{k}>" for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return "".join(f"{NS}<item>{_xml(v)}{NS}</item>" for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def write(calls: Sequence[Call]) -> str:
    """One block of invokes, as MiniMax-M3's template writes a turn's calls."""
    invokes = "".join(f'{NS}<invoke name="{name}">{_xml(arguments)}{INVOKE_CLOSE}\n' for name, arguments in calls)
    return f"{START}\n{invokes}{END}"


def _invokes(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One `NS<invoke name="f">` tag per tool, its arguments in xgrammar's `minimax_m3_xml` style
    (namespaced elements named by their keys) where it renders the schema (`schema_styles`)."""
    style = "minimax_m3_xml"
    return [
        tag(f'{NS}<invoke name="{name}">', styled_arguments(request, name, style), f"{INVOKE_CLOSE}\n")
        for name in names
    ]


def _block(request: ConstraintRequest, names: list[str]) -> Element:
    return tag(START + "\n", repeated(request, _invokes(request, names)), END)


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One block holding at least one invoke (at most one if `single`), which ends the output."""
    return structural(_block(request, request.names))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Free text, where each START opens a block of invokes that follow the tools' schemas."""
    return triggered(request, [START], [_block(request, list(request.schemas))])


def _writes_name(name: str) -> bool:
    # `<invoke name="NAME">` as the template and the constraint write it
    return '"' not in name


_KEY = re.compile(r"[A-Za-z_][\w.-]*")
_CLOSE_THEN_NS = re.compile(f"{re.escape(NS)}</[^<>]*>\\s*{re.escape(NS)}")


def _writes_value(value: Any, top: bool = True) -> bool:
    """What `write` writes so that it reads back equal under a schema of the top-level type only:
    no None (left out), keys that are element names and not `item` (an array's), no empty nested
    mapping or list (an empty element), nested strings that the untyped guess keeps strings, and no
    string that holds markup that ends it (the values have no escaping): the invoke's close or the
    block's end, or a close tag followed by NS, which closes the element where the tag is its own
    (any close tag here: the element's key is not known to this check)."""
    if isinstance(value, str) and (
        INVOKE_CLOSE in value or END in value or _CLOSE_THEN_NS.search(value + NS) is not None
    ):
        return False
    if value is None:
        return False
    if isinstance(value, dict):
        keys = all(_KEY.fullmatch(key) and key != "item" for key in value)
        return keys and (top or bool(value)) and all(_writes_value(v, False) for v in value.values())
    if isinstance(value, list):
        return (top or bool(value)) and all(_writes_value(v, False) for v in value)
    return top or not isinstance(value, str) or type_value(value, None) == value


def _may_need_declared_tools(text: str) -> bool:
    """Whether a block may read differently with the request's schemas: a string-typed value may
    hold what reads as a child element without a schema (SGLang asks without the tools)."""
    return START in text


FORMAT = Format(
    "minimax3_xml",
    f'{START}{NS}<invoke name="f">{NS}<k>v{NS}</k>{INVOKE_CLOSE}{END} (MiniMax-M3; elements nest)',
    MiniMax3XmlStream,
    write,
    markers=(START, END, INVOKE_OPEN, INVOKE_CLOSE, NS),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    writes_value=_writes_value,
    needs_declared_tools=_may_need_declared_tools,
    typed_values=True,
    vllm_names=("minimax_m3",),
    sglang_names=("minimax-m3",),
    models="MiniMax-M3 (namespaced elements)",
)
