"""`qwen_xml`: Qwen3-Coder XML tool calls (and Qwen3.5 / Qwen3.6, MiniCPM and the other models that
copied the format), values typed by the tool schema.

Grammar, as this machine reads it::

    output    := (text | think | block | bare)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (function ws)* [END]           # END may be missing after complete functions
    bare      := function (ws function)* [ws END]        # START dropped: declared tools only
    function  := "<function=" NAME ">" ws (parameter ws)* "</function>"
    parameter := "<parameter=" NAME ">" ["\\n"] VALUE ["\\n"] [PARAM_CLOSE]
    NAME      := [^<>\\n]+                                # surrounding whitespace is not part of it

with START = `<tool_call>`, END = `</tool_call>` and PARAM_CLOSE = `</parameter>` or a drifted
spelling of it: `</parameter` and up to 32 letters, digits or `_`, with or without the `>`
(`</parameter1>`, `</parameter_function>`, a cut `</parameter`: what SGLang's tests show a model
writes when its grammar drifts); `ws` is any whitespace. Several functions may share one block
(vLLM's and SGLang's Qwen3-Coder parsers read that too); Qwen3-Coder's own template writes one
block per call, a newline between. A NAME is at most `TOOLCALL_PARSERS_MAX_NAME` characters.

VALUE is raw text: the format has no escaping. One newline right after the parameter's tag and one
right before the tag that ends the value are markup (the template writes the value on its own
lines); any other whitespace is data, and `<parameter=p>x</parameter>` reads the same as the
template's form. The value ends at:

- a PARAM_CLOSE followed (after whitespace) by the next `<parameter=` or `</function>`; any
  other `</parameter>` is part of the value (a file that holds XML), as in `minimax_xml`, and so
  is a drifted spelling (a value that ends in `</parameters>` and is then closed stays whole);
- a `</function>` followed (after whitespace) by `</tool_call>`, `<tool_call>`, `<function=` or the
  end of the output: the model dropped the `</parameter>` (Qwen3.5 / 3.6 do this in long contexts,
  ollama#17914), and the function ends there too;
- a `<parameter=` at the start of a line of the value: the model dropped the `</parameter>`, and
  the next parameter begins.

So a value cannot hold a line that starts with `<parameter=`, nor `</parameter>` + whitespace +
`<parameter=` or `</function>`, nor `</function>` + whitespace + a block tag: those read as markup.
Streaming and `parse()` apply the same rules (the stream holds an end tag back until it knows, and a
value's last newline until the next character). A function without parameters is `{}`; a parameter
named twice in one function: the last wins (logged).

Values are typed by the request's tool schema (`core.typed_values`, the rules of `minimax_xml`),
in Python's spelling too: Qwen3-Coder's and Qwen3.5's templates write a non-string value with
Python's `str()`, so `None` is null where the schema admits null (a string-or-null `None` too: the
template writes a null and the string "None" alike), `True` a boolean, and an object or array may
be a Python literal (`{'k': None}`, `['a', 'b']`) or a JSON string holding one (a template that
wrote `json.dumps(str(value))`); a string keeps the text as written, and without a schema the
guess stays JSON's. Reading them is shared with `minimax_xml` (`core.xml_parameters`), and so is the block machine
around the tags (`xml_blocks`). The call's name is known when its function tag closes; a string
value streams as it is written; other values are sent when their end is known; `}` at `</function>`
(all as far as the core's streaming policy shows a call).

A function written without its block (Qwen3-Coder drops `<tool_call>` now and then: `<function=f>`
at the start of the output, of a line, or after prose; vLLM's and SGLang's parsers read it too) is
a call when it names a tool the request declares, and a stray END after it is markup; a bare
`<function=NAME>` for an undeclared tool, or in a request without tools, is text, since prose and
code about the format write it too. A bare function that then breaks the grammar is text up to
where it broke, and reading goes on from there as text (not up to a `</function>`, which may belong
to a real call).

What stays text or reads otherwise than some engine tests expect, and why: a value cannot hold a
line that starts with `<parameter=` (it ends a value whose `</parameter>` was dropped, the shape
Qwen3.5 / 3.6 write; telling it from a file that quotes the format would need the rest of the
output); `</parameter>` + `<parameter=NAME>` is markup whatever NAME is (vLLM's parsers check NAME
against the schema, which a literal with a declared name defeats anyway); a call to an undeclared
name such as an unrendered `{{ tc.name }}` is kept and logged unless the operator refuses
undeclared tools.

A function that breaks the grammar (text where a parameter tag belongs, a name with `<` or a line
break, an empty or over-long name), is refused at its name (too many calls, an undeclared tool the
operator refuses, a lone surrogate) or passes the size bound of its arguments
(`TOOLCALL_PARSERS_MAX_CALL_CHARS`) is text up to its `</function>` (or up
to a `<function=` before it), and the other functions still
count; a block that never holds a function (`<tool_call></tool_call>`, Hermes-style JSON inside
`<tool_call>`) is text; a function the end of the output cuts off inside a value or a tag is text,
and one it cuts off after a closed value (only `</function>` and `</tool_call>` missing or cut
part-way) is a call, the cut part text (the rule of every format, `xml_blocks`); a `</parameter>`
followed by `</tool_call>` is text (the `</function>` was dropped there, not cut off).

Reading is one pass over the text: whitespace between tags and after an end tag is consumed as it
arrives (kept as markup, or as value text once it is known to be data), so what waits for more text
is at most a partial tag, a name, or one newline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from ..core.xml_parameters import ValueEnd, ends_inside
from .grammar import Element, const, declared_arguments, regex, repeated, sequence, structural, tag, triggered
from .spec import Call, Constraint, ConstraintRequest, Format, Writer
from .xml_blocks import XmlBlockStream, XmlBlockTags, raw_value

START, END = "<tool_call>", "</tool_call>"
FUNCTION_OPEN, FUNCTION_CLOSE = "<function=", "</function>"
PARAM_OPEN, PARAM_CLOSE = "<parameter=", "</parameter>"
TAGS = XmlBlockTags(START, END, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, call_word="function")


def value_ends(tags: XmlBlockTags, *, inline: bool = False) -> tuple[ValueEnd, ...]:
    """What ends a value (see the module docstring) inside blocks of `tags`; `core.xml_parameters`
    applies them. `inline`: values are written right between their tags, with no framing newlines,
    so only an end that stands for a dropped `</parameter>` takes the line break before it (the one
    the template writes after that tag)."""
    return (
        ValueEnd(PARAM_CLOSE[:-1], followers=(PARAM_OPEN, FUNCTION_CLOSE), drift=True, at_end_of_output=True),
        ValueEnd(
            FUNCTION_CLOSE, followers=(tags.end, tags.start, FUNCTION_OPEN), at_end_of_output=True, after_break=inline
        ),
        ValueEnd(PARAM_OPEN, line_start=True, kept=0, after_break=inline),
    )


_NAME_END = re.compile("[<>\n]")


class QwenXmlStream(XmlBlockStream):
    """Incremental parser for one response in Qwen3-Coder's XML tool-call format (the block machine
    is `xml_blocks`; this reads the format's NAME)."""

    format_name = "qwen_xml"
    tags = TAGS
    parameter_ends = value_ends(TAGS)
    framing_newlines = True
    """One line break after a parameter's tag and one before its end are markup (the template's)."""
    bare_calls = True

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(
            tools,
            id_factory,
            think_markers,
            self.parameter_ends,
            framing_newlines=self.framing_newlines,
            python_values=True,
        )

    def _scan_name(self, text: str, pos: int) -> int | None:
        """A tag's NAME up to its `>`. What is held back is at most a name long; past that, or at a
        `<` or a line break, the tag is not a call."""
        longest = self.limits.max_name
        m = _NAME_END.search(text, pos, pos + 1 + longest)
        if m is None:
            if len(text) >= pos + 1 + longest:
                raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
            return None
        if m.group() != ">":
            raise NotACall(f"a {m.group()!r} in a tag's name")
        self._named(text[pos : m.start()].strip())
        self._raw.append(text[pos : m.end()])
        return m.end()


