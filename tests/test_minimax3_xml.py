"""minimax3_xml behaviour: MiniMax-M3's namespaced, nested argument elements. The failures the issue
lists, each in both paths (`parse()` and streaming in every chunking, M3's markers as single tokens
included), typing by the schema, depth and size bounds, the writer, the constraints compiled by
xgrammar, the template through transformers' `apply_chat_template` and against the model's own, detect,
the engines' reasoning parsers together with ours, and hypothesis properties of the grammar."""

from __future__ import annotations

import json
import sys
from pathlib import Path

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
    through_sglang_reasoning,
    tokenizer_chunks,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.core.events import build_result
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import minimax3_xml as m3
from toolcall_parsers.formats.minimax3_xml import END, NS, START, MiniMax3XmlStream, write

CASES = load_corpus("minimax3_xml")


def fn(name, properties=None, **extra):
    parameters = {"type": "object", "properties": properties or {}, **extra}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, required=["city"]),
    fn(
        "create_order",
        {
            "user_id": {"type": "integer"},
            "note": {"type": "string"},
            "express": {"type": "boolean"},
            "ratio": {"type": "number"},
            "coupon": {"type": ["string", "null"]},
            "zip": {"type": "string"},
            "shipping": {"type": "object", "properties": {"zip": {"type": "integer"}, "city": {"type": "string"}}},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}},
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    ),
]


def el(key, body):
    return f"{NS}<{key}>{body}{NS}</{key}>"


def invoke(name, *elements):
    return f'{NS}<invoke name="{name}">' + "".join(elements) + f"{NS}</invoke>"


def block(*invokes):
    return START + "\n" + "\n".join(invokes) + "\n" + END


