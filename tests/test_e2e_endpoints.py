"""Every format through vLLM's three endpoints and their real clients, streamed and not, on one real
`vllm serve` (CPU build, SmolLM2-135M): `/v1/chat/completions` and `/v1/responses` through the
`openai` client, `/v1/messages` through the `anthropic` client.

Each case's raw text is forced on real token deltas by the test-only logits processor
(`server_plugins/forced_text.py`, through `vllm_xargs`, which every endpoint takes), and the server
builds the format's own vLLM parser object per request (`server_plugins/any_format.py`; loading
through the entry point is proven on the `hermes_json` server, tests/test_e2e_hermes_json.py).
What the client ends with (`toolbox.replies`: text, calls with ids, stop reason, and the endpoint's
streaming rules, such as argument fragments adding up to the final arguments) must equal `parse()`
of the same text. The cases: two calls after text, the second's string holding the format's end
marker; a call between text before and after; a malformed call (text under the default policy);
a `max_tokens` cut inside a call (the generated prefix's `parse()`, stop reason `length`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from endpoint_cases import PROMPT, Case, ask_case, cases, differences, tools_for
from helpers import needs
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.toolbox.endpoints import ask
from toolcall_parsers.toolbox.replies import APIS
from vllm_server import SERVED_NAME

# one vllm serve at a time: on one worker
pytestmark = [needs("vllm"), pytest.mark.e2e, pytest.mark.xdist_group("vllm_serve")]


@pytest.fixture(scope="module")
def codec(smollm2_tokenizer):
    tok = smollm2_tokenizer
    return (lambda text: tok.encode(text, add_special_tokens=False)), (lambda ids: tok.decode(list(ids)))


def test_the_forced_cases_hold_what_they_claim(codec):
    """The malformed call is text under the default policy and the cut is inside a call, for every
    format (so the endpoint cases below test what they say)."""
    for fmt in FORMATS:
        tools = tools_for(fmt)
        by_name = {name: raw for name, _, _, raw in cases(fmt, *codec)}
        assert len(parse(fmt, by_name["two calls"], tools).calls) == 2, fmt
        assert len(parse(fmt, by_name["text around a call"], tools).calls) == 1, fmt
        malformed = parse(fmt, by_name["malformed call"], tools)
        assert malformed.calls == [] and malformed.content == by_name["malformed call"], fmt
        cut = parse(fmt, by_name["max_tokens cut"], tools)
        assert cut.calls == [] and cut.content is not None and cut.content.startswith("Checking."), fmt


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_endpoint_streamed_and_not_ends_with_what_parse_finds(any_format_server, codec, fmt):
    jobs = [(case, api, stream) for case in cases(fmt, *codec) for api in APIS for stream in (False, True)]

    def run(job: tuple[Case, str, bool]) -> list[str]:
        case, api, stream = job
        name, _, max_tokens, raw = case
        reply = ask_case(any_format_server, fmt, case, api, stream)
        mode = "streamed" if stream else "finished"
        return [f"{name} / {api} / {mode}: {p}" for p in differences(fmt, raw, reply, max_tokens is not None)]

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:  # all at once: the server batches them
        found = [p for problems in pool.map(run, jobs) for p in problems]
    assert not found, "\n".join(found)


def strict_tools(fmt: str) -> list[dict[str, Any]]:
    """One strict tool whose argument is an enum, naming `fmt` for the server's parser choice."""
    city = {"type": "string", "enum": ["Paris", "Tokyo"]}
    parameters = {"type": "object", "properties": {"city": city}, "required": ["city"], "additionalProperties": False}
    function = {"name": "get_weather", "description": f"[format: {fmt}] The weather", "strict": True}
    return [{"type": "function", "function": {**function, "parameters": parameters}}]


