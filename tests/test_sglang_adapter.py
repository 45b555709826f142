"""The SGLang detectors inside SGLang's real function-call layer: `FunctionCallParser` as the serving
layer uses it (`parse_non_stream`; `parse_stream_chunk` per delta, then `parse_stream_end`), found
through the `sglang.srt.plugins` entry point, on the whole corpus of every format in every chunking
(whole, char by char, random splits, the token deltas of real tokenizers): what a client
accumulates must equal our own `parse()`. Also registration through SGLang's real argument parser,
the decoding constraints compiled by SGLang's real xgrammar backend, and property tests.

SGLang 0.5.23 is installed with `--no-deps` next to vLLM (scripts/setup.sh): its function-call layer
imports on CPU; its model runner does not. The serving layer is driven in test_e2e_sglang_serving.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from helpers import (
    PICK_TOOLS,
    char_chunks,
    corpus_cases,
    corpus_ids,
    needs,
    random_chunks,
    run_chunks,
    token_chunks,
)
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_properties import documents, longest_started_call, mutated_documents, split
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.core.events import CallEnd, CallStart
from toolcall_parsers.core.limits import Limits

pytestmark = [needs("sglang"), pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")]

BASE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
    },
]
"""The tools of a request whose corpus case declares none: SGLang parses nothing without tools."""

ONE_CALL = [("get_weather", {"city": "Paris"})]
TWO_CALLS = [*ONE_CALL, ("get_weather", {"city": "Oslo"})]
REQUIRED_SAMPLES = {name: (fmt.write(ONE_CALL), fmt.write(TWO_CALLS)) for name, fmt in FORMATS.items()}
"""Per format: one call to get_weather as our template writes it, and two calls."""
PROSE = "Sure, let me check."


def sglang_tools(tools: list[dict[str, Any]]) -> list[Any]:
    """The request's tools as SGLang's serving layer hands them to `FunctionCallParser`."""
    from sglang.srt.entrypoints.openai.protocol import Tool

    return [Tool.model_validate(tool) for tool in tools]


CASES = corpus_cases()


@pytest.fixture(scope="module", autouse=True)
def plugins():
    from sglang.srt.plugins import load_plugins

    load_plugins()  # SGLang's own: runs every `sglang.srt.plugins` entry point, ours among them


# -- a client of FunctionCallParser ---------------------------------------------------------------


def stream_client(fmt: str, tools: list[dict[str, Any]], chunks: list[str]) -> dict[str, Any]:
    """Stream `chunks` through a fresh `FunctionCallParser` the way the serving layer does, and fold
    what comes out as an OpenAI client would, checking the delta rules on the way: a call's first
    item has the name (SGLang mints its id there), later ones none, and the indexes are 0, 1, ..."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    parser = FunctionCallParser(sglang_tools(tools), fmt)
    content: list[str] = []
    calls: dict[int, list[str]] = {}

    def fold(text: str, items: list[Any]) -> None:
        content.append(text)
        for item in items:
            if item.name:
                assert item.tool_index == len(calls), (item, calls)
                calls[item.tool_index] = [item.name, item.parameters]
            else:
                calls[item.tool_index][1] += item.parameters

    for chunk in chunks:
        fold(*parser.parse_stream_chunk(chunk))
    fold(*parser.parse_stream_end())
    return {
        "content": "".join(content) or None,
        "calls": [(calls[i][0], calls[i][1]) for i in sorted(calls)],
        "detector": parser.detector,
    }


def assert_stream_matches(fmt: str, text: str, tools: list[dict[str, Any]], chunks: list[str], mode: str) -> None:
    expected = parse(fmt, text, tools)
    got = stream_client(fmt, tools, chunks)
    detector = got["detector"]
    assert got["content"] == expected.content, mode
    # A call streamed past the policy's bound that then broke cannot be taken back (README, known
    # limits): the detector names it in incomplete_tool_call_indices, and the rest must be exact.
    finished = [c for i, c in enumerate(got["calls"]) if i not in detector.incomplete_tool_call_indices]
    assert finished == [(c.name, c.arguments_json) for c in expected.calls], mode
    # SGLang's end-of-stream check sends prev_tool_call_arr[-1] past streamed_args_for_tool[-1]: nothing.
    assert [p["arguments"] for p in detector.prev_tool_call_arr] == detector.streamed_args_for_tool


