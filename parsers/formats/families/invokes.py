"""The invoke family: `minimax_xml`'s grammar with a format's own tags. A block (`START` .. `END`)
holds invokes, `INVOKE_OPEN "NAME">` .. `INVOKE_CLOSE`, each holding `PARAM_OPEN "KEY">VALUE
PARAM_CLOSE` parameters, values raw and typed by the tool's schema. `minimax_xml`'s docstring
states the grammar, what ends a value (a PARAM_CLOSE followed by the next parameter, the invoke's
close or the end of the output) and every decided case; the machine is that format's
(`MiniMaxXmlStream`) with the tags of one `Invokes` value, from which the stream class, writer,
`required` and strict `auto` constraints and `Format` come. Formats derived from a chat template
that writes invokes (MiniMax-M2's, dots') are values of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.xml_parameters import ValueEnd
from ..call_blocks import XmlBlockTags, named_parameters, raw_value
from ..constraints import Element, const, repeated, sequence, structural, tag, triggered
from ..minimax_xml import MiniMaxXmlStream, writable_values, writes_name
from ..spec import Call, Constraint, ConstraintRequest, Format, Writer
from . import format_stream


@dataclass(frozen=True)
class Invokes:
    """One format of the family, as data: `start` / `end` its block tags, `invoke_open` (a quoted
    NAME and `>` follow) and `invoke_close` an invoke's, `param_open` (a quoted key and `>` follow)
    and `param_close` a parameter's (MiniMax-M2's by default); `think` the think pair read as text;
    the rest is the `Format`'s own (`spec.Format`)."""

    name: str
    summary: str
    start: str
    end: str
    invoke_open: str = "<invoke name="
    invoke_close: str = "</invoke>"
    param_open: str = "<parameter name="
    param_close: str = "</parameter>"
    think: tuple[str, str] = ("<think>", "</think>")
    special_tokens: tuple[str, ...] = ()
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    @property
    def tags(self) -> XmlBlockTags:
        return XmlBlockTags(
            self.start,
            self.end,
            self.invoke_open,
            self.invoke_close,
            self.param_open,
            call_word="invoke",
            param_close=self.param_close,
        )

    @property
    def value_end(self) -> ValueEnd:
        """A PARAM_CLOSE ends a value where the next parameter's tag (its first word), the invoke's
        close or the end of the output follows, after whitespace."""
        return ValueEnd(
            self.param_close, followers=(self.param_open.split()[0], self.invoke_close), at_end_of_output=True
        )

    def stream_class(self, module: str) -> type[MiniMaxXmlStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            MiniMaxXmlStream,
            self.name,
            module,
            "the invoke family",
            self.think,
            tags=self.tags,
            parameter_ends=(self.value_end,),
        )

    def write(self, calls: Sequence[Call]) -> str:
        """One block of invokes, a line each, values verbatim, non-strings as JSON."""
        invokes = []
        for name, arguments in calls:
            params = "".join(f'{self.param_open}"{k}">{raw_value(v)}{self.param_close}\n' for k, v in arguments.items())
            invokes.append(f'{self.invoke_open}"{name}">\n{params}{self.invoke_close}\n')
        return f"{self.start}\n{''.join(invokes)}{self.end}"

    def constraints(self) -> tuple[Constraint, Constraint]:
        """`required`: one block holding at least one invoke (at most one if `single`), as `write`
        writes it; strict `auto`: free text where each `start` opens such a block. A value holds no
        PARAM_CLOSE nor the invoke's close (so it cannot end early, nor run past its invoke)."""

        def invokes(request: ConstraintRequest, names: list[str]) -> list[Element]:
            close = self.param_close + "\n"
            return [
                tag(
                    f'{self.invoke_open}"{name}">\n',
                    named_parameters(
                        request.parameters(name),
                        request.pins(name),
                        self.param_open,
                        close,
                        (self.param_close, self.invoke_close),
                    ),
                    self.invoke_close + "\n",
                )
                for name in names
            ]

        def required(request: ConstraintRequest) -> dict[str, Any]:
            return structural(
                sequence(const(self.start + "\n"), repeated(request, invokes(request, request.names)), const(self.end))
            )

        def auto(request: ConstraintRequest) -> dict[str, Any]:
            block = tag(self.start + "\n", repeated(request, invokes(request, list(request.schemas))), self.end)
            return triggered(request, [self.start], [block])

        return required, auto

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        required, auto = self.constraints()
        writer: Writer = self.write
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            writer,
            markers=(self.start, self.end, self.invoke_open, self.invoke_close, self.param_open, self.param_close),
            special_tokens=self.special_tokens,
            required_constraint=required,
            auto_constraint=auto,
            writes_name=writes_name,
            writes_value=writable_values((self.value_end,), self.param_close),
            typed_values=True,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )
