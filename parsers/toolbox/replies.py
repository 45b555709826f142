"""What a client ends with, whatever the endpoint: one `Reply` from Chat Completions, the Responses
API or Anthropic Messages, streamed or not, with the endpoint's streaming rules checked.

vLLM serves tool calls through three APIs, each with its own shapes: Chat Completions' `tool_calls`
and deltas (`openai_stream`), the Responses API's `function_call` output items and
`response.function_call_arguments.delta` events, Anthropic's `tool_use` content blocks and
`input_json_delta` fragments. The smoke command and the end-to-end tests compare all of them with
`parse()` of the same text, so each is folded here into the same record: the text, the calls (id,
name, arguments as JSON text) in order, and the stop reason in Chat Completions' words (`stop`,
`tool_calls`, `length`). A breach of an endpoint's rules (fragments that do not add up to the
final arguments, a call block without its name) is recorded in `problems`, never raised.

Objects are read as the `openai` and `anthropic` clients return them or as parsed JSON (dicts).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .openai_stream import fold_stream

APIS = ("chat", "responses", "messages")
"""The endpoints a reply can come from: `/v1/chat/completions`, `/v1/responses`, `/v1/messages`."""

_MESSAGES_STOP = {"tool_use": "tool_calls", "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length"}


@dataclass
class Reply:
    """The text, the calls as (id, name, arguments JSON text), the stop reason (`stop`,
    `tool_calls`, `length`) and every breach of the endpoint's rules."""

    content: str | None = None
    calls: list[tuple[str | None, str, str]] = field(default_factory=list)
    stop: str | None = None
    problems: list[str] = field(default_factory=list)
    first_call_s: float | None = None
    """Streamed: seconds from the request to the first event of a call (set by `endpoints.ask`)."""

    def pairs(self) -> list[tuple[str, Any]]:
        """(name, decoded arguments) per call; the text where it is not JSON."""
        out = []
        for _, name, arguments in self.calls:
            try:
                out.append((name, json.loads(arguments)))
            except json.JSONDecodeError:
                out.append((name, arguments))
        return out


def starts_a_call(api: str, event: Any) -> bool:
    """Whether a streamed event (chunk) of `api` is the first sign of a tool call."""
    data = _plain(event)
    if api == "chat":
        return any((choice.get("delta") or {}).get("tool_calls") for choice in data.get("choices") or [])
    if api == "responses":
        return data.get("type") == "response.output_item.added" and data["item"].get("type") == "function_call"
    return data.get("type") == "content_block_start" and data["content_block"].get("type") == "tool_use"


def _plain(obj: Any) -> Any:
    """A client object as plain JSON data (dicts pass through)."""
    return obj.model_dump(exclude_none=True) if hasattr(obj, "model_dump") else obj


def _text(parts: list[str]) -> str | None:
    return "".join(parts) or None


# -- Chat Completions ---------------------------------------------------------------------------


def chat_reply(completion: Any) -> Reply:
    """A finished `/v1/chat/completions` response's first choice."""
    choice = _plain(completion)["choices"][0]
    message = choice.get("message") or {}
    reply = Reply(message.get("content") or None, stop=choice.get("finish_reason"))
    for call in message.get("tool_calls") or []:
        name, arguments = call["function"].get("name") or "", call["function"].get("arguments")
        if isinstance(arguments, str):
            reply.calls.append((call.get("id"), name, arguments))
        else:
            kind = type(arguments).__name__
            reply.problems.append(f"arguments of {name!r} are not a JSON string (the server sent a {kind})")
    return reply


def chat_stream_reply(chunks: Iterable[Any]) -> Reply:
    """A streamed `/v1/chat/completions` response (the delta rules of `openai_stream`)."""
    fold = fold_stream(chunks)
    calls = [(c.id, c.name or "", c.arguments) for c in fold.calls]
    return Reply(fold.content or None, calls, fold.finish, fold.all_problems())


# -- Responses ----------------------------------------------------------------------------------


def responses_reply(response: Any) -> Reply:
    """A finished `/v1/responses` response: its message items' text and its function_call items."""
    data = _plain(response)
    texts, calls = [], []
    for item in data.get("output") or []:
        if item.get("type") == "message":
            texts += [part.get("text", "") for part in item.get("content") or [] if part.get("type") == "output_text"]
        elif item.get("type") == "function_call":
            calls.append((item.get("call_id"), item.get("name", ""), item.get("arguments", "")))
    return Reply(_text(texts), calls, _responses_stop(data, calls))


def _responses_stop(data: dict[str, Any], calls: list[Any]) -> str:
    reason = (data.get("incomplete_details") or {}).get("reason")
    if data.get("status") == "incomplete" and reason == "max_output_tokens":
        return "length"
    return "tool_calls" if calls else "stop"


def responses_stream_reply(events: Iterable[Any]) -> Reply:
    """A streamed `/v1/responses` response. Checks: each function call's argument deltas add up to
    its `arguments.done` and its `output_item.done`; text deltas add up to their `output_text.done`;
    the final `response.completed` (or `incomplete`) holds what the events built."""
    reply = Reply()
    texts: list[str] = []
    deltas: dict[str, list[str]] = {}
    text_deltas: dict[tuple[str, int], list[str]] = {}
    final: dict[str, Any] | None = None
    for event in map(_plain, events):
        kind = event.get("type")
        if kind == "response.output_text.delta":
            text_deltas.setdefault((event["item_id"], event.get("content_index", 0)), []).append(event["delta"])
        elif kind == "response.output_text.done":
            streamed = "".join(text_deltas.get((event["item_id"], event.get("content_index", 0)), []))
            if streamed != event.get("text"):
                reply.problems.append(f"text deltas {streamed!r} != output_text.done {event.get('text')!r}")
            texts.append(event.get("text", ""))
        elif kind == "response.function_call_arguments.delta":
            deltas.setdefault(event["item_id"], []).append(event["delta"])
        elif kind == "response.function_call_arguments.done":
            streamed = "".join(deltas.get(event["item_id"], []))
            if streamed != event.get("arguments"):
                reply.problems.append(f"argument deltas {streamed!r} != arguments.done {event.get('arguments')!r}")
        elif kind == "response.output_item.added" and event["item"].get("type") == "function_call":
            if not event["item"].get("name"):
                reply.problems.append(f"function_call item {event['item'].get('id')} added without a name")
        elif kind == "response.output_item.done" and event["item"].get("type") == "function_call":
            item = event["item"]
            streamed = "".join(deltas.get(item.get("id", ""), []))
            if streamed != item.get("arguments"):
                reply.problems.append(f"argument deltas {streamed!r} != the item's arguments {item.get('arguments')!r}")
            reply.calls.append((item.get("call_id"), item.get("name", ""), item.get("arguments", "")))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            final = event["response"]
    reply.content = _text(texts)
    if final is None:
        reply.problems.append("the stream ended without response.completed")
        reply.stop = "tool_calls" if reply.calls else None
        return reply
    reply.stop = _responses_stop(final, reply.calls)
    finished = responses_reply(final)
    if (finished.content, finished.calls) != (reply.content, reply.calls):
        reply.problems.append(f"the final response {finished} differs from what its events built")
    return reply


# -- Anthropic Messages -------------------------------------------------------------------------


def messages_reply(message: Any) -> Reply:
    """A finished `/v1/messages` response: its text blocks and its tool_use blocks."""
    data = _plain(message)
    texts, calls = [], []
    for block in data.get("content") or []:
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            calls.append((block.get("id"), block.get("name", ""), json.dumps(block.get("input"), ensure_ascii=False)))
    return Reply(_text(texts), calls, _MESSAGES_STOP.get(data.get("stop_reason") or "", data.get("stop_reason")))


def messages_stream_reply(events: Iterable[Any]) -> Reply:
    """A streamed `/v1/messages` response (raw events). Checks: a tool_use block starts with its id
    and name; its `input_json_delta` fragments add up to a JSON object; a `message_delta` says why
    it stopped. A call's arguments are its fragments re-encoded like `messages_reply`'s."""
    reply = Reply()
    blocks: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    for event in map(_plain, events):
        kind = event.get("type")
        if kind == "content_block_start":
            block = dict(event["content_block"])
            block["parts"] = [block.get("text", "")] if block.get("type") == "text" else []
            blocks[event["index"]] = block
            order.append(event["index"])
            if block.get("type") == "tool_use" and not (block.get("id") and block.get("name")):
                reply.problems.append(f"tool_use block {event['index']} starts without its id or name")
        elif kind == "content_block_delta":
            block = blocks.get(event["index"])
            delta = event["delta"]
            if block is None:
                reply.problems.append(f"a delta for block {event['index']}, which never started")
            elif delta.get("type") == "text_delta":
                block["parts"].append(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                block["parts"].append(delta.get("partial_json", ""))
        elif kind == "message_delta":
            stop = (event.get("delta") or {}).get("stop_reason")
            reply.stop = _MESSAGES_STOP.get(stop or "", stop)
    texts = []
    for index in order:
        block = blocks[index]
        joined = "".join(block["parts"])
        if block.get("type") == "text":
            texts.append(joined)
        elif block.get("type") == "tool_use":
            try:
                arguments = json.loads(joined or "{}")
            except json.JSONDecodeError:
                reply.problems.append(f"tool_use block {index}: its fragments are not JSON: {joined!r}")
                arguments = joined
            if not isinstance(arguments, dict):
                reply.problems.append(f"tool_use block {index}: its input is not an object: {joined!r}")
            reply.calls.append((block.get("id"), block.get("name", ""), json.dumps(arguments, ensure_ascii=False)))
    reply.content = _text(texts)
    if reply.stop is None:
        reply.problems.append("the stream ended without a message_delta stop reason")
    return reply
