"""Shared test helpers: feeding a format in chunks, chunkings of a text, corpus loading.

No module here or in a test module imports an engine (vLLM, SGLang, xgrammar, transformers, torch)
at import time or to build its parameters: pytest imports every test module to collect it, whatever
`-k` selects, and those imports take seconds. A test imports them when it runs (in its body, a
fixture or a helper it calls); a module that needs an engine says so with `needs(...)`."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import logging
import os
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toolcall_parsers import FORMATS, Format, get_format
from toolcall_parsers.core.events import Event, ParseResult, build_result, merge_text

CORPUS_DIR = Path(__file__).parent / "corpus"


def needs(*modules: str) -> Any:
    """`pytestmark = needs("vllm")`: skip the module's tests unless each top-level module is installed.
    It is found, not imported (see the module's docstring)."""
    import pytest

    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


@contextlib.contextmanager
def leaves_no_trace() -> Iterator[None]:
    """SGLang configures the process it runs in: importing it points torch's, triton's and other
    JIT caches at its own folders (and sets more variables) through the environment, and its
    argument parsing sets the root logger to INFO with a handler. The other tests share this
    process, and the vLLM servers they start inherit its environment, so both are put back.
    (conftest.py imports SGLang itself under this, whichever test imports it first.)"""
    environ = dict(os.environ)
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        yield
    finally:
        for key in set(os.environ) - set(environ):
            del os.environ[key]
        os.environ.update({k: v for k, v in environ.items() if os.environ.get(k) != v})
        root.setLevel(level)
        root.handlers[:] = handlers


def counter_ids(name: str, index: int) -> str:
    """Deterministic ids, so events from different chunkings compare equal."""
    return f"call_{index}"


def run_chunks(fmt: str | Format, chunks: Iterable[str], tools: Any = None, **options: Any) -> list[Event]:
    """Feed `chunks` to a fresh stream of `fmt` (a name or a `Format`), close it, and return the
    merged events."""
    stream = (fmt if isinstance(fmt, Format) else get_format(fmt)).stream(tools, counter_ids, **options)
    events: list[Event] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    events += stream.close()
    return merge_text(events)


def result_of(events: list[Event]) -> ParseResult:
    return build_result(events)


def tokenizer_chunks(tokenizer: Any, text: str) -> list[str]:
    """`text` in the deltas a real tokenizer's detokenizer sends (special tokens kept)."""
    return token_chunks(
        lambda t: tokenizer.encode(t, add_special_tokens=False),
        lambda ids: tokenizer.decode(list(ids), skip_special_tokens=False),
        text,
    )


def both_paths(
    fmt: str, text: str, tools: Any = None, tokenizer: Any = None, *, eager: bool = False, **options: Any
) -> ParseResult:
    """The result of `parse()`, after checking that streaming `text` in every chunking (by character,
    random splits, and a tokenizer's deltas when given) gives the same events; with `eager`, that the
    eager streaming policy ends with the same content and calls too (ids aside: an eager stream spends
    one on a call it announced before the call broke)."""
    reference = run_chunks(fmt, [text], tools, **options)
    chunkings = [char_chunks(text), *(random_chunks(text, seed) for seed in range(4))]
    if tokenizer is not None:
        chunkings.append(tokenizer_chunks(tokenizer, text))
    result = build_result(reference)
    for chunks in chunkings:
        assert run_chunks(fmt, chunks, tools, **options) == reference, chunks
        if eager:
            streamed = build_result(run_chunks(fmt, chunks, tools, streaming="eager", **options))
            assert (streamed.content, _unnumbered(streamed)) == (result.content, _unnumbered(result)), chunks
    return result


def _unnumbered(result: ParseResult) -> list[tuple[int, str, str]]:
    return [(call.index, call.name, call.arguments_json) for call in result.calls]


def tag_grammar(tag: dict[str, Any]) -> Any:
    """A format's constraint (an xgrammar structural tag) compiled by xgrammar."""
    import xgrammar

    return xgrammar.Grammar.from_structural_tag(json.dumps(tag))


def grammar_accepts(grammar: Any, text: str) -> bool:
    """Whether the compiled `grammar` admits exactly `text`."""
    from xgrammar.testing import _is_grammar_accept_string

    return _is_grammar_accept_string(grammar, text)


def calls_of(result: ParseResult) -> list[tuple[str, dict[str, Any]]]:
    """A result's calls as (name, arguments) pairs."""
    return [(call.name, call.arguments) for call in result.calls]


def char_chunks(text: str) -> list[str]:
    return list(text)


def random_chunks(text: str, seed: int, max_len: int = 7) -> list[str]:
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_len)
        chunks.append(text[i : i + n])
        i += n
    return chunks


