"""A test-only `--tool-parser-plugin`: one server serves every registered format, one per request.

A `vllm serve` takes one `--tool-call-parser`; a server per format would cost the suite about 20 s
per format. The endpoint tests instead name the format in the request's first tool's description
(`[format: NAME]`), and `--tool-call-parser toolcall_parsers_any` returns an instance of that
format's own vLLM parser class (`toolcall_parsers.vllm.parsers.PARSER_CLASSES`), the object
`--tool-call-parser NAME` would build. vLLM builds a tool parser per request with the request's
tools on every endpoint, and reads the constraint attributes (`supports_required_and_named`,
`structural_tag_model`) from that instance, so `tool_choice` and strict tools take the format's own
path too. Requests whose tools name no format (and vLLM's start-up check, which has no tools) get
`hermes_json`'s class. `[format: builtin:NAME]` builds vLLM's own parser NAME instead, so
`scripts/endpoint_scores.py` runs the same cases through the built-ins. Loading through the entry
point is proven on the real `--tool-call-parser hermes_json` server (tests/test_e2e_hermes_json.py).
"""

from __future__ import annotations

import re
from typing import Any

from toolcall_parsers.vllm.adapter import _function
from toolcall_parsers.vllm.parsers import PARSER_CLASSES
from vllm.tool_parsers import ToolParser, ToolParserManager

NAME = "toolcall_parsers_any"
_FORMAT = re.compile(r"\[format: ((?:builtin:)?[\w-]+)\]")


def format_of(tools: list[Any] | None) -> str:
    """The format a request's tools name (see the module docstring); `hermes_json` when none."""
    description = (_function(tools[0]).get("description") or "") if tools else ""
    m = _FORMAT.search(description)
    if m is None:
        return "hermes_json"
    if m.group(1) not in PARSER_CLASSES and not m.group(1).startswith("builtin:"):
        raise ValueError(f"{NAME}: no registered format {m.group(1)!r}")
    return m.group(1)


@ToolParserManager.register_module(NAME)
class AnyFormatToolParser(ToolParser):
    """Builds the parser of the format the request's tools name."""

    def __new__(cls, tokenizer: Any = None, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        name = format_of(tools)
        if name.startswith("builtin:"):
            return ToolParserManager.get_tool_parser(name.removeprefix("builtin:"))(tokenizer, tools)
        return PARSER_CLASSES[name](tokenizer, tools)