def assert_non_stream_matches(fmt: str, text: str, tools: list[dict[str, Any]]) -> None:
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    expected = parse(fmt, text, tools)
    parser = FunctionCallParser(sglang_tools(tools), fmt)
    content, calls = parser.parse_non_stream(text)
    assert (content or None) == expected.content
    assert [(c.name, c.parameters) for c in calls] == [(c.name, c.arguments_json) for c in expected.calls]
    assert [c.tool_index for c in calls] == list(range(len(calls)))
    # The serving layer parses only when has_tool_call is true, and otherwise returns the text.
    if not FunctionCallParser(sglang_tools(tools), fmt).has_tool_call(text):
        assert (text or None) == expected.content and not expected.calls


# -- the corpus -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "case"), CASES, ids=corpus_ids(CASES))
def test_corpus_through_function_call_parser(fmt, case, codecs):
    text, tools = case["text"], case["tools"] or BASE_TOOLS
    assert_non_stream_matches(fmt, text, tools)
    # tests/test_corpus.py runs every chunking on the stream itself; here one of each kind
    chunkings = {"whole": [text], "chars": char_chunks(text), "random": random_chunks(text, 0)}
    for name, (encode, decode) in codecs.items():
        chunkings[f"tokens:{name}"] = token_chunks(encode, decode, text)
    for mode, chunks in chunkings.items():
        assert_stream_matches(fmt, text, tools, chunks, mode)


# -- registration ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_entry_point_registers_the_detector(fmt):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from toolcall_parsers.sglang.detectors import DETECTOR_CLASSES

    parser = FunctionCallParser(sglang_tools(BASE_TOOLS), fmt)
    assert type(parser.detector) is DETECTOR_CLASSES[fmt]
    assert FunctionCallParser.ToolCallParserEnum[fmt] is DETECTOR_CLASSES[fmt]


def test_sglang_plugins_whitelist_decides(monkeypatch):
    from sglang.srt.plugins import GENERAL_PLUGINS_GROUP, load_plugins_by_group

    monkeypatch.setenv("SGLANG_PLUGINS", "some_other_plugin")
    assert "toolcall_parsers" not in load_plugins_by_group(GENERAL_PLUGINS_GROUP)
    monkeypatch.setenv("SGLANG_PLUGINS", "some_other_plugin,toolcall_parsers")
    assert "toolcall_parsers" in load_plugins_by_group(GENERAL_PLUGINS_GROUP)


def test_sglang_argument_parsing_accepts_our_names(smollm2_dir):
    """In a fresh process, in `python -m sglang.launch_server`'s order: SGLang's argument parser
    refuses `hermes_json` until `load_plugins()` has run our entry point, then accepts every name."""
    code = f"""
import contextlib, io
from sglang.srt.server_args import prepare_server_args
args = ["--model-path", {str(smollm2_dir)!r}, "--device", "cpu", "--tool-call-parser"]
with contextlib.redirect_stderr(io.StringIO()):
    try:
        prepare_server_args(args + ["hermes_json"])
        print("accepted before load_plugins")
    except SystemExit:
        print("refused before load_plugins")
from sglang.srt.plugins import load_plugins
load_plugins()
for name in {list(FORMATS)!r}:
    print(prepare_server_args(args + [name]).tool_call_parser)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[: len(FORMATS) + 1] == ["refused before load_plugins", *FORMATS]


# -- what SGLang asks of a detector ---------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_text_passes_untouched_without_tools(fmt):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from toolcall_parsers.sglang.detectors import DETECTOR_CLASSES

    text = f"  Here: {REQUIRED_SAMPLES[fmt][0]}  "
    parser = FunctionCallParser([], fmt)  # the serving layer never calls a parser without tools; this gates too
    assert parser.parse_non_stream(text) == (text, [])
    assert parser.parse_stream_chunk(text) == (text, []) and parser.parse_stream_end() == ("", [])
    detector = DETECTOR_CLASSES[fmt]()  # and the detector itself, for a direct caller
    assert detector.detect_and_parse(text, []).normal_text == text
    assert detector.parse_streaming_increment(text, []).normal_text == text


@pytest.mark.parametrize(
    ("text", "claimed"),
    [
        ("The answer is 4.", False),  # SGLang keeps the text: it is what we would return
        ("Use <tool_call> tags for calls.", False),  # a marker in prose, no call: the same
        ("  The answer is 4.\n", True),  # we trim, as streaming does
        ('<tool_call>{"name": "search", "arguments": {}}</tool_call>', True),
        ('Broken: <tool_call>{"name": "search", "arguments": {</tool_call>', False),  # text as written
    ],
)
def test_has_tool_call_says_whether_our_reading_differs(text, claimed):
    from toolcall_parsers.sglang.detectors import HermesJsonDetector

    assert HermesJsonDetector().has_tool_call(text) is claimed


def test_every_call_of_one_increment_comes_out():
    """SGLang's own detectors advance one step per increment (a second call in one delta is lost)."""
    text = (
        'On it.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>\n'
        '<tool_call>{"name": "search", "arguments": {"q": "x"}}</tool_call>\nDone.'
    )
    got = stream_client("hermes_json", BASE_TOOLS, [text])
    assert got["content"] == parse("hermes_json", text, BASE_TOOLS).content == "On it.\n\n\nDone."
    assert got["calls"] == [("get_weather", '{"city": "Oslo"}'), ("search", '{"q": "x"}')]


