"""The Qwen3-Coder XML family: `<function=NAME>` calls of `<parameter=P>VALUE</parameter>`
parameters inside a format's block tags, values raw and typed by the tool's schema. `qwen_xml`'s
docstring states the grammar, what ends a value and every decided case; a format of the family is
one `QwenFunctions` value (its block tags, whether values sit on their own lines, whether a bare
`<function=` is read, its think tags, its names), from which its stream class, writer, `required`
and strict `auto` constraints and `Format` come (`QwenFunctions.format`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.ids import IdFactory
from ...core.outside import ThinkMarkers
from ...core.stream import NotACall
from ...core.xml_parameters import ValueEnd, ends_inside
from ..call_blocks import XmlBlockStream, XmlBlockTags, raw_value
from ..constraints import Element, const, declared_arguments, regex, repeated, sequence, structural, tag, triggered
from ..spec import Call, Constraint, ConstraintRequest, Format, Writer
from . import format_stream

FUNCTION_OPEN, FUNCTION_CLOSE = "<function=", "</function>"
PARAM_OPEN, PARAM_CLOSE = "<parameter=", "</parameter>"


def drifts(tags: XmlBlockTags) -> bool:
    """Whether a parameter's close may drift (`</parameter1>`, a cut `</parameter`): a tag's, ending
    in `>`; a close of other markers is read only as written."""
    return tags.param_close.endswith(">")


def close_stem(tags: XmlBlockTags) -> str:
    """What of a parameter's close must be written as is: all but its `>` where it may drift."""
    return tags.param_close[:-1] if drifts(tags) else tags.param_close


def value_ends(tags: XmlBlockTags, *, inline: bool = False) -> tuple[ValueEnd, ...]:
    """What ends a value (see `qwen_xml`'s docstring) inside blocks of `tags`; `core.xml_parameters`
    applies them. `inline`: values are written right between their tags, with no framing newlines,
    so only an end that stands for a dropped `</parameter>` takes the line break before it (the one
    the template writes after that tag)."""
    return (
        ValueEnd(
            close_stem(tags), followers=(tags.param_open, tags.call_close), drift=drifts(tags), at_end_of_output=True
        ),
        ValueEnd(
            tags.call_close,
            followers=(tags.end, tags.start, tags.call_open),
            at_end_of_output=True,
            after_break=inline,
        ),
        ValueEnd(tags.param_open, line_start=True, kept=0, after_break=inline),
    )


_NAME_END = re.compile("[<>\n]")


class QwenFunctionsStream(XmlBlockStream):
    """Incremental parser for one response of a format of the family (the block machine is
    `call_blocks`; this reads the format's NAME). `QwenFunctions.format` makes each format's
    subclass, which sets the class attributes and its think tags' default."""

    format_name = "?"
    tags: XmlBlockTags
    parameter_ends: tuple[ValueEnd, ...]
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
            params = "".join(f"{tags.param_open}{k}>{framed(v)}{tags.param_close}\n" for k, v in arguments.items())
            blocks.append(f"{tags.start}\n{tags.call_open}{name}>\n{params}{tags.call_close}\n{tags.end}")
        return "\n".join(blocks)

    return write


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
    text: Element = {"type": "any_text", "excludes": [close_stem(tags), tags.param_open, tags.call_close]}
    close = f"{frame}{tags.param_close}\n"
    other = sequence(const(tags.param_open), regex(r"[^<>\n]+"), tag(">" + frame, text, close))

    def declared(key: str, value: Element) -> Element:
        return tag(f"{tags.param_open}{key}>{frame}", value, close)

    def function_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
        end = f"{tags.call_close}\n{tags.end}"
        begin = f"{tags.start}\n{tags.call_open}"
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


def bare_call_check(tags: XmlBlockTags) -> Callable[[str], bool]:
    """Whether a text may hold a function written without its block, which is a call only for a
    declared tool (SGLang asks without the tools)."""

    def may_hold_bare_call(text: str) -> bool:
        return tags.call_open in text

    return may_hold_bare_call


def writable_values(tags: XmlBlockTags, *, inline: bool = False) -> Callable[[Any], bool]:
    """The values `block_writer(tags, inline=inline)` writes so that they read back: none whose raw
    text ends the value where it stands (`qwen_xml`'s docstring: a line that starts with
    `<parameter=`, `</parameter>` + whitespace + `<parameter=` or `</function>`, `</function>` +
    whitespace + a block tag), since the format has no escaping."""
    ends = value_ends(tags, inline=inline)
    after = tags.param_close if inline else "\n" + tags.param_close

    def readable(value: Any) -> bool:
        return not ends_inside(ends, raw_value(value), after, line_start=not inline)

    return readable


def writes_name(name: str) -> bool:
    """`<function=NAME>`: read up to `<`, `>` or a line break, and stripped."""
    return _NAME_END.search(name) is None and name == name.strip()


@dataclass(frozen=True)
class QwenFunctions:
    """One format of the family, as data: `start` / `end` are its block tags, `function_open` (the
    NAME follows, up to `>`), `function_close`, `param_open` (the key follows, up to `>`) and
    `param_close` its call's and parameters' (Qwen3-Coder's by default); `inline` says its
    template writes a value right between its tags (Seed), so no line break around a value is
    markup; `bare_calls` reads a `<function=` written without its block, for a declared tool (Qwen
    drops the block now and then); `think` is the think pair read as text; `keep_whitespace` sends
    the content as written, its whitespace untrimmed (Step-5's clients expect it); the rest is the
    `Format`'s own (`spec.Format`)."""

    name: str
    summary: str
    start: str = "<tool_call>"
    end: str = "</tool_call>"
    function_open: str = FUNCTION_OPEN
    function_close: str = FUNCTION_CLOSE
    param_open: str = PARAM_OPEN
    param_close: str = PARAM_CLOSE
    inline: bool = False
    bare_calls: bool = True
    think: tuple[str, str] = ("<think>", "</think>")
    keep_whitespace: bool = False
    special_tokens: tuple[str, ...] = ()
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    @property
    def tags(self) -> XmlBlockTags:
        return XmlBlockTags(
            self.start,
            self.end,
            self.function_open,
            self.function_close,
            self.param_open,
            call_word="function",
            param_close=self.param_close,
        )

    def stream_class(self, module: str) -> type[QwenFunctionsStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            QwenFunctionsStream,
            self.name,
            module,
            "the Qwen3-Coder XML family",
            self.think,
            tags=self.tags,
            parameter_ends=value_ends(self.tags, inline=self.inline),
            framing_newlines=not self.inline,
            bare_calls=self.bare_calls,
            keeps_whitespace=self.keep_whitespace,
        )

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        tags = self.tags
        required, auto = block_constraints(tags, inline=self.inline)
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            block_writer(tags, inline=self.inline),
            markers=(self.start, self.end, self.function_open, self.function_close, self.param_open, self.param_close),
            special_tokens=self.special_tokens,
            required_constraint=required,
            auto_constraint=auto,
            writes_name=writes_name,
            writes_value=writable_values(tags, inline=self.inline),
            needs_declared_tools=bare_call_check(tags) if self.bare_calls else None,
            # a bare call to a declared tool: strict writes the block
            other_openers=((self.function_open, None),) if self.bare_calls else (),
            typed_values=True,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )
