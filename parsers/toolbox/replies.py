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

import functools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .openai_stream import arguments_problems, fold_stream

APIS = ("chat", "responses", "messages")
"""The endpoints a reply can come from: `/v1/chat/completions`, `/v1/responses`, `/v1/messages`."""

_MESSAGES_STOP = {
    "tool_use": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
}
"""Anthropic's stop reasons in Chat Completions' words; others (`refusal`, `pause_turn`) pass as sent."""


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


def _never_raises(fold: Callable[[Any], Reply]) -> Callable[[Any], Reply]:
    """A fold that meets a malformed answer (a field missing, of the wrong type) returns what it
    says as a problem instead of raising."""

    @functools.wraps(fold)
    def wrapped(answer: Any) -> Reply:
        try:
            return fold(answer)
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as err:
            return Reply(problems=[f"malformed answer ({type(err).__name__}: {err})"[:300]])

    return wrapped


def _object_problems(calls: list[tuple[str | None, str, str]]) -> list[str]:
    return arguments_problems((name, arguments) for _, name, arguments in calls)


def _plain(obj: Any) -> Any:
    """A client object as plain JSON data (dicts pass through)."""
    return obj.model_dump(exclude_none=True) if hasattr(obj, "model_dump") else obj


def _text(parts: list[str]) -> str | None:
    return "".join(parts) or None


# -- Chat Completions ---------------------------------------------------------------------------


@_never_raises
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
    reply.problems += _object_problems(reply.calls)
    return reply


@_never_raises
def chat_stream_reply(chunks: Iterable[Any]) -> Reply:
    """A streamed `/v1/chat/completions` response (the delta rules of `openai_stream`)."""
    fold = fold_stream(chunks)
    calls = [(c.id, c.name or "", c.arguments) for c in fold.calls]
    return Reply(fold.content or None, calls, fold.finish, fold.all_problems())


# -- Responses ----------------------------------------------------------------------------------


@_never_raises
def responses_reply(response: Any) -> Reply:
    """A finished `/v1/responses` response: its message items' text and its function_call items;
    a status other than completed (or incomplete for max_output_tokens) is a problem."""
    data = _plain(response)
    texts, calls = [], []
    for item in data.get("output") or []:
        if item.get("type") == "message":
            texts += [part.get("text", "") for part in item.get("content") or [] if part.get("type") == "output_text"]
        elif item.get("type") == "function_call":
            calls.append((item.get("call_id"), item.get("name", ""), item.get("arguments", "")))
    reply = Reply(_text(texts), calls, _responses_stop(data, calls))
    reply.problems += _status_problems(data) + _object_problems(calls)
    return reply


def _responses_stop(data: dict[str, Any], calls: list[Any]) -> str:
    reason = (data.get("incomplete_details") or {}).get("reason")
    if data.get("status") == "incomplete" and reason == "max_output_tokens":
        return "length"
    return "tool_calls" if calls else "stop"


def _status_problems(data: dict[str, Any]) -> list[str]:
    status = data.get("status")
    if status == "completed" or (status == "incomplete" and _responses_stop(data, []) == "length"):
        return []
    return [f"the response's status is {status!r}: {data.get('error') or data.get('incomplete_details')}"]


@_never_raises
def responses_stream_reply(events: Iterable[Any]) -> Reply:
    """A streamed `/v1/responses` response. Checks: each function call's argument deltas add up to
    its `arguments.done` and its `output_item.done`; text deltas add up to their `output_text.done`;
    the final `response.completed` (or `incomplete`) holds what the events built."""
    reply = Reply()
    texts: list[str] = []
    deltas: dict[str, list[str]] = {}
    text_deltas: dict[tuple[str, int], list[str]] = {}
    ended: set[Any] = set()  # the items and text parts whose `done` came
    final: dict[str, Any] | None = None
    for event in map(_plain, events):
        kind = event.get("type")
        if kind == "error":
            reply.problems.append(f"an error event: {event.get('message') or event}"[:300])
        elif kind == "response.output_text.delta":
            text_deltas.setdefault((event["item_id"], event.get("content_index", 0)), []).append(event["delta"])
        elif kind == "response.output_text.done":
            ended.add((event["item_id"], event.get("content_index", 0)))
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
            ended.add(item.get("id"))
            streamed = "".join(deltas.get(item.get("id", ""), []))
            if streamed != item.get("arguments"):
                reply.problems.append(f"argument deltas {streamed!r} != the item's arguments {item.get('arguments')!r}")
            reply.calls.append((item.get("call_id"), item.get("name", ""), item.get("arguments", "")))
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            final = event["response"]
    reply.content = _text(texts)
    unended = [key for key in [*text_deltas, *deltas] if key not in ended]
    if unended:
        reply.problems.append(f"deltas of {unended} never came to their done event")
    reply.problems += _object_problems(reply.calls)
    if final is None:
        reply.problems.append("the stream ended without response.completed")
        reply.stop = "tool_calls" if reply.calls else None
        return reply
    reply.stop = _responses_stop(final, reply.calls)
    reply.problems += _status_problems(final)
    finished = responses_reply(final)
    if (finished.content, finished.calls) != (reply.content, reply.calls):
        reply.problems.append(f"the final response ({finished.content!r}, {finished.calls}) differs from its events")
    return reply


