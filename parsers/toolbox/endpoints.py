"""One request, any of vLLM's three endpoints, through the real clients: `ask` sends a prompt with
Chat Completions-shaped tools to `/v1/chat/completions`, `/v1/responses` (the `openai` client) or
`/v1/messages` (the `anthropic` client), streamed or not, and folds the answer into a `Reply`.

Each endpoint spells tools and `tool_choice` its own way; the mapping is here once (Chat
Completions -> Responses -> Messages):

- a tool: `{"type": "function", "function": {name, description, parameters, strict}}` -> the
  function's fields one level up, with `"type": "function"` -> `{name, description, input_schema,
  strict}`;
- `"auto"` -> `"auto"` -> `{"type": "auto"}`; `"required"` -> `"required"` -> `{"type": "any"}`;
  `"none"` -> `"none"` -> `{"type": "none"}`;
- a named tool, `{"type": "function", "function": {"name": N}}` -> `{"type": "function", "name": N}`
  -> `{"type": "tool", "name": N}`.

`xargs` go to vLLM as the request's `vllm_xargs` (every endpoint takes them); `extra` adds any
other field to the request body (e.g. `structured_outputs`, which Chat Completions and Responses
take and Messages does not); sampling options (`temperature=0`) go in the body for Messages, whose
client (anthropic 2.17) no longer takes them as arguments.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from .replies import (
    Reply,
    chat_reply,
    chat_stream_reply,
    messages_reply,
    messages_stream_reply,
    responses_reply,
    responses_stream_reply,
    starts_a_call,
)


def responses_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tools as the Responses API takes them (the function's fields one level up)."""
    return [{"type": "function", **tool["function"]} for tool in tools]


def messages_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat Completions tools as Anthropic Messages takes them (`input_schema`)."""
    out = []
    for tool in tools:
        function = tool["function"]
        spec = {"name": function["name"], "input_schema": function.get("parameters") or {"type": "object"}}
        spec |= {key: function[key] for key in ("description", "strict") if key in function}
        out.append(spec)
    return out


def tool_choice_for(api: str, choice: Any) -> Any:
    """A Chat Completions `tool_choice` in `api`'s spelling (see the module docstring)."""
    named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    choice = "auto" if choice is None else choice
    if api == "chat":
        return choice
    if api == "responses":
        return {"type": "function", "name": named} if named else choice
    if named:
        return {"type": "tool", "name": named}
    return {"type": {"required": "any"}.get(choice, choice)}


class _Clock:
    """Passes a stream's events through, noting how long after the request the first one of a
    call arrived."""

    def __init__(self, api: str) -> None:
        self.api, self.started, self.first_call_s = api, time.monotonic(), None

    def __call__(self, events: Iterable[Any]) -> Iterator[Any]:
        for event in events:
            if self.first_call_s is None and starts_a_call(self.api, event):
                self.first_call_s = time.monotonic() - self.started
            yield event

    def timed(self, reply: Reply) -> Reply:
        reply.first_call_s = self.first_call_s
        return reply


def ask(
    base_url: str,
    api: str,
    model: str,
    prompt: str,
    tools: list[dict[str, Any]],
    *,
    stream: bool,
    max_tokens: int = 300,
    tool_choice: Any = "auto",
    xargs: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    timeout: float = 120,
    api_key: str = "unused",
    **sampling: Any,
) -> Reply:
    """Send one user `prompt` with `tools` to `base_url` (`http://host:port/v1`) through `api`
    (`chat`, `responses` or `messages`) and return what the client ends with."""
    clock = _Clock(api)
    body = {**(extra or {}), **({"vllm_xargs": xargs} if xargs else {})} or None
    if api == "messages":
        import anthropic

        client = anthropic.Anthropic(
            base_url=base_url.rstrip("/").removesuffix("/v1"), api_key=api_key, timeout=timeout, max_retries=0
        )
        kwargs: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}],
            "tools": messages_tools(tools),
            "tool_choice": tool_choice_for(api, tool_choice),
            "extra_body": {**(body or {}), **sampling} or None,  # this client has no `temperature` argument
        }
        if stream:
            return clock.timed(messages_stream_reply(clock(client.messages.create(stream=True, **kwargs))))
        return messages_reply(client.messages.create(**kwargs))

    import openai

    oai = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)
    if api == "responses":
        kwargs = {
            "model": model,
            "input": prompt,
            "tools": responses_tools(tools),
            "tool_choice": tool_choice_for(api, tool_choice),
            "max_output_tokens": max_tokens,
            "extra_body": body,
            **sampling,
        }
        if stream:
            return clock.timed(responses_stream_reply(clock(oai.responses.create(stream=True, **kwargs))))
        return responses_reply(oai.responses.create(**kwargs))
    if api != "chat":
        raise ValueError(f"unknown api {api!r}: one of chat, responses, messages")
    kwargs = {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "tools": tools,
        "tool_choice": tool_choice,
        "max_tokens": max_tokens,
        "extra_body": body,
        **sampling,
    }
    if stream:
        return clock.timed(chat_stream_reply(clock(oai.chat.completions.create(stream=True, **kwargs))))
    return chat_reply(oai.chat.completions.create(**kwargs))