# -- the spec --------------------------------------------------------------------------------------


def block_writer(tags: XmlBlockTags, *, inline: bool = False) -> Writer:
    """Calls -> one block of `tags` per call, a newline between, each value verbatim between its
    parameter's tags: on its own lines (a line break each side, which is markup), or (`inline`)
    right between them."""

    def framed(value: Any) -> str:
        raw = raw_value(value)
        return raw if inline else f"\n{raw}\n"

    def write(calls: Sequence[Call]) -> str:
        blocks = []
        for name, arguments in calls:
            params = "".join(f"{PARAM_OPEN}{k}>{framed(v)}{PARAM_CLOSE}\n" for k, v in arguments.items())
            blocks.append(f"{tags.start}\n{FUNCTION_OPEN}{name}>\n{params}{FUNCTION_CLOSE}\n{tags.end}")
        return "\n".join(blocks)

    return write


write = block_writer(TAGS)
"""Values on their own lines, as Qwen3-Coder's template writes them."""


def block_constraints(tags: XmlBlockTags, *, inline: bool = False) -> tuple[Constraint, Constraint]:
    """The `required` and strict `auto` constraints for blocks of `tags`, written as `block_writer`
    writes them (`inline` alike).

    `required`: one or more blocks (one call each, a newline between) that end the output, at most
    one if `single`. Strict `auto`: free text, where each block's start tag opens a call that
    follows its tool's schema. One tag per tool: its block, a pinned tool's declared parameters in
    order (`declared_arguments`), a raw value any text that holds none of what ends a value for the
    parser (a `</parameter` close, a parameter's open, a function's close): xgrammar's
    `qwen_xml` style ends a value at its close alone, so a value could hold a parameter the parser
    reads as the next one, unchecked."""
    frame = "" if inline else "\n"
    text: Element = {"type": "any_text", "excludes": [PARAM_CLOSE[:-1], PARAM_OPEN, FUNCTION_CLOSE]}
    close = f"{frame}{PARAM_CLOSE}\n"
    other = sequence(const(PARAM_OPEN), regex(r"[^<>\n]+"), tag(">" + frame, text, close))

    def declared(key: str, value: Element) -> Element:
        return tag(f"{PARAM_OPEN}{key}>{frame}", value, close)

    def function_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
        end = f"{FUNCTION_CLOSE}\n{tags.end}"
        begin = f"{tags.start}\n{FUNCTION_OPEN}"
        return [
            tag(
                f"{begin}{name}>\n",
                declared_arguments(request.parameters(name), request.pins(name), declared, other, text),
                end,
            )
            for name in names
        ]

    def required(request: ConstraintRequest) -> dict[str, Any]:
        return structural(repeated(request, function_tags(request, request.names), "\n"))

    def auto(request: ConstraintRequest) -> dict[str, Any]:
        return triggered(request, [tags.start], function_tags(request, list(request.schemas)))

    return required, auto


