"""Tool-call parsers for LLM serving engines: exact, chunking-proof and linear.

from toolcall_parsers import get_format, parse

p = get_format("hermes_json").stream(tools=tools)
events = p.feed(delta) ...; events += p.close()
result = parse("hermes_json", text, tools=tools)   # .content, .calls
fmt = from_response_template(tokenizer.response_template)   # a model's own, as a format of ours
"""

from __future__ import annotations

from typing import Any

from .core.events import CallArgs, CallEnd, CallStart, Event, ParseResult, Text, ToolCall, build_result
from .core.ids import IdFactory
from .derive.chat_template import from_chat_template
from .derive.response_template import from_response_template, to_response_template
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
    "from_chat_template",
    "from_response_template",
    "get_format",
    "parse",
    "to_response_template",
]


def parse(
    fmt: str | Format, text: str, tools: Any = None, id_factory: IdFactory | None = None, **options: Any
) -> ParseResult:
    """Parse a finished response: the same machine as streaming, fed the whole text at once. `fmt` is
    a registered format's name or a `Format` (one `from_response_template` made)."""
    stream = (fmt if isinstance(fmt, Format) else get_format(fmt)).stream(tools, id_factory, **options)
    return build_result(stream.feed(text) + stream.close())
