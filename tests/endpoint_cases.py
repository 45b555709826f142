"""The endpoint cases of every format (tests/test_e2e_endpoints.py, scripts/endpoint_scores.py): the
server they run on, the raw texts to force, one case's request, and how what a client ends with
differs from `parse()` of the same text."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolcall_parsers import FORMATS, parse
from toolcall_parsers.toolbox.endpoints import ask
from toolcall_parsers.toolbox.replies import Reply
from vllm_server import SERVED_NAME, SPEED_FLAGS, vllm_server

PLUGINS = Path(__file__).resolve().parent / "server_plugins"
PROMPT = "What is the weather in Paris?"


@contextlib.contextmanager
def any_format_server(model_dir: Path) -> Iterator[str]:
    """A real `vllm serve` for every format at once: the test-only `--tool-call-parser
    toolcall_parsers_any` builds, per request, the parser of the format the request's tools name
    (`server_plugins/any_format.py`), and the test-only logits processor `forced_text:ForcedText`
    writes a request's `vllm_xargs["force_text"]` on any endpoint (`server_plugins/forced_text.py`).
    Its base URL."""
    args = [
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "toolcall_parsers_any",
        "--tool-parser-plugin",
        str(PLUGINS / "any_format.py"),
        "--logits-processors",
        "forced_text:ForcedText",
        "--chat-template",  # any template: the outputs are forced
        str(PLUGINS.parent.parent / "chat_templates" / "hermes_json.jinja"),
        *SPEED_FLAGS.split(),
    ]
    path = os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")]))
    with vllm_server(model_dir, args, env={"PYTHONPATH": path}) as base_url:
        yield base_url


def tools_for(fmt: str, parser: str | None = None) -> list[dict[str, Any]]:
    """Two tools, the first naming `parser` (default `fmt`; `builtin:NAME` for vLLM's) for the
    server's per-request parser choice."""
    string = {"type": "string"}
    return [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": f"[format: {parser or fmt}] The weather in a city",
                "parameters": {"type": "object", "properties": {"city": string}, "required": ["city"]},
            },
        },
        {
            "type": "function",
            "function": {
                "name": "search",
                "description": "Search the web",
                "parameters": {"type": "object", "properties": {"query": string}, "required": ["query"]},
            },
        },
    ]


Case = tuple[str, str, int | None, str]
"""(name, the text forced, max_tokens or None, the text the model ends up writing)."""


def cases(fmt: str, encode: Any, decode: Any) -> list[Case]:
    """`fmt`'s cases, every text written by its writer."""
    spec = FORMATS[fmt]
    end = spec.markers[-1] if spec.markers else ""
    one = spec.write([("get_weather", {"city": "Paris"})])
    query = f"explain the {end} marker, ü"
    two = "Let me check both.\n" + spec.write([("get_weather", {"city": "Paris"}), ("search", {"query": query})])
    around = f"First this.\n{one}\nThen that."
    malformed = f"Trying.\n{one[: len(one) // 2]} ?? {end}\nSorry."
    cut = "Checking.\n" + spec.write([("search", {"query": query})])
    ids = encode(cut)
    # A few tokens before the first prefix that reads as a call (a call cut after its payload is a
    # call, and the server may split the forced text a token apart from `encode`), on a whole
    # character (a cut inside one decodes to U+FFFD here, while the server holds its bytes back).
    first_call = next(n for n in range(1, len(ids) + 1) if parse(fmt, decode(ids[:n]), tools_for(fmt)).calls)
    kept = first_call - 3
    while kept > 1 and decode(ids[:kept]).endswith("\ufffd"):
        kept -= 1
    return [
        ("two calls", two, None, two),
        ("text around a call", around, None, around),
        ("malformed call", malformed, None, malformed),
        ("max_tokens cut", cut, kept, decode(ids[:kept])),  # a cut that is no call
    ]


def differences(fmt: str, raw: str, reply: Reply, length: bool) -> list[str]:
    """How `reply` differs from `parse()` of `raw`."""
    expected = parse(fmt, raw, tools_for(fmt))
    problems = list(reply.problems)
    want = [(c.name, c.arguments) for c in expected.calls]
    if reply.pairs() != want:
        problems.append(f"calls {reply.pairs()} != parse() {want}")
    if reply.content != expected.content:
        problems.append(f"content {reply.content!r} != parse() {expected.content!r}")
    stop = "length" if length else ("tool_calls" if expected.calls else "stop")
    if reply.stop != stop:
        problems.append(f"stop {reply.stop!r} != {stop!r}")
    ids = [call_id for call_id, _, _ in reply.calls]
    if not all(ids) or len(set(ids)) != len(ids):
        problems.append(f"call ids missing or repeated: {ids}")
    if FORMATS[fmt].own_ids:  # the format's id rule, not vLLM's: the same ids, or (random) the same form
        own = [c.id for c in expected.calls]
        fixed = own == [c.id for c in parse(fmt, raw, tools_for(fmt)).calls]
        if (ids != own) if fixed else ([len(i or "") for i in ids] != [len(i) for i in own]):
            problems.append(f"ids {ids} are not the format's own (parse(): {own})")
    return problems


def ask_case(base_url: str, fmt: str, case: Case, api: str, stream: bool, parser: str | None = None) -> Reply:
    """`case` forced through `api` with `fmt`'s tools (naming `parser`, default `fmt`)."""
    _, forced, max_tokens, _ = case
    tools = tools_for(fmt, parser)
    return ask(
        base_url,
        api,
        SERVED_NAME,
        PROMPT,
        tools,
        stream=stream,
        max_tokens=max_tokens or 400,
        xargs={"force_text": forced},
    )
