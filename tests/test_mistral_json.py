"""mistral_json behaviour that the corpus does not pin down: ids, marker tokens, streaming, constraint."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
from helpers import counter_ids, random_chunks, result_of, run_chunks, spy_on_readers
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core.tokens import Vocabulary
from toolcall_parsers.formats import ConstraintRequest, mistral_json
from toolcall_parsers.formats.mistral_json import MARKER, MistralJsonStream, required_constraint


def test_default_ids_are_nine_letters_and_digits_and_unique():
    text = "".join(f'[TOOL_CALLS]f[ARGS]{{"i": {i}}}' for i in range(50))
    ids = [c.id for c in parse("mistral_json", text).calls]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids) and len(set(ids)) == 50


def test_streaming_v11_name_at_args_and_arguments_as_written():
    s = get_format("mistral_json").stream(None, counter_ids, streaming="eager")
    assert s.feed("Sure.[TOOL_CALLS]get_wea") == [Text("Sure.")]
    assert s.feed("ther[AR") == []
    assert s.feed('GS]{"city": "Pa') == [CallStart(0, "call_0", "get_weather"), CallArgs(0, '{"city": "Pa')]
    assert s.feed('ris", "days": 1') == [CallArgs(0, 'ris", "days": ')]
    assert s.feed("2}") == [CallArgs(0, "12}"), CallEnd(0, {"city": "Paris", "days": 12})]
    assert s.feed(" Done.") == [Text(" Done.")]


def test_call_id_is_kept_when_it_fits():
    s = get_format("mistral_json").stream(None, counter_ids)
    events = s.feed("[TOOL_CALLS]f[CALL_ID]abc123def[ARGS]{}[TOOL_CALLS]g[CALL_ID]bad-id[ARGS]{}") + s.close()
    assert [e.id for e in events if isinstance(e, CallStart)] == ["abc123def", "call_1"]


def test_marker_token_gating():
    """With `marker_is_token`, only a marker where a [TOOL_CALLS] token was generated counts."""
    s = MistralJsonStream(None, counter_ids, marker_is_token=True)
    prose = s.feed('See [TOOL_CALLS]read[ARGS]{"a": 1} in the docs. ', marker_offsets=[])
    assert prose == [Text('See [TOOL_CALLS]read[ARGS]{"a": 1} in the docs.')]
    real = s.feed('[TOOL_CALLS]read[ARGS]{"a": 2}', marker_offsets=[0]) + s.close()
    assert [e for e in real if isinstance(e, CallEnd)] == [CallEnd(0, {"a": 2})]


def _declared(*names: str) -> list[dict]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


_ADD = '{"name": "add", "arguments": {}}'
_RM = '{"name": "rm", "arguments": {}}'


@pytest.mark.parametrize(
    ("text", "names", "content"),
    [
        ('[TOOL_CALLS]  junk [{"name": "add", "arguments": {"a": 1}}] trail', ["add"], "trail"),
        (f"[TOOL_CALLS]junk[{_ADD}, {_ADD}]", ["add", "add"], None),
        (f"[TOOL_CALLS] junk [{_ADD}, {_RM}]", ["add"], f", {_RM}]"),  # broken at the undeclared name
        (f"[TOOL_CALLS] junk [{_RM}]", [], f"[TOOL_CALLS] junk [{_RM}]"),
        (f"[TOOL_CALLS] two words [{_ADD}]", [], f"[TOOL_CALLS] two words [{_ADD}]"),
        (f"[TOOL_CALLS] junk {_ADD}", [], f"[TOOL_CALLS] junk {_ADD}"),  # an object after a word: text
    ],
)
def test_a_word_before_a_json_array_is_markup_when_the_calls_are_declared(text, names, content):
    """The word has no v11 reading; the array's calls must name declared tools (a call to another
    name breaks the array there: the calls before it stand). In every chunking."""
    whole = run_chunks("mistral_json", [text], _declared("add"))
    for seed in (1, 2, 3):
        assert run_chunks("mistral_json", random_chunks(text, seed), _declared("add")) == whole
    result = result_of(whole)
    assert [c.name for c in result.calls] == names and result.content == content


TOOLS = {
    "add": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
    "now": {},
}


class _Tokenizer:
    """A tokenizer's vocabulary with or without Mistral v11's `[ARGS]`."""

    def __init__(self, v11: bool) -> None:
        self.v11 = v11

    def get_vocab(self) -> dict[str, int]:
        return {"[TOOL_CALLS]": 5, **({"[ARGS]": 32} if self.v11 else {})}


@pytest.mark.parametrize("v11", [True, False])
def test_required_constraint_describes_the_format(v11):
    tag = required_constraint(ConstraintRequest(TOOLS, vocabulary=Vocabulary(_Tokenizer(v11))))
    assert tag["type"] == "structural_tag"
    body = tag["format"]
    if v11:
        assert [t["begin"] for t in body["tags"]] == ["[TOOL_CALLS]add[ARGS]", "[TOOL_CALLS]now[ARGS]"]
        assert body["at_least_one"] and not body["stop_after_first"]
        assert body["tags"][0]["content"]["json_schema"] == TOOLS["add"]
    else:
        marker, array = body["elements"]
        assert marker == {"type": "const_string", "value": "[TOOL_CALLS]"}
        schema = array["json_schema"]
        jsonschema.validate([{"name": "add", "arguments": {"a": 1}}], schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([{"name": "add", "arguments": {}}], schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([], schema)
    named = required_constraint(ConstraintRequest(TOOLS, "now", True, Vocabulary(_Tokenizer(v11))))
    assert "add" not in json.dumps(named)


# -- issue 9 (adversarial review): each defect's tests fail on the code before the fix -------------

W = '[TOOL_CALLS]get_weather[ARGS]{"city": "Oslo"}'


def chunkings(text: str) -> dict[str, list[str]]:
    return {"whole": [text], "chars": list(text), **{f"random{i}": random_chunks(text, i) for i in range(3)}}


def assert_in_every_chunking(text: str, content: str | None, calls: list[tuple[str, dict]]) -> None:
    reference = run_chunks("mistral_json", [text])
    result = result_of(reference)
    assert result.content == content
    assert [(c.name, c.arguments) for c in result.calls] == calls
    for mode, chunks in chunkings(text).items():
        assert run_chunks("mistral_json", chunks) == reference, mode


@pytest.mark.parametrize("tag", ["", "[CALL_ID]"])
def test_a_name_or_id_past_the_limit_spares_the_rest_of_the_text(tag):
    """Defect 2: a name (or id) over the limit dropped the rest of its delta, later calls included."""
    head = "[TOOL_CALLS]get_weather" + tag if tag else "[TOOL_CALLS]"
    text = head + "a" * 1100 + W
    assert_in_every_chunking(text, head + "a" * 1100, [("get_weather", {"city": "Oslo"})])


def test_the_name_limit_is_the_operators(monkeypatch):
    """Names and ids follow TOOLCALL_PARSERS_MAX_NAME (the module's own 256 is gone)."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_NAME", "8")
    assert parse("mistral_json", "[TOOL_CALLS]get_weath[ARGS]{}").calls == []
    assert parse("mistral_json", "[TOOL_CALLS]f[CALL_ID]abc123def[ARGS]{}").calls == []
    assert [c.name for c in parse("mistral_json", "[TOOL_CALLS]get_weat[CALL_ID]abc123de[ARGS]{}").calls] == [
        "get_weat"
    ]


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS]["x [TOOL_CALLS]g[ARGS]{}"]',
        '[TOOL_CALLS][{"name": "f", "arguments": {}}, "x [TOOL_CALLS]g[ARGS]{}"] ok',
        '[TOOL_CALLS]f[ARGS]"x [TOOL_CALLS]g[ARGS]{}"',
    ],
)
def test_a_marker_inside_a_string_that_breaks_the_call_is_text(text):
    """Defect 3: the break used to be reported where the streamed piece ended, so the marker inside
    the string started a call `g` only when streamed."""
    reference = result_of(run_chunks("mistral_json", [text]))
    assert "g" not in [c.name for c in reference.calls]
    for mode, chunks in chunkings(text).items():
        assert result_of(run_chunks("mistral_json", chunks)) == reference, mode


