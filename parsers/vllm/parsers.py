"""One vLLM tool parser per format, made from the format's spec (`FORMATS`).

A generated class only names its format and says what vLLM may do for `tool_choice="required"` or a
named tool: use vLLM's own structural tag (`structural_tag_model`, where the format has one), the
format's own constraint (applied in `FormatToolParser.adjust_request`), or, where the format has
neither, vLLM's JSON fallback (`supports_required_and_named`). Hand-written below: Mistral, whose
`[TOOL_CALLS]` is judged by the token ids vLLM hands a streaming parser.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.events import Event
from ..core.stream import FormatStream
from ..core.tokens import vocabulary
from ..derive.served import CHAT_NAME, SERVED_NAME, chat_format, served_format
from ..formats import FORMATS, Format, reasoning_classes
from ..formats.mistral_json import MARKER, MistralJsonStream
from .adapter import FormatToolParser
from .reasoning import FormatReasoningParser


def class_name(fmt: Format) -> str:
    """The vLLM parser class of a format (`hermes_json` -> `HermesJsonToolParser`)."""
    return fmt.class_stem + "ToolParser"


class MistralJsonToolParser(FormatToolParser):
    """`--tool-call-parser mistral_json`: every Mistral generation, told apart by the text. Ids are
    Mistral's nine letters and digits. Where `[TOOL_CALLS]` is one token, a streamed marker counts
    only where that token was generated."""

    format_name = "mistral_json"
    structural_tag_model = "toolcall_parsers"  # OWN_TAG_MODEL, below

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        vocab = vocabulary(tokenizer)
        self._marker_id = vocab.token_id(MARKER) if vocab is not None else None

    def adjust_request(self, request: Any) -> Any:
        """As every format's, except the special-token switch under vLLM's own Mistral tokenizer
        (mistral-common): its decoding keeps `[TOOL_CALLS]`, `[ARGS]`, `[THINK]` and `[/THINK]`
        while it skips special tokens, and only that path puts a character split over byte tokens
        (an emoji) back together; turned off, it shows such characters as U+FFFD. So the request's
        own setting stays, as vLLM's `mistral` parser leaves it."""
        skip = request.skip_special_tokens
        request = super().adjust_request(request)
        if _is_mistral_common(self.model_tokenizer):
            request.skip_special_tokens = skip
        return request

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


def _is_mistral_common(tokenizer: Any) -> bool:
    """Whether `tokenizer` is vLLM's wrapper of a mistral-common tokenizer (`--tokenizer-mode mistral`)."""
    try:
        from vllm.tokenizers.mistral import MistralTokenizer
    except ImportError:  # a vLLM without it
        return False
    return isinstance(tokenizer, MistralTokenizer)


_HAND_WRITTEN: dict[str, type[FormatToolParser]] = {"mistral_json": MistralJsonToolParser}


def _generated(fmt: Format) -> type[FormatToolParser]:
    attributes = {
        "__doc__": f"`--tool-call-parser {fmt.name}`: {fmt.summary}",
        "__module__": __name__,
        "format_name": fmt.name,
        "supports_required_and_named": fmt.required_constraint is None and fmt.vllm_tag_model is None,
    }
    model = _tag_model(fmt)
    if model is not None:
        attributes["structural_tag_model"] = model
    return type(class_name(fmt), (FormatToolParser,), attributes)


OWN_TAG_MODEL = "toolcall_parsers"
"""`structural_tag_model` of a parser whose constraints are the format's own: it only tells vLLM's
request path that the parser has a structural tag, which `FormatToolParser.get_structural_tag` builds."""


def _tag_model(fmt: Format) -> str | None:
    if fmt.vllm_tag_model is not None:
        return fmt.vllm_tag_model
    return OWN_TAG_MODEL if (fmt.required_constraint or fmt.auto_constraint) is not None else None


PARSER_CLASSES: dict[str, type[FormatToolParser]] = {
    name: _HAND_WRITTEN.get(name) or _generated(fmt) for name, fmt in FORMATS.items()
}
"""`--tool-call-parser` name -> our vLLM parser class, for every registered format."""
globals().update({cls.__name__: cls for cls in PARSER_CLASSES.values()})


REASONING_CLASSES: dict[str, type[FormatReasoningParser]] = reasoning_classes(
    FormatReasoningParser, "ReasoningParser", __name__
)
"""`--reasoning-parser` name -> our vLLM reasoning parser class: one per format whose models reason
in think blocks, named as the format, to be paired with its tool parser."""
globals().update({cls.__name__: cls for cls in REASONING_CLASSES.values()})


class FromResponseTemplateToolParser(FormatToolParser):
    """`--tool-call-parser from_response_template`: the format the served model's own response
    template describes (`derive.served`), with every format's constraints, so strict, `required`
    and named requests are held to it (vLLM's `hf` refuses them). Start-up fails, naming the
    reason, where the model ships no template or no family of ours reads it."""

    format_name = SERVED_NAME
    structural_tag_model = OWN_TAG_MODEL

    def _served_format(self, tokenizer: Any) -> Format:
        return served_format(tokenizer)


def _served_chat_format(tokenizer: Any) -> Format:
    """The format the served chat template (`--chat-template`, else the tokenizer's) teaches: the
    tool parser and the reasoning parser of `from_chat_template` read the same one."""
    from .served_template import server_chat_template

    return chat_format(tokenizer, server_chat_template()[0])


class FromChatTemplateToolParser(FormatToolParser):
    """`--tool-call-parser from_chat_template`: the format the served chat template teaches, derived
    by rendering it (`derive.chat_template`), where no named format of ours reads it (`auto` serves
    it then). Start-up fails, naming the reason, where it teaches none of our families."""

    format_name = CHAT_NAME
    structural_tag_model = OWN_TAG_MODEL

    def _served_format(self, tokenizer: Any) -> Format:
        return _served_chat_format(tokenizer)


class FromResponseTemplateReasoningParser(FormatReasoningParser):
    """`--reasoning-parser from_response_template`: the split of the format the served model's
    response template describes, to pair with the tool parser of that name."""

    format_name = SERVED_NAME

    def _served_format(self, tokenizer: Any) -> Format:
        return served_format(tokenizer)


class FromChatTemplateReasoningParser(FormatReasoningParser):
    """`--reasoning-parser from_chat_template`: the split of the format the served chat template
    teaches (its think tags as it renders them), to pair with the tool parser of that name."""

    format_name = CHAT_NAME

    def _served_format(self, tokenizer: Any) -> Format:
        return _served_chat_format(tokenizer)


DERIVED_PARSERS: dict[str, type[FormatToolParser]] = {
    SERVED_NAME: FromResponseTemplateToolParser,
    CHAT_NAME: FromChatTemplateToolParser,
}
"""The tool parsers of a model's own templates, by name (the plugin registers them beside ours)."""
REASONING_CLASSES[SERVED_NAME] = FromResponseTemplateReasoningParser
REASONING_CLASSES[CHAT_NAME] = FromChatTemplateReasoningParser


def tool_parser_class(name: str) -> type[FormatToolParser]:
    """The tool parser of `name`: a format's, or one of a model's own templates."""
    return DERIVED_PARSERS.get(name) or PARSER_CLASSES[name]