NAMED = {"type": "function", "function": {"name": "get_weather"}}
REASONING_FIRST = {fmt: "<|channel|>analysis<|message|>" for fmt in ("harmony_json", "beam_xml")}
"""Formats whose `required` constraint lets the model reason first, in free text (Harmony's analysis
channel): the weak model may reason until `max_tokens`."""


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_tool_choice_and_strict_tools_on_every_endpoint(any_format_server, fmt):
    """Unforced, so the format's constraints decide: `required` and a named tool (Messages' `any`
    and `tool`) give calls of the declared tool, the strict tool's enum kept where the format pins
    arguments; `none` gives text only; strict `auto` lets the model answer in text, and any call it
    makes keeps the schema. Streamed, and `required` also finished. Where the format pins only the
    envelope (`xml_tools`), the weak model may fill the free body until `max_tokens`, and where it
    may reason first (`REASONING_FIRST`), the reasoning: then the text must be what the constraint
    opened."""
    pins = FORMATS[fmt].pins_arguments
    # a constrained call may take a token per character (the grammar masks the merges): room for two
    budget = 2 * len(FORMATS[fmt].write([("get_weather", {"city": "Tokyo"})])) + 60
    jobs = [(api, choice, True) for api in APIS for choice in ("required", NAMED, "none", "auto")]
    jobs += [(api, "required", False) for api in APIS]

    def run(job: tuple[str, Any, bool]) -> list[str]:
        api, choice, stream = job
        tools = strict_tools(fmt)
        reply = ask(
            any_format_server,
            api,
            SERVED_NAME,
            PROMPT,
            tools,
            stream=stream,
            max_tokens=budget,
            tool_choice=choice,
            temperature=0,
        )
        where = f"{api} / {choice if isinstance(choice, str) else 'named'} / {'streamed' if stream else 'finished'}"
        problems = list(reply.problems)
        if choice == "none" and reply.calls:
            problems.append(f"calls under tool_choice none: {reply.pairs()}")
        if choice in ("required", NAMED) and not reply.calls:
            content = reply.content or ""
            opened = content.startswith(FORMATS[fmt].markers[0])
            reasoning = fmt in REASONING_FIRST and content.startswith(REASONING_FIRST[fmt])
            # an envelope's free body, or the free reasoning before the call, may run to the end
            if (pins and not reasoning) or reply.stop != "length" or not (opened or reasoning):
                problems.append(f"no call (stop {reply.stop}, content {reply.content!r})")
        for name, arguments in reply.pairs():
            if name != "get_weather" or (pins and arguments not in ({"city": "Paris"}, {"city": "Tokyo"})):
                problems.append(f"a call outside the strict schema: {name} {arguments!r}")
        return [f"{where}: {p}" for p in problems]

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        found = [p for problems in pool.map(run, jobs) for p in problems]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("fmt", ["hermes_json", "qwen_xml"])
def test_a_strict_call_its_schema_refuses_is_text_on_every_endpoint(any_format_server, fmt):
    """Strict `auto` on the real server, the model's text forced: `not`, which xgrammar leaves
    unchecked, admits `{"n": 3}` to decoding; the parser's check gives that call back as text,
    streamed and finished, on every endpoint, and keeps `{"n": 4}` a call."""
    pick = {"type": "object", "properties": {"n": {"type": "integer", "not": {"const": 3}}}, "required": ["n"]}
    function = {"name": "pick", "description": f"[format: {fmt}] A number but 3", "strict": True}
    tools = [{"type": "function", "function": {**function, "parameters": pick}}]
    jobs = [(api, stream, n) for api in APIS for stream in (True, False) for n in (3, 4)]

    def run(job: tuple[str, bool, int]) -> list[str]:
        api, stream, n = job
        written = FORMATS[fmt].write([("pick", {"n": n})])
        forced = "Sure. " + written
        reply = ask(any_format_server, api, SERVED_NAME, PROMPT, tools, stream=stream, xargs={"force_text": forced})
        where = f"{api} / {'streamed' if stream else 'finished'} / n={n}"
        problems = [f"{where}: {p}" for p in reply.problems]
        if n == 4 and reply.pairs() != [("pick", {"n": 4})]:
            problems.append(f"{where}: calls {reply.pairs()}")
        if n == 3 and (reply.calls or written.strip() not in (reply.content or "")):
            problems.append(f"{where}: calls {reply.pairs()}, content {reply.content!r}")
        return problems

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        found = [p for problems in pool.map(run, jobs) for p in problems]
    assert not found, "\n".join(found)
