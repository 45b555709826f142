"""One vLLM tool parser per format: each only names its format (and how vLLM may constrain it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.events import Event
from ..core.stream import FormatStream
from ..formats.llama_json import required_constraint as llama_json_constraint
from ..formats.markdown_tools import required_constraint as markdown_constraint
from ..formats.mistral_json import ARGS, MARKER, MistralJsonStream
from ..formats.mistral_json import required_constraint as mistral_constraint
from ..formats.qwen_xml import required_constraint as qwen_constraint
from ..formats.tagged import required_constraint as tagged_constraint
from ..formats.xml_tools import required_constraint as xml_tools_constraint
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


class QwenXmlToolParser(FormatToolParser):
    """`--tool-call-parser qwen_xml`. For `tool_choice="required"` or a named tool, decoding is
    constrained to `<tool_call>` blocks (one call each) whose `<parameter=..>` lines follow the schema
    and that end the output. (vLLM's own `qwen_3_coder` tag allows free text around and after the
    calls, so a model may never stop.)"""

    format_name = "qwen_xml"
    supports_required_and_named = False

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return qwen_constraint(schemas, only, single)


_TOKEN_IDS: dict[int, tuple[Any, dict[str, int | None]]] = {}
"""Per tokenizer (kept alive here, so its id() stays its own): text -> its single-token id."""


def _single_token_id(tokenizer: Any, text: str) -> int | None:
    """The id of `text` when the tokenizer has it as one token. Looked up once per tokenizer, since
    a parser is built per request and `get_vocab()` copies the whole vocabulary."""
    entry = _TOKEN_IDS.get(id(tokenizer))
    if entry is None or entry[0] is not tokenizer:
        entry = _TOKEN_IDS[id(tokenizer)] = (tokenizer, {})
    ids = entry[1]
    if text not in ids:
        try:
            ids[text] = tokenizer.get_vocab().get(text)
        except Exception:
            ids[text] = None
    return ids[text]


class MistralJsonToolParser(FormatToolParser):
    """`--tool-call-parser mistral_json`: every Mistral generation, told apart by the text. Ids are
    Mistral's nine letters and digits. Where `[TOOL_CALLS]` is one token, a streamed marker counts
    only where that token was generated. `tool_choice="required"` or a named tool constrain decoding
    to `[TOOL_CALLS]name[ARGS]{..}` (tokenizers with `[ARGS]`) or `[TOOL_CALLS][{..}]`."""

    format_name = "mistral_json"
    engine_ids = False
    supports_required_and_named = False

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self._marker_id = _single_token_id(tokenizer, MARKER)
        self._v11 = _single_token_id(tokenizer, ARGS) is not None

    def _new_stream(self, streaming: bool) -> FormatStream:
        # Token ids reach only the streaming path; a finished response is read by its text alone.
        return MistralJsonStream(self.tools, marker_is_token=streaming and self._marker_id is not None)

    def _feed(self, stream: FormatStream, text: str, delta_token_ids: Sequence[int]) -> list[Event]:
        assert isinstance(stream, MistralJsonStream)
        return stream.feed(text, marker_offsets=self._marker_offsets(text, delta_token_ids))

    def _marker_offsets(self, text: str, delta_token_ids: Sequence[int]) -> list[int]:
        """Where in `text` the generated `[TOOL_CALLS]` tokens begin. Usually every `[TOOL_CALLS]`
        in the delta is one. When the delta also holds the marker typed out by ordinary tokens (a
        long delta: `--stream-interval`, speculative decoding), each run of ordinary tokens before
        a marker token is decoded to count the typed markers in it, which places each marker token
        among the occurrences. Runs are decoded whole: one token alone may decode to part of a
        character, and then to the wrong length."""
        tokens = sum(1 for t in delta_token_ids if t == self._marker_id)
        if not tokens:
            return []
        found, at = [], text.find(MARKER)
        while at >= 0:
            found.append(at)
            at = text.find(MARKER, at + len(MARKER))
        if len(found) <= tokens:
            return found
        ordinals, typed, run_start = [], 0, 0
        for i, token in enumerate(delta_token_ids):
            if token == self._marker_id:
                if i > run_start:
                    typed += self.model_tokenizer.decode(list(delta_token_ids[run_start:i])).count(MARKER)
                ordinals.append(typed + len(ordinals))
                run_start = i + 1
        return [found[n] for n in ordinals if n < len(found)]

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return mistral_constraint(schemas, only, single, v11=self._v11)


class TaggedToolParser(FormatToolParser):
    """`--tool-call-parser tagged`: our compact `<TOOL_CALLS>` format, one `name {json}` per line.
    `tool_choice="required"` or a named tool constrain decoding to that block."""

    format_name = "tagged"
    supports_required_and_named = False

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return tagged_constraint(schemas, only, single)


class LlamaPythonicToolParser(FormatToolParser):
    """`--tool-call-parser llama_pythonic`: Llama 3.2 / 4 pythonic call lists. For
    `tool_choice="required"` or a named tool vLLM's own JSON constraint and reading apply (the
    decoded text is then a JSON list, not Python)."""

    format_name = "llama_pythonic"
    supports_required_and_named = True


class MarkdownToolsToolParser(FormatToolParser):
    """`--tool-call-parser markdown_tools`: gptme-style fenced tool blocks. vLLM has no tag for
    them: `tool_choice="required"` or a named tool constrain decoding to fenced blocks of the
    requested tools (none when no requested tool can be written as a block)."""

    format_name = "markdown_tools"
    supports_required_and_named = False

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return markdown_constraint(schemas, only, single)


class XmlToolsToolParser(FormatToolParser):
    """`--tool-call-parser xml_tools`: gptme-style `<tool-use>` blocks. `tool_choice="required"` or
    a named tool constrain decoding to one such block of the requested tools' elements."""

    format_name = "xml_tools"
    supports_required_and_named = False

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return xml_tools_constraint(schemas, only, single)


class LlamaJsonToolParser(FormatToolParser):
    """`--tool-call-parser llama_json`: Llama 3.1 / 3.2 / 3.3 JSON calls (and 3.1's built-in tools
    after `<|python_tag|>`). `tool_choice="required"` or a named tool constrain decoding to
    `{"name": .., "parameters": ..}` objects joined by `; `, which start the output."""

    format_name = "llama_json"
    supports_required_and_named = False

    def _required_constraint(
        self, schemas: dict[str, dict[str, Any]], only: str | None, single: bool
    ) -> dict[str, Any] | None:
        return llama_json_constraint(schemas, only, single)