def token_chunks(
    encode: Callable[[str], Sequence[int]], decode: Callable[[Sequence[int]], str], text: str
) -> list[str]:
    """Split `text` into the deltas a detokenizer sends: one per token, empty while a multi-byte
    character is incomplete. As vLLM's incremental detokenizer does, each step decodes a short window
    of recent tokens, the tokens last sent as its prefix (so a tokenizer that drops a leading space at
    the start of a sequence spells the new token as it would mid-text): linear in the text."""
    ids = list(encode(text))
    chunks: list[str] = []
    prefix = read = 0  # the window's start, and where the text sent so far ends, in tokens
    for i in range(len(ids)):
        shown = decode(ids[prefix:read])
        current = decode(ids[prefix : i + 1])
        if current.endswith("\ufffd") or len(current) < len(shown):
            chunks.append("")
            continue
        chunks.append(current[len(shown) :])
        prefix, read = read, i + 1
    assert "".join(chunks) == text, "tokenizer does not round-trip the text"
    return chunks


def load_corpus(fmt: str, *, engine_tests: bool = False) -> list[dict[str, Any]]:
    """The format's corpus cases; with `engine_tests`, only those transcribed from vLLM's or SGLang's
    own parser tests (see `from_engine_tests`)."""
    path = CORPUS_DIR / f"{fmt}.jsonl"
    if not path.is_file():  # that format's corpus tests fail (tests/test_corpus.py), not every module's collection
        return []
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [case for case in cases if from_engine_tests(case)] if engine_tests else cases


def corpus_cases() -> list[tuple[str, dict[str, Any]]]:
    """Every format's corpus cases as (format, case) pairs, for the modules that run the whole corpus
    (parametrized with `corpus_ids`). Read once per process and shared by those modules: a test
    reads a case, never changes it."""
    return list(_corpus_cases())


@functools.cache
def _corpus_cases() -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple((fmt, case) for fmt in FORMATS for case in load_corpus(fmt))


def corpus_ids(cases: Iterable[tuple[str, dict[str, Any]]]) -> list[str]:
    """The test ids of `corpus_cases()`: `format:case id`."""
    return [f"{fmt}:{case['id']}" for fmt, case in cases]


def content_of(fmt: str, prose: list[str]) -> str | None:
    """The content a format returns for `prose`, the text around its calls (`prose[0]` before the
    first call, one piece after each call): trimmed at both ends, or, for a format that keeps its
    whitespace (`step5_xml`), the text before the first call as written and, after it, the rest
    without the whitespace that no text follows (`FormatStream.keeps_whitespace`)."""
    if not get_format(fmt).stream_class.keeps_whitespace:
        return "".join(prose).strip() or None
    first, rest = prose[0], "".join(prose[1:])
    return (first + (rest.rstrip() if first else rest.strip())) or None


def trimmed(fmt: str, content: str | None) -> str | None:
    """`content` as a format that trims it would return it: for comparing a path that splits the
    reasoning off first (which trims the answer's start) with `parse()` of the whole text, where the
    format keeps its whitespace (`step5_xml`)."""
    if get_format(fmt).stream_class.keeps_whitespace:
        return (content or "").strip() or None
    return content


