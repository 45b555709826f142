"""Operator metrics (`toolcall_parsers.metrics`, `core.tally`): each kind of output counted by what
it is, the count agreeing with the log lines and changing nothing the parser returns, and the
counters moving by exactly what was sent through vLLM's and SGLang's real parser layers, finished
and streamed (the real `vllm serve`'s `/metrics`: tests/test_e2e_hermes_json.py)."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from typing import Any

import pytest
from helpers import load_corpus, needs
from test_e2e_sglang_serving import stack  # noqa: F401  (the serving-layer fixture)
from toolcall_parsers import FORMATS, get_format
from toolcall_parsers.core.events import build_result
from toolcall_parsers.core.tally import KINDS, Tally, reason_kind

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
TOOLS = [WEATHER]


def _tally(fmt: str, text: str, *, strict: bool = False, **limits: Any) -> tuple[int, Tally]:
    stream = get_format(fmt).stream(TOOLS, strict=strict)
    stream.limits = replace(stream.limits, **limits)
    stream.audit_schemas()
    result = build_result(stream.feed(text) + stream.close())
    return len(result.calls), stream.tally


def _calls(fmt: str, *calls: tuple[str, dict[str, Any]]) -> str:
    return get_format(fmt).write(list(calls))


@pytest.mark.parametrize("fmt", ["hermes_json", "qwen_xml", "minimax_xml", "glm_xml", "deepseek_json", "tagged"])
def test_each_kind_of_output_is_counted_as_what_it_is(fmt):
    good = _calls(fmt, ("get_weather", {"city": "Paris"}))
    assert _tally(fmt, good) == (1, Tally(calls=1))
    undeclared = _calls(fmt, ("launch", {"city": "x"}))
    assert _tally(fmt, undeclared) == (1, Tally(calls=1, undeclared_calls=1))
    calls, tally = _tally(fmt, undeclared, undeclared_as_text=True)
    assert (calls, tally.rejected) == (0, {"undeclared_tool": 1})
    breaking = _calls(fmt, ("get_weather", {"town": "Paris"}))  # `city` is required
    assert _tally(fmt, breaking) == (1, Tally(calls=1, schema_failures=1))
    calls, tally = _tally(fmt, breaking, strict=True)
    assert (calls, tally.rejected, tally.schema_failures) == (0, {"schema": 1}, 0)
    cut = good[: len(good) * 2 // 3]
    calls, tally = _tally(fmt, cut)
    assert (calls, tally.rejected) == (0, {"truncated": 1})
    assert tally.rejected_chars["truncated"] <= len(cut)
    calls, tally = _tally(fmt, good + "\n" + good, max_calls=1)
    assert (calls, tally.rejected) == (1, {"bound": 1})
    calls, tally = _tally(fmt, _calls(fmt, ("get_\ud800weather", {"city": "x"})))
    # tagged's name ends at a character no name holds, so its line breaks there (malformed)
    assert (calls, tally.rejected) == (0, {"malformed" if fmt == "tagged" else "refused_name": 1})


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_refused_undeclared_call_is_one_block_of_its_kind_in_every_format(fmt):
    """With undeclared tools as text, one call to one is one span of kind `undeclared_tool` (the
    markup left of its block counted with it), in every format whose writer it reads as a call."""
    calls, tally = _tally(fmt, _calls(fmt, ("launch", {"city": "x"})), undeclared_as_text=True)
    assert calls == 0
    assert tally.rejected in ({"undeclared_tool": 1}, {}), tally  # {}: a format whose block needs a declared tool


@pytest.mark.parametrize(
    "text",
    [
        "<tool_call>\nTOOLCALL_PARSERS_MAX_CALLS</tool_call>",  # an outside review: the output named a bound
        "<tool_call>\n(TOOLCALL_PARSERS_MAX_CALLS)</tool_call>",
        "<tool_call>\nthe request did not declare</tool_call>",
    ],
)
def test_the_output_cannot_pick_its_own_kind(text):
    """A reason quotes what the output wrote; what it quotes is not read when sorting."""
    assert _tally("qwen_xml", text)[1].rejected == {"malformed": 1}


def test_the_schema_audit_counts_only_what_it_could_check():
    """A schema whose branches multiply past the audit's budget, or that cannot be used, counts no
    schema failure (the call may be valid); a call its schema refuses still counts."""

    def nest(depth: int) -> dict[str, Any]:
        return {"type": "string"} if depth == 0 else {"anyOf": [nest(depth - 1) for _ in range(6)]}

    heavy = {"type": "object", "properties": {"a": nest(4)}}
    broken = {"type": "object", "properties": {"a": {"$ref": "http://example.com/schema.json"}}}
    for parameters in (heavy, broken):
        tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
        stream = get_format("hermes_json").stream(tools)
        stream.audit_schemas()
        text = get_format("hermes_json").write([("f", {"a": 1})] * 3)
        build_result(stream.feed(text) + stream.close())
        assert (stream.tally.calls, stream.tally.schema_failures) == (3, 0)
    assert _tally("hermes_json", _calls("hermes_json", ("get_weather", {"city": 5})))[1].schema_failures == 1


def test_a_strict_call_to_an_undeclared_tool_is_counted_as_undeclared():
    calls, tally = _tally("hermes_json", _calls("hermes_json", ("launch", {})), strict=True)
    assert (calls, tally.rejected) == (0, {"undeclared_tool": 1})


def test_a_malformed_block_is_counted_malformed():
    calls, tally = _tally("hermes_json", '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>')
    assert (calls, tally.rejected) == (0, {"malformed": 1})


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("more than 64 calls in one response (TOOLCALL_PARSERS_MAX_CALLS)", "bound"),
        ("a name longer than 256 characters (TOOLCALL_PARSERS_MAX_NAME)", "bound"),
        ("the output ended inside a tool call", "truncated"),
        ("a call to 'x', which the request did not declare", "undeclared_tool"),
        ("<x> is not a tool the request declares", "undeclared_tool"),
        ("the tool name holds a lone surrogate", "refused_name"),
        ("a tag with an empty name", "refused_name"),
        ("a parameter with an empty name", "malformed"),
        ("not a valid call (unexpected '}')", "malformed"),
    ],
)
def test_reasons_sort_into_their_kinds(reason, kind):
    assert reason_kind(reason) == kind and kind in KINDS


def _ids(name: str, index: int) -> str:
    return f"call_{index}"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_counting_changes_nothing_and_tells_the_log_lines_story(fmt, caplog):
    """Over the format's corpus: the events with the schema audit on equal those without, and each
    span given back as text is one log line (while under the per-response log bound; the rest of a
    block whose call was refused is a line of its own, and counted with that call)."""
    for case in load_corpus(fmt):
        if case.get("options"):
            continue
        tools, text = case.get("tools"), case["text"]
        plain = get_format(fmt).stream(tools, _ids)
        expected = plain.feed(text) + plain.close()
        audited = get_format(fmt).stream(tools, _ids)
        audited.audit_schemas()
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="toolcall_parsers"):
            assert audited.feed(text) + audited.close() == expected, case["id"]
        kept = sum("kept as text" in r.getMessage() for r in caplog.records)
        if not any("not logged" in r.getMessage() for r in caplog.records):
            assert audited.tally.spans == kept, case["id"]
        assert audited.tally.calls == len(build_result(expected).calls), case["id"]


# -- through the engines' parser layers, into prometheus_client's registry --------------------------

SENT = {
    "good": '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    "malformed": '<tool_call>{"name": "get_weather", "arguments": {"city": }</tool_call>',
    "undeclared": '<tool_call>{"name": "launch", "arguments": {}}</tool_call>',
    "breaking": '<tool_call>{"name": "get_weather", "arguments": {"city": 5}}</tool_call>',
    "cut": 'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Par',
}
"""One output of each kind, in `hermes_json`."""
MOVED = {
    ("responses", ()): 5,
    ("calls", ()): 3,
    ("undeclared_calls", ()): 1,
    ("schema_failures", (("strict", "false"),)): 1,
    ("rejected_blocks", (("reason", "malformed"),)): 1,
    ("rejected_blocks", (("reason", "truncated"),)): 1,
    # the spans given back: the malformed block up to where it broke, the cut call after the prose
    ("rejected_chars", (("reason", "malformed"),)): len(SENT["malformed"]) - len("}</tool_call>"),
    ("rejected_chars", (("reason", "truncated"),)): len(SENT["cut"]) - len("Checking.\n"),
}
"""What the five outputs move each counter by (per engine, format and mode)."""


def counter_values(text: str | None = None) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Our counters' samples: from the exposition `text` (a server's /metrics), or this process's
    default registry."""
    from prometheus_client import REGISTRY, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    text = generate_latest(REGISTRY).decode() if text is None else text
    values = {}
    for family in text_string_to_metric_families(text):
        if family.name.startswith("toolcall_parsers:"):
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    values[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return values


def moved_by(before: dict, after: dict, engine: str, mode: str) -> dict[tuple[str, tuple], float]:
    """How much each counter of `engine` / `hermes_json` / `mode` moved, keyed as `MOVED` is."""
    out = {}
    for (name, labels), value in after.items():
        labels = dict(labels)
        if (labels.pop("engine"), labels.pop("format"), labels.pop("mode")) != (engine, "hermes_json", mode):
            continue
        delta = value - before.get(
            (name, frozenset({**labels, "engine": engine, "format": "hermes_json", "mode": mode}.items())), 0
        )
        if delta:
            out[(name.removeprefix("toolcall_parsers:").removesuffix("_total"), tuple(sorted(labels.items())))] = delta
    return out


@needs("vllm")
def test_vllms_parser_layer_moves_each_counter_by_what_was_sent(smollm2_tokenizer):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.plugins import load_general_plugins
    from vllm.tool_parsers import ToolParserManager

    load_general_plugins()
    cls = ToolParserManager.get_tool_parser("hermes_json")
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=TOOLS)
    before = counter_values()
    for text in SENT.values():
        cls(smollm2_tokenizer, request.tools).extract_tool_calls(text, request)
    middle = counter_values()
    assert moved_by(before, middle, "vllm", "finished") == MOVED
    for text in SENT.values():
        parser = cls(smollm2_tokenizer, request.tools)
        for i in range(len(text)):
            parser.extract_tool_calls_streaming(text[:i], text[: i + 1], text[i], [], [], [], request)
        parser.finish_streaming()
        parser.finish_streaming()  # a second end counts nothing
    assert moved_by(middle, counter_values(), "vllm", "streamed") == MOVED


