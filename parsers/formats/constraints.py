"""The pieces of xgrammar's structural tags the formats' constraints are built from, written once.

A constraint is a JSON-able dict in xgrammar's `structural_tag` language, which both engines hand
to xgrammar as it is. The formats compose these builders so each constraint reads like the format's
grammar, and so the two shapes every format offers are the same everywhere: `required` (the calls
at once) and strict `auto` (free text, where the format's openers start calls to declared tools,
`stop_after_first` when the request allows one call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.typed_values import pinned_strings, schema_types

if TYPE_CHECKING:
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
    text) and else JSON of its schema then `after`; then, where the schema opens the object
    (`opens_object`), any number of `other` (any other key, a declared one too). An unpinned tool:
    any number of `other`."""
    properties = parameters.get("properties") if pinned else None
    properties = properties if isinstance(properties, dict) else {}
    required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
    elements: list[Element] = []
    for key, schema in properties.items():
        types = schema_types(schema)
        if not types or "string" in types:
            value = raw_text(schema, text, after)
        else:
            value = finite_number(schema) or json_value(schema)
            value = sequence(value, const(after)) if after else value
        element = declared(key, value)
        elements.append(element if key in required else optional(element))
    if not pinned or opens_object(parameters):
        elements.append({"type": "star", "content": other})
    if not elements:
        return const("")
    return elements[0] if len(elements) == 1 else sequence(*elements)


_INTEGER = r"-?(0|[1-9][0-9]{0,299})"
_NUMBER = _INTEGER + r"(\.[0-9]{1,150})?|-?(0|[1-9][0-9]{0,16})(\.[0-9]{1,17})?[eE][-+]?([0-9]{1,2}|[12][0-9]{2})"
_BOUNDS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "enum", "const"})


def finite_number(schema: Any) -> Element | None:
    """A raw value of a plain `number` or `integer` schema as a number the parser reads back as one:
    at most 300 integer digits, 150 decimals, and with an exponent 17 digits and e±299 (so the value
    is a finite float, and shorter than the parsers' 512-character scalar bound). xgrammar's own
    JSON number is unbounded (`1e400`, which no float holds, and any number of digits), and its
    `minimum` / `maximum` on a number refuse every exponent. None for any other schema (JSON then)."""
    if not isinstance(schema, dict) or _BOUNDS & schema.keys():
        return None
    types = schema_types(schema)
    if types == frozenset({"integer"}):
        return regex(_INTEGER)
    if types in (frozenset({"number"}), frozenset({"number", "integer"})):
        return regex(_NUMBER)
    return None


def opens_object(parameters: dict[str, Any]) -> bool:
    """Whether a pinned tool's arguments may hold keys it does not declare, as xgrammar's JSON schema
    reads the schema in its strict mode: `additionalProperties` true or a schema, or no properties
    declared at all. Declared properties and nothing said close the object: an open one would let a
    declared key be written again with any value, which the parser reads last."""
    extra = parameters.get("additionalProperties")
    if extra is None:
        return not parameters.get("properties")
    return extra is not False


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


def ended(constraint: dict[str, Any]) -> dict[str, Any]:
    """A `required` / named constraint whose calls may be followed by one line break and the end of
    the output: where the calls are joined by a line break, the model's line break after a call
    would otherwise have to open another call, and a model that writes one repeats its call until
    `max_tokens` (seen through Anthropic Messages); the parser reads the break as trimmed text."""
    return structural(sequence(constraint["format"], optional(const("\n"))))


def held_free_text(
    constraint: dict[str, Any], think_pairs: Sequence[tuple[str, str]], other_openers: Sequence[tuple[str, str | None]]
) -> dict[str, Any]:
    """Strict `auto`'s free text, held to what the parser reads in it (every `triggered_tags` outside
    a call): a strict request must never get back a call its grammar did not hold.

    - Each of `other_openers` the parser reads as a call too: `(spelling, trigger)` offers the
      trigger's tags in that spelling as well; `(spelling, None)` keeps the spelling out of free text.
    - A think block (`think_pairs`, which the parser reads as text wherever it stands) is a tag of
      its own: a call drafted inside it fires no trigger, so the model cannot close the block inside
      a forced call's value and then write a call to any tool after it.

    Where the request allows one call (`stop_after_first`, which would count a think block as that
    call), the text is free text and think blocks with every trigger kept out, then at most one call.
    """

    def hold(node: Element) -> Element:
        kind = node.get("type")
        if kind == "triggered_tags":
            return _held(node, think_pairs, other_openers)
        if kind in ("sequence", "or"):
            return {**node, "elements": [hold(element) for element in node["elements"]]}
        if kind in ("optional", "star", "plus"):
            return {**node, "content": hold(node["content"])}
        return node

    return {**constraint, "format": hold(constraint["format"])}


def _held(
    node: Element, think_pairs: Sequence[tuple[str, str]], other_openers: Sequence[tuple[str, str | None]]
) -> Element:
    triggers, tags, excludes = list(node["triggers"]), list(node["tags"]), list(node.get("excludes", ()))
    for spelling, trigger in other_openers:
        if any(spelling.startswith(held) for held in triggers):
            continue
        if trigger is None:
            excludes.append(spelling)
        elif trigger in triggers:
            triggers.append(spelling)
            tags += [
                {**t, "begin": spelling + t["begin"][len(trigger) :]}
                for t in node["tags"]
                if t["begin"].startswith(trigger)
            ]
    thinks = [
        tag(open_, {"type": "any_text"}, close)
        for open_, close in think_pairs
        if not any(open_.startswith(held) or held.startswith(open_) for held in triggers)
    ]
    if not node.get("stop_after_first"):
        return {
            **node,
            "triggers": triggers + [t["begin"] for t in thinks],
            "tags": tags + thinks,
            "excludes": excludes,
        }
    text: Element = (
        {
            "type": "triggered_tags",
            "triggers": [t["begin"] for t in thinks],
            "tags": thinks,
            "excludes": excludes + triggers,
        }
        if thinks
        else {"type": "any_text", "excludes": excludes + triggers}
    )
    return sequence(text, optional(one_of(tags)))