def from_engine_tests(case: dict[str, Any]) -> bool:
    """Whether a corpus case is one of the engines' own test cases (its source starts with vLLM or
    SGLang and names a test), not one we dispute (class `disputed`): the bar issue 23 sets."""
    source = case.get("source", "").lower()
    return (
        source.startswith(("vllm", "sglang")) and "test" in source[:100] and "disputed" not in case.get("classes", [])
    )


def summary(result: ParseResult) -> dict[str, Any]:
    """The part of a result a corpus case states: content and (name, arguments) per call."""
    return {
        "content": result.content,
        "calls": [{"name": c.name, "arguments": c.arguments} for c in result.calls],
    }


def spy_on_readers(stream: Any) -> set[int]:
    """Record the identity of the text every reader step of `stream` is given. One feed must give
    every step the same text object (issue 10: a position moves over one buffer, nothing is copied);
    the returned set, filled as the stream is fed, then holds one id per feed."""
    seen: set[int] = set()
    for state, reader in list(stream._readers.items()):

        def spy(text: str, pos: int, reader: Callable[[str, int], int | None] = reader) -> int | None:
            seen.add(id(text))
            return reader(text, pos)

        stream._readers[state] = spy
    return seen


def assert_one_call_with_escaped_surrogate(fmt: str, text: str, tools: Any = None) -> None:
    """Issue 9 defect 9: whole and char by char, the one call's arguments_json holds the lone
    surrogate as the escape `\\ud800`, encodes as UTF-8 and decodes to its arguments."""
    for chunks in ([text], list(text)):
        (call,) = build_result(run_chunks(fmt, chunks, tools)).calls
        assert "\\ud800" in call.arguments_json
        call.arguments_json.encode("utf-8")
        assert json.loads(call.arguments_json) == call.arguments


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
"""The tool the template tests declare."""


def render_template(tokenizer: Any, fmt: str, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    """`messages` rendered with `fmt`'s shipped chat template by transformers' real
    `apply_chat_template`."""
    template = get_format(fmt).template_path.read_text(encoding="utf-8")
    return tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False, **kwargs)


def through_sglang_reasoning(
    reasoning: str, fmt: str, tools: Any, text: str, chunkings: Iterable[Sequence[str]], **reasoning_options: Any
) -> tuple[str | None, str | None, list[tuple[str, Any]]]:
    """SGLang's reasoning parser `reasoning` in front of our detector `fmt`, as its serving layer
    chains them: the finished (reasoning, normal text, [(name, arguments)]), after checking that
    streaming `text` in each of `chunkings` gives the same. `tools` are SGLang's tool objects."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    thought, content = ReasoningParser(reasoning, **reasoning_options).parse_non_stream(text)
    normal, calls = FunctionCallParser(tools, fmt).parse_non_stream(content or "")
    finished = (thought or None, normal or None, [(c.name, json.loads(c.parameters)) for c in calls])
    for chunks in chunkings:
        reasoner, detector = ReasoningParser(reasoning, **reasoning_options), FunctionCallParser(tools, fmt)
        thought, normal, items = "", "", []
        for chunk in chunks:
            piece_thought, piece_content = reasoner.parse_stream_chunk(chunk)
            thought += piece_thought or ""
            piece_normal, piece_items = detector.parse_stream_chunk(piece_content or "")
            normal, items = normal + piece_normal, items + piece_items
        piece_normal, piece_items = detector.parse_stream_end()
        normal, items = normal + piece_normal, items + piece_items
        arguments = "".join(item.parameters for item in items)
        named = [(item.name, json.loads(arguments)) for item in items if item.name]
        assert (thought or None, normal or None, named) == finished, list(chunks)
    return finished


PICK = {"type": "object", "properties": {"n": {"type": "integer", "not": {"const": 3}}}}
PICK_TOOLS = [
    {"type": "function", "function": {"name": "pick", "strict": True, "parameters": PICK}},
    {"type": "function", "function": {"name": "free", "parameters": PICK}},  # not strict
]
"""A strict tool and a free one whose schemas refuse `{"n": 3}` by a keyword xgrammar leaves
unchecked (`not`): the adapters' strict-check tests."""


# -- formats derived from response templates ---------------------------------------------------------


