"""Tool-call parsers for LLM serving engines: exact, chunking-proof and linear.

from toolcall_parsers import get_format, parse

p = get_format("hermes_json").stream(tools=tools)
events = p.feed(delta) ...; events += p.close()
result = parse("hermes_json", text, tools=tools)   # .content, .calls
"""

from __future__ import annotations

from typing import Any

from .core.events import CallArgs, CallEnd, CallStart, Event, ParseResult, Text, ToolCall, build_result
from .core.ids import IdFactory
from .formats import FORMATS, Format, get_format

__all__ = [
    "FORMATS",
    "CallArgs",
    "CallEnd",
    "CallStart",
    "Event",
    "Format",
    "ParseResult",
    "Text",
    "ToolCall",
    "get_format",
    "parse",
]


def parse(name: str, text: str, tools: Any = None, id_factory: IdFactory | None = None, **options: Any) -> ParseResult:
    """Parse a finished response: the same machine as streaming, fed the whole text at once."""
    stream = get_format(name).stream(tools, id_factory, **options)
    return build_result(stream.feed(text) + stream.close())
