"""`--tool-call-parser auto` for SGLang: detect our format from the served chat template, then be it.

SGLang builds a detector per request with the tokenizer manager's tokenizer, whose `chat_template`
SGLang has already replaced with the server's `--chat-template` file (`srt/parser/template_manager.py`),
so detecting from the tokenizer sees the template actually served. The first build in a process
runs the detect probe (`toolcall_parsers.detect`) and logs the choice; every build returns the
detected format's own detector, so `auto` behaves exactly as that name. When no format of ours fits,
it logs so at WARNING and passes the text through. Without a tokenizer (SGLang passes one whenever
the detector's constructor names it, which this one does) there is nothing to detect from: pass-through.
"""

from __future__ import annotations

import logging
from typing import Any

from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, StructureInfo

from ..derive.served import SERVED_NAME
from ..detect import describe, detect_once

logger = logging.getLogger("toolcall_parsers")


def detected_class(tokenizer: Any) -> type[BaseFormatDetector] | None:
    """Our detector class for the tokenizer's (served) chat template; None when none fits. Logs once."""
    from . import detectors
    from .plugin import DETECTORS

    detection, first = detect_once(tokenizer, None, "the served chat template")
    class_name = DETECTORS.get(detection.parser or "")
    if class_name is None and detection.derived is not None:
        class_name = (
            "FromResponseTemplateDetector" if detection.derived_by == SERVED_NAME else "FromChatTemplateDetector"
        )
    if first:
        if class_name:
            logger.info("--tool-call-parser auto: %s", describe(detection))
        else:
            logger.warning("--tool-call-parser auto: %s", describe(detection))
    return getattr(detectors, class_name) if class_name else None


class AutoDetector(BaseFormatDetector):
    """Builds the detected format's detector; is itself only the pass-through for "none of ours"."""

    def __new__(cls, tokenizer: Any = None) -> Any:
        target = detected_class(tokenizer) if tokenizer is not None else None
        if target is None:
            return super().__new__(cls)
        return target(tokenizer=tokenizer)  # not an AutoDetector, so Python does not call __init__ again

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__()
        self.tokenizer = tokenizer

    def has_tool_call(self, text: str) -> bool:
        return False

    def detect_and_parse(self, text: str, tools: Any) -> StreamingParseResult:
        return StreamingParseResult(normal_text=text)

    def parse_streaming_increment(self, new_text: str, tools: Any) -> StreamingParseResult:
        return StreamingParseResult(normal_text=new_text)

    def structure_info(self) -> Any:
        return lambda name: StructureInfo(begin="", end="", trigger="")

    def supports_structural_tag(self) -> bool:
        return False