@pytest.fixture(scope="module")
def m3_tokens():
    """SmolLM2's tokenizer with M3's namespace token and reasoning markers added as tokens that are
    not special (no M3 tokenizer ships on PyPI; in M3's vocabulary the namespace is one added token,
    200058, that decoding with skip_special_tokens keeps)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_tokens([NS, "<mm:think>", "</mm:think>"])
    return tok


def both(text, tools=TOOLS, tokenizer=None):
    """`parse()`, checked against streaming in every chunking (M3 token deltas too), eager included."""
    return both_paths("minimax3_xml", text, tools, tokenizer, eager=True)


def run(chunks, tools=TOOLS, streaming=None):
    return run_chunks("minimax3_xml", chunks, tools, streaming=streaming)


# -- the corpus -------------------------------------------------------------------------------------------


def test_corpus_size_and_sources():
    assert 35 <= len(CASES) <= 80
    assert all(case["source"] and case["tools"] is not None for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_in_m3_tokens(case, m3_tokens):
    assert summary(both(case["text"], case["tools"], m3_tokens)) == case["expected"]


# -- the failures the issue lists, each in both paths -------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        f"a{NS}b",  # the namespace token itself
        f"x {NS}</note> y",  # its own close, not followed by the token
        "own </note> lookalike",
        f"see {NS}</city> and </days>",  # another key's close, with and without the token
        f"{NS}<b>bold{NS}</b>",  # an open tag: a string value has no children
        f"2 < 3 {NS}",
        "]<]minimax[",
    ],
)
def test_values_holding_the_namespace_token_or_close_tags(value, m3_tokens):
    text = block(invoke("create_order", el("note", value), el("user_id", "1")))
    result = both(text, tokenizer=m3_tokens)
    assert calls_of(result) == [("create_order", {"note": value, "user_id": 1})] and result.content is None


def test_a_string_value_streams_without_tag_lookalikes():
    text = block(invoke("create_order", el("note", f"hello {NS}</note> world"), el("user_id", "7")))
    for chunks in (char_chunks(text), [text]):
        events = run(chunks, streaming="eager")
        sent = "".join(e.fragment for e in events if isinstance(e, CallArgs))
        assert sent == json.dumps({"note": f"hello {NS}</note> world", "user_id": 7}, ensure_ascii=False)
    s = MiniMax3XmlStream(TOOLS, counter_ids)
    s.set_streaming("eager")
    assert s.feed(START + f'\n{NS}<invoke name="create_order">{NS}<note>par') == [
        CallStart(0, "call_0", "create_order"),
        CallArgs(0, '{"note": "par'),
    ]
    assert s.feed(f"is{NS}</no") == [CallArgs(0, "is")]  # a partial close waits
    assert s.feed("te>") == []  # a close waits for what follows it
    assert s.feed(f"{NS}</invoke>{END}") == [CallArgs(0, '"}'), CallEnd(0, {"note": "paris"})]
    assert s.close() == []


def test_unknown_keys_are_kept_typed_as_written(m3_tokens):
    text = block(
        invoke(
            "get_weather",
            el("city", "Oslo"),
            el("n", "12"),
            el("zip", "02134"),
            el("b", "true"),
            el("z", "null"),
            el("f", "-1.5e3"),
            el("o", el("k", "v") + el("l", el("item", "1") + el("item", "x"))),
            el("j", '{"a": [1]}'),
            el("w", "two words"),
        )
    )
    assert calls_of(both(text, tokenizer=m3_tokens)) == [
        (
            "get_weather",
            {
                "city": "Oslo",
                "n": 12,
                "zip": "02134",
                "b": True,
                "z": None,
                "f": -1500.0,
                "o": {"k": "v", "l": [1, "x"]},
                "j": {"a": [1]},
                "w": "two words",
            },
        )
    ]
    undeclared_tool = block(invoke("other", el("a", "1")))
    assert calls_of(both(undeclared_tool)) == [("other", {"a": 1})]


def test_typed_values_by_the_schema(m3_tokens):
    text = block(
        invoke(
            "create_order",
            el("user_id", " 42 "),
            el("express", "False"),
            el("ratio", "0.25"),
            el("coupon", "null"),
            el("zip", "02134"),
            el("note", "123"),
            el("shipping", el("zip", "018956") + el("city", "007")),
            el("items", el("item", el("sku", "b-1") + el("qty", "2")) + el("item", el("sku", "9") + el("qty", "1"))),
            el("tags", el("item", "1") + el("item", "true")),
        )
    )
    assert calls_of(both(text, tokenizer=m3_tokens)) == [
        (
            "create_order",
            {
                "user_id": 42,
                "express": False,
                "ratio": 0.25,
                "coupon": None,
                "zip": "02134",
                "note": "123",
                "shipping": {"zip": 18956, "city": "007"},
                "items": [{"sku": "b-1", "qty": 2}, {"sku": "9", "qty": 1}],
                "tags": ["1", "true"],
            },
        )
    ]
    empty = block(invoke("create_order", el("items", ""), el("shipping", ""), el("note", "")))
    assert calls_of(both(empty)) == [("create_order", {"items": [], "shipping": {}, "note": ""})]
    # not what the schema says: as written
    odd = block(invoke("create_order", el("user_id", "many"), el("shipping", "[1]"), el("express", el("k", "v"))))
    assert calls_of(both(odd)) == [("create_order", {"user_id": "many", "shipping": "[1]", "express": {"k": "v"}})]
    # a nested key given twice collects its values; a top-level one: the last wins
    twice = block(
        invoke("get_weather", el("o", el("k", "1") + el("k", "2") + el("k", "3")), el("days", "1"), el("days", "2"))
    )
    assert calls_of(both(twice)) == [("get_weather", {"o": {"k": [1, 2, 3]}, "days": 2})]


def test_a_cut_off_invoke_is_text_and_closed_ones_stay(m3_tokens):
    first = invoke("get_weather", el("city", "Paris"))
    for cut in (f'{NS}<invoke name="get_weather">{NS}<city>Os', f"{NS}<inv", f'{NS}<invoke name="get_we', ""):
        result = both("Two.\n" + START + "\n" + first + "\n" + cut, tokenizer=m3_tokens)
        assert calls_of(result) == [("get_weather", {"city": "Paris"})]
        assert result.content == ("Two.\n\n" + cut if cut else "Two.")


def test_a_bare_invoke_is_text(m3_tokens):
    bare = invoke("get_weather", el("city", "SF"))
    result = both("Checking.\n" + bare, tokenizer=m3_tokens)
    assert result.calls == [] and result.content == "Checking.\n" + bare
    result = both(bare + "\n" + block(invoke("get_weather", el("city", "LA"))), tokenizer=m3_tokens)
    assert calls_of(result) == [("get_weather", {"city": "LA"})] and result.content == bare


def test_markup_in_reasoning_or_markdown_code_is_text(m3_tokens):
    call = block(invoke("get_weather", el("city", "Oslo")))
    real = block(invoke("get_weather", el("city", "SF")))
    closed = both(f"<mm:think>maybe {call}</mm:think>No call.", tokenizer=m3_tokens)
    assert closed.calls == [] and closed.content == f"<mm:think>maybe {call}</mm:think>No call."
    unclosed = both(f"<mm:think>I will call {call}", tokenizer=m3_tokens)
    assert unclosed.calls == [] and unclosed.content == f"<mm:think>I will call {call}"
    for quoted in (f"Like this:\n```\n{call}\n```\n", f"Like this:\n~~~\n{call}\n~~~\n", f"Inline: `{call}`.\n"):
        result = both(quoted + real, tokenizer=m3_tokens)
        assert result.content == quoted.strip() and calls_of(result) == [("get_weather", {"city": "SF"})]


def test_broken_invokes_are_text_and_the_others_count():
    good = invoke("get_weather", el("city", "Nice"))
    for bad in (
        invoke("get_weather", "junk" + el("city", "x")),  # text between elements
        invoke("get_weather", el("o", "hi " + el("k", "v"))),  # text beside child elements
        invoke("get_weather", f"{NS}<city>no close"),  # the element's close dropped
        f'{NS}<invoke name="">{NS}</invoke>',
    ):
        result = both(START + "\n" + bad + "\n" + good + "\n" + END)
        assert calls_of(result) == [("get_weather", {"city": "Nice"})], bad
        assert result.content == START + "\n" + bad, bad
    # a tag that is no invoke between invokes breaks the block, the rest is text (as in minimax_xml)
    nameless = START + f"\n{NS}<invoke>{NS}</invoke>\n" + good + "\n" + END
    assert (both(nameless).content, both(nameless).calls) == (nameless, [])
    other_close = block(invoke("get_weather", el("o", f"a{NS}</other>")))  # another key's close is a value
    assert calls_of(both(other_close)) == [("get_weather", {"o": f"a{NS}</other>"})]
    names = block(f"{NS}<invoke name='get_weather'>{NS}</invoke>", f"{NS}<invoke name=get_weather>{NS}</invoke>")
    assert calls_of(both(names)) == [("get_weather", {}), ("get_weather", {})]
    spaced = START + f'\n  {NS}<invoke name="get_weather">\n  {NS}<city>Rome{NS}</city>\n  {NS}</invoke>\n  ' + END
    assert calls_of(both(spaced)) == [("get_weather", {"city": "Rome"})]
    named_like_markup = block(invoke("get_weather", el("invoke", "1"), el("tool_call", el("item", "2"))))
    assert calls_of(both(named_like_markup)) == [("get_weather", {"invoke": 1, "tool_call": [2]})]


def test_depth_is_bounded_and_deep_nesting_is_linear(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_DEPTH", "8")

    def nested(depth):
        body = "v"
        for _ in range(depth - 1):
            body = el("n", body)
        return block(invoke("get_weather", el("o", body)), invoke("get_weather", el("city", "ok")))

    assert len(both(nested(8), None).calls) == 2
    deep = both(nested(9), None)
    assert calls_of(deep) == [("get_weather", {"city": "ok"})] and deep.content.startswith(START)
    monkeypatch.delenv("TOOLCALL_PARSERS_MAX_DEPTH")
    wide = block(invoke("create_order", el("tags", el("item", "x") * 20000), el("note", "y" * 200_000)))
    (call,) = both_paths("minimax3_xml", wide, TOOLS).calls
    assert len(call.arguments["tags"]) == 20000 and len(call.arguments["note"]) == 200_000


def test_a_call_past_the_size_bound_is_text_wherever_the_chunks_fall(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    text = block(
        invoke("create_order", el("note", "z" * 100), el("user_id", "1")), invoke("get_weather", el("city", "A"))
    )
    result = both(text)
    assert calls_of(result) == [("get_weather", {"city": "A"})] and result.content.startswith(START)


def test_one_buffer_per_feed():
    stream = MiniMax3XmlStream(TOOLS, counter_ids)
    seen = spy_on_readers(stream)
    stream.feed("pre " + block(invoke("create_order", el("note", "z" * 300), el("shipping", el("zip", "1")))) + " post")
    assert len(seen) == 1


def test_a_dangling_namespace_prefix_is_flushed_at_the_end():
    for tail in ("]", "]<]mini", NS, NS + "<tool", "`", "<mm:thi"):
        assert both("2 " + tail).content == "2 " + tail
    stream = MiniMax3XmlStream(TOOLS, counter_ids)
    assert stream.feed("Sure." + START) == [Text("Sure.")]


# -- tokens -----------------------------------------------------------------------------------------------


def test_the_namespace_is_one_token_and_decoding_keeps_it(m3_tokens):
    assert m3.FORMAT.special_tokens == ()  # an added token, not a special one: nothing for decoding to keep
    text = "Hi." + write([("get_weather", {"city": "Zürich", "days": 2})])
    ids = m3_tokens.encode(text, add_special_tokens=False)
    assert ids.count(m3_tokens.convert_tokens_to_ids(NS)) == text.count(NS)
    assert m3_tokens.decode(ids, skip_special_tokens=True) == text
    assert calls_of(both(text, tokenizer=m3_tokens)) == [("get_weather", {"city": "Zürich", "days": 2})]


# -- the writer and the constraints -------------------------------------------------------------------------


def test_write_reads_back():
    calls = [
        ("get_weather", {"city": "Zürich", "days": 3}),
        ("f.g:h", {}),
        ("create_order", {"items": [{"sku": "007", "qty": 2}], "shipping": {"zip": 1}, "tags": [], "express": True}),
        ("create_order", {"note": f"has {NS}</note> and {NS} inside\n", "zip": "02134", "ratio": 1.5}),
    ]
    result = both(write(calls))
    assert calls_of(result) == calls and result.content is None
    assert write([("get_weather", {"city": "x", "days": None})]) == block(invoke("get_weather", el("city", "x")))
    assert m3.FORMAT.writes_name("f.g:h") and not m3.FORMAT.writes_name('a"b')


STRICT = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer"},
        "opts": {"type": "object", "properties": {"unit": {"type": "string", "enum": ["c", "f"]}}},
    },
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_accepts_the_writer_and_refuses_what_breaks_the_schema():
    grammar = tag_grammar(m3.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    good = write([("get_weather", {"city": "Paris", "days": 3}), ("now", {})])
    assert grammar_accepts(grammar, good)
    assert grammar_accepts(grammar, write([("get_weather", {"city": "Paris", "opts": {"unit": "c"}})]))
    for bad in (
        good.replace("get_weather", "get_weathr"),
        write([("get_weather", {"days": 3})]),  # the required key missing
        write([("get_weather", {"city": "Paris", "days": "three"})]),
        write([("get_weather", {"city": "Paris", "zzz": 1})]),
        write([("get_weather", {"city": "Paris", "opts": {"unit": "k"}})]),
        "Prose first." + good,
        "",
    ):
        assert not grammar_accepts(grammar, bad), bad
    named = tag_grammar(
        m3.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}}, only="now", single=True))
    )
    assert grammar_accepts(named, write([("now", {})])) and not grammar_accepts(
        named, write([("get_weather", {"city": "P"})])
    )
    single = tag_grammar(m3.required_constraint(ConstraintRequest({"get_weather": STRICT}, single=True)))
    assert not grammar_accepts(single, write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})]))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object"},
        {"type": "object", "properties": {"a": {}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
        {"type": "object", "properties": {"a": {"type": "object", "additionalProperties": {"type": "string"}}}},
    ],
    ids=["no properties", "unconstrained member", "open object", "open nested object"],
)
def test_a_schema_xgrammars_m3_style_cannot_render_holds_only_the_envelope(schema):
    """xgrammar's `minimax_m3_xml` style reads a schema without properties as the empty object and
    refuses open ones when compiled; such a tool is held to its envelope and name, never an error."""
    grammar = tag_grammar(m3.required_constraint(ConstraintRequest({"f": schema})))
    assert grammar_accepts(grammar, write([("f", {"a": "x", "b": {"c": 1}})]))
    assert not grammar_accepts(grammar, write([("g", {"a": "x"})]))


def test_strict_auto_admits_prose_and_holds_calls_to_declared_tools():
    grammar = tag_grammar(
        m3.auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset({"get_weather"})))
    )
    good = "Sure." + write([("get_weather", {"city": "Paris"})])
    assert grammar_accepts(grammar, good) and calls_of(both(good)) == [("get_weather", {"city": "Paris"})]
    assert grammar_accepts(grammar, "Just prose.")
    assert not grammar_accepts(grammar, "Sure." + write([("evil", {"city": "Paris"})]))
    assert not grammar_accepts(grammar, "Sure." + write([("get_weather", {"city": "Paris", "days": "x"})]))


# -- the template -----------------------------------------------------------------------------------------

HISTORY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Paris and Tokyo?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "two cities",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {
                "id": "c2",
                "type": "function",
                "function": {
                    "name": "create_order",
                    "arguments": {"items": [{"sku": "007", "qty": 2}], "express": True, "coupon": None, "zip": "02134"},
                },
            },
        ],
    },
    {"role": "tool", "tool_call_id": "c2", "content": "ok"},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "user", "content": "And tomorrow?"},
]


def test_template_history_reads_back_and_matches_the_models_own(m3_tokens, model_template):
    out = render_template(m3_tokens, "minimax3_xml", HISTORY, tools=TOOLS, add_generation_prompt=True)
    assert "<tool>" + json.dumps(TOOLS[0]["function"], ensure_ascii=False) + "</tool>\n" in out
    assert "]~b]tool\n<response>ok</response>\n<response>sunny</response>[e~[\n]~b]user\nAnd tomorrow?" in out
    turn = out.split("]~b]ai\n")[1].split("[e~[")[0]
    calls = [
        ("get_weather", {"city": "Paris"}),
        ("create_order", {"items": [{"sku": "007", "qty": 2}], "express": True, "zip": "02134"}),
    ]
    assert turn == "<mm:think>two cities</mm:think>Checking." + write(calls)
    result = both(turn, TOOLS, m3_tokens)
    assert result.content == "<mm:think>two cities</mm:think>Checking." and calls_of(result) == calls
    real = model_template("MiniMax-M3")
    for kwargs in ({}, {"thinking_mode": "enabled"}, {"thinking_mode": "disabled"}):
        for tools in (None, TOOLS):
            ours = render_template(
                m3_tokens, "minimax3_xml", HISTORY, tools=tools, add_generation_prompt=True, **kwargs
            )
            theirs = m3_tokens.apply_chat_template(
                HISTORY, chat_template=real, tools=tools, tokenize=False, add_generation_prompt=True, **kwargs
            )
            assert ours == theirs, kwargs
    assert out.endswith("]~b]ai\n")
    enabled = render_template(
        m3_tokens, "minimax3_xml", HISTORY[1:2], add_generation_prompt=True, thinking_mode="enabled"
    )
    assert enabled.endswith("]~b]ai\n<mm:think>")


def test_detect_names_this_format_for_the_models_template(m3_tokens, model_template):
    from toolcall_parsers.detect import detect_template

    assert detect_template(m3_tokens, model_template("MiniMax-M3")).parser == "minimax3_xml"


# -- the engines' reasoning parsers with ours ----------------------------------------------------------------

CALL = write([("get_weather", {"city": "Oslo"})])
REASONING_CASES = [
    ("<mm:think>The user wants Oslo.</mm:think>Let me look." + CALL, ("The user wants Oslo.", "Let me look.")),
    ("</mm:think>Let me look." + CALL, (None, "Let me look.")),  # the stray closer a non-thinking turn opens with
    ("<mm:think>maybe " + CALL + "</mm:think>No.", ("maybe " + CALL, "No.")),
]


@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["closed", "stray closer", "inside"])
def test_with_vllms_minimax_m3_reasoning_parser(m3_tokens, text, expected):
    """Reasoning, content and the call the same finished and streamed (M3 token deltas)."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    request = make_request(tools=TOOLS)
    reasoning, content, calls = complete_through(m3_tokens, text, request, "minimax_m3", fmt="minimax3_xml")
    streamed = stream_through(m3_tokens, text, request, "minimax_m3", fmt="minimax3_xml")
    want = [("get_weather", '{"city": "Oslo"}')] if CALL not in (expected[0] or "") else []
    assert (reasoning, content, [(c.name, c.arguments) for c in calls]) == (*expected, want)
    assert (streamed["reasoning"], streamed["content"]) == expected
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == want


