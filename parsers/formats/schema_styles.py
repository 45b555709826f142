"""What xgrammar's XML styles for a JSON schema (`minimax_m3_xml`, `glm_xml`, ...) can render.

Those styles write a tool's arguments as elements named by their keys, so they need fixed property
names: a schema without `properties` compiles as the empty object, and one with an open object, an
unconstrained member (`{}`) or additionalProperties is refused when the grammar is compiled (a bare
RuntimeError naming the keyword). A format asks here before it puts a schema into such a style, and
holds the tool to its envelope and name where the style cannot render it, so that a request never
fails on its constraint.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from .spec import ConstraintRequest


def styled_arguments(request: ConstraintRequest, name: str, style: str) -> dict[str, Any]:
    """Tool `name`'s arguments in `style` where the tool is pinned and the style renders its schema;
    else any text (the format's end tag closes it): only the envelope and the name are held."""
    schema = request.parameters(name)
    if request.pins(name) and isinstance(schema.get("properties"), dict) and _renders(style, json.dumps(schema)):
        return {"type": "json_schema", "json_schema": schema, "style": style}
    return {"type": "any_text"}


@functools.lru_cache(maxsize=256)
def _renders(style: str, schema: str) -> bool:
    try:
        import xgrammar
    except ImportError:  # no engine to constrain: the tag is only read, never compiled
        return True
    content = {"type": "json_schema", "json_schema": json.loads(schema), "style": style}
    tag = {"type": "structural_tag", "format": {"type": "tag", "begin": "<", "content": content, "end": ">"}}
    try:
        xgrammar.Grammar.from_structural_tag(json.dumps(tag))
    except Exception:  # xgrammar raises a bare RuntimeError naming the unsupported keyword
        return False
    return True
