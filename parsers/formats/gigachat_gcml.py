# ruff: noqa: RUF001, RUF002  (GigaChat's marker is spelled with U+FF5C, the fullwidth bar)
"""`gigachat_gcml`: Sber GigaChat 3.5 GCML tool calls, values typed by their `string` attribute and
the tool's schema.

Grammar, as this machine reads it (`G` is `｜GCML｜`)::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := "<" G "tool_calls>" ws (invoke ws)* ["</" G "tool_calls>"]   # the end may be missing after invokes
    invoke    := "<" G "invoke" ATTRS ">" ws body ws "</" G "invoke>"
               | "<" G "invoke" ATTRS "/>"               # a call without arguments
    body      := (parameter ws)* | OBJECT                # parameters, or all arguments as one JSON object
    parameter := "<" G "parameter" ATTRS ">" VALUE "</" G "parameter>"
    ATTRS     := (\\s+ NAME '="' [^"]* '"')* \\s*          # at most 2 * max_name + 64 characters

GCML is DeepSeek's DSML (V4's dialect) with GigaChat's prefix `｜GCML｜` in place of `｜DSML｜`:
the same machine (`deepseek_dsml`'s stream with this one dialect), so ATTRS, VALUE, what ends a
value, the JSON body and every error case are as that format's section says. An invoke names its
tool in `name`; a parameter its key in `name` and what VALUE is in `string`: `"true"` is the raw
text verbatim (`02134` and `line 1\\n"quoted"` stay as written); `"false"` says JSON, typed by the
tool's schema (`core.typed_values`; text that is not JSON of an admitted type is kept as written,
as both engines keep it); any other `string` breaks the invoke. Several invokes in a block, and
several blocks, are parallel calls; a block with no invoke (`<｜GCML｜tool_calls></｜GCML｜tool_calls>`),
a parameter outside an invoke, and an invoke the output cuts off (unless only its closing tags are
missing after a complete parameter, as in `deepseek_dsml`) are text. Markdown code and
`<think>..</think>` are text, as in `deepseek_dsml`.

Decided where the engines differ: a parameter without `string` is typed by the schema here (vLLM's
`gigachat35` reads it as a string, SGLang's drops the parameter); with a string schema both agree.
An invoke without a name is text (vLLM drops it). SGLang's `gigachat35` drops a call to a tool the
request did not declare; here it is a call (logged), unless the operator sets
`TOOLCALL_PARSERS_UNDECLARED_TOOLS=text`. A trailing `</s>` or `<|message_sep|>` (end-of-turn
tokens a server does not show) is text, as in `gigachat_json`.

GigaChat 3 and 3.1 (`gigachat_json`) write one JSON call object after a role header or the
`<|function_call|>` token: another grammar, not a header of this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.typed_values import schema_types
from .call_blocks import raw_value
from .constraints import (
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
from .deepseek_dsml import DeepSeekDsmlStream, Dialect, dialect, writable_values
from .spec import Call, ConstraintRequest, Format

GCML = "｜GCML｜"
DIALECT = dialect("tool_calls", "", "", prefix=GCML)
TAGS = DIALECT.tags
PARAM_CLOSE = DIALECT.param_close


class GigaChatGcmlStream(DeepSeekDsmlStream):
    """Incremental parser for one response in GigaChat 3.5's GCML (`deepseek_dsml`'s machine with
    GigaChat's one dialect)."""

    format_name = "gigachat_gcml"
    tags = TAGS
    dialects: tuple[Dialect, ...] = (DIALECT,)


# -- the spec --------------------------------------------------------------------------------------


def _parameter(key: str, value: Any) -> str:
    kind = "true" if isinstance(value, str) else "false"
    return f'{TAGS.param_open} name="{key}" string="{kind}">{raw_value(value)}{PARAM_CLOSE}'


def write(calls: Sequence[Call]) -> str:
    """One block of invokes, a tag a line: strings raw with `string="true"`, everything else JSON
    with `string="false"`."""
    invokes = []
    for name, arguments in calls:
        params = "".join(_parameter(k, v) + "\n" for k, v in arguments.items())
        invokes.append(f'{TAGS.call_open} name="{name}">\n{params}{TAGS.call_close}\n')
    return f"{TAGS.start}\n{''.join(invokes)}{TAGS.end}"


def _value(key: str, schema: Any) -> Element:
    """One parameter of `schema`: raw text with `string="true"` where it admits a string, JSON of it
    with `string="false"` where it admits anything else (no types: either)."""
    types = schema_types(schema)
    raw = tag(
        f'{TAGS.param_open} name="{key}" string="true">', raw_text(schema, {"type": "any_text"}), PARAM_CLOSE + "\n"
    )
    as_json = tag(
        f'{TAGS.param_open} name="{key}" string="false">',
        finite_number(schema) or json_value(schema),
        PARAM_CLOSE + "\n",
    )
    if types == {"string"}:
        return raw
    return one_of([raw, as_json]) if not types or "string" in types else as_json


def _parameters(parameters: dict[str, Any], pinned: bool) -> Element:
    """A call's parameters: a pinned tool's declared keys in their order (the required ones present),
    then, unless the schema closes the object, any other keys with any text; an unpinned tool's: any
    keys with any text."""
    properties = parameters.get("properties") if pinned else None
    properties = properties if isinstance(properties, dict) else {}
    required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
    elements = [_value(k, s) if k in required else optional(_value(k, s)) for k, s in properties.items()]
    if not pinned or opens_object(parameters):
        free = sequence(
            const(f'{TAGS.param_open} name="'),
            regex(r'[^"<>]+" string="(true|false)'),
            tag('">', {"type": "any_text"}, PARAM_CLOSE + "\n"),
        )
        elements.append({"type": "star", "content": free})
    if not elements:
        return const("")
    return elements[0] if len(elements) == 1 else sequence(*elements)


def _block(request: ConstraintRequest, names: list[str]) -> Element:
    invokes = [
        tag(
            f'{TAGS.call_open} name="{name}">\n',
            _parameters(request.parameters(name), request.pins(name)),
            f"{TAGS.call_close}\n",
        )
        for name in names
    ]
    return tag(TAGS.start + "\n", repeated(request, invokes), TAGS.end)


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One block holding at least one invoke (at most one if `single`) that ends the output."""
    return structural(_block(request, request.names))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where each block tag opens invokes of declared tools that follow
    their schemas."""
    return triggered(request, [TAGS.start], [_block(request, list(request.schemas))])


def writes_name(name: str) -> bool:
    """`name="NAME"` has no escaping, so no quote."""
    return '"' not in name


FORMAT = Format(
    "gigachat_gcml",
    '<｜GCML｜tool_calls><｜GCML｜invoke name="f"><｜GCML｜parameter name="p" string="true">v</｜GCML｜parameter>'
    "</｜GCML｜invoke></｜GCML｜tool_calls> (GigaChat 3.5)",
    GigaChatGcmlStream,
    write,
    markers=(TAGS.start, TAGS.end, TAGS.call_open, TAGS.call_close, TAGS.param_open, PARAM_CLOSE),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=writes_name,
    writes_value=writable_values(DIALECT),
    typed_values=True,
    sglang_names=("gigachat35",),
    models="Sber GigaChat 3.5 (432B-A28B, Reasoning)",
)