@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["closed", "stray closer", "inside"])
def test_with_sglangs_minimax_m3_reasoning_parser(m3_tokens, text, expected):
    """As vLLM's, streamed by M3's token deltas and by fixed sizes; except that SGLang's own reasoning
    parser keeps a stray `</mm:think>` as content when it arrives split (SGLang 0.5.23, not ours), so
    that case streams by tokens only (the closer is one token there)."""
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    chunkings = [tokenizer_chunks(m3_tokens, text)]
    if not text.startswith("</mm:think>"):
        chunkings += [[text[at : at + size] for at in range(0, len(text), size)] for size in (1, 3, 7)]
    finished = through_sglang_reasoning("minimax-m3", "minimax3_xml", sglang_tools(TOOLS), text, chunkings)
    want = [] if CALL in (expected[0] or "") else [("get_weather", {"city": "Oslo"})]
    assert finished == (*expected, want)


# -- properties --------------------------------------------------------------------------------------------

NAMES = st.text(st.characters(blacklist_characters='"\x00', blacklist_categories=("Cs",)), min_size=1, max_size=12)
KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True)
TRICKY = st.sampled_from([NS, f"{NS}</", f"{NS}<", "</x>", "<mm:think>", "`", "```", "2 <", "]<]"])
STRINGS = st.lists(st.one_of(st.text(max_size=8), TRICKY), max_size=4).map("".join)
LEAVES = st.one_of(STRINGS, st.integers(-(10**6), 10**6), st.booleans())
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3), st.dictionaries(KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=6,
)
CALLS = st.lists(st.tuples(NAMES, st.dictionaries(KEYS, VALUES, max_size=4)), min_size=1, max_size=3)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _schema_of(value):
    """A schema that says what `value` is, so the typing reads it back exactly."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, str):
        return {"type": "string"}
    if isinstance(value, list):
        return {"type": "array", "items": {"anyOf": [_schema_of(v) for v in value]} if value else {}}
    return {"type": "object", "properties": {k: _schema_of(v) for k, v in value.items()}}


def _ambiguous(value):
    """What the property cannot ask back: array items of different schemas (an `anyOf` of them types
    each item by the first that fits: `[[""], [0]]` reads `[[""], ["0"]]`), and a string that ends in
    its own close lookalike followed by the namespace token."""
    if isinstance(value, list):
        schemas = {json.dumps(_schema_of(v), sort_keys=True) for v in value}
        return len(schemas) > 1 or any(map(_ambiguous, value))
    if isinstance(value, dict):
        return any(map(_ambiguous, value.values()))
    return isinstance(value, str) and NS in value


@PROPERTY
@given(CALLS, st.integers(0, 3))
def test_written_calls_read_back_in_every_chunking(calls, seed):
    text = "Prose." + write(calls)
    tools = [fn(name, {k: _schema_of(v) for k, v in args.items()}) for name, args in calls]
    reference = run([text], tools)
    result = build_result(reference)
    if not any(_ambiguous(v) for _, a in calls for v in a.values()) and len({n for n, _ in calls}) == len(calls):
        assert calls_of(result) == [(n, a) for n, a in calls] and result.content == "Prose."
    assert run(random_chunks(text, seed), tools) == reference
    for call in result.calls:
        assert json.loads(call.arguments_json) == call.arguments


SOUP = [NS, "<", ">", "/", "tool_call", "invoke", ' name="f"', "k", "item", "x", " ", "\n", "<mm:think>", "</mm:think>"]
SOUP += ["`", "```"]


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
    if not any(isinstance(e, CallStart) for e in events):
        kept = "".join(e.text for e in events if isinstance(e, Text))
        assert "".join(kept.split()) == "".join(text.split())


def test_template_declares_the_tools(m3_tokens):
    out = render_template(m3_tokens, "minimax3_xml", [{"role": "user", "content": "Weather?"}], tools=[WEATHER_TOOL],
                          add_generation_prompt=True)  # fmt: skip
    assert out.startswith("]~!b[]~b]system\n") and "]~b]developer\nYou are a helpful assistant.\n\n# Tools\n" in out
    assert out.endswith("]~b]user\nWeather?[e~[\n]~b]ai\n")


def test_sglang_finished_reads_a_string_holding_element_lookalikes_as_streamed():
    """SGLang asks `has_tool_call` without the tools; with them a string value may hold what reads
    as a child element without a schema, so the finished response must be parsed with them."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    text = write([("create_order", {"note": f"{NS}<b>1{NS}</b>"})])
    tools = sglang_tools(TOOLS)
    normal, calls = FunctionCallParser(tools, "minimax3_xml").parse_non_stream(text)
    assert (normal, [(c.name, json.loads(c.parameters)) for c in calls]) == (
        "",
        [("create_order", {"note": f"{NS}<b>1{NS}</b>"})],
    )