@pytest.mark.parametrize("fmt", FORMATS)
def test_finish_releases_what_was_held(fmt):
    text = "The tag is\n" + FORMATS[fmt].markers[0][:-1]  # the opener but its last character, at a line start
    got = stream_client(fmt, BASE_TOOLS, list(text))
    assert got["content"] == text and got["calls"] == []


def test_the_streaming_policy_applies_unchanged(monkeypatch):
    """Calls are held until complete (or past the bound); `TOOLCALL_PARSERS_STREAMING` sets it,
    server-wide: SGLang hands a detector no request, so there is no per-request policy."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    args = json.dumps({"content": "x" * 600})
    text = f'<tool_call>{{"name": "search", "arguments": {args}}}</tool_call>'
    parser = FunctionCallParser(sglang_tools(BASE_TOOLS), "hermes_json")
    first = [parser.parse_stream_chunk(c)[1] for c in (text[:40], text[40:300])]
    assert first == [[], []]  # held: under 512 characters of arguments so far
    monkeypatch.setenv("TOOLCALL_PARSERS_STREAMING", "eager")
    parser = FunctionCallParser(sglang_tools(BASE_TOOLS), "hermes_json")
    _, items = parser.parse_stream_chunk(text[:40])
    assert [i.name for i in items] == ["search"]


@pytest.mark.parametrize(("setting", "kept"), [(None, True), ("true", True), ("false", False)])
def test_undeclared_tools_follow_sglang_forward_unknown_tools(monkeypatch, setting, kept):
    """Our rule (keep and log) unless the operator set SGLang's variable: then true keeps, false
    returns the call as text (SGLang's own detectors drop it; nothing is dropped here)."""
    from sglang.srt.environ import envs
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    if setting is None:
        monkeypatch.delenv(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.name, raising=False)
    else:
        monkeypatch.setenv(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.name, setting)
    text = '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'
    parser = FunctionCallParser(sglang_tools(BASE_TOOLS), "hermes_json")
    content, calls = parser.parse_non_stream(text)
    assert ([c.name for c in calls], content) == ((["delete_everything"], "") if kept else ([], text))
    got = stream_client("hermes_json", BASE_TOOLS, list(text))
    assert ([c[0] for c in got["calls"]], got["content"]) == ((["delete_everything"], None) if kept else ([], text))


def test_undeclared_as_text_still_works_without_sglang_variable(monkeypatch):
    from sglang.srt.environ import envs
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    monkeypatch.delenv(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.name, raising=False)
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    text = '<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>'
    assert FunctionCallParser(sglang_tools(BASE_TOOLS), "hermes_json").parse_non_stream(text) == (text, [])


# -- constrained decoding -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def grammar_backend(smollm2_tokenizer):
    """SGLang's real xgrammar backend over SmolLM2's tokenizer: what compiles a request's
    structural tag on a server."""
    from sglang.srt.constrained.xgrammar_backend import XGrammarGrammarBackend

    return XGrammarGrammarBackend(smollm2_tokenizer, vocab_size=len(smollm2_tokenizer))


def accepts(backend, tokenizer, key: str, text: str) -> bool:
    """Whether SGLang's compiled grammar accepts `text`, token by token, then the end of output."""
    from sglang.srt.constrained.base_grammar_backend import InvalidGrammarObject

    grammar = backend.dispatch_structural_tag(key)
    assert not isinstance(grammar, InvalidGrammarObject), grammar.error_message
    try:
        for token in tokenizer.encode(text, add_special_tokens=False):
            grammar.accept_token(token)
        grammar.accept_token(tokenizer.eos_token_id)
    except ValueError:
        return False
    return grammar.is_terminated()


def sampling_constraint(fmt: str, tool_choice: Any, parallel: bool = True, tokenizer: Any = None) -> Any:
    """What SGLang's serving layer derives for a request: `get_structure_constraint`, then the
    sampling parameter the grammar backend compiles (protocol.py `to_sampling_params`)."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    parser = FunctionCallParser(sglang_tools(BASE_TOOLS), fmt, tokenizer=tokenizer)
    constraint = parser.get_structure_constraint(tool_choice, parallel_tool_calls=parallel)
    request = ChatCompletionRequest(
        model="m", messages=[{"role": "user", "content": "x"}], tools=BASE_TOOLS, tool_choice=tool_choice
    )
    return constraint, request.to_sampling_params([], {}, tool_call_constraint=constraint)


@pytest.mark.parametrize("fmt", [name for name, fmt in FORMATS.items() if fmt.required_constraint is not None])
def test_required_and_named_are_constrained_to_the_format(fmt, grammar_backend, smollm2_tokenizer):
    from sglang.srt.entrypoints.openai.protocol import ToolChoice
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    one, two = REQUIRED_SAMPLES[fmt]
    named = ToolChoice(function={"name": "get_weather"})
    for choice, parallel in (("required", True), ("required", False), (named, True)):
        constraint, params = sampling_constraint(fmt, choice, parallel)
        assert constraint[0] == "structural_tag"
        key = params["structural_tag"]
        assert accepts(grammar_backend, smollm2_tokenizer, key, one), (choice, parallel)
        assert accepts(grammar_backend, smollm2_tokenizer, key, two) is (choice == "required" and parallel)
        assert not accepts(grammar_backend, smollm2_tokenizer, key, PROSE)
    for text in (one, two):  # and what the grammar allows, our detector reads
        content, calls = FunctionCallParser(sglang_tools(BASE_TOOLS), fmt).parse_non_stream(text)
        assert content == "" and [c.name for c in calls][:1] == ["get_weather"]
    constraint, _ = sampling_constraint(fmt, "auto")
    assert constraint is None  # auto stays unconstrained


def test_mistral_constraint_follows_the_tokenizer(grammar_backend, smollm2_tokenizer):
    """v11 `[TOOL_CALLS]name[ARGS]{..}` where the tokenizer has `[ARGS]`, else `[TOOL_CALLS][{..}]`."""
    key = sampling_constraint("mistral_json", "required", tokenizer=smollm2_tokenizer)[1]["structural_tag"]
    v3 = '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    assert accepts(grammar_backend, smollm2_tokenizer, key, v3)
    assert not accepts(grammar_backend, smollm2_tokenizer, key, REQUIRED_SAMPLES["mistral_json"][0])


@pytest.mark.parametrize("fmt", [name for name, fmt in FORMATS.items() if fmt.required_constraint is None])
def test_formats_without_a_constraint_use_sglang_json_array(fmt):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    constraint, params = sampling_constraint(fmt, "required")
    assert constraint[0] == "json_schema" and "json_schema" in params
    assert not FunctionCallParser(sglang_tools(BASE_TOOLS), fmt).owns_tool_format()


STRICT_TOOLS = [{**t, "function": {**t["function"], "strict": True}} for t in BASE_TOOLS]


@pytest.mark.parametrize("fmt", [name for name, fmt in FORMATS.items() if fmt.auto_constraint or fmt.call_tag])
def test_strict_auto_is_constrained_and_compiles(fmt, grammar_backend, smollm2_tokenizer):
    """A strict tool with `tool_choice="auto"`: free text, calls following their schema."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    parser = FunctionCallParser(sglang_tools(STRICT_TOOLS), fmt)
    constraint = parser.get_structure_constraint("auto")
    assert constraint is not None and constraint[0] == "structural_tag"
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "x"}], tools=STRICT_TOOLS)
    key = request.to_sampling_params([], {}, tool_call_constraint=constraint)["structural_tag"]
    one = REQUIRED_SAMPLES[fmt][0]
    tag = FORMATS[fmt].strict_call_tag(None)
    if tag is not None and not one.startswith(tag.trigger):
        one = tag.trigger + one  # a call the trigger opens (llama_json's `<|python_tag|>`)
    assert accepts(grammar_backend, smollm2_tokenizer, key, PROSE)
    assert accepts(grammar_backend, smollm2_tokenizer, key, PROSE + "\n" + one)
    undeclared = PROSE + "\n" + one.replace("get_weather", "get_weathr")
    # refused, or (a fence names its tool) prose that the parser keeps as text
    refused = not accepts(grammar_backend, smollm2_tokenizer, key, undeclared)
    assert refused or FunctionCallParser(sglang_tools(STRICT_TOOLS), fmt).parse_non_stream(undeclared)[1] == []


