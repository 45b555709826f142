"""Registers our parsers with vLLM.

Used two ways: as the `vllm.general_plugins` entry point (`register`), so that after `pip install`
`--tool-call-parser hermes_json` just works; and as a file for `--tool-parser-plugin <path>`, which
vLLM imports as a top-level module, so importing it registers too (absolute imports only).
Registration is lazy: nothing heavy is imported until vLLM looks a parser up (the registry of
formats is plain Python, no engine import).
"""

from __future__ import annotations

from toolcall_parsers.formats import FORMATS

PARSERS = {name: fmt.class_stem + "ToolParser" for name, fmt in FORMATS.items()}
"""`--tool-call-parser` name -> its class in `toolcall_parsers.vllm.parsers` (made there from the spec)."""
REASONING_PARSERS = {name: fmt.class_stem + "ReasoningParser" for name, fmt in FORMATS.items() if fmt.think_blocks}
"""`--reasoning-parser` name -> its class there: a format's own, to pair with its tool parser."""


def register() -> None:
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    for name, class_name in PARSERS.items():
        ToolParserManager.register_lazy_module(name, "toolcall_parsers.vllm.parsers", class_name)
    for name, class_name in REASONING_PARSERS.items():
        ReasoningParserManager.register_lazy_module(name, "toolcall_parsers.vllm.parsers", class_name)
    # `auto`: detects the format from the served chat template, then builds that parser (vllm/auto.py).
    ToolParserManager.register_lazy_module("auto", "toolcall_parsers.vllm.auto", "AutoToolParser")
    # The served model's own response template or chat template, as a format of ours (derive/served.py).
    ToolParserManager.register_lazy_module(
        "from_response_template", "toolcall_parsers.vllm.parsers", "FromResponseTemplateToolParser"
    )
    ToolParserManager.register_lazy_module(
        "from_chat_template", "toolcall_parsers.vllm.parsers", "FromChatTemplateToolParser"
    )
    # Their reasoning split: the think tags of the same derived format.
    ReasoningParserManager.register_lazy_module(
        "from_response_template", "toolcall_parsers.vllm.parsers", "FromResponseTemplateReasoningParser"
    )
    ReasoningParserManager.register_lazy_module(
        "from_chat_template", "toolcall_parsers.vllm.parsers", "FromChatTemplateReasoningParser"
    )


register()
