"""`toolcall-parsers smoke`: a fixed set of tool-calling prompts against any OpenAI-compatible server.

Each prompt is asked twice, streamed and not, and checked: the calls parse (with `--force`, exactly
the calls the forced text holds, and the content our `parse()` finds; without, at least one call to
a declared tool with JSON-object arguments, or none for the prompt that needs no tool), the stream
tells the same story as the finished response, and both finish alike. `--force` pins the output
through structured outputs (see `forced.py`), so a weak model on a CPU is as good as a strong one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import parse
from ..detect import PROBE_TOOLS
from .forced import Call, forced_body, write_calls
from .openai_stream import StreamFold

LONG_TEXT = (
    "Release notes, draft 3. The parser now keeps a partial marker back only while it can still become "
    'one; a quote (") or a backslash (\\) inside an argument is data; café, Zürich and 東京 stay as '
    "written. " * 6
).strip()


@dataclass(frozen=True)
class Prompt:
    """One smoke prompt: what the user asks, the calls a good answer holds, and (for --force) the
    content the forced text starts with."""

    name: str
    user: str
    calls: tuple[Call, ...]
    content: str | None = None


PROMPTS = (
    Prompt("one call", "What is the weather in Paris? Use the tool.", (("get_weather", {"city": "Paris"}),)),
    Prompt(
        "two parallel calls",
        "What is the weather in Paris and in Tokyo? Call the tool once per city.",
        (("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})),
    ),
    Prompt(
        "long string argument",
        f"Search the web for exactly this text: {LONG_TEXT}",
        (("search", {"query": LONG_TEXT}),),
        content="Searching for it.",
    ),
    Prompt("no tool needed", "Say hello in one short sentence. Do not call any tool.", (), "Hello! How can I help?"),
)


@dataclass
class Answer:
    """What a client got for one request."""

    content: str | None = None
    calls: list[Call] = field(default_factory=list)
    finish: str | None = None
    first_call_delta: float | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)
    """Breaches of OpenAI's delta rules (`openai_stream`) and arguments that are not a JSON object."""


@dataclass
class SmokeRow:
    prompt: str
    plain: Answer
    streamed: Answer
    parsed_ok: bool
    same: bool
    finish_ok: bool
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.parsed_ok and self.same and self.finish_ok


def forced_text(parser: str, prompt: Prompt) -> str:
    if not prompt.calls:
        return prompt.content or ""
    text = write_calls(parser, list(prompt.calls), tools=PROBE_TOOLS)
    return f"{prompt.content}\n{text}" if prompt.content else text


def _calls(tool_calls: list[tuple[str | None, Any]]) -> tuple[list[Call], list[str]]:
    calls, problems = [], []
    for name, arguments in tool_calls:
        if arguments is not None and not isinstance(arguments, str):
            kind = type(arguments).__name__
            problems.append(f"arguments of {name!r} are not a JSON string (the server sent a {kind})")
            continue
        try:
            value = json.loads(arguments or "{}")
        except json.JSONDecodeError:
            problems.append(f"arguments of {name!r} are not JSON: {arguments[:80]!r}")
            continue
        if not isinstance(value, dict):
            problems.append(f"arguments of {name!r} are not an object")
        calls.append((name or "", value))
    return calls, problems


def bounded_ask(
    client: Any, model: str, prompt: Prompt, raw: str | None, stream: bool, seconds: float | None
) -> tuple[Answer, list[str]]:
    """`ask`, failed after `seconds` whatever the server does: the client's timeout bounds each read,
    so a server that drips a byte (or an SSE ping) now and then would hold a request for as long as
    it drips. The request runs in a daemon thread, left behind on time-out (the process ends it)."""
    if seconds is None:
        return ask(client, model, prompt, raw, stream)
    box: list[tuple[Answer, list[str]]] = []
    worker = threading.Thread(target=lambda: box.append(ask(client, model, prompt, raw, stream)), daemon=True)
    worker.start()
    worker.join(seconds)
    if box:
        return box[0]
    answer = Answer(error=f"timed out after {seconds:g} s (--timeout)")
    return answer, [answer.error]