# -- properties ---------------------------------------------------------------------------------

SETTINGS = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=max(settings().max_examples // 2, 50)
)
"""Half the profile's examples per format: this proves the detector adapter, which is thin; the parsers
themselves get the full budget in test_properties.py, and every corpus case runs here in every chunking."""


@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(st.data())
def test_through_the_detector_the_stream_equals_parse(fmt, data):
    """Known documents and mutated ones (cut, broken, noise), any chunking: through SGLang's
    `FunctionCallParser`, the client's stream and the finished response both equal `parse()`
    (for calls under the streaming bound, where the core promises exactness)."""
    if data.draw(st.booleans()):
        text, tools = data.draw(mutated_documents(fmt))
    else:
        text, _, _, tools = data.draw(documents(fmt))
    tools = tools or BASE_TOOLS
    eager = run_chunks(fmt, [text], tools, streaming="eager")
    assume(longest_started_call(eager) <= Limits().streaming)  # type: ignore[operator]
    expected = parse(fmt, text, tools)
    want = (expected.content, [(c.name, c.arguments_json) for c in expected.calls])
    assert_non_stream_matches(fmt, text, tools)
    chunkings = [split(data.draw, text), [text]] + ([list(text)] if len(text) <= 400 else [])
    for chunks in chunkings:
        got = stream_client(fmt, tools, chunks)
        assert (got["content"], got["calls"]) == want


