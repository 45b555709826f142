"""`minimax_xml`: MiniMax-M2 XML tool calls, values typed by the tool schema.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (invoke ws)* [END]             # END may be missing after complete invokes
    invoke    := "<invoke name=" ws NAME ">" ws (parameter ws)* "</invoke>"
    parameter := "<parameter name=" ws NAME ">" VALUE "</parameter>"
    NAME      := '"' [^"]* '"' ws | "'" [^']* "'" ws | [^<>]*

with START = `<minimax:tool_call>` and END = `</minimax:tool_call>`; `ws` is any whitespace. A NAME
is not empty and at most `TOOLCALL_PARSERS_MAX_NAME` characters (a bare one with its trailing spaces).
VALUE is raw text: the format has no escaping. A `</parameter>` ends it only when what follows (after
whitespace) is `<parameter`, `</invoke>` or the end of the output; otherwise it is part of the value
(a file that holds XML). The one text a value cannot hold is `</parameter>` followed by one of those.
Streaming and `parse()` apply the same rule (the stream holds a `</parameter>` back until it knows).
Several invokes in a block, and several blocks, are parallel calls; an invoke without parameters is
`{}`; a parameter named twice in one invoke: the last wins (logged).

Values are typed by the request's tool schema (`core.typed_values`; `qwen_xml` types its values
the same way):

- `string` keeps the text verbatim, whitespace included: `02134` and `true` stay strings. When a
  schema admits a string and other types (`["string", "integer"]`, `anyOf`), a value that is
  another member's JSON spelling is that member (`42` an integer, `{"a": 1}` an object, `null`
  null), as vLLM's and other engines' parsers read it; any other text is the string, verbatim
  (`02134` too: JSON's spelling only).
- `integer`: `5`, `5.0` -> 5; `number`: `3.5`, `1e3`; `boolean`: `true` / `false` in any case;
  `null`: `null`; `object` / `array`: JSON of that kind, with nested strings typed by the nested
  `properties` / `items`. Whitespace around these is ignored.
- Types come from `type` (a name or a list; `int`, `float`, `bool`, `str`, `dict`, `list` are read
  as their JSON names), `anyOf` / `oneOf` / `allOf`, else `enum` / `const`, `properties`, `items`.
- A value that fits none of its types stays a string, verbatim: also a number longer than
  `TOOLCALL_PARSERS_MAX_SCALAR` (512) characters, a number that overflows (`1e400`), an object or
  array nested deeper than `TOOLCALL_PARSERS_MAX_DEPTH` (256) or holding such a number, `NaN` or
  `Infinity`. Number patterns are unambiguous and see at most `MAX_SCALAR` characters.
- No schema (no tools, or a parameter the tool does not declare): `true`, `false`, `null`, a number
  in strict JSON syntax (so `02134` and `+5` stay strings), or a JSON object or array become that;
  anything else is a string, verbatim. Only a value's first 64 characters are used for this guess.
- Anything in a schema that is not what JSON Schema says (`"anyOf": true`, `"type": 5`,
  `"properties": []`) says nothing and never raises; at most 256 union members are read per schema.

The call's name is known when its invoke tag closes; a string value streams as it is written
(JSON-escaped, holding back only what could be `</parameter>`); other values are sent when their
`</parameter>` is known to end them; `}` at `</invoke>` (all as far as the core's streaming policy
shows a call).

An invoke that breaks the grammar, is refused at its name (too many calls, an undeclared tool the
operator refuses, a lone surrogate, an empty or over-long name) or passes the size bound of its
arguments (`TOOLCALL_PARSERS_MAX_CALL_CHARS`) is text up to its `</invoke>` (or up to
an `<invoke` before it), and the other invokes
still count; a block that never holds an invoke, and an invoke cut off by the end of the output, are
text. A size bound crossed inside a value is acted on where that
value ends, so the outcome does not depend on how the text was chunked.

Reading is one pass over the text: whitespace between tags and after a `</parameter>` is consumed as
it arrives (kept as markup, or as value text once it is known to be data), so what waits for more
text is at most a partial tag or a name. The block machine around the tags is shared with `qwen_xml`
(`call_blocks`), and so is reading values (`core.xml_parameters`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from ..core.xml_parameters import ValueEnd, ends_inside
from .call_blocks import XmlBlockStream, XmlBlockTags, raw_value
from .constraints import Element, const, json_value, repeated, sequence, structural, tag, triggered
from .spec import Call, Constraint, ConstraintRequest, Format, Writer

START, END = "<minimax:tool_call>", "</minimax:tool_call>"
INVOKE_OPEN, INVOKE_CLOSE = "<invoke name=", "</invoke>"
PARAM_OPEN, PARAM_CLOSE = "<parameter name=", "</parameter>"
TAGS = XmlBlockTags(START, END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, call_word="invoke")
VALUE_END = ValueEnd(PARAM_CLOSE, followers=("<parameter", INVOKE_CLOSE), at_end_of_output=True)
"""A `</parameter>` ends a value when the next parameter or the invoke's end follows (after whitespace)."""

