"""A test-only `--tool-parser-plugin`: one server serves every registered format, one per request.

A `vllm serve` takes one `--tool-call-parser`; starting a server per format would cost the suite
about 20 s per format. The endpoint tests instead name the format in the request's first tool's
description (`[format: NAME]`), and `--tool-call-parser toolcall_parsers_any` builds that format's
own vLLM parser class (`toolcall_parsers.vllm.parsers.PARSER_CLASSES`), the class
`--tool-call-parser NAME` would build. vLLM builds a tool parser per request with the request's
tools, on every endpoint (Chat Completions, Responses, Messages), so the choice is per request.
Requests whose tools name no format (and vLLM's start-up check, which has no tools) get
`hermes_json`'s class. What only the entry point or a format's class attributes prove (`tool_choice="required"`, named
tools, strict) runs on the real `--tool-call-parser hermes_json` server.
"""

from __future__ import annotations

import re
from typing import Any

from toolcall_parsers.vllm.adapter import _function
from toolcall_parsers.vllm.parsers import PARSER_CLASSES
from vllm.tool_parsers import ToolParser, ToolParserManager

NAME = "toolcall_parsers_any"
_FORMAT = re.compile(r"\[format: (\w+)\]")


def format_of(tools: list[Any] | None) -> str:
    """The format a request's tools name (see the module docstring); `hermes_json` when none."""
    description = (_function(tools[0]).get("description") or "") if tools else ""
    m = _FORMAT.search(description)
    if m is None:
        return "hermes_json"
    if m.group(1) not in PARSER_CLASSES:
        raise ValueError(f"{NAME}: no registered format {m.group(1)!r}")
    return m.group(1)


@ToolParserManager.register_module(NAME)
class AnyFormatToolParser(ToolParser):
    """Builds the parser of the format the request's tools name."""

    def __new__(cls, tokenizer: Any = None, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        return PARSER_CLASSES[format_of(tools)](tokenizer, tools)