def builtin_templates() -> dict[str, dict[str, Any]]:
    """transformers' own response templates for the models that ship none, by first model type."""
    from transformers.cli.serving.utils import _RESPONSE_TEMPLATE_FALLBACKS

    return {types[0]: template for types, template in _RESPONSE_TEMPLATE_FALLBACKS.items()}


NAMED_BY_TEMPLATE = {"qwen2": "hermes_json", "qwen3_5": "qwen_xml", "gemma4": "gemma_calls"}
"""transformers' template -> the named format of ours that reads the same model's output."""

RENAMES = {
    "hermes_json": {"<tool_call>": "@@CALL@@", "</tool_call>": "@@/CALL@@", "<think>": "@@T@@", "</think>": "@@/T@@"},
    "qwen_xml": {  # tag-shaped, so a drifted close (`</parameter1>`) is renamed with its tag's stem
        "<tool_call>": "<zz_call>",
        "</tool_call>": "</zz_call>",
        "<function=": "<zz_fn=",
        "</function": "</zz_fn",
        "<parameter=": "<zz_arg=",
        "</parameter": "</zz_arg",
        "<think>": "<zz_t>",
        "</think>": "</zz_t>",
    },
}
"""Markers no format of ours uses, for the families whose markers are data (no character a regular
expression reads specially, so they stand as written in the template's patterns too)."""


def renamed(value: Any, renames: dict[str, str]) -> Any:
    """`value` (a template, or a text) with each old marker spelled anew; longer markers first, so
    `</tool_call>` is not read as `<tool_call>` preceded by a slash."""
    if isinstance(value, str):
        for old in sorted(renames, key=len, reverse=True):
            value = value.replace(old, renames[old])
        return value
    text = json.dumps(value)
    for old in sorted(renames, key=len, reverse=True):
        text = text.replace(json.dumps(old)[1:-1], json.dumps(renames[old])[1:-1])
    return json.loads(text)


DERIVED_FROM_RESPONSE = {f"derived_{model}": model for model, name in NAMED_BY_TEMPLATE.items() if name in RENAMES}
"""Test names of formats compiled from transformers' response templates with every marker renamed."""

DERIVED_FROM_CHAT = {
    f"derived_chat_{name}": name
    for name in (
        "hermes_json",
        "glm_xml",
        "ifm_xml",
        "hunyuan_xml",
        "minimax_xml",
        "gigachat_gcml",
        "deepseek_json",
        "mistral_json",
        "lfm2_pythonic",
        "olmo3_pythonic",
        "apertus_json",
        "cohere_json",
        "gemma_calls",
    )
}
"""Test names of formats derived from our chat templates of one format per family that
`from_chat_template` reads (JSON in markers, keys and values alone, in a block, and with a name
separator, invokes, flagged invokes, named JSON in sections and, Mistral's, without them, Python call lists
and calls a line each, JSON keyed by name or by the template's keys after a marker, calls as literals), every
marker the template writes whole renamed (`hunyuan_xml`'s assembles its tags, so they stay)."""

DERIVED = [*DERIVED_FROM_RESPONSE, *DERIVED_FROM_CHAT]
"""The derived formats the properties every named format holds apply to (`subject`)."""


@functools.cache
def subject(name: str) -> Format:
    """A named format, or one of `DERIVED` (compiled on first use: transformers' serving module is
    slow to import, so collection never does)."""
    if name in FORMATS:
        return FORMATS[name]
    from toolcall_parsers import from_chat_template, from_response_template

    if name in DERIVED_FROM_CHAT:
        from derive_scores import renamed as renamed_markers
        from derive_scores import renames

        template = FORMATS[DERIVED_FROM_CHAT[name]].template_path.read_text(encoding="utf-8")
        table = renames(from_chat_template(template), template)
        return from_chat_template(renamed_markers(template, table), name)
    model = DERIVED_FROM_RESPONSE[name]
    return from_response_template(renamed(builtin_templates()[model], RENAMES[NAMED_BY_TEMPLATE[model]]), name)
