"""The pieces of xgrammar's structural tags the formats' constraints are built from, written once.

A constraint is a JSON-able dict in xgrammar's `structural_tag` language, which both engines hand
to xgrammar as it is. The formats compose these builders so each constraint reads like the format's
grammar, and so the two shapes every format offers are the same everywhere: `required` (the calls
at once) and strict `auto` (free text, where the format's openers start calls to declared tools,
`stop_after_first` when the request allows one call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.typed_values import pinned_strings, schema_types
from .spec import ConstraintRequest

Element = dict[str, Any]


def const(value: str) -> Element:
    return {"type": "const_string", "value": value}


def regex(pattern: str) -> Element:
    return {"type": "regex", "pattern": pattern}


def json_value(schema: Any, style: str | None = None) -> Element:
    """A value of `schema`: JSON, or in one of xgrammar's XML styles (`qwen_xml`, `minimax_xml`, ..)."""
    return {"type": "json_schema", "json_schema": schema, **({"style": style} if style else {})}


def raw_text(schema: Any, free: Element, after: str = "") -> Element:
    """A raw (unquoted) value of a schema that admits a string, as the XML formats write one: `free`
    (the format's any-text element, which holds the value's framing too), or, where the schema lists
    the strings it allows (`pinned_strings`), exactly one of them and then `after` (the framing the
    format writes before the close), so a strict tool's enum holds where xgrammar has no style."""
    pinned = pinned_strings(schema)
    if pinned is None:
        return free
    choices = one_of([const(value) for value in pinned if value])
    member = optional(choices) if "" in pinned else choices
    return sequence(member, const(after)) if after else member


def declared_arguments(
    parameters: dict[str, Any],
    pinned: bool,
    declared: Callable[[str, Element], Element],
    other: Element,
    text: Element,
    after: str = "",
) -> Element:
    """A call's arguments in a format's own tags, for spellings xgrammar has no style for: a pinned
    tool's declared keys in their order (the required ones present), each `declared(key, value)`,
    the value `raw_text(schema, text, after)` where its schema admits a string (the raw value is that
    text) and else JSON of its schema then `after`; then, unless the schema closes the object, any
    number of `other` (any other key, a declared one too). An unpinned tool: any number of `other`."""
    properties = parameters.get("properties") if pinned else None
    properties = properties if isinstance(properties, dict) else {}
    required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
    elements: list[Element] = []
    for key, schema in properties.items():
        types = schema_types(schema)
        if not types or "string" in types:
            value = raw_text(schema, text, after)
        else:
            value = sequence(json_value(schema), const(after)) if after else json_value(schema)
        element = declared(key, value)
        elements.append(element if key in required else optional(element))
    if not pinned or parameters.get("additionalProperties", True) is not False:
        elements.append({"type": "star", "content": other})
    if not elements:
        return const("")
    return elements[0] if len(elements) == 1 else sequence(*elements)


def optional(content: Element) -> Element:
    return {"type": "optional", "content": content}


def sequence(*elements: Element) -> Element:
    return {"type": "sequence", "elements": list(elements)}


def one_of(elements: Sequence[Element]) -> Element:
    return elements[0] if len(elements) == 1 else {"type": "or", "elements": list(elements)}


def tag(begin: str, content: Element, end: str | Sequence[str]) -> Element:
    return {"type": "tag", "begin": begin, "content": content, "end": end if isinstance(end, str) else list(end)}


def repeated(request: ConstraintRequest, tags: Sequence[Element], separator: str = "") -> Element:
    """One or more of `tags` (at most one where the request allows a single call)."""
    return {
        "type": "tags_with_separator",
        "tags": list(tags),
        "separator": separator,
        "at_least_one": True,
        "stop_after_first": request.single,
    }


def structural(body: Element) -> dict[str, Any]:
    """The constraint: `body` is the whole output."""
    return {"type": "structural_tag", "format": body}


def triggered(request: ConstraintRequest, triggers: Sequence[str], tags: Sequence[Element]) -> dict[str, Any]:
    """Strict `auto`'s constraint: free text, where each of `triggers` may begin one of `tags` (once,
    where the request allows a single call)."""
    body = {"type": "triggered_tags", "triggers": list(triggers), "tags": list(tags)}
    return structural({**body, "stop_after_first": request.single})


def one_call_in_text(opener: str, not_a_call: Element, excludes: Sequence[str], call: Element) -> dict[str, Any]:
    """Strict `auto` with one call allowed, for formats that read a call at any `opener` in text
    (Llama's `{` and `[`): text where each opener is held to `not_a_call` (what the parser keeps as
    text) and `excludes` never come, then at most one `call`, then such text again. Not text, an
    optional call, text: a string the text excludes could then straddle the two texts."""
    text = {
        "type": "triggered_tags",
        "triggers": [opener],
        "tags": [tag(opener, not_a_call, "")],
        "excludes": list(excludes),
    }
    return structural(sequence(text, optional(sequence(call, text))))
