"""Registers our detectors with SGLang.

`register` is the `sglang.srt.plugins` entry point: SGLang's `load_plugins()` calls it in every
SGLang process before arguments are parsed (`python -m sglang.launch_server`, `sglang serve`,
`Engine(...)`), so `--tool-call-parser hermes_json` passes SGLang's own argument check (which lists
`FunctionCallParser.ToolCallParserEnum` once that module is imported) and `FunctionCallParser`
finds the detector. `SGLANG_PLUGINS`, when set, is a whitelist of entry-point names: include
`toolcall_parsers`. Multi-tokenizer mode (`--tokenizer-worker-num` > 1) starts HTTP workers that
never call `load_plugins()`; point `SGLANG_HTTP_SERVER_APP_PATH` at `toolcall_parsers.sglang.app:app`
so each worker registers too.
"""

from __future__ import annotations

from toolcall_parsers.formats import FORMATS

DETECTORS = {name: fmt.class_stem + "Detector" for name, fmt in FORMATS.items()}
"""`--tool-call-parser` name -> its detector class in `toolcall_parsers.sglang.detectors` (made there
from the spec)."""


def register() -> None:
    """Add our detectors to `FunctionCallParser.ToolCallParserEnum` (idempotent). The names do not
    collide with SGLang's own (`hermes`, `mistral`, `pythonic`, `minimax-m2`, ...)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    from . import detectors

    for name, class_name in DETECTORS.items():
        FunctionCallParser.ToolCallParserEnum[name] = getattr(detectors, class_name)
    # `auto`: detects the format from the served chat template, then builds that detector (sglang/auto.py).
    from .auto import AutoDetector

    FunctionCallParser.ToolCallParserEnum["auto"] = AutoDetector
    # The served model's own response template or chat template, as a format of ours (derive/served.py).
    FunctionCallParser.ToolCallParserEnum["from_response_template"] = detectors.FromResponseTemplateDetector
    FunctionCallParser.ToolCallParserEnum["from_chat_template"] = detectors.FromChatTemplateDetector
    # `--reasoning-parser NAME`: our reasoning detectors, one per think-block format (sglang/reasoning.py).
    # SGLang's argument check lists `ReasoningParser.DetectorMap` once that module is imported.
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    from .reasoning import REASONING_DETECTORS

    ReasoningParser.DetectorMap.update(REASONING_DETECTORS)
