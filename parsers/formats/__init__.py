"""The registry of wire formats: name -> `Format`. Adding a format is one entry here."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.ids import IdFactory
from ..core.stream import FormatStream
from .hermes_json import HermesJsonStream
from .llama_json import LlamaJsonStream
from .llama_pythonic import LlamaPythonicStream
from .markdown_tools import MarkdownToolsStream
from .minimax_xml import MiniMaxXmlStream
from .mistral_json import MistralJsonStream
from .qwen_xml import QwenXmlStream
from .tagged import TaggedStream
from .xml_tools import XmlToolsStream


@dataclass(frozen=True)
class Format:
    """One wire format: how to parse it and which chat template teaches it."""

    name: str
    summary: str
    stream_class: type[FormatStream]

    def stream(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, streaming: Any = None, **options: Any
    ) -> FormatStream:
        """A fresh incremental parser for one response. `streaming` overrides the server's streaming
        policy (`complete`, `eager` or a number of characters; ValueError otherwise); `options` are
        the format's own (markers)."""
        stream = self.stream_class(tools, id_factory, **options)
        if streaming is not None:
            stream.set_streaming(streaming)
        return stream

    @property
    def template_path(self) -> Path:
        """The chat template shipped for this format."""
        return Path(str(resources.files("toolcall_parsers.chat_templates") / f"{self.name}.jinja"))


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("hermes_json", '<tool_call>{"name": .., "arguments": {..}}</tool_call>', HermesJsonStream),
        Format(
            "minimax_xml",
            '<minimax:tool_call><invoke name="f"><parameter name="p">v</parameter></invoke></minimax:tool_call>',
            MiniMaxXmlStream,
        ),
        Format("mistral_json", "[TOOL_CALLS][{..}] (v2-v7) or [TOOL_CALLS]name[ARGS]{..} (v11+)", MistralJsonStream),
        Format(
            "llama_pythonic",
            '[f(a=1, b="x"), g()] (after <|python_tag|> or in <|python_start|>..)',
            LlamaPythonicStream,
        ),
        Format("tagged", "<TOOL_CALLS> then one `name {json}` per line", TaggedStream),
        Format(
            "llama_json",
            '{"name": .., "parameters": {..}} (a line start or after <|python_tag|>; several joined by ";")',
            LlamaJsonStream,
        ),
        Format("markdown_tools", "```tool word..\\nbody\\n``` (gptme's fenced tool blocks)", MarkdownToolsStream),
        Format("xml_tools", '<tool-use><tool args="word..">body</tool></tool-use> (gptme)', XmlToolsStream),
        Format(
            "qwen_xml",
            "<tool_call>\\n<function=f>\\n<parameter=p>\\nv\\n</parameter>\\n</function>\\n</tool_call> (Qwen3-Coder)",
            QwenXmlStream,
        ),
    )
}


def get_format(name: str) -> Format:
    """The format registered as `name`; ValueError naming the known formats otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown tool-call format {name!r}; known: {', '.join(sorted(FORMATS))}") from None
