"""kimi_json behaviour: the corpus in every chunking, ids, the id spellings, streaming, the writer,
the constraint and the template. Runs the stream class directly, so it needs no registration."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import WEATHER_TOOL, counter_ids, load_corpus, random_chunks, render_template, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.core.events import Event, build_result, merge_text
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import kimi_json as kimi
from toolcall_parsers.formats.kimi_json import (
    ARG_BEGIN,
    CALL_BEGIN,
    CALL_END,
    SECTION_BEGIN,
    SECTION_END,
    KimiJsonStream,
    required_constraint,
    write,
)

CASES = load_corpus("kimi_json")
SB, SE, CB, CE, AB = SECTION_BEGIN, SECTION_END, CALL_BEGIN, CALL_END, ARG_BEGIN
TOOLS = [
    {"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
    for n in ("get_weather", "search")
]


def run(chunks, tools=None, id_factory=counter_ids, **options) -> list[Event]:
    stream = KimiJsonStream(tools, id_factory)
    if options:
        stream.set_streaming(options["streaming"])
    events: list[Event] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    return merge_text(events + stream.close())


def parse(text, tools=None, id_factory=counter_ids):
    return build_result(run([text], tools, id_factory))


def call(call_id: str, args: str) -> str:
    return f"{CB}{call_id}{AB}{args}{CE}"


# -- the corpus, before the format is registered ---------------------------------------------------


def test_corpus_size_and_sources():
    """The cases themselves run in every chunking in tests/test_corpus.py (ids included)."""
    assert len(CASES) >= 30
    assert all(case["source"] and case["tools"] for case in CASES)


# -- ids ----------------------------------------------------------------------------------------------


def test_the_model_id_is_the_call_id():
    text = write([("get_weather", {"city": "Paris"}), ("search", {"q": "x"})])
    assert [c.id for c in parse(text, id_factory=None).calls] == ["functions.get_weather:0", "functions.search:1"]


def test_default_ids_are_kimi_shaped_and_unique():
    """An empty id, or one used already, gets the default `functions.NAME:INDEX`, or the next free
    `functions.NAME:N`: never a repeat."""
    text = SB + call("functions.f:1", "{}") + call("functions.f:1", "{}") + call("", "{}") + SE
    ids = [c.id for c in parse(text, [TOOLS[0]], id_factory=None).calls]
    assert ids == ["functions.f:1", "functions.f:2", "functions.get_weather:2"]
    clash = SB + call("functions.f:1", "{}") + call("functions.f:0", "{}") + call("functions.f:0", "{}") + SE
    assert len({c.id for c in parse(clash, id_factory=None).calls}) == 3  # the factory's `functions.f:1` is taken


def test_a_constant_id_factory_still_gives_unique_ids():
    text = SB + "".join(call("", "{}") for _ in range(5)) + SE
    ids = [c.id for c in parse(text, [TOOLS[0]], id_factory=lambda name, index: "same").calls]
    assert ids == ["same", *(f"functions.get_weather:{i}" for i in range(1, 5))]


@pytest.mark.parametrize(
    ("call_id", "tools", "name"),
    [
        ("functions.get_weather:0", None, "get_weather"),
        ("get_weather:12", None, "get_weather"),
        ("functions.a:b:3", None, "a:b"),  # the counter is the last `:N`
        ("functions.functions.x:0", None, "functions.x"),  # the prefix comes off once
        ("functionsget_weather7", TOOLS, "get_weather"),
        ("functions.search", TOOLS, "search"),
        ("search", TOOLS, "search"),
        ("call_abc", TOOLS[:1], "get_weather"),  # one tool declared: an id naming none calls it
        ("", TOOLS[:1], "get_weather"),
        ("call_abc", TOOLS, None),
        ("call_abc", None, None),
        ("functionsget_weather7", None, None),  # spellings that need the declared names
        ("functions.invalid.0", TOOLS, None),
    ],
)
def test_the_name_in_the_id(call_id, tools, name):
    result = parse(SB + call(call_id, '{"a": 1}') + SE, tools)
    assert [c.name for c in result.calls] == ([name] if name else [])
    if name is None:
        assert result.content == SB + call(call_id, '{"a": 1}') + SE


def test_a_long_id_breaks_where_its_bound_is_passed(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    name_ok = "f" * 8
    text = SB + call(f"functions.{name_ok}:0", "{}") + call("functions." + "g" * 60 + ":1", "{}") + SE
    for chunks in ([text], list(text)):
        result = build_result(run(chunks))
        assert [c.name for c in result.calls] == [name_ok]
        assert result.content is not None and "g" * 40 in result.content


# -- streaming ------------------------------------------------------------------------------------------


def test_eager_streaming_sends_arguments_as_written_and_no_marker():
    s = KimiJsonStream(None, counter_ids)
    s.set_streaming("eager")
    assert s.feed("Sure. <|tool_calls_sec") == [Text("Sure.")]
    assert s.feed("tion_begin|><|tool_call_begin|>functions.get_wea") == []
    assert s.feed('ther:0<|tool_call_argument_begin|>{"city": "Pa') == [
        CallStart(0, "functions.get_weather:0", "get_weather"),
        CallArgs(0, '{"city": "Pa'),
    ]
    assert s.feed('ris", "days": 1') == [CallArgs(0, 'ris", "days": ')]
    assert s.feed("2}<|tool_call_end|><|tool_calls_section_end|> Done.") == [
        CallArgs(0, "12}"),
        CallEnd(0, {"city": "Paris", "days": 12}),
        Text("  Done."),  # the space held after "Sure." goes out once text follows the call
    ]
    assert s.close() == []


def test_two_markers_and_two_calls_in_one_delta():
    text = "Hi " + SB + call("functions.a:0", '{"x": 1}') + call("functions.b:1", "{}") + SE + " bye"
    events = run([text])
    assert [e for e in events if isinstance(e, Text)] == [Text("Hi"), Text("  bye")]
    assert [e.name for e in events if isinstance(e, CallStart)] == ["a", "b"]
    assert run(["Hi " + SB + CB, text[len("Hi " + SB + CB) :]]) == events


def test_markers_never_reach_the_content_of_valid_calls():
    text = "Let me see.\n" + write([("get_weather", {"city": "Oslo"})]) + "\nIt is sunny."
    for chunks in ([text], list(text), random_chunks(text, 7)):
        content = build_result(run(chunks)).content
        assert content == "Let me see.\n\nIt is sunny."
        assert "<|" not in content


def test_a_section_cut_off_keeps_the_calls_that_closed():
    text = SB + call("functions.a:0", "{}") + call("functions.b:1", '{"k": [1, 2]}') + CB + "functions.c:2" + AB + '{"k'
    result = parse(text)
    assert [(c.name, c.arguments) for c in result.calls] == [("a", {}), ("b", {"k": [1, 2]})]
    assert result.content == CB + "functions.c:2" + AB + '{"k'


def test_a_held_partial_marker_is_released_at_the_end():
    for tail in ("<|tool_calls_sec", "<|tool_call_b", "<"):
        assert parse("The token is " + tail).content == "The token is " + tail


def test_a_section_over_8kb_streams_past_the_bound():
    body = "y" * 9000
    text = SB + call("functions.write:0", json.dumps({"content": body})) + SE
    chunks = [text[i : i + 50] for i in range(0, len(text), 50)]
    stream = KimiJsonStream(None, counter_ids)
    per_chunk = [stream.feed(chunk) for chunk in chunks] + [stream.close()]
    started = next(i for i, events in enumerate(per_chunk) if any(isinstance(e, CallStart) for e in events))
    assert started < 20  # released past the streaming bound (512 characters), then streamed as written
    assert sum(isinstance(e, CallArgs) for events in per_chunk for e in events) > 100
    events = merge_text([e for events in per_chunk for e in events])
    assert build_result(events).calls[0].arguments == {"content": body}


def test_one_buffer_per_feed():
    stream = KimiJsonStream(None, counter_ids)
    seen = spy_on_readers(stream)
    stream.feed("pre " + SB + call("functions.a:0", '{"x": "' + "z" * 200 + '"}') + SE + " post")
    assert len(seen) == 1


def test_undeclared_tools_as_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    text = SB + call("functions.nope:0", "{}") + call("functions.search:1", "{}") + SE
    result = parse(text, TOOLS)
    assert [c.name for c in result.calls] == ["search"]
    assert result.content == SB + call("functions.nope:0", "{}")


# -- calls written inside a think block (Kimi K2-Thinking) -------------------------------------------------

WEATHER = write([("get_weather", {"city": "Oslo"})])


def both(text: str, tools=TOOLS):
    """`parse()`, checked against streaming in every chunking."""
    from helpers import both_paths

    return both_paths("kimi_json", text, tools)


def test_a_section_inside_a_think_block_never_closed_calls():
    """K2-Thinking's shape: the section inside `<think>`, the block never closed. The tool parser
    alone gives the call, finished and streamed (vLLM's and SGLang's `kimi_k2` do); the block's
    text before it is content, as every think block is without a reasoning parser."""
    for text in (f"<think>I will call.\n{WEATHER}", f"<think>I will call.{WEATHER}\n"):
        result = both(text)
        assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Oslo"})]
        assert result.content == "<think>I will call."
    bare = f"<think>r {CB}functions.search:0{AB}{{}}{CE}"  # a call without its section: the same
    assert [c.name for c in both(bare).calls] == ["search"]


def test_a_section_inside_a_closed_think_block_stays_text():
    """The block closed after the section: a call drafted in reasoning never runs, as with our
    reasoning parser in front; the answer after it is read as usual."""
    text = f"<think>Maybe {WEATHER} no.</think>Sure. " + write([("search", {"q": "x"})])
    result = both(text)
    assert [c.name for c in result.calls] == ["search"]
    assert result.content == f"<think>Maybe {WEATHER} no.</think>Sure."


def test_a_closer_inside_a_held_calls_string_is_data():
    """The split's rule: a `</think>` inside the held call's JSON string does not close the block."""
    text = "<think>r " + SB + call("functions.search:0", '{"q": "a </think> b"}') + SE
    result = both(text)
    assert [(c.name, c.arguments) for c in result.calls] == [("search", {"q": "a </think> b"})]
    assert result.content == "<think>r"


def test_the_tool_parser_alone_and_with_our_reasoning_parser_give_the_same_calls():
    """Both configurations an operator may run give the calls; the reasoning parser takes the
    block's text as reasoning, the tool parser alone leaves it in the content."""
    from fuzzing.reasoning import split_events

    text = f"<think>I will call.\n{WEATHER}"
    reasoning, _, events = split_events("kimi_json", [text], TOOLS, "before")
    alone = both(text)
    assert reasoning == "I will call."
    assert [(c.name, c.arguments) for c in build_result(merge_text(events)).calls] == [
        (c.name, c.arguments) for c in alone.calls
    ]


def test_a_think_block_after_the_held_calls_is_text():
    """The held text is read once, as the split's reading found its calls: a think block after
    them (with a call opener inside, never closed) is text, so holds never nest."""
    later = "<think>again " + write([("search", {"q": "y"})])
    result = both(f"<think>r {WEATHER} {later}")
    assert [c.name for c in result.calls] == ["get_weather"]
    assert result.content == "<think>r  " + later


def test_a_held_section_costs_one_pass(monkeypatch):
    """Held text is read by the split as it comes and once more at the end, whatever the chunking:
    the work grows with its length, not with its length times the number of feeds."""
    text = "<think>r " + SB + call("functions.search:0", json.dumps({"q": "x" * 20000})) + SE
    reads: list[int] = []
    real = kimi.KimiJsonStream.feed

    def counted(self, chunk):
        reads.append(len(chunk))
        return real(self, chunk)

    monkeypatch.setattr(kimi.KimiJsonStream, "feed", counted)
    stream = KimiJsonStream(TOOLS, counter_ids)
    for i in range(0, len(text), 16):
        stream.feed(text[i : i + 16])
    assert [c.name for c in build_result(merge_text(stream.close())).calls] == ["search"]
    assert sum(reads) < 4 * len(text)


# -- the writer, the constraint, the template ------------------------------------------------------------


def test_write_reads_back():
    calls = [("get_weather", {"city": "Zürich"}), ("a.b:c", {}), ("search", {"q": "<|tool_call_end|>"})]
    result = parse(write(calls))
    assert [(c.name, c.arguments) for c in result.calls] == calls and result.content is None
    assert all(kimi.FORMAT.writes_name(name) for name, _ in calls)
    assert not kimi.FORMAT.writes_name("has space") and not kimi.FORMAT.writes_name("a<b")


def test_required_constraint_describes_the_format():
    schemas = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}, "now": {}}
    tag = required_constraint(ConstraintRequest(schemas, single=True))
    section = tag["format"]
    assert (section["begin"], section["end"]) == (SB, [SE, "<|tool_call_section_end|>"])
    calls = section["content"]
    assert calls["stop_after_first"] and calls["at_least_one"]
    assert [t["begin"] for t in calls["tags"]] == [f"{CB}functions.get_weather:", f"{CB}functions.now:"]
    assert calls["tags"][0]["content"]["elements"][2]["json_schema"] == schemas["get_weather"]


def test_required_constraint_compiles_and_accepts_the_writer():
    xgrammar = pytest.importorskip("xgrammar")
    schemas = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}}
    tag = required_constraint(ConstraintRequest(schemas))
    info = xgrammar.TokenizerInfo([])
    grammar = xgrammar.GrammarCompiler(info).compile_structural_tag(json.dumps(tag)).grammar
    text = write([("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})])
    assert xgrammar.testing._is_grammar_accept_string(grammar, text)
    assert not xgrammar.testing._is_grammar_accept_string(grammar, text.replace("get_weather", "get_weathr"))
    # the counter is bounded: unbounded, SmolLM2 on the CPU server wrote `functions.get_weather:2008224666…`
    # until max_tokens in 2 of 6 required responses (scripts/strict_rates.py)
    assert not xgrammar.testing._is_grammar_accept_string(grammar, text.replace(":0", ":12345"))


@pytest.fixture(scope="module")
def tokenizer():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(ensure_model())


def test_template_declares_the_tools_as_kimi_does(tokenizer):
    out = render_template(
        tokenizer,
        "kimi_json",
        [{"role": "user", "content": "Weather?"}],
        tools=[WEATHER_TOOL],
        add_generation_prompt=True,
    )
    declared = json.dumps([WEATHER_TOOL], separators=(",", ":"))
    assert out == (
        f"<|im_system|>tool_declare<|im_middle|>{declared}<|im_end|>"
        "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI.<|im_end|>"
        "<|im_user|>user<|im_middle|>Weather?<|im_end|><|im_assistant|>assistant<|im_middle|>"
    )


def test_template_history_reads_back_with_its_ids(tokenizer):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {
                    "id": "functions.get_weather:0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                },
                {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tōkyō"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "functions.get_weather:0", "content": "sunny"},
        {"role": "tool", "tool_call_id": "functions.get_weather:1", "content": "rain"},
    ]
    out = render_template(tokenizer, "kimi_json", messages, tools=[WEATHER_TOOL])
    assert out.startswith("<|im_system|>tool_declare<|im_middle|>")
    assert "<|im_system|>system<|im_middle|>Be brief.<|im_end|>" in out
    assert "<|im_system|>tool<|im_middle|>## Return of functions.get_weather:0\nsunny<|im_end|>" in out
    turn = out.split("<|im_assistant|>assistant<|im_middle|>")[1].split("<|im_end|>")[0]
    assert turn == "Checking." + write([("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tōkyō"})])
    result = parse(turn, [WEATHER_TOOL])
    assert result.content == "Checking."
    assert [(c.id, c.name, c.arguments) for c in result.calls] == [
        ("functions.get_weather:0", "get_weather", {"city": "Paris"}),
        ("functions.get_weather:1", "get_weather", {"city": "Tōkyō"}),
    ]


def test_an_id_naming_no_tool_waits_for_the_arguments_that_name_it():
    tools = [
        {"type": "function", "function": {"name": "read", "parameters": {"properties": {"path": {}}}}},
        {"type": "function", "function": {"name": "write", "parameters": {"properties": {"path": {}, "text": {}}}}},
    ]
    s = KimiJsonStream(tools, counter_ids)
    s.set_streaming("eager")
    assert s.feed(SB + CB + "call_3" + AB + '{"path": "/x"') == []  # read or write: not known yet
    events = s.feed(', "text": "hi"}' + CE + SE) + s.close()
    assert events[0] == CallStart(0, "call_3", "write")
    assert build_result(events).calls[0].arguments == {"path": "/x", "text": "hi"}
    ambiguous = SB + call("call_4", '{"path": "/x"}') + SE  # read and write both fit
    assert parse(ambiguous, tools).calls == []
