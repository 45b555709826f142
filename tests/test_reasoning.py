"""Reasoning and calls exact together: our reasoning parser and our tool parser of each format,
composed by vLLM's real `ParserManager` / `DelegatingParser`, finished and streamed with real token
deltas (the format's markers and think markers single tokens), on the reasoning documents of
`fuzzing.reasoning` (the shapes reasoning models write, and fuzz documents), with a prompt whose
chat template leaves reasoning open, closed or to the model. And the split itself
(`core.reasoning.ReasoningSplit`): any chunking gives the same pieces, and no character is lost.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from fuzzing.mutate import random_split
from fuzzing.reasoning import Doc, mutated_document, random_document, reasoning_formats, reasoning_violations, scenarios
from helpers import needs
from hypothesis import given, settings
from hypothesis import strategies as st
from reasoning_scores import chat_template, composed, finished, normal, reasoning_tokenizer, streamed
from toolcall_parsers.core.reasoning import Reasoning, ReasoningSplit, generation_start
from toolcall_parsers.formats import FORMATS

pytestmark = needs("vllm")

FORMATS_WITH_THINK = reasoning_formats()
SCENARIOS = [doc for fmt in FORMATS_WITH_THINK for doc in scenarios(fmt)]


@pytest.fixture(scope="module", autouse=True)
def plugins():
    from vllm.plugins import load_general_plugins

    load_general_plugins()


_TOKENIZERS: dict[str, Any] = {}


def tokenizer_for(fmt: str) -> Any:
    if fmt not in _TOKENIZERS:
        _TOKENIZERS[fmt] = reasoning_tokenizer(fmt)
    return _TOKENIZERS[fmt]


def grouped(tokens: list[tuple[str, list[int]]], sizes: list[int]) -> list[tuple[str, list[int]]]:
    """Token deltas joined into deltas of `sizes` tokens each (cycling), as a server batches them."""
    deltas, at, i = [], 0, 0
    while at < len(tokens):
        run = tokens[at : at + sizes[i % len(sizes)]]
        deltas.append(("".join(t for t, _ in run), [x for _, ids in run for x in ids]))
        at, i = at + len(run), i + 1
    return deltas


def check(doc: Doc, groups: tuple[int, ...] = (1, 3)) -> None:
    tokenizer = tokenizer_for(doc.fmt)
    tokenizer.chat_template = chat_template(doc)
    parser_cls = composed(doc.fmt, doc.fmt, tokenizer)
    want = normal(doc.expected())
    assert finished(parser_cls, tokenizer, doc) == want
    ids = tokenizer.encode(doc.text, add_special_tokens=False)
    from bench import token_deltas

    tokens = token_deltas(tokenizer, doc.text)
    for group in groups:
        deltas = grouped(tokens, [group])
        assert sum(len(d) for _, d in deltas) == len(ids)
        assert streamed(parser_cls, tokenizer, doc, deltas) == want, f"{group} tokens per delta"


@pytest.mark.parametrize("doc", SCENARIOS, ids=[f"{d.fmt}:{d.name}" for d in SCENARIOS])
def test_scenarios_through_vllm(doc):
    check(doc)


def test_scenarios_mean_what_they_say():
    """Each shape holds the calls it is named for, in every format (a check on the writers and on
    the formats' reading of the answer part)."""
    wrong = [
        (doc.fmt, doc.name, len(doc.expected()[2]))
        for doc in SCENARIOS
        if doc.calls is not None and len(doc.expected()[2]) != doc.calls
    ]
    assert wrong == []


@pytest.mark.parametrize("fmt", FORMATS_WITH_THINK)
def test_fuzz_documents_through_vllm(fmt):
    rng = random.Random(f"test-reasoning-{fmt}")
    for _ in range(6):
        check(random_document(rng, fmt), groups=(1,))


@pytest.mark.parametrize("fmt", FORMATS_WITH_THINK)
def test_registered_under_the_format_name(fmt):
    from vllm.reasoning import ReasoningParserManager

    cls = ReasoningParserManager.get_reasoning_parser(fmt)
    assert cls.format_name == fmt


def test_channel_formats_have_no_reasoning_parser():
    from vllm.reasoning import ReasoningParserManager

    for name, fmt in FORMATS.items():
        if not fmt.think_blocks:
            with pytest.raises(KeyError):
                ReasoningParserManager.get_reasoning_parser(name)


@pytest.mark.parametrize(
    ("rendered", "start"),
    [
        ("<|im_start|>assistant\n", "before"),
        ("<|im_start|>assistant\n<think>\n", "opened"),
        ("<|im_start|>assistant\n<think>\n\n</think>\n\n", "closed"),
        ("<think>old</think><|im_start|>assistant\n", "before"),
    ],
)
def test_generation_start(rendered, start):
    assert generation_start(rendered, [("<think>", "</think>")]) == start


def test_prompt_that_closes_reasoning_ends_it_and_one_that_opens_does_not():
    from vllm.reasoning import ReasoningParserManager

    tokenizer = tokenizer_for("hermes_json")
    parser = ReasoningParserManager.get_reasoning_parser("hermes_json")(tokenizer)
    closed = tokenizer.encode("<|im_start|>assistant\n<think>\n\n</think>\n\n", add_special_tokens=False)
    opened = tokenizer.encode("<|im_start|>assistant\n<think>\n", add_special_tokens=False)
    history = tokenizer.encode("<think>a</think>b<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
    assert parser.is_reasoning_end(closed)
    assert not parser.is_reasoning_end(opened)
    assert not parser.is_reasoning_end(history)
    closer = tokenizer.convert_tokens_to_ids("</think>")
    assert parser.extract_content_ids([5, closer, 7, 8]) == [7, 8]


# -- where vLLM's structured outputs start: the engine core's gate asks our parser -------------------


def constraint_start(doc: Doc, drafts: int = 1) -> int | None:
    """How many of `doc`'s output tokens vLLM's structured outputs leave free before constraining
    (None: never), as the engine core decides it: `StructuredOutputManager._get_constraint_bounds`,
    vLLM's own code, asking the parser it builds per request (ours) after each step of `drafts`
    tokens (with more than one, a speculative step: the drafts are asked first, then the accepted
    tokens). The manager is made without its constructor, which needs a loaded model; the request
    is vLLM's own."""
    from bench import token_deltas
    from vllm.reasoning import ReasoningParserManager
    from vllm.sampling_params import SamplingParams, StructuredOutputsParams
    from vllm.v1.request import Request
    from vllm.v1.structured_output import StructuredOutputManager

    tokenizer = tokenizer_for(doc.fmt)
    tokenizer.chat_template = chat_template(doc)
    manager = object.__new__(StructuredOutputManager)
    manager.enable_in_reasoning = False
    manager.reasoner_cls = ReasoningParserManager.get_reasoning_parser(doc.fmt)
    manager.tokenizer = tokenizer
    params = SamplingParams(max_tokens=1 << 16, structured_outputs=StructuredOutputsParams(regex=".*"))
    rendered = tokenizer.apply_chat_template(
        [{"role": "user", "content": "x"}], add_generation_prompt=True, tokenize=False
    )
    prompt = tokenizer.encode(rendered, add_special_tokens=False)
    kwargs = {"chat_template_kwargs": {}}
    request = Request("r", prompt, params, None, reasoning_ended=False, reasoning_parser_kwargs=kwargs)
    ids = [i for _, token in token_deltas(tokenizer, doc.text) for i in token]
    for at in range(0, len(ids), drafts):
        step = ids[at : at + drafts]
        asked = manager._get_constraint_bounds(request, step) if drafts > 1 else None
        request.append_output_token_ids(step)
        bounds = manager._get_constraint_bounds(request, step, spec_tokens_committed=True)
        assert asked in (None, bounds)
        if bounds.grammar_start <= len(step):
            return at + bounds.grammar_start
    return None


def block_end(doc: Doc) -> int | None:
    """How many of `doc`'s tokens our split reads before the block ends at its closer, fed a token
    at a time (None: it never does as the text comes)."""
    from bench import token_deltas

    split, read = FORMATS[doc.fmt].reasoning_split(doc.start), 0
    for text, ids in token_deltas(tokenizer_for(doc.fmt), doc.text):  # a character's tokens together
        split.feed(text)
        read += len(ids)
        if split.closed:
            return read
    return None


SEARCH = '<tool_call>\n{"name": "search", "arguments": {"query": "a </think> b"}}\n</tool_call>'
WEATHER = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


@pytest.mark.parametrize("drafts", [1, 3])
@pytest.mark.parametrize(
    ("text", "free"),
    [
        (f"<think>r\n{SEARCH}", None),  # the closer inside a held call's value: the block never ends
        (f"<think>r</think>\n{WEATHER}", "<think>r</think>"),
        (f"<think>maybe {WEATHER} no</think>Sunny.", f"<think>maybe {WEATHER} no</think>"),
        (f"<think>r\n{SEARCH} no.</think>\nSunny.", f"<think>r\n{SEARCH} no.</think>"),
        ("Sure </think> it is sunny.", None),  # no block opened: its closer ends none
    ],
)
def test_structured_outputs_start_where_the_split_ends_the_block(text, free, drafts):
    """The constraint of a `required` or strict request starts where our split ends the block, not
    at a closer it keeps inside a call's value (nor one written where no block opened): the gate
    and the response agree, one token at a time and with speculative drafts."""
    doc = Doc("hermes_json", "gate", text, None, "", tools=None)
    at = constraint_start(doc, drafts)
    tokenizer = tokenizer_for("hermes_json")
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert (None if at is None else tokenizer.decode(ids[:at])) == free


@settings(deadline=None)
@given(st.sampled_from(SCENARIOS), st.integers(1, 4))
def test_the_constraint_gate_agrees_with_the_split(doc, drafts):
    """Property over every format's reasoning shapes, where the prompt leaves reasoning open, closed
    or to the model: the engine core's gate starts the constraint right after the token at which
    our split ends the block, whatever the speculative step, and nowhere else."""
    assert constraint_start(doc, drafts) == block_end(doc)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(SCENARIOS), st.lists(st.integers(1, 7), min_size=1, max_size=12))
def test_any_grouping_of_token_deltas_streams_the_finished_answer(doc, sizes):
    """Property over every format's reasoning shapes: however the server batches the tokens into
    deltas, the stream of the composed pair is the finished answer, which is what the shape means.
    (Deltas hold whole tokens, as an engine sends them; splits inside a token are the split's own
    property below.)"""
    from bench import token_deltas

    tokenizer = tokenizer_for(doc.fmt)
    tokenizer.chat_template = chat_template(doc)
    parser_cls = composed(doc.fmt, doc.fmt, tokenizer)
    deltas = grouped(token_deltas(tokenizer, doc.text), sizes)
    assert streamed(parser_cls, tokenizer, doc, deltas) == normal(doc.expected())


def test_the_served_chat_template_says_where_reasoning_starts(tmp_path, monkeypatch):
    """vLLM does not hand a parser the template of `--chat-template`; ours reads it from the command
    line (as `auto` does), so a served template that opens the block splits an output that starts
    inside it, where the tokenizer's own template (which opens none) would make it all content."""
    import sys

    from reasoning_scores import request_for
    from vllm.reasoning import ReasoningParserManager

    tokenizer = tokenizer_for("hermes_json")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    served = tmp_path / "opens.jinja"
    served.write_text("{% for m in messages %}{{ m['content'] }}{% endfor %}<think>\n", encoding="utf-8")
    cls = ReasoningParserManager.get_reasoning_parser("hermes_json")
    doc = Doc("hermes_json", "served", "r</think>\nSunny.", "r", "\nSunny.", tools=None)
    request = request_for(doc)
    monkeypatch.setattr(sys, "argv", ["vllm", "serve", "m"])
    assert cls(tokenizer).extract_reasoning(doc.text, request) == (None, doc.text)
    monkeypatch.setattr(sys, "argv", ["vllm", "serve", "m", "--chat-template", str(served)])
    assert cls(tokenizer).extract_reasoning(doc.text, request) == ("r", "\nSunny.")


def test_the_prompt_says_where_reasoning_starts_where_vllm_passes_it():
    """vLLM 0.33+ hands the parser the request's prompt before it reads the output, finished and
    streamed (`set_prompt_token_ids`, forwarded by `DelegatingParser`): a prompt that opens the
    block (here a `continue_final_message` one) splits an output that starts inside it, though the
    served template opens none. vLLM 0.32 passes a finished response no prompt: there both paths
    keep the template's reading. Either way the two paths agree."""
    from bench import token_deltas
    from reasoning_scores import build, composed, request_for
    from toolcall_parsers.toolbox.openai_stream import StreamFold
    from vllm.reasoning import ReasoningParser

    tokenizer = tokenizer_for("hermes_json")
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    parser_cls = composed("hermes_json", "hermes_json", tokenizer)
    doc = Doc("hermes_json", "prompt", "r</think>\nSunny.", "r", "\nSunny.", tools=None)
    request = request_for(doc)
    prompt = tokenizer.encode("<|im_start|>assistant\n<think>\n", add_special_tokens=False)
    passed = hasattr(ReasoningParser, "set_prompt_token_ids")
    want = ("r", "Sunny.") if passed else (None, doc.text)

    parser = build(parser_cls, tokenizer, request)
    if passed:
        parser.set_prompt_token_ids(prompt)  # as vLLM's serving layer does before `parse`
    reasoning, content, _ = parser.parse(doc.text, request, enable_auto_tools=True)
    assert (reasoning, (content or "").strip() or None) == want

    parser, fold = build(parser_cls, tokenizer, request), StreamFold()
    deltas = token_deltas(tokenizer, doc.text)
    for i, (text, ids) in enumerate(deltas):
        fold.add_delta(
            parser.parse_delta(text, list(ids), request, prompt_token_ids=prompt, finished=i == len(deltas) - 1)
        )
    assert (fold.reasoning or None, (fold.content or "").strip() or None) == want


@pytest.mark.parametrize("fmt", FORMATS_WITH_THINK)
def test_mutated_reasoning_documents_split_alike_in_any_chunking(fmt):
    """The fuzzer's mutations on reasoning documents (broken calls, markers injected, truncation),
    split and read engine-free in random chunks and one character at a time: no exception, the same
    answer, and nothing but markers lost."""
    rng = random.Random(f"mutated-reasoning-{fmt}")
    for _ in range(40):
        text, tools, start = mutated_document(rng, fmt)
        chunkings = [random_split(rng, text)] + ([list(text)] if len(text) < 3000 else [])
        assert reasoning_violations(fmt, text, tools, start, chunkings) == [], (text, start)


# -- the split: chunking invariance and nothing lost --------------------------------------------

PAIRS = [("<think>", "</think>"), ("[THINK]", "[/THINK]")]  # the prompt may open either
OPENERS = ["<tool_call>"]
ALPHABET = st.sampled_from(
    [
        *("<think>", "</think>", "[THINK]", "[/THINK]", "<tool_call>", "</tool_call>"),
        *("<", "/", "a", " ", "\n", "<th", "[/TH", "thought\n", "thou", "ght"),
    ]
)
LABEL = "thought\n"
HELD_ALPHABET = st.sampled_from(
    ['\n{"name": "search", "arguments": {"query": "', '"}}\n', "</tool_call>", "x", '"', "</think>"]
)


def split_all(text: str, cuts: list[int], start: str, calls: bool, label: str = "") -> list[Any]:
    split = ReasoningSplit(PAIRS, OPENERS, start=start, bound=40, label=label)
    pieces, at = [], 0
    for cut in sorted(set(cuts)):
        pieces += split.feed(text[at:cut])
        at = cut
    pieces += split.feed(text[at:])
    pieces += split.close(calls=calls)
    return pieces


@settings(deadline=None)
@given(
    st.lists(ALPHABET | HELD_ALPHABET, max_size=30).map("".join),
    st.lists(st.integers(0, 120), max_size=8),
    st.sampled_from(["before", "opened", "closed"]),
)
def test_would_close_answers_what_feeding_does(text, cuts, start):
    """`would_close` (the gate's question about tokens not accepted yet) says exactly whether
    feeding the text ends the block at its closer, without changing the split: a format's split
    (hermes_json's probe judging closers inside held calls) and the bare one, in any chunking."""
    for split in (FORMATS["hermes_json"].reasoning_split(start), ReasoningSplit(PAIRS, OPENERS, start=start)):
        at = 0
        for cut in [*sorted(set(cuts)), len(text)]:
            chunk, at = text[at:cut], max(at, cut)
            closed = split.closed
            predicted = split.would_close(chunk)
            split.feed(chunk)
            assert predicted == (split.closed and not closed), (text, cut)


def joined(pieces: list[Any]) -> tuple[str, str]:
    reasoning = "".join(p.text for p in pieces if isinstance(p, Reasoning))
    return reasoning, "".join(p.text for p in pieces if not isinstance(p, Reasoning))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(ALPHABET, max_size=30).map("".join),
    st.lists(st.integers(0, 120), max_size=8),
    st.sampled_from(["before", "opened", "closed"]),
    st.booleans(),
    st.sampled_from(["", LABEL]),
)
def test_split_is_chunking_proof_and_loses_nothing(text, cuts, start, calls, label):
    whole = joined(split_all(text, [], start, calls, label))
    assert joined(split_all(text, cuts, start, calls, label)) == whole
    assert joined(split_all(text, list(range(len(text) + 1)), start, calls, label)) == whole
    reasoning, answer = whole
    # Nothing lost: the markers the split drops, the label at the reasoning's start, and whitespace
    # at the ends of the reasoning and before the answer, are all that is missing.
    kept = "".join(ch for ch in reasoning + answer if not ch.isspace())
    source = "".join(ch for ch in text if not ch.isspace())
    for marker in ("<think>", "</think>", "[THINK]", "[/THINK]", "thought"):
        if source.count(marker) != kept.count(marker):
            source = source.replace(marker, "", source.count(marker) - kept.count(marker))
    assert kept == source


@pytest.mark.parametrize(
    ("bound", "text"),
    [
        (
            300,
            '<think>r\n<tool_call>\n{"name": "search", "arguments": {"query": "' + "x" * 241 + '</think> b"}}\nDone.',
        ),
        (5, "<think>r <tool_call>abc</think>ok"),
    ],
)
def test_a_marker_past_the_held_bound_loses_and_repeats_nothing(monkeypatch, bound, text):
    """A closer or opener taken whole may carry the held text past the bound: the cut is right after
    it, the same in any chunking, and every character is kept once."""
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", str(bound))
    fmt = FORMATS["hermes_json"]
    answers = set()
    for step in (len(text), 1, 3, 7):
        split = fmt.reasoning_split("before")
        pieces = [p for i in range(0, len(text), step) for p in split.feed(text[i : i + step])]
        answers.add(joined(pieces + split.close(calls=fmt.call_reading(None))))
    assert len(answers) == 1
    reasoning, answer = answers.pop()
    kept, source = "".join((reasoning + answer).split()), "".join(text.replace("<think>", "", 1).split())
    assert kept in (source, source.replace("</think>", "", 1))  # the closer goes where it closes the block
