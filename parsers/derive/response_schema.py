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

Anything else is refused with a ValueError naming the node and what no family reads. The
reasoning is the family's think pair: a schema's thinking regex spells it inside a larger pattern
that names no marker on its own.
"""

from __future__ import annotations

import re
from typing import Any

from ..formats.families.json_blocks import JsonBlockFormat, JsonBlockTags
from ..formats.spec import Format
from .pieces import Literal, pattern_pieces, trimmed
from .probe import check_reads_back

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
    calls = schema.get("properties", {}).get("tool_calls")
    if not isinstance(calls, dict):
        raise ValueError("response schema has no 'tool_calls' property: it reads no calls")
    scope = "response schema 'tool_calls'"
    start, end = _iterator_markers(calls.get("x-regex-iterator"), scope)
    item = calls.get("items") if isinstance(calls.get("items"), dict) else {}
    function = item.get("properties", {}).get("function", {})
    if not isinstance(function, dict):
        raise ValueError(f"{scope}: its items' 'function' must be an object")
    arguments = function.get("properties", {}).get("arguments", {})
    if function.get("x-regex") == _GEMMA_FUNCTION and arguments.get("x-parser") == "gemma4-tool-call":
        from ..formats.gemma_calls import FORMAT as GEMMA

        if (start, end) != (GEMMA.markers[0], GEMMA.markers[1]):
            raise ValueError(f"{scope}: Gemma 4's dialect is read between its own markers, not {start!r} .. {end!r}")
        return GEMMA
    if _parses_call_object(item) or _parses_call_object(function):
        spec = JsonBlockFormat(
            name,
            f'{start}{{"name": .., "arguments": {{..}}}}{end}, from a response schema',
            JsonBlockTags(start, end),
            models="a model with this response schema",
        )
        fmt = spec.format(__name__)
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
        raise ValueError(f"{scope}: its x-regex-iterator must be START(.*?)END, not {pattern!r}")
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


def _parses_call_object(node: Any) -> bool:
    """A node that parses its text as the call object: `x-parser: json`, with no transform, or the
    one that wraps the object as the call's function."""
    if not isinstance(node, dict) or node.get("x-parser") != "json" or "x-regex" in node:
        return False
    transform = node.get("x-parser-args", {}).get("transform")
    return transform is None or bool(_WRAP_AS_FUNCTION.fullmatch(transform))