_BARE_NAME_END = re.compile("[<>]")

# The states of `call_blocks`, and one more: after a quoted NAME, before its `>`.
_NAME_END = "minimax.name_end"


class MiniMaxXmlStream(XmlBlockStream):
    """Incremental parser for one response in MiniMax-M2's XML tool-call format (the block machine
    is `call_blocks`; this reads the format's NAME)."""

    format_name = "minimax_xml"
    tags = TAGS
    parameter_ends: tuple[ValueEnd, ...] = (VALUE_END,)
    """What ends a parameter's value (`step3_xml` names its own tags)."""

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers, self.parameter_ends)
        self._name = ""  # a quoted NAME read, waiting for its `>`
        self._readers[_NAME_END] = self._scan_name_end

    def _scan_name(self, text: str, pos: int) -> int | None:
        """A tag's NAME: quoted (then `_scan_name_end` reads up to `>`), or bare up to `>`. What is
        held back is at most a name long; past that the tag is not a call."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        longest = self.limits.max_name
        quote = text[pos]
        if quote in "\"'":
            close = text.find(quote, pos + 1, pos + 2 + longest)
            if close < 0:
                if len(text) >= pos + 2 + longest:
                    raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
                return None
            self._name = text[pos + 1 : close]
            self._raw.append(text[pos : close + 1])
            self._state = _NAME_END
            return close + 1
        m = _BARE_NAME_END.search(text, pos, pos + 1 + longest)
        if m is None:
            if len(text) >= pos + 1 + longest:
                raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
            return None
        if m.group() == "<":
            raise NotACall("a '<' in a tag's name")
        self._named(text[pos : m.start()].rstrip())
        self._raw.append(text[pos : m.end()])
        return m.end()

    def _scan_name_end(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] != ">":
            raise NotACall("no '>' after the quoted name")
        self._named(self._name)
        self._raw.append(">")
        return pos + 1


# -- the spec --------------------------------------------------------------------------------------


def invoke_writer(start: str, end: str) -> Writer:
    """A writer of one block of invokes between `start` and `end` (this format's, and `dots_xml`'s);
    values verbatim (the format has no escaping), non-strings as JSON."""

    def write(calls: Sequence[Call]) -> str:
        invokes = []
        for name, arguments in calls:
            params = "".join(f'<parameter name="{k}">{raw_value(v)}</parameter>\n' for k, v in arguments.items())
            invokes.append(f'<invoke name="{name}">\n{params}</invoke>\n')
        return f"{start}\n{''.join(invokes)}{end}"

    return write


def _invokes(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One `<invoke name="f">` tag per tool, its parameters written as xgrammar's `minimax_xml`
    style renders a JSON schema: `<parameter name="p">value</parameter>` lines."""
    style = "minimax_xml"
    return [
        tag(f'<invoke name="{name}">\n', json_value(request.parameters(name), style), "</invoke>\n") for name in names
    ]


def invoke_constraints(start: str, end: str) -> tuple[Constraint, Constraint]:
    """The `required` and strict `auto` constraints of blocks of invokes between `start` and `end`:
    one block holding at least one invoke (at most one if `single`); free text where each `start`
    opens a block of invokes that follow the tools' schemas."""

    def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
        return structural(
            sequence(const(start + "\n"), repeated(request, _invokes(request, request.names)), const(end))
        )

    def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
        block = tag(start + "\n", repeated(request, _invokes(request, list(request.schemas))), end)
        return triggered(request, [start], [block])

    return required_constraint, auto_constraint


write = invoke_writer(START, END)
"""One block of invokes, values verbatim, non-strings as JSON."""

required_constraint, auto_constraint = invoke_constraints(START, END)


def writes_name(name: str) -> bool:
    """Whether `<invoke name="NAME">` as the writer and the constraint write it reads back."""
    return '"' not in name


def writable_values(ends: Sequence[ValueEnd], close: str) -> Callable[[Any], bool]:
    """The values a writer that writes each value verbatim before `close` (this format's, and those
    of `dots_xml`, `step3_xml`, `muse_atem`) writes so that they read back: none whose raw text holds
    a value's close followed (after whitespace) by what makes it end the value (the one text a value
    cannot hold, the module docstring says), since the format has no escaping."""

    def readable(value: Any) -> bool:
        return not ends_inside(ends, raw_value(value), close)

    return readable


FORMAT = Format(
    "minimax_xml",
    '<minimax:tool_call><invoke name="f"><parameter name="p">v</parameter></invoke></minimax:tool_call>',
    MiniMaxXmlStream,
    write,
    markers=(START, END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    vllm_tag_model="minimax",
    writes_name=writes_name,
    writes_value=writable_values((VALUE_END,), PARAM_CLOSE),
    typed_values=True,
    vllm_names=("minimax_m2",),
    sglang_names=("minimax-m2",),
    models="MiniMax-M2 family (M2, M2.1, M2.5, M2.7)",
)