def ask(client: Any, model: str, prompt: Prompt, raw: str | None, stream: bool) -> tuple[Answer, list[str]]:
    """One request; never raises (a failed request is an answer with `error`)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": prompt.user}],
        "tools": PROBE_TOOLS,
        "tool_choice": "auto",
        "temperature": 0,
        "max_tokens": min(len(raw) + 32, 1800) if raw is not None else 512,
    }
    if raw is not None:
        body["extra_body"] = forced_body(raw)
    answer, started = Answer(), time.monotonic()
    delta_problems: list[str] = []
    try:
        if not stream:
            choice = client.chat.completions.create(**body).choices[0]
            answer.content, answer.finish = choice.message.content, choice.finish_reason
            pairs = [(c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
        else:
            fold = StreamFold()
            for chunk in client.chat.completions.create(**body, stream=True):
                fold.add_chunk(chunk)
                if answer.first_call_delta is None and fold.by_index:
                    answer.first_call_delta = time.monotonic() - started
            answer.content, answer.finish = fold.content, fold.finish
            pairs = [(call.name, call.arguments) for call in fold.calls]
            delta_problems = fold.problems
    except Exception as err:  # one failed request is a row of the report, never a crash
        answer.error = f"{type(err).__name__}: {err}"[:300]
        return answer, [answer.error]
    answer.calls, answer.problems = _calls(pairs)
    answer.problems = delta_problems + answer.problems
    return answer, answer.problems


def _stripped(text: str | None) -> str | None:
    return (text or "").strip() or None


def check(prompt: Prompt, plain: Answer, streamed: Answer, raw: str | None, parser: str | None) -> SmokeRow:
    problems: list[str] = [
        f"{mode}: {p}" for mode, a in (("non-stream", plain), ("stream", streamed)) for p in a.problems
    ]
    declared = {t["function"]["name"] for t in PROBE_TOOLS}
    for mode, answer in (("non-stream", plain), ("stream", streamed)):
        if answer.error:
            continue
        if raw is not None and parser is not None:
            expected = parse(parser, raw, tools=PROBE_TOOLS)
            want = [(c.name, c.arguments) for c in expected.calls]
            if answer.calls != want:
                problems.append(f"{mode}: calls {answer.calls!r} != {want!r}")
            if _stripped(answer.content) != expected.content:
                problems.append(f"{mode}: content {_stripped(answer.content)!r} != {expected.content!r}")
        elif prompt.calls:
            if not answer.calls:
                problems.append(f"{mode}: no tool call")
            problems += [f"{mode}: undeclared tool {n!r}" for n, _ in answer.calls if n not in declared]
        elif answer.calls:
            problems.append(f"{mode}: a call where none was needed: {answer.calls!r}")
    parsed_ok = not problems and not plain.error and not streamed.error
    same = not plain.error and not streamed.error
    if same and (plain.calls != streamed.calls or _stripped(plain.content) != _stripped(streamed.content)):
        same = False
        problems.append("stream != non-stream")
    finish_ok = plain.finish == streamed.finish and (
        raw is None or plain.finish == ("tool_calls" if prompt.calls else "stop")
    )
    if not finish_ok:
        problems.append(f"finish reasons {plain.finish!r} / {streamed.finish!r}")
    errors = [a.error for a in (plain, streamed) if a.error]
    return SmokeRow(prompt.name, plain, streamed, parsed_ok, same, finish_ok, errors + problems)


def run_smoke(
    client: Any,
    model: str,
    parser: str | None,
    force: bool,
    on_request: Callable[[], None] | None = None,
    timeout: float | None = None,
) -> list[SmokeRow]:
    """Every prompt, non-streamed then streamed, each request failed after `timeout` seconds. `force`
    needs `parser` (the format to write)."""
    rows = []
    for prompt in PROMPTS:
        raw = forced_text(parser, prompt) if force and parser else None
        answers = []
        for stream in (False, True):
            answer, _ = bounded_ask(client, model, prompt, raw, stream, timeout)
            answers.append(answer)
            if on_request:
                on_request()
        rows.append(check(prompt, answers[0], answers[1], raw, parser))
    return rows


def row_json(row: SmokeRow) -> dict[str, Any]:
    return {
        "prompt": row.prompt,
        "ok": row.ok,
        "parsed_ok": row.parsed_ok,
        "stream_equals_non_stream": row.same,
        "first_tool_call_delta_s": row.streamed.first_call_delta,
        "finish_reason": {"non_stream": row.plain.finish, "stream": row.streamed.finish},
        "calls": [list(c) for c in row.plain.calls],
        "problems": row.problems,
    }