def bounded(make_id):
    """An id factory that fails the test after 100 asks (the old code asked forever)."""
    asked = []

    def factory(name: str, index: int) -> str:
        asked.append(index)
        assert len(asked) < 100, "asked for an id forever"
        return make_id(name, index)

    return factory


def test_a_model_id_equal_to_the_next_factory_id_does_not_hang():
    """Defect 8: a free id was looked for with an unbounded loop."""
    text = "[TOOL_CALLS]f[CALL_ID]call00001[ARGS]{}[TOOL_CALLS]g[ARGS]{}"
    calls = parse("mistral_json", text, None, bounded(lambda name, index: f"call{index:05d}")).calls
    assert [c.name for c in calls] == ["f", "g"]
    assert calls[0].id == "call00001" and re.fullmatch(r"[A-Za-z0-9]{9}", calls[1].id)


def test_a_constant_id_factory_still_gives_unique_ids():
    text = "[TOOL_CALLS]f[ARGS]{}" * 20
    ids = [c.id for c in parse("mistral_json", text, None, bounded(lambda name, index: "constant1")).calls]
    assert len(set(ids)) == 20 and ids[0] == "constant1"


def test_ids_stay_unique_even_when_the_random_source_repeats_itself(monkeypatch):
    monkeypatch.setattr(mistral_json, "mistral_call_id", bounded(lambda name, index: "abcdefghi"))
    text = "[TOOL_CALLS]f[CALL_ID]000000002[ARGS]{}" + "[TOOL_CALLS]f[ARGS]{}" * 5
    ids = [c.id for c in parse("mistral_json", text).calls]
    assert len(set(ids)) == 6 and all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids)


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS]f[ARGS]{"a": "x\\ud800y"}',  # the escape, in an object: forwarded as written
        '[TOOL_CALLS]f[ARGS]{"a": "x\ud800y"}',  # the raw character, in an object
        '[TOOL_CALLS]f[ARGS]"{\\"a\\": \\"x\\\\ud800y\\"}"',  # the escape, in arguments given as a string
        '[TOOL_CALLS]f[ARGS]"{\\"a\\": \\"x\ud800y\\"}"',  # the raw character, in a string
        '[TOOL_CALLS][{"name": "f", "arguments": "{\\"a\\": \\"x\\\\ud800y\\"}"}]',  # v2-v7
    ],
)
def test_lone_surrogates_come_out_escaped(text):
    """Defect 9: arguments_json held a lone surrogate, which the server cannot encode as UTF-8."""
    for chunks in ([text], list(text)):
        (call,) = result_of(run_chunks("mistral_json", chunks)).calls
        assert call.arguments == {"a": "x\ud800y"}
        assert "\\ud800" in call.arguments_json.encode("utf-8").decode("utf-8")
        assert json.loads(call.arguments_json) == call.arguments


@pytest.mark.parametrize("text", ["[TOOL_CALLS][]", "Hi [TOOL_CALLS][] bye", "[TOOL_CALLS] [ ] "])
def test_an_empty_call_list_is_text(text):
    """Defect 10: `[TOOL_CALLS][]` vanished."""
    assert_in_every_chunking(text, text.strip(), [])


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("[TOOL_CALLS]" + W, "[TOOL_CALLS]"),
        ("[TOOL_CALLS] " + W, "[TOOL_CALLS]"),
        ("[TOOL_CALLS][" + W, "[TOOL_CALLS]["),
        ("[TOOL_CALLS]f[ARGS]" + W, "[TOOL_CALLS]f[ARGS]"),
        ('[TOOL_CALLS]f[ARGS]{"a": ' + W, '[TOOL_CALLS]f[ARGS]{"a":'),
        ('[TOOL_CALLS][{"name": "f", "arguments": [' + W, '[TOOL_CALLS][{"name": "f", "arguments": ['),
    ],
)
def test_a_marker_that_breaks_a_call_starts_the_next(text, content):
    """Defect 12: the broken attempt consumed the `[` of the second marker, losing its call."""
    assert_in_every_chunking(text, content, [("get_weather", {"city": "Oslo"})])


def test_a_doubled_marker_arriving_in_pieces():
    s = get_format("mistral_json").stream(None, counter_ids)
    assert s.feed("Ok.[TOOL_CALLS][") == [Text("Ok.")]
    assert s.feed("TOOL_") == [Text("[TOOL_CALLS]")]
    assert s.feed("CALLS]f[AR") == []
    assert s.feed("GS]{}") == [CallStart(0, "call_0", "f"), CallArgs(0, "{}"), CallEnd(0, {})]
    assert s.feed("[TOOL_CALLS][TOOL") == [Text("[TOOL_CALLS]")]
    assert s.close() == [Text("[TOOL")]