def test_only_finished_calls_are_not_incomplete():
    """A call streamed past the bound that then breaks is named in incomplete_tool_call_indices, so
    the serving layer keeps finish_reason "stop", as for the finished response (no call)."""
    args = json.dumps({"content": "x" * 600})
    text = f'<tool_call>{{"name": "search", "arguments": {args[:-1]}, "oops"</tool_call>'
    events = run_chunks("hermes_json", [text], BASE_TOOLS)
    assert any(isinstance(e, CallStart) for e in events) and not any(isinstance(e, CallEnd) for e in events)
    got = stream_client("hermes_json", BASE_TOOLS, [text[:700], text[700:]])
    assert got["detector"].incomplete_tool_call_indices == {0}
    assert parse("hermes_json", text, BASE_TOOLS).calls == []


@pytest.mark.parametrize("fmt", ["hermes_json", "qwen_xml", "llama_pythonic"])
@pytest.mark.parametrize(("choice", "level"), [("required", "0"), ("auto", "0"), ("auto", "2")])
def test_strict_calls_are_checked_through_function_call_parser(monkeypatch, fmt, choice, level):
    """Through SGLang's `FunctionCallParser` as its serving layer builds it (`tool_choice` given for
    the finished path): a call the pinned schema refuses is text in both paths; the strict tool is
    pinned always, the other for `required` and under `SGLANG_TOOL_STRICT_LEVEL=2` (parameter)."""
    from sglang.srt.environ import envs
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    monkeypatch.setenv(envs.SGLANG_TOOL_STRICT_LEVEL.name, level)
    spec = FORMATS[fmt]
    for name, refuse in (("pick", True), ("free", choice == "required" or level == "2")):
        text = "Sure. " + spec.write([(name, {"n": 3})])
        parser = FunctionCallParser(sglang_tools(PICK_TOOLS), fmt, tool_choice=choice)
        content, calls = parser.parse_non_stream(text) if parser.has_tool_call(text) else (text, [])
        expected = [] if refuse else [(name, '{"n": 3}')]
        assert [(c.name, c.parameters) for c in calls] == expected, name
        if choice == "auto":  # the serving layer streams `auto` through a parser built without tool_choice
            streamed = stream_client(fmt, PICK_TOOLS, char_chunks(text))
            assert (streamed["content"], streamed["calls"]) == (content, expected)
        if refuse:
            assert spec.write([(name, {"n": 3})]).strip() in content
