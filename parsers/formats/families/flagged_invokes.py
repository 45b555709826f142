"""The flagged-invoke family: DeepSeek's DSML grammar in one dialect, each parameter flagged by its
`string` attribute (`"true"`: the raw text; `"false"`: JSON, typed by the tool's schema).
`deepseek_dsml`'s docstring states the grammar and every decided case; the machine is its stream
with one `Dialect` (the six tags), and a format of the family is one `FlaggedInvokes` value, from
which its stream class, writer, `required` and strict `auto` constraints and `Format` come:
`gigachat_gcml` (GigaChat 3.5's prefix), and the formats derived from chat templates that write
such invokes (DeepSeek V3.2's and V4's own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...core.typed_values import schema_types
from ..call_blocks import XmlBlockTags, raw_value
from ..constraints import (
    Element,
    const,
    finite_number,
    json_value,
    one_of,
    opens_object,
    optional,
    raw_text,
    regex,
    repeated,
    sequence,
    structural,
    tag,
    triggered,
)
from ..deepseek_dsml import DeepSeekDsmlStream, Dialect, writable_values
from ..minimax_xml import writes_name
from ..spec import Call, Constraint, ConstraintRequest, Format, Writer
from . import format_stream


def flagged_dialect(
    start: str, end: str, invoke_open: str, invoke_close: str, param_open: str, param_close: str
) -> Dialect:
    """The dialect of six tags: a block's, an invoke's (its open without its attributes) and a
    parameter's."""
    return Dialect(XmlBlockTags(start, end, invoke_open, invoke_close, param_open, "invoke"), param_close, "")


@dataclass(frozen=True)
class FlaggedInvokes:
    """One format of the family, as data: its `dialect` (the six tags), `think` the think pair read
    as text; the rest is the `Format`'s own (`spec.Format`)."""

    name: str
    summary: str
    dialect: Dialect
    think: tuple[str, str] = ("<think>", "</think>")
    special_tokens: tuple[str, ...] = ()
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    @property
    def tags(self) -> XmlBlockTags:
        return self.dialect.tags

    def stream_class(self, module: str) -> type[DeepSeekDsmlStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            DeepSeekDsmlStream,
            self.name,
            module,
            "the flagged-invoke family",
            self.think,
            tags=self.tags,
            dialects=(self.dialect,),
        )

    def _parameter(self, key: str, value: Any) -> str:
        kind = "true" if isinstance(value, str) else "false"
        return f'{self.tags.param_open} name="{key}" string="{kind}">{raw_value(value)}{self.dialect.param_close}'

    def write(self, calls: Sequence[Call]) -> str:
        """One block of invokes, a tag a line: strings raw with `string="true"`, everything else JSON
        with `string="false"`."""
        tags, invokes = self.tags, []
        for name, arguments in calls:
            params = "".join(self._parameter(k, v) + "\n" for k, v in arguments.items())
            invokes.append(f'{tags.call_open} name="{name}">\n{params}{tags.call_close}\n')
        return f"{tags.start}\n{''.join(invokes)}{tags.end}"

    @property
    def _text(self) -> Element:
        """A raw value: any text holding neither a parameter's close nor an invoke's, either of
        which the parser may end the value at (an invoke's close there means the model dropped the
        parameter's, and the invoke breaks), so no value hides the end of its invoke and a call
        after it."""
        return {"type": "any_text", "excludes": [self.dialect.param_close, self.tags.call_close]}

    def _value(self, key: str, schema: Any) -> Element:
        """One parameter of `schema`: raw text with `string="true"` where it admits a string, JSON
        of it with `string="false"` where it admits anything else (no types: either)."""
        param_open, close = self.tags.param_open, self.dialect.param_close + "\n"
        types = schema_types(schema)
        raw = tag(f'{param_open} name="{key}" string="true">', raw_text(schema, self._text), close)
        as_json = tag(f'{param_open} name="{key}" string="false">', finite_number(schema) or json_value(schema), close)
        if types == {"string"}:
            return raw
        return one_of([raw, as_json]) if not types or "string" in types else as_json

    def _parameters(self, parameters: dict[str, Any], pinned: bool) -> Element:
        """A call's parameters: a pinned tool's declared keys in their order (the required ones
        present), then, unless the schema closes the object, any other keys with any text; an
        unpinned tool's: any keys with any text."""
        properties = parameters.get("properties") if pinned else None
        properties = properties if isinstance(properties, dict) else {}
        required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
        elements = [self._value(k, s) if k in required else optional(self._value(k, s)) for k, s in properties.items()]
        if not pinned or opens_object(parameters):
            free = sequence(
                const(f'{self.tags.param_open} name="'),
                regex(r'[^"<>]+" string="(true|false)'),
                tag('">', self._text, self.dialect.param_close + "\n"),
            )
            elements.append({"type": "star", "content": free})
        if not elements:
            return const("")
        return elements[0] if len(elements) == 1 else sequence(*elements)

    def _block(self, request: ConstraintRequest, names: list[str]) -> Element:
        tags = self.tags
        invokes = [
            tag(
                f'{tags.call_open} name="{name}">\n',
                self._parameters(request.parameters(name), request.pins(name)),
                f"{tags.call_close}\n",
            )
            for name in names
        ]
        return tag(tags.start + "\n", repeated(request, invokes), tags.end)

    def constraints(self) -> tuple[Constraint, Constraint]:
        """`required`: one block holding at least one invoke (at most one if `single`) that ends
        the output; strict `auto`: free text, where each block tag opens invokes of declared tools
        that follow their schemas."""

        def required(request: ConstraintRequest) -> dict[str, Any]:
            return structural(self._block(request, request.names))

        def auto(request: ConstraintRequest) -> dict[str, Any]:
            return triggered(request, [self.tags.start], [self._block(request, list(request.schemas))])

        return required, auto

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        tags = self.tags
        required, auto = self.constraints()
        writer: Writer = self.write
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            writer,
            markers=(tags.start, tags.end, tags.call_open, tags.call_close, tags.param_open, self.dialect.param_close),
            special_tokens=self.special_tokens,
            required_constraint=required,
            auto_constraint=auto,
            writes_name=writes_name,
            writes_value=writable_values(self.dialect),
            typed_values=True,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )
