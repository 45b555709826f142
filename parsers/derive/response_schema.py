"""The older transformers `response_schema`, compiled into a format of ours.

Before response templates, transformers read a reply with a JSON schema whose nodes carry regular
expressions: `x-regex` (a search, its groups the node's fields), `x-regex-iterator` (one item per
match) and `x-regex-key-value` (a dict of `key` / `value` matches), then `x-parser` on the text
found (`json`, or a model's own, as Gemma 4's `gemma4-tool-call`). Gemma 4's first checkpoints
ship one in `tokenizer_config.json`; transformers 5.13+ drops it silently, so without this such a
checkpoint has no declared format at all.

The calls are the `tool_calls` node, an array whose iterator is `START(.*?)END` (START and END
literal markers, whitespace around the group allowed). What each match holds decides the family:

- the call object as JSON (`x-parser: json` on the item, or on its `function`, with no transform
  or the one that wraps the object as the function): JSON in markers (`hermes_json`'s family),
  between START and END;
- `call:NAME{..}` in Gemma 4's dialect (`x-parser: gemma4-tool-call` on the arguments), START and
  END Gemma's `<|tool_call>` / `<tool_call|>`: `gemma_calls`.

The reasoning's markers come from a `thinking` (or `reasoning_content`) node's own iterator-shaped
`x-regex` (`OPEN(.*?)CLOSE`), else they are `<think>` .. `</think>`, which a top-level `x-regex`
that captures the reasoning must then spell; a `content` node with a regex of its own (content
wrapped in markers) is refused, as ours would leave the markers in the content. Anything else is
refused with a ValueError naming the node and what no family reads.
"""

from __future__ import annotations

import re
from typing import Any

from ..formats.families.json_blocks import JsonBlockFormat, JsonBlockTags
from ..formats.spec import Format
from .pieces import Literal, pattern_pieces, trimmed
from .probe import check_reads_back, check_think_markers

_CALL_GROUPS = ("(.*?)", "(.+?)")
"""The unnamed group that holds one call's text in the iterator."""
_GEMMA_FUNCTION = r"call\:(?P<name>\w+)(?P<arguments>\{.*\})"
_WRAP_AS_FUNCTION = re.compile(r"\{\s*type\s*:\s*'function'\s*,\s*function\s*:\s*@\s*\}")
"""The jmespath transform that makes the parsed object the call's function."""


def is_response_schema(obj: Any) -> bool:
    """Whether `obj` is a response schema (a JSON schema's `properties` or `x-regex`, no template's
    `fields`)."""
    return isinstance(obj, dict) and "fields" not in obj and ("x-regex" in obj or "properties" in obj)


def from_response_schema(schema: dict[str, Any], name: str) -> Format:
    """The format a response schema describes (module docstring); ValueError naming the node and
    the reason where no family of ours reads it."""
    properties = _node(schema, "properties", "response schema")
    calls = properties.get("tool_calls")
    if not isinstance(calls, dict):
        raise ValueError("response schema has no 'tool_calls' property: it reads no calls")
    scope = "response schema 'tool_calls'"
    start, end = _iterator_markers(calls.get("x-regex-iterator"), scope)
    item = _node(calls, "items", scope)
    function = _node(_node(item, "properties", scope), "function", scope)
    arguments = _node(_node(function, "properties", scope), "arguments", scope)
    if function.get("x-regex") == _GEMMA_FUNCTION and arguments.get("x-parser") == "gemma4-tool-call":
        from ..formats.gemma_calls import FORMAT as GEMMA

        if (start, end) != (GEMMA.markers[0], GEMMA.markers[1]):
            raise ValueError(f"{scope}: Gemma 4's dialect is read between its own markers, not {start!r} .. {end!r}")
        return GEMMA
    if _parses_call_object(item, scope) or _parses_call_object(function, scope):
        spec = JsonBlockFormat(
            name,
            f'{start}{{"name": .., "arguments": {{..}}}}{end}, from a response schema',
            JsonBlockTags(start, end),
            think=_think_pair(schema, properties),
            models="a model with this response schema",
        )
        fmt = spec.format(__name__)
        check_think_markers(fmt, "response schema")
        check_reads_back(fmt, "response schema")
        return fmt
    raise ValueError(
        f"{scope}: each call is read by none of our families (JSON call objects, or Gemma 4's "
        f"call:NAME{{..}} with x-parser gemma4-tool-call); its item: {str(item)[:160]}"
    )


def _iterator_markers(pattern: Any, scope: str) -> tuple[str, str]:
    """START and END of an iterator `START(.*?)END`, each one literal marker."""
    group = next((g for g in _CALL_GROUPS if isinstance(pattern, str) and pattern.count(g) == 1), None)
    if group is None:
        raise ValueError(f"{scope}: its pattern must be START(.*?)END, not {str(pattern)[:120]!r}")
    before, after = pattern.split(group)
    markers = []
    for side, text in (("start", before), ("end", after)):
        pieces = trimmed(pattern_pieces(text, f"{scope} {side}"))
        if len(pieces) != 1 or not isinstance(pieces[0], Literal) or not pieces[0].text.strip():
            raise ValueError(f"{scope}: the iterator's {side} must be one literal marker, not {text!r}")
        markers.append(pieces[0].text)
    if markers[0].startswith(markers[1]) or markers[1].startswith(markers[0]):
        raise ValueError(f"{scope}: the markers {markers[0]!r} and {markers[1]!r} cannot be told apart")
    return markers[0], markers[1]


def _node(parent: dict[str, Any], key: str, scope: str) -> dict[str, Any]:
    """`parent[key]`, an object (an empty one where it is missing); ValueError where it is not one."""
    node = parent.get(key, {})
    if not isinstance(node, dict):
        raise ValueError(f"{scope}: '{key}' must be an object, not {type(node).__name__}")
    return node


def _parses_call_object(node: dict[str, Any], scope: str) -> bool:
    """A node that parses its text as the call object: `x-parser: json`, with no transform, or the
    one that wraps the object as the call's function."""
    if node.get("x-parser") != "json" or "x-regex" in node:
        return False
    transform = _node(node, "x-parser-args", scope).get("transform")
    return transform is None or (isinstance(transform, str) and bool(_WRAP_AS_FUNCTION.fullmatch(transform)))


def _think_pair(schema: dict[str, Any], properties: dict[str, Any]) -> tuple[str, str]:
    """The reasoning's markers (module docstring)."""
    content = properties.get("content")
    if isinstance(content, dict) and ("x-regex" in content or "x-regex-iterator" in content):
        raise ValueError(
            "response schema 'content': a content regex of its own (content wrapped in markers) is read "
            "by none of our families, which would leave its markers in the content"
        )
    for key in ("thinking", "reasoning_content", "reasoning"):
        node = properties.get(key)
        if isinstance(node, dict) and "x-regex" in node:
            return _iterator_markers(node["x-regex"], f"response schema {key!r} (its x-regex)")
    top = schema.get("x-regex")
    captures = isinstance(top, str) and any(f"(?P<{key}>" in top for key in ("thinking", "reasoning_content"))
    if captures and not ("<think>" in top and re.search(r"<\\?/think>", top)):
        raise ValueError(
            "response schema: its x-regex captures the reasoning between markers other than <think> .. "
            "</think>, which no node of it names"
        )
    return ("<think>", "</think>")
