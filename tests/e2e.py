"""Shared pieces of the end-to-end tests: a real `vllm serve` per format and an OpenAI client.

The model is too small to call tools reliably, so most requests force an exact raw text through
vLLM's structured outputs (a regex of the text) with `tool_choice="auto"`: the real detokenizer,
serving layer and parser then run on real token deltas. `tool_choice="required"` and named choices
run unforced: there the grammar comes from the parser class (a vLLM structural tag).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolcall_parsers.toolbox.forced import forced_body
from toolcall_parsers.toolbox.openai_stream import fold_stream
from vllm_server import SERVED_NAME as MODEL
from vllm_server import vllm_server

if TYPE_CHECKING:  # the client is imported where a test makes one (collection imports no client)
    import openai

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
    },
]
STRICT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "enum": ["Paris", "Tokyo"]}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    }
]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]


@contextlib.contextmanager
def serve(fmt: str, model_dir: Path) -> Iterator[openai.OpenAI]:
    """A server with `--tool-call-parser fmt` (found through the entry point) and our template."""
    import openai

    args = ["--enable-auto-tool-choice", "--tool-call-parser", fmt]
    args += ["--chat-template", str(ROOT / "chat_templates" / f"{fmt}.jinja")]
    with vllm_server(model_dir, args) as base_url:
        yield openai.OpenAI(base_url=base_url, api_key="unused", timeout=120)


def complete(client, raw: str | None, tools=TOOLS, **kwargs):
    extra = forced_body(raw) if raw is not None else None
    kwargs.setdefault("max_tokens", 300)
    response = client.chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=tools, temperature=0, extra_body=extra, **kwargs
    )
    return response.choices[0]


def stream(client, raw: str | None, tools=TOOLS, extra_xargs: dict[str, Any] | None = None, **kwargs) -> dict[str, Any]:
    """Stream a request and rebuild what a client sees, asserting OpenAI's delta rules (the toolbox's
    one accumulator, `openai_stream`). `extra_xargs` go to vLLM as `vllm_xargs` (a request's own
    options, such as its streaming policy)."""
    extra = forced_body(raw) if raw is not None else None
    if extra_xargs:
        extra = {**(extra or {}), "vllm_xargs": extra_xargs}
    kwargs.setdefault("max_tokens", 300)
    chunks = client.chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=tools, temperature=0, stream=True, extra_body=extra, **kwargs
    )
    fold = fold_stream(chunks)
    assert not fold.problems, fold.problems
    calls = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in fold.calls]
    return {"content": fold.content, "reasoning": fold.reasoning, "calls": calls, "finish": fold.finish}


def call_pairs(calls) -> list[tuple[str, dict[str, Any]]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in calls or []]
