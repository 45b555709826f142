"""`toolcall-parsers smoke`: a fixed set of tool-calling prompts against any OpenAI-compatible server.

Each prompt is asked twice, streamed and not, through the endpoint the operator's agent uses
(`--api`: Chat Completions, the Responses API or Anthropic Messages, with the real clients; see
`endpoints`), and checked: the calls parse (with `--force`, exactly
the calls the forced text holds, and the content our `parse()` finds; without, at least one call to
a declared tool with JSON-object arguments, or none for the prompt that needs no tool), the stream
tells the same story as the finished response (and keeps the endpoint's streaming rules), and both
finish alike. `--force` pins the output through structured outputs (see `forced.py`), so a weak
model on a CPU is as good as a strong one; `/v1/messages` has no structured outputs, so there it
runs unforced.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import parse
from ..detect import PROBE_TOOLS
from . import endpoints
from .forced import Call, forced_body, write_calls
from .replies import Reply

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


@dataclass(frozen=True)
class Server:
    """Where smoke asks: the API's base URL (`http://host:port/v1`), the endpoint (`chat`,
    `responses` or `messages`), the model, the key, the client's timeout per read, the token budget."""

    base_url: str
    model: str
    api: str = "chat"
    api_key: str = "unused"
    timeout: float = 600.0
    max_tokens: int = 512
    """Per unforced request; a forced one gets its text's length."""


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


def _calls(reply: Reply) -> list[Call]:
    """The reply's calls with their arguments decoded; one whose arguments are not a JSON object
    is left out (the reply has the problem)."""
    return [(name, value) for name, value in reply.pairs() if isinstance(value, dict)]


def bounded_ask(
    server: Server, prompt: Prompt, raw: str | None, stream: bool, seconds: float | None
) -> tuple[Answer, list[str]]:
    """`ask`, failed after `seconds` whatever the server does: the client's timeout bounds each read,
    so a server that drips a byte (or an SSE ping) now and then would hold a request for as long as
    it drips. The request runs in a daemon thread, left behind on time-out (the process ends it)."""
    if seconds is None:
        return ask(server, prompt, raw, stream)
    box: list[tuple[Answer, list[str]]] = []
    worker = threading.Thread(target=lambda: box.append(ask(server, prompt, raw, stream)), daemon=True)
    worker.start()
    worker.join(seconds)
    if box:
        return box[0]
    answer = Answer(error=f"timed out after {seconds:g} s (--timeout)")
    return answer, [answer.error]


def ask(server: Server, prompt: Prompt, raw: str | None, stream: bool) -> tuple[Answer, list[str]]:
    """One request through the server's `api`; never raises (a failed request is an answer with
    `error`)."""
    max_tokens = min(len(raw) + 32, 1800) if raw is not None else server.max_tokens
    answer = Answer()
    try:
        reply = endpoints.ask(
            server.base_url,
            server.api,
            server.model,
            prompt.user,
            PROBE_TOOLS,
            stream=stream,
            max_tokens=max_tokens,
            extra=forced_body(raw) if raw is not None else None,
            timeout=server.timeout,
            api_key=server.api_key,
            temperature=0,
        )
    except Exception as err:  # one failed request is a row of the report, never a crash
        answer.error = f"{type(err).__name__}: {err}"[:300]
        return answer, [answer.error]
    answer.content, answer.finish, answer.first_call_delta = reply.content, reply.stop, reply.first_call_s
    answer.calls, answer.problems = _calls(reply), reply.problems
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
    server: Server,
    parser: str | None,
    force: bool,
    on_request: Callable[[], None] | None = None,
    timeout: float | None = None,
) -> list[SmokeRow]:
    """Every prompt, non-streamed then streamed, each request failed after `timeout` seconds. `force`
    needs `parser` (the format to write) and an endpoint with structured outputs (not `messages`)."""
    rows = []
    for prompt in PROMPTS:
        raw = forced_text(parser, prompt) if force and parser else None
        answers = []
        for stream in (False, True):
            answer, _ = bounded_ask(server, prompt, raw, stream, timeout)
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
