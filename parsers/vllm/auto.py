"""`--tool-call-parser auto`: detect which of our formats the served chat template teaches, then be it.

vLLM builds a tool parser with the model's tokenizer (once at start-up to validate it, then per
request). The first build in a process renders the detect probe through the chat template
(`toolcall_parsers.detect`) and logs the choice; every build then returns an instance of the
detected format's own parser class, so `auto` behaves exactly as `--tool-call-parser <that name>`
(ids, token-id checks, `tool_choice="required"` constraints included). When no format of ours fits,
it logs so at WARNING with what the template writes instead, and passes the text through.

Which template: the served one (`served_template.server_chat_template`: `--chat-template` from the
process's command line, else the tokenizer's own). A template given only in a `--config` YAML file
is not seen: pass `--chat-template` on the command line, or name the parser.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from vllm.entrypoints.generate.base.protocol import DeltaMessage, ExtractedToolCallInformation
from vllm.tool_parsers import ToolParser

from ..derive.served import SERVED_NAME
from ..detect import Detection, describe, detect_once
from .served_template import server_chat_template

logger = logging.getLogger("toolcall_parsers")


def detected_class(tokenizer: Any, argv: Sequence[str] | None = None) -> tuple[type[ToolParser] | None, Detection]:
    """Our parser class for the served template (None: no format of ours fits); logs once."""
    from . import parsers
    from .plugin import PARSERS

    template, source = server_chat_template(argv)
    detection, first = detect_once(tokenizer, template, source)
    class_name = PARSERS.get(detection.parser or "")
    if class_name is None and detection.derived is not None:
        class_name = (
            "FromResponseTemplateToolParser" if detection.derived_by == SERVED_NAME else "FromChatTemplateToolParser"
        )
    if first:
        if class_name:
            logger.info("--tool-call-parser auto: %s", describe(detection))
        elif detection.parser:
            logger.warning(
                "--tool-call-parser auto: %s has no vLLM parser class; passing text through", detection.parser
            )
        else:
            logger.warning("--tool-call-parser auto: %s", describe(detection))
    return (getattr(parsers, class_name) if class_name else None), detection


class AutoToolParser(ToolParser):
    """Builds the detected format's parser; is itself only the pass-through for "none of ours"."""

    def __new__(cls, tokenizer: Any = None, tools: list[Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        target = detected_class(tokenizer)[0] if tokenizer is not None else None
        if target is None:
            if tokenizer is None:
                logger.warning("--tool-call-parser auto: no tokenizer to detect from; passing text through")
            return super().__new__(cls)
        return target(tokenizer, tools)  # not an AutoToolParser, so Python does not call __init__ again

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        return DeltaMessage(content=delta_text) if delta_text else None