def test_a_doubled_marker_before_reasoning_keeps_the_reasoning_closed():
    text = "[TOOL_CALLS][THINK]maybe [TOOL_CALLS]f[ARGS]{}[/THINK] no call"
    assert_in_every_chunking(text, text, [])


@pytest.mark.parametrize(
    "text",
    [
        '[TOOL_CALLS]get_weather [ARGS]{"city": "Oslo"}',
        '[TOOL_CALLS] get_weather\t[ARGS] {"city": "Oslo"}',
        '[TOOL_CALLS]get_weather [CALL_ID]abc123def [ARGS]{"city": "Oslo"}',
        '[TOOL_CALLS]get_weather\n[CALL_ID] abc123def\n[ARGS]\n{"city": "Oslo"}',
        '[TOOL_CALLS]get_weather [CALL_ID]abc123def{"city": "Oslo"}',
    ],
)
def test_whitespace_before_the_tags_is_accepted(text):
    """Issue 9's decision: whitespace before [ARGS] / [CALL_ID]."""
    assert_in_every_chunking(text, None, [("get_weather", {"city": "Oslo"})])


def test_without_args_the_object_follows_the_name_at_once():
    """`[ARGS]` may be missing (vLLM's Mistral tokenizer mode), but then prose such as
    `[TOOL_CALLS] then {..}` is no call: the object must follow the name directly."""
    text = '[TOOL_CALLS] then {"city": "Oslo"}'
    assert_in_every_chunking(text, text, [])


def test_a_refused_call_is_text(monkeypatch):
    """`_start_call` refuses a call past TOOLCALL_PARSERS_MAX_CALLS: in both places a call starts
    (v11 at [ARGS] or the object, v2-v7 at the name) it is text and the response goes on."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALLS", "1")
    text = '[TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g[ARGS]{"b": 2} and [TOOL_CALLS]h{"c": 3} ok'
    assert_in_every_chunking(text, '[TOOL_CALLS]g[ARGS]{"b": 2} and [TOOL_CALLS]h{"c": 3} ok', [("f", {"a": 1})])
    text = '[TOOL_CALLS][{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}] ok'
    assert_in_every_chunking(text, ', {"name": "g", "arguments": {}}] ok', [("f", {})])


def test_an_undeclared_tool_is_text_when_the_operator_says_so(monkeypatch):
    monkeypatch.setenv("TOOLCALL_PARSERS_UNDECLARED_TOOLS", "text")
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    text = "[TOOL_CALLS]rm[ARGS]{}[TOOL_CALLS]rm{}[TOOL_CALLS]f[ARGS]{}"
    result = result_of(run_chunks("mistral_json", [text], tools))
    assert [c.name for c in result.calls] == ["f"] and result.content == "[TOOL_CALLS]rm[ARGS]{}[TOOL_CALLS]rm{}"


# -- [TOOL_CALLS] tokens counted by position (issue 9's decision) ---------------------------------


def test_a_typed_marker_and_a_marker_token_in_one_piece():
    """The typed marker comes first in the piece; only the token's position counts (a per-piece
    count of tokens gave the typed one the credit)."""
    s = MistralJsonStream(None, counter_ids, marker_is_token=True)
    prose = 'See [TOOL_CALLS]read[ARGS]{"a": 1} here. '
    events = s.feed(prose + '[TOOL_CALLS]read[ARGS]{"a": 2}', marker_offsets=[len(prose)]) + s.close()
    result = result_of(events)
    assert result.content == prose.strip() and [c.arguments for c in result.calls] == [{"a": 2}]


def test_marker_positions_count_across_held_text():
    """A typed marker still arriving is held back; the token's offset is in the new piece."""
    s = MistralJsonStream(None, counter_ids, marker_is_token=True)
    assert s.feed("See [TOOL_CALLS", marker_offsets=[]) == [Text("See")]
    events = s.feed("][TOOL_CALLS]f[ARGS]{}", marker_offsets=[1]) + s.close()
    result = result_of([Text("See"), *events])
    assert result.content == "See [TOOL_CALLS]" and [c.name for c in result.calls] == ["f"]


def test_a_marker_token_after_a_broken_call():
    """The second marker of a doubled pair is found again after the break, and its token counts."""
    s = MistralJsonStream(None, counter_ids, marker_is_token=True)
    events = s.feed("[TOOL_CALLS][TOOL_CALLS]f[ARGS]{}", marker_offsets=[0, 12]) + s.close()
    assert [c.name for c in result_of(events).calls] == ["f"]
    s = MistralJsonStream(None, counter_ids, marker_is_token=True)
    events = s.feed("[TOOL_CALLS][TOOL_CALLS]f[ARGS]{}", marker_offsets=[0]) + s.close()
    assert result_of(events).calls == [] and result_of(events).content == "[TOOL_CALLS][TOOL_CALLS]f[ARGS]{}"


# -- linear: one buffer, nothing unbounded held ----------------------------------------------------


@pytest.mark.parametrize("head", ["[TOOL_CALLS]", "[TOOL_CALLS]f", "[TOOL_CALLS]f[ARGS]", "[TOOL_CALLS]f[CALL_ID]"])
def test_whitespace_runs_are_consumed_not_held(head):
    s = get_format("mistral_json").stream(None, counter_ids)
    s.feed(head)
    for _ in range(200):
        s.feed("    ")
        assert s._buf == ""
    s.close()


def test_a_response_of_many_calls_is_read_from_one_buffer():
    """Every reader step of one feed sees the same text object: a position moves, nothing is copied."""
    s = get_format("mistral_json").stream(None, counter_ids)
    seen = spy_on_readers(s)
    text = "".join(f'[TOOL_CALLS]f[ARGS]{{"i": {i}}} [TOOL_CALLS][{{"name": "g"}}]' for i in range(100))
    result = result_of(s.feed(text + "[TOOL_CALLS][TOOL_CALLS]x") + s.close())
    assert len(result.calls) == 200 and len(seen) == 1


# -- through vLLM's parser stack, with Mistral's real Tekken tokenizer ------------------------------


@pytest.fixture(scope="module")
def tekken(tmp_path_factory):
    """vLLM's own `MistralTokenizer` (what `--tokenizer-mode mistral` gives a parser) over the Tekken
    file shipped in mistral-common, where `[TOOL_CALLS]` is a control token."""
    import mistral_common

    tokenizers = pytest.importorskip("vllm.tokenizers.mistral")
    folder = tmp_path_factory.mktemp("tekken")
    shutil.copy(Path(mistral_common.__file__).parent / "data" / "tekken_240911.json", folder / "tekken.json")
    return tokenizers.MistralTokenizer.from_pretrained(str(folder))


