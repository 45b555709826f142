"""One vLLM tool parser per format: each only names its format (and how vLLM may constrain it)."""

from __future__ import annotations

from .adapter import FormatToolParser


class HermesJsonToolParser(FormatToolParser):
    """`--tool-call-parser hermes_json`. For `tool_choice="required"` or a named tool, vLLM's own
    `hermes` structural tag constrains decoding to `<tool_call>{"name": .., "arguments": ..}</tool_call>`,
    which is exactly what this parser reads."""

    format_name = "hermes_json"
    structural_tag_model = "hermes"
    supports_required_and_named = False


class MiniMaxXmlToolParser(FormatToolParser):
    """`--tool-call-parser minimax_xml`. For `tool_choice="required"` or a named tool, vLLM's own
    `minimax` structural tag constrains decoding to `<minimax:tool_call><invoke ...>` blocks."""

    format_name = "minimax_xml"
    structural_tag_model = "minimax"
    supports_required_and_named = False
