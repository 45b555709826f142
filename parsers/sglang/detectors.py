"""One SGLang detector per format: each only names its format and how SGLang may constrain it."""

from __future__ import annotations

import re
from typing import Any

from ..formats.llama_json import PYTHON_TAG
from ..formats.llama_json import required_constraint as llama_json_constraint
from ..formats.markdown_tools import required_constraint as markdown_constraint
from ..formats.mistral_json import ARGS, MARKER
from ..formats.mistral_json import required_constraint as mistral_constraint
from ..formats.qwen_xml import auto_constraint as qwen_auto_constraint
from ..formats.qwen_xml import required_constraint as qwen_required_constraint
from ..formats.tagged import required_constraint as tagged_constraint
from ..formats.xml_tools import START as XML_TOOLS_START
from ..formats.xml_tools import required_constraint as xml_tools_constraint
from .adapter import FormatDetector
from .constraints import (
    hermes_required_constraint,
    minimax_auto_constraint,
    minimax_required_constraint,
)


class HermesJsonDetector(FormatDetector):
    """`--tool-call-parser hermes_json`. `tool_choice="required"` or a named tool constrain
    decoding to `<tool_call>\\n{"name": .., "arguments": ..}\\n</tool_call>` blocks."""

    format_name = "hermes_json"
    structure_begin = '<tool_call>\n{{"name": "{name}", "arguments": '
    structure_end = "}\n</tool_call>"
    structure_trigger = "<tool_call>"

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return hermes_required_constraint(schemas, only, single)


class MiniMaxXmlDetector(FormatDetector):
    """`--tool-call-parser minimax_xml`. `tool_choice="required"` or a named tool constrain
    decoding to one `<minimax:tool_call>` block of `<invoke>`s whose parameters follow the schema;
    strict `auto` constrains each block the model opens."""

    format_name = "minimax_xml"

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return minimax_required_constraint(schemas, only, single)

    def _auto_constraint(self, schemas: dict[str, dict[str, Any]], single: bool) -> dict[str, Any] | None:
        return minimax_auto_constraint(schemas, single)


class QwenXmlDetector(FormatDetector):
    """`--tool-call-parser qwen_xml`. `tool_choice="required"` or a named tool constrain decoding to
    `<tool_call>` blocks (one function each) whose parameters follow the schema; strict `auto`
    constrains each call the model opens."""

    format_name = "qwen_xml"

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return qwen_required_constraint(schemas, only, single)

    def _auto_constraint(self, schemas: dict[str, dict[str, Any]], single: bool) -> dict[str, Any] | None:
        return qwen_auto_constraint(schemas, single)


_V11: dict[int, tuple[Any, bool]] = {}
"""Per tokenizer (kept alive here, so its id() stays its own): whether `[ARGS]` is one token."""


def _has_args_token(tokenizer: Any) -> bool:
    """Whether the tokenizer has Mistral's v11 `[ARGS]` token. Looked up once per tokenizer, since
    a detector is made per request and `get_vocab()` copies the whole vocabulary. Without a
    tokenizer, v11 (the current generation) is assumed."""
    if tokenizer is None:
        return True
    entry = _V11.get(id(tokenizer))
    if entry is None or entry[0] is not tokenizer:
        try:
            found = tokenizer.get_vocab().get(ARGS) is not None
        except Exception:
            found = True
        entry = _V11[id(tokenizer)] = (tokenizer, found)
    return entry[1]


class MistralJsonDetector(FormatDetector):
    """`--tool-call-parser mistral_json`: every Mistral generation, told apart by the text.
    SGLang gives every call its own `call_<24 hex>` id (a `[CALL_ID]` the model wrote is not
    kept); our template cuts history ids to Mistral's nine characters. SGLang hands detectors no
    token ids, so a `[TOOL_CALLS]` is judged by what follows it, streamed or not.
    `tool_choice="required"` or a named tool constrain decoding to `[TOOL_CALLS]name[ARGS]{..}`
    (tokenizers with `[ARGS]`) or `[TOOL_CALLS][{..}]`."""

    format_name = "mistral_json"
    structure_trigger = MARKER

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__(tokenizer)
        self._v11 = _has_args_token(tokenizer)
        if self._v11:
            self.structure_begin = MARKER + "{name}" + ARGS
        else:
            self.structure_begin = MARKER + '[{{"name": "{name}", "arguments": '
            self.structure_end = "}]"

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return mistral_constraint(schemas, only, single, v11=self._v11)


class TaggedDetector(FormatDetector):
    """`--tool-call-parser tagged`: our compact `<TOOL_CALLS>` format, one `name {json}` per line.
    `tool_choice="required"` or a named tool constrain decoding to that block."""

    format_name = "tagged"
    structure_begin = "<TOOL_CALLS>\n{name} "
    structure_end = "\n</TOOL_CALLS>"
    structure_trigger = "<TOOL_CALLS>"

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return tagged_constraint(schemas, only, single)


_LIST_HEAD = re.compile(r"\[\s*[^\s\[\]()]+\(")
"""`[` then something name-like then `(`: where a call list may start (a superset of `[NAME(`)."""


class LlamaPythonicDetector(FormatDetector):
    """`--tool-call-parser llama_pythonic`: Llama 3.2 / 4 pythonic call lists. There is no
    Python grammar to constrain to: for `tool_choice="required"` or a named tool SGLang's own
    JSON-array constraint and reader apply (`supports_structural_tag` is False)."""

    format_name = "llama_pythonic"

    def _may_call_declared_tools(self, text: str) -> bool:
        # Mid-line (after prose), a list calls only declared tools: see formats/llama_pythonic.py.
        return _LIST_HEAD.search(text) is not None

    def supports_structural_tag(self) -> bool:
        return False


class MarkdownToolsDetector(FormatDetector):
    """`--tool-call-parser markdown_tools`: gptme-style fenced tool blocks, calls only to declared
    tools. `tool_choice="required"` or a named tool constrain decoding to fenced blocks of the
    requested tools."""

    format_name = "markdown_tools"

    def _may_call_declared_tools(self, text: str) -> bool:
        return "```" in text or "~~~" in text

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return markdown_constraint(schemas, only, single)


class XmlToolsDetector(FormatDetector):
    """`--tool-call-parser xml_tools`: gptme-style `<tool-use>` blocks, calls only to declared
    tools. `tool_choice="required"` or a named tool constrain decoding to one such block."""

    format_name = "xml_tools"

    def _may_call_declared_tools(self, text: str) -> bool:
        return XML_TOOLS_START in text

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return xml_tools_constraint(schemas, only, single)


class LlamaJsonDetector(FormatDetector):
    """`--tool-call-parser llama_json`: Llama 3.1 / 3.2 / 3.3 JSON calls (and 3.1's built-in tools
    after `<|python_tag|>`). `tool_choice="required"` or a named tool constrain decoding to
    `{"name": .., "parameters": ..}` objects joined by `; `; strict `auto` to a call after the tag."""

    format_name = "llama_json"
    structure_begin = PYTHON_TAG + '{{"name": "{name}", "parameters": '
    structure_end = "}"
    structure_trigger = PYTHON_TAG

    def _may_call_declared_tools(self, text: str) -> bool:
        # Code after the tag is a call only when `code_interpreter` is declared: see formats/llama_json.py.
        return PYTHON_TAG in text

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return llama_json_constraint(schemas, only, single)
