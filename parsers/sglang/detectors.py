"""One SGLang detector per format, made from the format's spec (`FORMATS`): each only names its
format; what SGLang may constrain decoding to, and which texts may hold calls that need a declared
tool, the spec says (`FormatDetector` reads it). SGLang hands detectors no token ids, so no format
needs engine code of its own here: Mistral's `[TOOL_CALLS]` is judged by what follows it, streamed
or not, and SGLang gives every call its own `call_<24 hex>` id (our template cuts history ids to
Mistral's nine characters)."""

from __future__ import annotations

from typing import Any

from ..derive.served import CHAT_NAME, SERVED_NAME, chat_format, served_format
from ..formats import FORMATS, Format
from .adapter import FormatDetector


def class_name(fmt: Format) -> str:
    """The SGLang detector class of a format (`hermes_json` -> `HermesJsonDetector`)."""
    return fmt.class_stem + "Detector"


def _generated(fmt: Format) -> type[FormatDetector]:
    attributes = {
        "__doc__": f"`--tool-call-parser {fmt.name}`: {fmt.summary}",
        "__module__": __name__,
        "format_name": fmt.name,
    }
    return type(class_name(fmt), (FormatDetector,), attributes)


DETECTOR_CLASSES: dict[str, type[FormatDetector]] = {name: _generated(fmt) for name, fmt in FORMATS.items()}
"""`--tool-call-parser` name -> our SGLang detector class, for every registered format."""
globals().update({cls.__name__: cls for cls in DETECTOR_CLASSES.values()})


class FromResponseTemplateDetector(FormatDetector):
    """`--tool-call-parser from_response_template`: the format the served model's own response
    template describes (`derive.served`); fails at its first build, naming the reason, where the
    model ships no template or no family of ours reads it."""

    format_name = SERVED_NAME

    def _served_format(self, tokenizer: Any) -> Format:
        return served_format(tokenizer)


class FromChatTemplateDetector(FormatDetector):
    """`--tool-call-parser from_chat_template`: the format the served chat template (SGLang has put
    `--chat-template` on the tokenizer) teaches, derived by rendering it (`derive.chat_template`)."""

    format_name = CHAT_NAME

    def _served_format(self, tokenizer: Any) -> Format:
        return chat_format(tokenizer)
