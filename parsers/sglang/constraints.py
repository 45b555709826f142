"""Decoding constraints for `hermes_json` and `minimax_xml`, as structural tags in xgrammar's JSON
form, built like `formats/mistral_json.py` and `formats/tagged.py` build theirs.

vLLM constrains these two formats with its own `hermes` / `minimax` tags; SGLang 0.5.23 has no
model tag for Hermes (its `hermes` detector uses the legacy per-call tag) and its `minimax-m2`
detector has none at all, so the SGLang adapter builds them here, in the shape our chat templates
teach. Engine-neutral: plain dicts, no SGLang or xgrammar import.
"""

from __future__ import annotations

import json
from typing import Any

HERMES_BEGIN = '<tool_call>\n{{"name": {name}, "arguments": '
HERMES_END = "}\n</tool_call>"
MINIMAX_START, MINIMAX_END = "<minimax:tool_call>", "</minimax:tool_call>"


def _parameters(schemas: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    return schemas.get(name) or {"type": "object"}


def hermes_required_constraint(schemas: dict[str, dict[str, Any]], only: str | None, single: bool) -> dict[str, Any]:
    """At least one `<tool_call>\\n{"name": .., "arguments": ..}\\n</tool_call>` block (one per
    call, a newline between), to `only` if given, at most one if `single`."""
    names = [only] if only is not None else list(schemas)
    tags = [
        {
            "type": "tag",
            "begin": HERMES_BEGIN.format(name=json.dumps(name, ensure_ascii=False)),
            "content": {"type": "json_schema", "json_schema": _parameters(schemas, name)},
            "end": HERMES_END,
        }
        for name in names
    ]
    body = {"type": "tags_with_separator", "tags": tags, "separator": "\n", "at_least_one": True}
    return {"type": "structural_tag", "format": {**body, "stop_after_first": single}}


def _invokes(schemas: dict[str, dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """One `<invoke name="f">` tag per tool, its parameters written as xgrammar's `minimax_xml`
    style renders a JSON schema: `<parameter name="p">value</parameter>` lines."""
    return [
        {
            "type": "tag",
            "begin": f'<invoke name="{name}">\n',
            "content": {"type": "json_schema", "json_schema": _parameters(schemas, name), "style": "minimax_xml"},
            "end": "</invoke>\n",
        }
        for name in names
    ]


def minimax_required_constraint(schemas: dict[str, dict[str, Any]], only: str | None, single: bool) -> dict[str, Any]:
    """One `<minimax:tool_call>` block holding at least one invoke (to `only` if given, at most
    one if `single`)."""
    names = [only] if only is not None else list(schemas)
    invokes = {"type": "tags_with_separator", "tags": _invokes(schemas, names), "separator": ""}
    elements = [
        {"type": "const_string", "value": MINIMAX_START + "\n"},
        {**invokes, "at_least_one": True, "stop_after_first": single},
        {"type": "const_string", "value": MINIMAX_END},
    ]
    return {"type": "structural_tag", "format": {"type": "sequence", "elements": elements}}


def minimax_auto_constraint(schemas: dict[str, dict[str, Any]], single: bool) -> dict[str, Any]:
    """Free text, where each `<minimax:tool_call>` opens a block of invokes that follow the tools'
    schemas (strict `tool_choice="auto"`)."""
    invokes = {"type": "tags_with_separator", "tags": _invokes(schemas, list(schemas)), "separator": ""}
    block = {
        "type": "tag",
        "begin": MINIMAX_START + "\n",
        "content": {**invokes, "at_least_one": True, "stop_after_first": single},
        "end": MINIMAX_END,
    }
    body = {"type": "triggered_tags", "triggers": [MINIMAX_START], "tags": [block], "stop_after_first": single}
    return {"type": "structural_tag", "format": body}
