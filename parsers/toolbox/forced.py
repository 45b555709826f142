"""Exact model outputs for any registered format, and the request body that forces them.

A format's text is written by its own chat template (the assistant turn it renders for a history
with those calls, its end-of-turn text cut off): that is what the template teaches a model to write,
and it covers every registered format without a writer per format. The text is then forced through
vLLM's structured outputs (a regex of the exact text, `tool_choice="auto"`), as the e2e tests and
`scripts/loadtest.py` do, so a weak model on a CPU still drives the real detokenizer, serving layer
and parser with real token deltas.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import get_format
from ..detect import USER_TEXT, assistant_turn, template_renderer, turn_closing

Call = tuple[str, dict[str, Any]]


def write_calls(fmt: str, calls: list[Call], content: str | None = None, tools: Any = None) -> str:
    """The text `fmt`'s template writes for an assistant turn holding `calls` (and `content`)."""
    render = template_renderer(get_format(fmt).template_path.read_text(encoding="utf-8"))
    history = [
        {
            "role": "assistant",
            "content": content,
            "tool_calls": [
                {"id": f"c{n:08d}", "type": "function", "function": {"name": name, "arguments": arguments}}
                for n, (name, arguments) in enumerate(calls)
            ],
        }
    ]
    messages = [{"role": "user", "content": USER_TEXT}, *history]
    bound = _with_tools(render, tools)
    return assistant_turn(bound, messages, turn_closing(bound)).strip()


def _with_tools(render: Any, tools: Any) -> Any:
    if tools is None:
        return render

    def bound(messages: list[dict[str, Any]], *, add_generation_prompt: bool, tools: Any = tools) -> str:
        return render(messages, add_generation_prompt=add_generation_prompt, tools=tools)

    return bound


def forced_body(raw: str) -> dict[str, Any]:
    """`extra_body` that makes vLLM generate exactly `raw` (structured outputs, a regex of it)."""
    return {"structured_outputs": {"regex": re.escape(raw)}}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