# -- Anthropic Messages -------------------------------------------------------------------------


@_never_raises
def messages_reply(message: Any) -> Reply:
    """A finished `/v1/messages` response: its text blocks and its tool_use blocks."""
    data = _plain(message)
    texts, calls = [], []
    for block in data.get("content") or []:
        if block.get("type") == "text":
            texts.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            calls.append((block.get("id"), block.get("name", ""), json.dumps(block.get("input"), ensure_ascii=False)))
    reply = Reply(_text(texts), calls, _MESSAGES_STOP.get(data.get("stop_reason") or "", data.get("stop_reason")))
    reply.problems += _object_problems(calls)
    return reply


@_never_raises
def messages_stream_reply(events: Iterable[Any]) -> Reply:
    """A streamed `/v1/messages` response (raw events). Checks: each block index starts once, a
    tool_use block with its id and name; deltas come between a block's start and stop and are of
    its kind (`text_delta` for text, `input_json_delta` for tool_use); a tool_use block's fragments
    (or, with none, its start's input) form a JSON object; a `message_delta` says why it stopped.
    A call's arguments are its fragments as sent (re-encoded like `messages_reply` when JSON)."""
    reply = Reply()
    blocks: dict[int, dict[str, Any]] = {}
    open_blocks: set[int] = set()
    kinds = {"text": "text_delta", "tool_use": "input_json_delta", "thinking": "thinking_delta"}
    stops = 0
    for event in map(_plain, events):
        kind = event.get("type")
        if kind == "content_block_start":
            index, block = event["index"], dict(event["content_block"])
            if index in blocks:
                reply.problems.append(f"block {index} started twice")
                continue
            block["parts"] = [block.get("text", "")] if block.get("type") == "text" else []
            blocks[index] = block
            open_blocks.add(index)
            if block.get("type") == "tool_use" and not (block.get("id") and block.get("name")):
                reply.problems.append(f"tool_use block {index} starts without its id or name")
        elif kind == "content_block_delta":
            index, delta = event["index"], event["delta"]
            block = blocks.get(index)
            if block is None or index not in open_blocks:
                reply.problems.append(f"a delta for block {index}, which is not open")
            elif delta.get("type") != kinds.get(block.get("type"), delta.get("type")):
                reply.problems.append(f"a {delta.get('type')} in {block.get('type')} block {index}")
            elif delta.get("type") == "text_delta":
                block["parts"].append(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                block["parts"].append(delta.get("partial_json", ""))
        elif kind == "content_block_stop":
            open_blocks.discard(event["index"])
        elif kind == "message_delta":
            stops += 1
            stop = (event.get("delta") or {}).get("stop_reason")
            reply.stop = _MESSAGES_STOP.get(stop or "", stop)
    texts = []
    for index in sorted(blocks):
        block = blocks[index]
        joined = "".join(block["parts"])
        if block.get("type") == "text":
            texts.append(joined)
        elif block.get("type") == "tool_use":
            if not block["parts"] and block.get("input"):
                joined = json.dumps(block["input"], ensure_ascii=False)
            try:
                arguments = json.dumps(json.loads(joined or "{}"), ensure_ascii=False)
            except json.JSONDecodeError:
                arguments = joined
            reply.calls.append((block.get("id"), block.get("name", ""), arguments))
    reply.content = _text(texts)
    reply.problems += _object_problems(reply.calls)
    if not stops:
        reply.problems.append("the stream ended without a message_delta")
    elif reply.stop is None:
        reply.problems.append("the message_delta gave no stop reason")
    return reply