required_constraint, auto_constraint = block_constraints(TAGS)


def may_hold_bare_call(text: str) -> bool:
    """Whether `text` may hold a function written without its block, which is a call only for a
    declared tool (SGLang asks without the tools)."""
    return FUNCTION_OPEN in text


def writable_values(tags: XmlBlockTags, *, inline: bool = False) -> Callable[[Any], bool]:
    """The values `block_writer(tags, inline=inline)` writes so that they read back: none whose raw
    text ends the value where it stands (the module docstring: a line that starts with
    `<parameter=`, `</parameter>` + whitespace + `<parameter=` or `</function>`, `</function>` +
    whitespace + a block tag), since the format has no escaping."""
    ends = value_ends(tags, inline=inline)
    after = PARAM_CLOSE if inline else "\n" + PARAM_CLOSE

    def readable(value: Any) -> bool:
        return not ends_inside(ends, raw_value(value), after, line_start=not inline)

    return readable


def writes_name(name: str) -> bool:
    """`<function=NAME>`: read up to `<`, `>` or a line break, and stripped."""
    return _NAME_END.search(name) is None and name == name.strip()


FORMAT = Format(
    "qwen_xml",
    "<tool_call>\\n<function=f>\\n<parameter=p>\\nv\\n</parameter>\\n</function>\\n</tool_call> (Qwen3-Coder)",
    QwenXmlStream,
    write,
    markers=(START, END, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    required=required_constraint,
    auto=auto_constraint,
    writes_name=writes_name,
    writes_value=writable_values(TAGS),
    needs_declared_tools=may_hold_bare_call,
    other_openers=((FUNCTION_OPEN, None),),  # a bare call to a declared tool: strict writes the block
    typed_values=True,
    vllm_names=("qwen3_coder", "qwen3_xml", "mimo", "step3p5", "granite_toolcall_parser"),
    sglang_names=("qwen3_coder", "mimo", "step3p5", "nanbeige"),
    models=(
        "Qwen3-Coder, Qwen3-Coder-Next, Qwen3.5 / Qwen3.6, Xiaomi MiMo-V2, StepFun Step-3.5, Nanbeige, "
        "IBM Granite 4.2, NVIDIA Nemotron 3 Super"
    ),
)