@needs("sglang")
def test_sglangs_parser_layer_moves_each_counter_by_what_was_sent():
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins

    load_plugins()
    tools = [Tool.model_validate(tool) for tool in TOOLS]
    before = counter_values()
    for text in SENT.values():
        parser = FunctionCallParser(tools, "hermes_json")
        if parser.has_tool_call(text):  # as SGLang's serving layer asks, then parses
            parser.parse_non_stream(text)
    middle = counter_values()
    assert moved_by(before, middle, "sglang", "finished") == MOVED
    for text in SENT.values():
        parser = FunctionCallParser(tools, "hermes_json")
        for char in text:
            parser.parse_stream_chunk(char)
        parser.parse_stream_end()
    assert moved_by(middle, counter_values(), "sglang", "streamed") == MOVED


def test_labels_are_bounded():
    """Every label value is an engine, a format, a mode or a fixed kind: never a tool name."""
    values = counter_values()
    for _, labels in values:
        for key, value in labels:
            assert key in ("engine", "format", "mode", "reason", "strict", "end"), key
            assert value != "get_weather" and value != "launch"
    assert json.dumps(sorted(KINDS))


@needs("sglang")
def test_sglangs_serving_layer_moves_each_counter_by_what_was_sent(stack):  # noqa: F811
    """Through `OpenAIServingChat.handle_request` (the model scripted): finished, then streamed."""
    before = counter_values()
    for text in SENT.values():
        stack.run("hermes_json", [text], stream=False, tools=TOOLS)
    middle = counter_values()
    assert moved_by(before, middle, "sglang", "finished") == MOVED
    for text in SENT.values():
        stack.run("hermes_json", list(text), stream=True, tools=TOOLS)
    assert moved_by(middle, counter_values(), "sglang", "streamed") == MOVED