def tekken_ids(tokenizer, text: str) -> list[int]:
    """`text` as the model generates it: each `[TOOL_CALLS]` as the control token."""
    marker = tokenizer.get_vocab()[MARKER]
    ids: list[int] = []
    for i, part in enumerate(text.split(MARKER)):
        ids += ([marker] if i else []) + tokenizer.encode(part, add_special_tokens=False)
    return ids


def stream_through_vllm(tokenizer, ids: list[int], group: int) -> tuple[str | None, list[tuple[str, str]]]:
    """Stream `ids`, `group` tokens per delta, through vLLM's parser stack; return what an OpenAI
    client sees: the content and the (name, arguments) of each call."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.parser_manager import ParserManager
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=tools)
    cls = ParserManager.get_parser(
        tool_parser_name="mistral_json", reasoning_parser_name=None, enable_auto_tools=True, tokenizer=tokenizer
    )
    parser = cls(tokenizer, request.tools, model_config=None)
    content, calls, sent = [], {}, ""
    for start in range(0, len(ids), group):
        text = tokenizer.decode(ids[: start + group])
        delta, sent = text[len(sent) :], text
        finished = start + group >= len(ids)
        message = parser.parse_delta(
            delta, ids[start : start + group], request, prompt_token_ids=[1], finished=finished
        )
        if message is None:
            continue
        content.append(message.content or "")
        for tc in message.tool_calls:
            call = calls.setdefault(tc.index, [tc.function.name, ""])
            call[1] += tc.function.arguments or ""
    return "".join(content) or None, [tuple(calls[i]) for i in sorted(calls)]


PROSE = 'See [TOOL_CALLS]read[ARGS]{"a": 1} in the docs. '


@pytest.mark.parametrize("group", [1, 3, 1000])
def test_a_typed_marker_and_the_generated_token_through_vllm(tekken, group):
    """Issue 9's decision: one delta (group 1000: the whole output) holds both the marker typed out
    in prose and the generated `[TOOL_CALLS]` token; only the token's position counts."""
    ids = tekken.encode(PROSE, add_special_tokens=False) + tekken_ids(tekken, '[TOOL_CALLS]read[ARGS]{"a": 2}')
    assert tekken.decode(ids) == PROSE + '[TOOL_CALLS]read[ARGS]{"a": 2}'
    assert ids.count(tekken.get_vocab()[MARKER]) == 1
    content, calls = stream_through_vllm(tekken, ids, group)
    assert content == PROSE.strip()
    assert calls == [("read", '{"a": 2}')]


def test_tokens_around_a_typed_marker_through_vllm(tekken):
    """Two tokens, one typed marker between them, in one delta: offsets from the runs between tokens."""
    typed = tekken.encode(" or [TOOL_CALLS] here ", add_special_tokens=False)
    ids = (
        tekken_ids(tekken, '[TOOL_CALLS]read[ARGS]{"a": 1}')
        + typed
        + tekken_ids(tekken, '[TOOL_CALLS]read[ARGS]{"a": 2}')
    )
    content, calls = stream_through_vllm(tekken, ids, len(ids))
    assert content == "or [TOOL_CALLS] here"
    assert calls == [("read", '{"a": 1}'), ("read", '{"a": 2}')]


def test_a_marker_in_magistral_plain_text_reasoning_is_text():
    """Issue 11: Magistral-Small-2506 writes `<think>..</think>` as text; a marker inside is not a call."""
    text = "<think>maybe [TOOL_CALLS]f[ARGS]{}</think>[TOOL_CALLS]g[ARGS]{}"
    for chunks in ([text], list(text)):
        result = result_of(run_chunks("mistral_json", chunks))
        assert [c.name for c in result.calls] == ["g"]
        assert result.content == "<think>maybe [TOOL_CALLS]f[ARGS]{}</think>"
