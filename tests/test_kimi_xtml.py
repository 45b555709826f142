"""kimi_xtml behaviour: Kimi K3's XTML. The failures the engines' parsers had, each in both paths
(`parse()` and streaming in every chunking, real tokens included), the value typing, streaming, the
writer, the constraints compiled by xgrammar, the tokenizer, and the template through transformers'
`apply_chat_template`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import (
    WEATHER_TOOL,
    both_paths,
    calls_of,
    counter_ids,
    grammar_accepts,
    load_corpus,
    render_template,
    run_chunks,
    spy_on_readers,
    summary,
    tag_grammar,
)
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.core.events import Event, build_result, merge_text
from toolcall_parsers.core.xml_entities import decode_entities
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import kimi_xtml as k3
from toolcall_parsers.formats.kimi_xtml import (
    MESSAGE_CLOSE,
    RESPONSE_CLOSE,
    RESPONSE_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    TOOLS_CLOSE,
    TOOLS_OPEN,
    KimiXtmlStream,
    auto_constraint,
    required_constraint,
    write,
)

CASES = load_corpus("kimi_xtml")
OP, C, S = "<|open|>", "<|close|>", "<|sep|>"
SPECIALS = ["<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"]


def fn(name, properties=None, required=None):
    parameters = {"type": "object", "properties": properties or {}}
    if required:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"]),
    fn("write_file", {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"}}),
]


def arg(key, kind, value):
    return f'{OP}argument key="{key}" type="{kind}"{S}{value}{C}argument{S}'


def call(tool, index, *args):
    return f'{OP}call tool="{tool}" index="{index}"{S}' + "".join(arg(*a) for a in args) + f"{C}call{S}"


def run(chunks, tools=TOOLS, **options) -> list[Event]:
    return run_chunks("kimi_xtml", chunks, tools, **options)


def parse(text, tools=TOOLS):
    return build_result(run([text], tools))


@pytest.fixture(scope="module")
def k3_tokens():
    """SmolLM2's tokenizer with K3's four reserved tokens added as special tokens (no K3 tokenizer
    ships on PyPI): each marker is one id, as in K3's vocabulary."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": SPECIALS})
    return tok


def both(text, tools=TOOLS, tokenizer=None):
    """`parse()`, checked against streaming in every chunking (the K3 tokens' deltas too)."""
    return both_paths("kimi_xtml", text, tools, tokenizer)


# -- the corpus -------------------------------------------------------------------------------------------


def test_corpus_size_and_sources():
    assert 30 <= len(CASES) <= 60
    assert all(case["source"] and case["tools"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_in_k3_tokens(case, k3_tokens):
    assert summary(both(case["text"], case["tools"], k3_tokens)) == case["expected"]


# -- the failures, each in both paths --------------------------------------------------------------------


def test_markers_never_leak_into_content(k3_tokens):
    text = (
        f"{THINK_OPEN}plan{THINK_CLOSE}{RESPONSE_OPEN}Let me see.{RESPONSE_CLOSE}"
        + write([("get_weather", {"city": "Oslo"})])
        + f"{MESSAGE_CLOSE}<|end_of_msg|>"
    )
    result = both(text, tokenizer=k3_tokens)
    assert result.content == "planLet me see." and "<|" not in result.content
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})]
    assert both(f"Hello{MESSAGE_CLOSE}").content == "Hello"  # vLLM's own test: the message close held, dropped


def test_text_before_the_block_is_kept(k3_tokens):
    text = (
        "Checking the weather first." + RESPONSE_CLOSE + TOOLS_OPEN + call("get_weather", 1, ("city", "string", "Rome"))
    )
    for tail in (TOOLS_CLOSE, ""):
        result = both(text + tail, tokenizer=k3_tokens)
        assert result.content == "Checking the weather first."
        assert calls_of(result) == [("get_weather", {"city": "Rome"})]
    events = KimiXtmlStream(TOOLS, counter_ids).feed("Sure." + TOOLS_OPEN)  # text and opener in one delta
    assert events == [Text("Sure.")]


def test_a_block_cut_off_keeps_the_calls_that_closed(k3_tokens):
    first = call("get_weather", 1, ("city", "string", "Paris"))
    for cut in (
        '<|open|>call tool="get_weather" index="2"<|sep|>' + arg("city", "string", "Os")[:-9],
        "<|open|>ca",
        "",
    ):
        result = both(TOOLS_OPEN + first + cut, tokenizer=k3_tokens)
        assert calls_of(result) == [("get_weather", {"city": "Paris"})]
        assert result.content == (cut or None)  # the unfinished call is text, never a call


def test_a_call_cut_after_its_payload_is_a_call_and_one_cut_inside_it_is_text(k3_tokens):
    """An outside review: the output stopped after `<|close|>argument<|sep|>` was text, where
    `hermes_json` reads its complete JSON without its close as a call. One rule: only the call's
    closing markup missing, or cut part-way (that part is text), is a call."""
    head = TOOLS_OPEN + f'{OP}call tool="get_weather" index="1"{S}'
    done = head + arg("city", "string", "Paris") + arg("days", "number", "3")
    for tail, content in (("", None), ("\n", None), (C, C), (f"{C}call", f"{C}call"), (f"{C}call{S}{C}to", f"{C}to")):
        result = both(done + tail, tokenizer=k3_tokens)
        assert (result.content, calls_of(result)) == (content, [("get_weather", {"city": "Paris", "days": 3})])
    body = head + f'{OP}json type="object"{S}' + '{"city": "Bei"}' + f"{C}json{S}"
    assert calls_of(both(body + f"{C}ca")) == [("get_weather", {"city": "Bei"})]
    for cut in (done[:-3], done[:-12], head + arg("city", "string", "Paris")[:-1], head, head[:-3], body[:-9]):
        result = both(cut, tokenizer=k3_tokens)
        assert (result.content, result.calls) == (cut, []), cut


def test_two_markers_and_two_calls_in_one_delta():
    a, b = call("get_weather", 1, ("city", "string", "A")), call("get_weather", 2, ("city", "string", "B"))
    stream = KimiXtmlStream(TOOLS, counter_ids)
    events = stream.feed("Hi" + RESPONSE_CLOSE + TOOLS_OPEN + a + b + TOOLS_CLOSE + MESSAGE_CLOSE)
    assert [e.name for e in events if isinstance(e, CallStart)] == ["get_weather", "get_weather"]
    assert [e for e in events if isinstance(e, Text)] == [Text("Hi")]
    assert stream.close() == []
    both("Hi" + TOOLS_OPEN + a + b + TOOLS_CLOSE)


def test_a_value_holding_close_looking_text(k3_tokens):
    tricky = f"a{C}argument{S}b, {C}call{S} c <|close|> {C}tools{S} <|sep"
    text = TOOLS_OPEN + call("write_file", 1, ("path", "string", "x"), ("content", "string", tricky)) + TOOLS_CLOSE
    result = both(text, tokenizer=k3_tokens)
    assert calls_of(result) == [("write_file", {"path": "x", "content": tricky})] and result.content is None
    # the close tag ends the value where the next argument or the call's end follows, whitespace between
    spaced = TOOLS_OPEN + call("write_file", 1).replace(f"{C}call", arg("path", "string", "y") + f"\n {C}call")
    assert calls_of(both(spaced)) == [("write_file", {"path": "y"})]


def test_unknown_type_is_typed_by_the_schema():
    text = (
        TOOLS_OPEN
        + call("write_file", 1, ("path", "text", "p"), ("mode", "int64", "0644"), ("zz", "date", "7"))
        + TOOLS_CLOSE
    )
    assert calls_of(both(text)) == [("write_file", {"path": "p", "mode": 644, "zz": 7})]
    missing = TOOLS_OPEN + f'{OP}call tool="write_file" index="1"{S}{OP}argument key="mode"{S}5{C}argument{S}{C}call{S}'
    assert calls_of(both(missing)) == [("write_file", {"mode": 5})]


def test_a_string_typed_value_that_looks_numeric_stays_a_string(k3_tokens):
    args = [("path", "string", "02134"), ("content", "string", "true"), ("mode", "string", "12")]
    text = TOOLS_OPEN + call("write_file", 1, *args) + TOOLS_CLOSE
    result = both(text, tokenizer=k3_tokens)
    assert calls_of(result) == [("write_file", {"path": "02134", "content": "true", "mode": "12"})]
    assert calls_of(both(TOOLS_OPEN + call("write_file", 1, ("mode", "number", "12")))) == [
        ("write_file", {"mode": 12})
    ]
    assert calls_of(both(TOOLS_OPEN + call("write_file", 1, ("mode", "number", "twelve")))) == [
        ("write_file", {"mode": "twelve"})  # a value that is not its type stays the text
    ]


def test_attribute_escapes(k3_tokens):
    tools = [fn('a&b"c<d>', {"k\"&'": {"type": "string"}})]
    text = f'{TOOLS_OPEN}{OP}call tool="a&amp;b&quot;c&lt;d&gt;" index="1"{S}'
    text += f'{OP}argument key="k&quot;&amp;&#39;" type="string"{S}v &amp; &quot;w&quot;{C}argument{S}'
    text += f"{C}call{S}{TOOLS_CLOSE}"
    result = both(text, tools, k3_tokens)
    assert calls_of(result) == [('a&b"c<d>', {"k\"&'": "v &amp; &quot;w&quot;"})]  # the value is raw: not unescaped
    assert calls_of(both(write([('a&b"c<d>', {"k\"&'": "v"})]), tools)) == [('a&b"c<d>', {"k\"&'": "v"})]
    assert decode_entities("&amp;quot; &#x41;&#66; &bogus; &#0; &#xD800;") == "&quot; AB &bogus; &#0; &#xD800;"


def test_a_key_written_as_a_surrogate_pair_is_the_key_its_json_reads_back():
    """The arguments' JSON fragments and the finished arguments agree on a key written as two lone
    surrogates (JSON reads them back as the one character they encode), in every chunking."""
    text = TOOLS_OPEN + call("get_weather", 1, ("\ud83d\ude00", "string", "v")) + TOOLS_CLOSE
    result = both(text, TOOLS)
    assert calls_of(result) == [("get_weather", {"\U0001f600": "v"})]
    assert json.loads(result.calls[0].arguments_json) == result.calls[0].arguments


def test_undeclared_tools_as_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    nope = call("nope", 1, ("x", "string", "1"))
    text = TOOLS_OPEN + nope + call("get_weather", 2, ("city", "string", "Oslo")) + TOOLS_CLOSE
    result = both(text)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})]
    assert result.content == TOOLS_OPEN + nope
    monkeypatch.delenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS")
    assert [c.name for c in both(text).calls] == ["nope", "get_weather"]  # the default keeps it, logged


# -- grammar details ------------------------------------------------------------------------------------


def test_the_json_element_holds_all_arguments():
    text = TOOLS_OPEN + f'{OP}call tool="get_weather" index="1"{S}{OP}json type="object"{S}' + '{"city": "Bei"}'
    text += f"{C}json{S}{C}call{S}{TOOLS_CLOSE}"
    assert calls_of(both(text)) == [("get_weather", {"city": "Bei"})]
    broken = text.replace('"Bei"}', '"Bei"} x')
    assert both(broken).calls == [] and both(broken).content.startswith(TOOLS_OPEN)


def test_broken_calls_are_text_and_the_others_count():
    good = call("get_weather", 2, ("city", "string", "Nice"))
    for bad in (
        f'{OP}call index="1"{S}{C}call{S}',  # no tool
        f"{OP}call tool=get_weather{S}{C}call{S}",  # unquoted
        f'{OP}calltool="get_weather"{S}{C}call{S}',  # no space
        f'{OP}call tool="get_weather"{S}{OP}argument type="string"{S}v{C}argument{S}{C}call{S}',  # no key
        f'{OP}call tool="get_weather"{S}junk{C}call{S}',
    ):
        result = both(TOOLS_OPEN + bad + good + TOOLS_CLOSE)
        assert calls_of(result) == [("get_weather", {"city": "Nice"})], bad
        assert result.content == TOOLS_OPEN + bad
    assert both(f"Hi.{TOOLS_OPEN}{TOOLS_CLOSE}").content == f"Hi.{TOOLS_OPEN}{TOOLS_CLOSE}"  # no call: text


def test_attributes_past_their_bound_break_where_the_text_says(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    text = TOOLS_OPEN + f'{OP}call tool="{"x" * 200}" index="1"{S}{C}call{S}' + call("a", 2) + TOOLS_CLOSE
    result = both(text, None)
    assert calls_of(result) == [("a", {})] and result.content.startswith(TOOLS_OPEN + OP + 'call tool="xxx')


def test_reasoning_is_text_never_a_call():
    inner = f"maybe {TOOLS_OPEN}{call('get_weather', 1)}{TOOLS_CLOSE}"
    text = f"{THINK_OPEN}{inner}{THINK_CLOSE}{RESPONSE_OPEN}No.{RESPONSE_CLOSE}"
    result = both(text)
    assert result.calls == [] and result.content == f"maybe {TOOLS_OPEN}{call('get_weather', 1)}{TOOLS_CLOSE}No."
    assert both(f"{THINK_OPEN}cut off {OP}to").content == f"cut off {OP}to"


def test_ids_are_the_engines_and_index_is_not_read():
    text = TOOLS_OPEN + call("get_weather", 7) + call("get_weather", 7) + TOOLS_CLOSE
    assert [(c.index, c.id) for c in both(text).calls] == [(0, "call_0"), (1, "call_1")]
    assert k3.FORMAT.own_ids is False


def test_eager_streaming_sends_string_values_as_written():
    s = KimiXtmlStream(TOOLS, counter_ids)
    s.set_streaming("eager")
    assert s.feed("Sure." + RESPONSE_CLOSE + TOOLS_OPEN + '<|open|>call tool="write_f') == [Text("Sure.")]
    assert s.feed(f'ile" index="1"{S}' + f'{OP}argument key="content" type="string"{S}hel') == [
        CallStart(0, "call_0", "write_file"),
        CallArgs(0, '{"content": "hel'),
    ]
    assert s.feed(f"lo{C}argu") == [CallArgs(0, "lo")]
    assert s.feed(f"ment{S}" + f'{OP}argument key="mode" type="number"{S}1') == [CallArgs(0, '", "mode": ')]
    assert s.feed(f"2{C}argument{S}{C}call{S}{TOOLS_CLOSE}") == [
        CallArgs(0, "12}"),
        CallEnd(0, {"content": "hello", "mode": 12}),
    ]
    assert s.close() == []


def test_one_buffer_per_feed():
    stream = KimiXtmlStream(TOOLS, counter_ids)
    seen = spy_on_readers(stream)
    stream.feed("pre " + TOOLS_OPEN + call("write_file", 1, ("content", "string", "z" * 300)) + TOOLS_CLOSE + " post")
    assert len(seen) == 1


# -- tokens -----------------------------------------------------------------------------------------------


def test_the_markers_are_single_tokens_and_the_token_path_reads_the_same(k3_tokens):
    ids = {token: k3_tokens.convert_tokens_to_ids(token) for token in SPECIALS}
    text = "Hi" + RESPONSE_CLOSE + write([("get_weather", {"city": "Zürich", "days": 2})]) + MESSAGE_CLOSE
    encoded = k3_tokens.encode(text, add_special_tokens=False)
    assert encoded.count(ids["<|sep|>"]) == text.count(S)
    assert k3_tokens.decode(encoded, skip_special_tokens=False) == text
    stream, events = KimiXtmlStream(TOOLS, counter_ids), []
    for i in range(len(encoded)):  # the text each token adds, as the engines' detokenizers give it
        piece = k3_tokens.decode(encoded[: i + 1], skip_special_tokens=False)[
            len(k3_tokens.decode(encoded[:i], skip_special_tokens=False)) :
        ]
        events += stream.feed(piece)
    result = build_result(merge_text(events + stream.close()))
    assert result.content == "Hi" and calls_of(result) == [("get_weather", {"city": "Zürich", "days": 2})]
    assert k3_tokens.decode(encoded, skip_special_tokens=True) != text  # why the engines must keep them


# -- the writer and the constraints -------------------------------------------------------------------------


def test_write_reads_back():
    calls = [("get_weather", {"city": "Zürich", "days": 3}), ("f.g:h", {}), ("x", {"o": {"a": [1, None]}, "b": False})]
    calls.append(("write_file", {"content": f"has {C}argument{S} inside", "path": "02134"}))
    result = parse(write(calls), None)
    assert calls_of(result) == calls and result.content is None
    assert all(k3.FORMAT.writes_name(name) for name, _ in calls) and not k3.FORMAT.writes_name("a<|sep|>b")


STRICT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": ["string", "null"]}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_accepts_the_writer_and_refuses_what_breaks_the_schema():
    grammar = tag_grammar(required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    good = write([("get_weather", {"city": "Paris", "days": 3}), ("now", {})])
    assert grammar_accepts(grammar, good)
    assert grammar_accepts(grammar, RESPONSE_CLOSE + good + MESSAGE_CLOSE)  # the prompt opened the reply channel
    assert grammar_accepts(grammar, THINK_CLOSE + RESPONSE_OPEN + RESPONSE_CLOSE + good)  # it opened the think channel
    # no text first: a weak model would write it until max_tokens (seen with SmolLM2 on the CPU server)
    assert not grammar_accepts(grammar, "Let me check." + RESPONSE_CLOSE + good)
    assert not grammar_accepts(grammar, "Let me think." + THINK_CLOSE + good)
    assert grammar_accepts(grammar, write([("get_weather", {"city": "Paris", "unit": None})]))
    for bad in (
        good.replace("get_weather", "get_weathr"),  # a wrong name
        write([("get_weather", {"days": 3})]),  # the required key missing
        write([("get_weather", {"city": "Paris", "days": "three"})]),  # a wrong-typed value
        write([("get_weather", {"city": "Paris", "days": 1.5})]),
        write([("get_weather", {"city": "Paris", "zzz": 1})]),  # an undeclared key
        good.replace(f"{C}call{S}", "", 1),  # a broken call
        "",
    ):
        assert not grammar_accepts(grammar, bad), bad
        assert calls_of(parse(bad)) != calls_of(parse(good)) or bad == ""
    single = tag_grammar(required_constraint(ConstraintRequest({"get_weather": STRICT}, single=True)))
    assert not grammar_accepts(single, write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]))


def test_strict_auto_admits_prose_and_holds_calls_to_declared_tools():
    grammar = tag_grammar(
        auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset({"get_weather"})))
    )
    good = "Sure." + RESPONSE_CLOSE + write([("get_weather", {"city": "Paris"})]) + MESSAGE_CLOSE
    assert grammar_accepts(grammar, "Just prose.") and grammar_accepts(grammar, good)
    assert calls_of(parse(good)) == [("get_weather", {"city": "Paris"})]
    assert not grammar_accepts(grammar, "Sure." + write([("evil", {"city": "Paris"})]))
    assert not grammar_accepts(grammar, "Sure." + write([("get_weather", {"city": "Paris", "days": "x"})]))
    loose = tag_grammar(auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset())))
    assert grammar_accepts(loose, "Sure." + write([("get_weather", {"any": [1], "days": "x", "b": True})]))


# -- the template -----------------------------------------------------------------------------------------


def test_template_declares_the_tools_as_k3s_encoder_does(k3_tokens):
    out = render_template(
        k3_tokens,
        "kimi_xtml",
        [{"role": "user", "content": "Weather?"}],
        tools=[WEATHER_TOOL],
        add_generation_prompt=True,
    )
    declared = json.dumps([WEATHER_TOOL], separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    assert out == (
        f'{OP}message role="system" type="tool-declare"{S}# Tools\nHere are the available tools, described in '
        f"JSONSchema.\n\n```json\n{declared}\n```{C}message{S}<|end_of_msg|>"
        f'{OP}message role="user"{S}Weather?{C}message{S}<|end_of_msg|>{OP}message role="assistant"{S}{THINK_OPEN}'
    )
    plain = render_template(
        k3_tokens, "kimi_xtml", [{"role": "user", "content": "Hi"}], add_generation_prompt=True, thinking=False
    )
    assert plain.endswith(f'{OP}message role="assistant"{S}{RESPONSE_OPEN}')


def test_template_history_reads_back_and_binds_results_by_index(k3_tokens):
    messages = [
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "two cities",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Tōkyō"}}},
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "rain"},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    out = render_template(k3_tokens, "kimi_xtml", messages, tools=[WEATHER_TOOL])
    assert f'{OP}message role="tool" tool="get_weather" index="2"{S}rain{C}message{S}' in out
    assert f'{OP}message role="tool" tool="get_weather" index="1"{S}sunny{C}message{S}' in out
    assert out.index("sunny") < out.index("rain")  # sorted into the calls' order, as K3's encoder does
    only_second = render_template(k3_tokens, "kimi_xtml", [*messages[:2], messages[2]], tools=[WEATHER_TOOL])
    assert f'{OP}message role="tool" tool="get_weather" index="1"{S}rain{C}message{S}' in only_second
    turn = out.split(f'{OP}message role="assistant"{S}')[1].split("<|end_of_msg|>")[0]
    calls = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tōkyō"})]
    reply = f"{RESPONSE_OPEN}Checking.{RESPONSE_CLOSE}{write(calls)}{MESSAGE_CLOSE}"
    assert turn == f"{THINK_OPEN}two cities{THINK_CLOSE}" + reply
    after_prompt = turn[len(THINK_OPEN) :]  # what the model writes after the generation prompt
    result = both(after_prompt, [WEATHER_TOOL], k3_tokens)
    assert result.content == "two citiesChecking." and calls_of(result) == calls


def test_template_writes_every_value_type_as_the_encoder(k3_tokens):
    arguments = {"s": "02134", "n": 2, "f": 2.5, "b": True, "z": None, "o": {"k": [1, "x"]}, "a": [1]}
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": arguments}}],
        },
    ]
    out = render_template(k3_tokens, "kimi_xtml", messages, thinking=False)
    assert arg("b", "boolean", "true") + arg("z", "null", "null") + arg("o", "object", '{"k": [1, "x"]}') in out
    turn = out.split(RESPONSE_OPEN)[1]
    assert calls_of(both(turn, None)) == [("f", arguments)]


# -- our reasoning parser: K3's think channel ------------------------------------------------------------

REPLY = f"{RESPONSE_OPEN}Checking.{RESPONSE_CLOSE}" + write([("get_weather", {"city": "Oslo"})]) + MESSAGE_CLOSE
OSLO = [("get_weather", {"city": "Oslo"})]


@pytest.fixture(scope="module")
def k3_served(k3_tokens):
    """K3's tokens serving our K3 template, whose generation prompt opens the think channel (or,
    with `thinking=False`, the response channel), as K3's encoder does."""
    import copy

    tok = copy.deepcopy(k3_tokens)
    tok.chat_template = k3.FORMAT.template_path.read_text(encoding="utf-8")
    return tok


def through_vllm(tokenizer, text, **template_kwargs):
    """`--reasoning-parser kimi_xtml --tool-call-parser kimi_xtml` composed by vLLM's real
    `ParserManager`, finished and streamed one token a delta (the prompt's ids those of the served
    template): (reasoning, content, calls), checked to be the same both ways."""
    pytest.importorskip("vllm")
    from bench import token_deltas
    from reasoning_scores import build, composed, normal
    from toolcall_parsers.toolbox.openai_stream import StreamFold
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    messages = [{"role": "user", "content": "Weather in Oslo?"}]
    request = ChatCompletionRequest(messages=messages, model="m", tools=TOOLS, chat_template_kwargs=template_kwargs)
    parser_cls = composed("kimi_xtml", "kimi_xtml", tokenizer)
    reasoning, content, calls = build(parser_cls, tokenizer, request).parse(text, request, enable_auto_tools=True)
    done = normal((reasoning, content, [(c.name, json.loads(c.arguments)) for c in calls or []]))
    parser = build(parser_cls, tokenizer, request)
    rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **template_kwargs)
    prompt = tokenizer.encode(rendered, add_special_tokens=False)
    fold, deltas = StreamFold(), token_deltas(tokenizer, text)
    for i, (delta, ids) in enumerate(deltas):
        last = i == len(deltas) - 1
        fold.add_delta(parser.parse_delta(delta, list(ids), request, prompt_token_ids=prompt, finished=last))
    streamed = normal((fold.reasoning, fold.content, [(c.name, json.loads(c.arguments)) for c in fold.calls]))
    assert streamed == done
    return done


@pytest.mark.parametrize(
    ("text", "template_kwargs", "want"),
    [
        pytest.param(f"The user wants Oslo.{THINK_CLOSE}{REPLY}", {}, ("The user wants Oslo.", "Checking.", OSLO),
                     id="opened_by_the_prompt"),
        pytest.param(f"Oslo, then.{TOOLS_OPEN}" + write(OSLO)[len(TOOLS_OPEN) :] + MESSAGE_CLOSE, {},
                     ("Oslo, then.", None, OSLO), id="calls_before_the_channel_closed"),
        pytest.param(f"{THINK_OPEN}The user wants Oslo.{THINK_CLOSE}{REPLY}", {"thinking": False},
                     ("The user wants Oslo.", "Checking.", OSLO), id="opened_by_the_model"),
        pytest.param(f"Checking.{RESPONSE_CLOSE}" + write(OSLO) + MESSAGE_CLOSE, {"thinking": False},
                     (None, "Checking.", OSLO), id="thinking_off"),
    ],
)  # fmt: skip
def test_our_reasoning_parser_reads_k3s_think_channel(k3_served, text, template_kwargs, want):
    """K3's reasoning is in its `think` channel, which the generation prompt opens (thinking on) or
    the model opens itself: it comes back as reasoning, not content, and the calls after it (or
    written before the model closed the channel, as vLLM #53246 reports) as calls."""
    assert through_vllm(k3_served, text, **template_kwargs) == want
