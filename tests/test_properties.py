"""Hypothesis property tests of the docs/design.md invariants, for every format.

Documents are built from known parts (prose that holds no call, and well-formed calls in the
format's own rendering), so the expected content and calls are known exactly: this checks chunking
invariance, nothing lost and no false calls together. Arbitrary noise checks the rest: never
raises, chunking invariance, and that noise with no complete call comes back as text unchanged.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

import partial_json_parser
import pytest
from helpers import content_of, result_of, run_chunks
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from toolcall_parsers import FORMATS, get_format, parse
from toolcall_parsers.core.events import CallArgs, CallEnd, CallStart, Text, merge_text
from toolcall_parsers.core.limits import Limits

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])  # examples: see conftest
HEAVY = settings(SETTINGS, max_examples=max(settings().max_examples // 3, 50))
"""For the per-format properties over mutated documents (50 examples each in CI, 1000 with `thorough`)."""

# -- strategies -------------------------------------------------------------------------------

# Every format's markers inside strings (issue 9: each class must be generated; lone surrogates are
# injected by the mutations below, where two of them side by side may read as one character).
TRICKY = ["<tool_call>", "</tool_call>", '"', "\\", "{", "}", "[", "]", "\n", "\t", "ü", "東", "🌧", "\x01"]
TRICKY += ["[TOOL_CALLS]", "[ARGS]", "<TOOL_CALLS>", "\n[f(", "<|python_tag|>", "</parameter>"]
string_values = st.lists(st.one_of(st.sampled_from(TRICKY), st.text(max_size=6)), max_size=6).map("".join)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: math.isfinite(f))
    | string_values,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(string_values, inner, max_size=3),
    max_leaves=8,
)
arguments = st.dictionaries(string_values, json_values, max_size=4)
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,15}", fullmatch=True)
# Prose holds no '{' or '[' (so it never continues a JSON value) and no complete <think> (no '>' that
# could close a sampled "<think").
prose = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(blacklist_characters="{[<>", blacklist_categories=("Cs",)), max_size=12),
        st.sampled_from(
            ["<tool_", "<tool_call", "</tool_call>", "<think", "</think>", "<", " ", "\n\n", "<minimax:tool", "[TOOL_"]
        ),
    ),
    max_size=5,
).map("".join)


@st.composite
def hermes_block(draw) -> tuple[str, str, dict[str, Any]]:
    name, args = draw(names), draw(arguments)
    shape = draw(st.sampled_from(["name-args", "args-name", "name-params", "function", "args-string"]))
    if shape == "name-args":
        obj: Any = {"name": name, "arguments": args}
    elif shape == "args-name":
        obj = {"arguments": args, "name": name}
    elif shape == "name-params":
        obj = {"name": name, "parameters": args}
    elif shape == "function":
        obj = {"function": {"name": name, "arguments": args}}
    else:
        obj = {"name": name, "arguments": json.dumps(args)}
    body = json.dumps(obj, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2])))
    sep = draw(st.sampled_from(["", "\n", " "]))
    return f"<tool_call>{sep}{body}{sep}</tool_call>", name, args


@st.composite
def hermes_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    block, name, args = draw(hermes_block())
    return block, [(name, args)], []


AMBIGUOUS_CLOSE = re.compile(r"</parameter>\s*(<parameter|</invoke>|$)")
MINIMAX_VALUES = {
    "string": string_values.filter(lambda v: not AMBIGUOUS_CLOSE.search(v)),
    "integer": st.integers(-(10**15), 10**15),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "object": st.dictionaries(string_values, json_values, max_size=3),
    "array": st.lists(json_values, max_size=3),
}


@st.composite
def minimax_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """A block of invokes rendered the way the template does (strings raw, the rest as JSON), with
    a tool schema per invoke that declares each parameter's type."""
    calls, tools, invokes = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(names) + f"_{draw(st.integers(0, 10**9))}"
        params = draw(st.dictionaries(names, st.sampled_from(sorted(MINIMAX_VALUES)), max_size=4))
        args = {key: draw(MINIMAX_VALUES[kind]) for key, kind in params.items()}
        tools.append({"type": "function", "function": {"name": name, "parameters": {
            "type": "object", "properties": {key: {"type": kind} for key, kind in params.items()}}}})  # fmt: skip
        body = "".join(
            f'<parameter name="{k}">{v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)}</parameter>\n'
            for k, v in args.items()
        )
        invokes.append(f'<invoke name="{name}">\n{body}</invoke>\n')
        calls.append((name, args))
    sep = draw(st.sampled_from(["", "\n"]))
    return f"<minimax:tool_call>{sep}{''.join(invokes)}</minimax:tool_call>", calls, tools


@st.composite
def mistral_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """Calls in either generation: `[TOOL_CALLS][{..}, ..]` or `[TOOL_CALLS]name[ARGS]{..}` per call
    (with or without `[ARGS]`, which vLLM's Mistral tokenizer mode drops)."""
    calls = draw(st.lists(st.tuples(names, arguments), min_size=1, max_size=3))
    if draw(st.booleans()):
        items = [{"name": n, "arguments": a} for n, a in calls]
        body = json.dumps(items, ensure_ascii=draw(st.booleans()))
        text = "[TOOL_CALLS]" + draw(st.sampled_from(["", " "])) + body
    else:
        args_marker = draw(st.sampled_from(["[ARGS]", ""]))
        text = "".join(f"[TOOL_CALLS]{n}{args_marker}{json.dumps(a, ensure_ascii=False)}" for n, a in calls)
    return text, calls, []


@st.composite
def tagged_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    calls = draw(st.lists(st.tuples(names, arguments), min_size=1, max_size=3))
    lines = "".join(f"{n} {json.dumps(a, ensure_ascii=draw(st.booleans()))}\n" for n, a in calls)
    return f"<TOOL_CALLS>\n{lines}</TOOL_CALLS>", calls, []


def python_literal(value: Any) -> str:
    """A JSON value written as Python source, the way a Llama model writes arguments."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    return repr(value)


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True).filter(
    lambda s: s not in ("True", "False", "None", "true", "false", "null")
)


@st.composite
def pythonic_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """A call list at the start of a line: random literal trees as keyword arguments."""
    dotted = st.lists(identifiers, min_size=1, max_size=3).map(".".join)
    arguments_ = st.dictionaries(identifiers, json_values, max_size=4)
    calls = draw(st.lists(st.tuples(dotted, arguments_), min_size=1, max_size=3))
    body = ", ".join(f"{n}({', '.join(f'{k}={python_literal(v)}' for k, v in a.items())})" for n, a in calls)
    prefix = draw(st.sampled_from(["\n", "<|python_tag|>"]))  # the list starts a line, or follows the tag
    return f"{prefix}[{body}]", calls, []


@st.composite
def llama_json_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """JSON call objects at a line start or after the tag (`;`, a line break or nothing between
    them; `type` first or not; `parameters` or `arguments`; pretty-printed or not), or a built-in
    `NAME.call(k=literal)` after the tag."""
    if draw(st.integers(0, 4)) == 0:
        name, args = draw(identifiers), draw(st.dictionaries(identifiers, json_values, max_size=3))
        kwargs = ", ".join(f"{k}={python_literal(v)}" for k, v in args.items())
        return f"<|python_tag|>{name}.call({kwargs})", [(name, args)], []
    calls = draw(st.lists(st.tuples(names, arguments), min_size=1, max_size=3))
    rendered = []
    for name, args in calls:
        head = {"type": "function"} if draw(st.booleans()) else {}
        key = draw(st.sampled_from(["parameters", "arguments"]))
        obj = {**head, "name": name, key: args}
        rendered.append(json.dumps(obj, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 4]))))
    body = rendered[0]
    for more in rendered[1:]:
        body += draw(st.sampled_from(["; ", ";", ";\n", "\n", " ; ", "", ";\r\n", "\r\n"])) + more
    return draw(st.sampled_from(["\n", "<|python_tag|>", "\n  ", "\r\n", "\r\n  "])) + body, calls, []


def shell_word(word: str, quote: bool) -> str:
    """A word as a shell writes it: bare when it can be, else single-quoted."""
    if word and not quote and re.fullmatch(r"[A-Za-z0-9_./=+-]+", word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def tool_block_tool(name: str, positional: list[str]) -> dict[str, Any]:
    """A tool whose required string parameters are `positional` (plus an optional integer one)."""
    properties: dict[str, Any] = {p: {"type": "string"} for p in positional}
    properties["limit_"] = {"type": "integer"}
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": properties, "required": positional}}}  # fmt: skip


block_words = string_values.filter(lambda w: "\n" not in w and "\r" not in w and "`" not in w)
block_bodies = st.lists(st.one_of(string_values, st.sampled_from(["```", "~~~", "\n```\n", "````x", "&amp;", "</"])))


@st.composite
def tool_block_call(draw, fmt: str) -> tuple[str, str, list[str], dict[str, Any], str]:
    """A call of a fresh tool with 0-3 positional parameters: (name, words, arguments, body)."""
    name = draw(names) + f"_{draw(st.integers(0, 10**9))}"
    positional = draw(st.lists(identifiers, max_size=3, unique=True))
    words = [draw(block_words) for _ in positional[:-1]]
    body = "".join(draw(block_bodies)) if positional else ""
    if fmt == "markdown_tools":
        body = body.rstrip("\r")  # a `\r` before the closing fence's line break is part of that line break
    args = dict(zip(positional, [*words, body], strict=False))  # no parameters: no body
    return name, positional, words, args, body


@st.composite
def markdown_tools_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """Fenced blocks on their own lines (the prose before each ends its line), each longer than any
    backtick run in its body."""
    calls, tools, blocks = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        name, positional, words, args, body = draw(tool_block_call("markdown_tools"))
        info = "".join(" " + shell_word(w, draw(st.booleans())) for w in words)
        longest = max((len(r) for r in re.findall("`+", body)), default=0)
        fence = "`" * max(3, longest + 1)
        assume(len(fence) <= 64)
        nl = [draw(st.sampled_from(["\n", "\r\n"])) for _ in range(3)]  # LF or CRLF line breaks
        blocks.append(f"{fence}{name}{info}{nl[0]}{body}{nl[1] if positional else ''}{fence}{nl[2]}")
        calls.append((name, args))
        tools.append(tool_block_tool(name, positional))
    return "".join(blocks), calls, tools


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


@st.composite
def xml_tools_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """One `<tool-use>` block of elements, entities escaped, with or without framing newlines."""
    calls, tools, elements = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        name, positional, words, args, body = draw(tool_block_call("xml_tools"))
        attr = " ".join(shell_word(w, draw(st.booleans())) for w in words)
        attr = f' args="{xml_escape(attr)}"' if words else ""
        framed = body[:1] == "\n" or body[:2] == "\r\n" or body[-1:] == "\n"  # needs framing line breaks
        nl = draw(st.sampled_from(["\n", "\r\n"] if framed else ["", "\n", "\r\n"]))
        nl = "\r\n" if nl == "\n" and body[-1:] == "\r" else nl  # `\r` + "\n" would read as one line break
        elements.append(
            f"<{name}{attr}>{nl}{xml_escape(body)}{nl}</{name}>" + draw(st.sampled_from(["", "\n", "\r\n"]))
        )
        calls.append((name, args))
        tools.append(tool_block_tool(name, positional))
    return "<tool-use>" + draw(st.sampled_from(["\n", "\r\n"])) + "".join(elements) + "</tool-use>", calls, tools


QWEN_TRICKY = ["<function=f>", "</function>", "<parameter=p>", "</parameter>", "\n", "</tool_call>", "<tool_call>"]
QWEN_AMBIGUOUS = re.compile(
    r"</parameter>\s*(<parameter=|</function>)|</function>\s*(</tool_call>|<tool_call>|<function=)|\n<parameter="
)
"""What a qwen_xml value cannot hold (formats/qwen_xml.py), in the value's text after its framing newline."""
QWEN_VALUES = {
    **MINIMAX_VALUES,
    "string": st.lists(st.one_of(string_values, st.sampled_from(QWEN_TRICKY)), max_size=4).map("".join),
}


@st.composite
def qwen_document_block(draw) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """A `<tool_call>` block of functions as the template writes them (one newline each side of a
    value), or inline, or with a `</parameter>` dropped (models do that), typed by a tool schema."""
    calls, tools, functions = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(names) + f"_{draw(st.integers(0, 10**9))}"
        params = draw(st.dictionaries(names, st.sampled_from(sorted(QWEN_VALUES)), max_size=4))
        args = {key: draw(QWEN_VALUES[kind]) for key, kind in params.items()}
        tools.append({"type": "function", "function": {"name": name, "parameters": {
            "type": "object", "properties": {key: {"type": kind} for key, kind in params.items()}}}})  # fmt: skip
        body = ""
        for k, v in args.items():
            value = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
            assume(not QWEN_AMBIGUOUS.search("\n" + value))
            inline = draw(st.booleans()) and value[:1] != "\n" and value[-1:] != "\n" and "<parameter=" not in value
            nl = "" if inline else "\n"
            dropped = not inline and draw(st.booleans()) and not re.search(r"</parameter>\s*$", value)
            # A dropped close: the value's framing newline is what ends it.
            close = "" if dropped else "</parameter>" + draw(st.sampled_from(["\n", ""]))
            body += f"<parameter={k}>{nl}{value}{nl}{close}"
        functions.append(f"<function={name}>\n{body}</function>")
        calls.append((name, args))
    sep = draw(st.sampled_from(["", "\n"]))
    return f"<tool_call>{sep}{sep.join(functions)}{sep}</tool_call>", calls, tools


written_values = st.from_regex(r"[A-Za-z0-9]{1,12}", fullmatch=True)
"""Values every format writes and reads back as given (no markers, quotes, spaces or line breaks)."""


@st.composite
def written_document_block(
    draw, fmt: str, most: int = 1
) -> tuple[str, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """Any registered format's block, written by its spec's `write`: up to `most` calls of declared
    tools whose parameters are required strings (so positional formats, gptme's blocks, write them
    too). One call by default: what a writer puts between calls (a line break) is text."""
    calls, tools = [], []
    for i in range(draw(st.integers(1, most))):
        name = f"{draw(identifiers)}_{i}"
        params = draw(st.lists(identifiers, max_size=3, unique=True))
        calls.append((name, {param: draw(written_values) for param in params}))
        tools.append(tool_block_tool(name, params))
    return get_format(fmt).write(calls), calls, tools


HAND_WRITTEN_BLOCKS = {
    "qwen_xml": qwen_document_block(),
    "markdown_tools": markdown_tools_document_block(),
    "xml_tools": xml_tools_document_block(),
    "llama_json": llama_json_document_block(),
    "llama_pythonic": pythonic_document_block(),
    "hermes_json": hermes_document_block(),
    "minimax_xml": minimax_document_block(),
    "mistral_json": mistral_document_block(),
    "tagged": tagged_document_block(),
}
"""Formats with a strategy of their own (their tricky values, variants and typing)."""
BLOCKS = {
    fmt: HAND_WRITTEN_BLOCKS[fmt] if fmt in HAND_WRITTEN_BLOCKS else written_document_block(fmt) for fmt in FORMATS
}
"""Every registered format's document blocks: its own strategy where it has one, else the generic
one built on its `write`, so every property runs on every registered format."""


def test_the_hand_written_blocks_name_registered_formats():
    assert set(HAND_WRITTEN_BLOCKS) <= set(FORMATS)


PROSE = {"llama_json": prose.filter(lambda p: not p.lstrip().startswith(";") and not p.endswith("\r"))}  # `\r\n`
PROSE["markdown_tools"] = prose.filter(lambda p: "```" not in p and "~~~" not in p).map(  # no fence of its own
    lambda p: p if p.endswith("\n") else p + "\n"
)  # a fence opens a line; the line break before it is text
PROSE["deepseek_dsml"] = prose.filter(lambda p: not p.lstrip().startswith("</think>"))
PROSE["gigachat_gcml"] = PROSE["deepseek_dsml"]  # DSML's machine and its rule, GigaChat's tags
PROSE["xlam_json"] = prose.filter(lambda p: p == p.rstrip())  # whitespace before a line's list is markup
"""Per format, prose that cannot continue its blocks (after a llama_json call, `;` separates calls;
after a DSML block, GigaChat 3.5's too, a `</think>` ends the reasoning the block interrupted and is
dropped; before an xLAM list that opens a line, the whitespace next to it is markup, as the design
lets it be)."""


@st.composite
def documents(draw, fmt: str) -> tuple[str, str | None, list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    prose_ = PROSE.get(fmt, prose)
    parts = [draw(prose_)]
    calls, tools = [], []
    for _ in range(draw(st.integers(0, 3))):
        block, block_calls, block_tools = draw(BLOCKS[fmt])
        parts += [block, draw(prose_)]
        calls += block_calls
        tools += block_tools
    declared = [tool["function"]["name"] for tool in tools]
    assume(len(set(declared)) == len(declared))  # a request declares each tool once
    return "".join(parts), content_of(fmt, parts[::2]), calls, tools or None


def split(draw, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


def is_prefix(partial: Any, final: Any) -> bool:
    """Whether a partially parsed value can still grow into `final` (strings may be cut)."""
    if isinstance(partial, dict):
        return isinstance(final, dict) and all(k in final and is_prefix(v, final[k]) for k, v in partial.items())
    if isinstance(partial, list):
        return isinstance(final, list) and len(partial) <= len(final) and all(map(is_prefix, partial, final))
    if isinstance(partial, str):
        return isinstance(final, str) and final.startswith(partial)
    return partial == final


# -- properties -------------------------------------------------------------------------------


@SETTINGS
@given(st.data(), st.sampled_from(sorted(BLOCKS)))
def test_known_documents_parse_exactly_under_any_chunking(data, fmt):
    text, prose_text, calls, tools = data.draw(documents(fmt))
    whole = run_chunks(fmt, [text], tools)
    result = result_of(whole)
    assert result.content == prose_text  # nothing lost, nothing extra
    assert [(c.name, c.arguments) for c in result.calls] == calls  # no false calls, none missing
    assert [c.index for c in result.calls] == list(range(len(calls)))
    assert run_chunks(fmt, split(data.draw, text), tools) == whole
    assert run_chunks(fmt, list(text), tools) == whole


@SETTINGS
@given(st.data(), st.sampled_from(sorted(FORMATS)))
def test_written_blocks_parse_exactly_under_any_chunking(data, fmt):
    """The generic strategy (a format's own `write`) holds on every format, the hand-written ones
    included: what a new format gets before it has a strategy of its own."""
    prose_ = PROSE.get(fmt, prose)
    parts, calls, tools = [data.draw(prose_)], [], []
    for _ in range(data.draw(st.integers(1, 2))):
        block, block_calls, block_tools = data.draw(written_document_block(fmt, most=3))
        parts += [f"\n{block}\n", data.draw(prose_)]  # on its own lines, as templates write calls
        calls, tools = calls + block_calls, tools + block_tools
    assume(len({t["function"]["name"] for t in tools}) == len(tools))
    text = "".join(parts)
    whole = run_chunks(fmt, [text], tools)
    result = result_of(whole)
    # What a writer puts between calls (a line break) is text: compare all but whitespace.
    assert "".join((result.content or "").split()) == "".join("".join(parts[::2]).split())
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert run_chunks(fmt, split(data.draw, text), tools) == whole


@SETTINGS
@given(st.data(), st.sampled_from(sorted(BLOCKS)))
def test_arguments_stream_monotonically(data, fmt):
    text, _, _, tools = data.draw(documents(fmt))
    chunks = split(data.draw, text)
    stream = get_format(fmt).stream(tools, lambda n, i: f"id{i}")
    sent: dict[int, str] = {}
    ended: dict[int, dict[str, Any]] = {}
    for chunk in [*chunks, None]:
        events = stream.feed(chunk) if chunk is not None else stream.close()
        for event in events:
            if isinstance(event, CallStart):
                sent[event.index] = ""
            elif isinstance(event, CallArgs):
                sent[event.index] += event.fragment
            elif isinstance(event, CallEnd):
                ended[event.index] = event.arguments
        for index, prefix in sent.items():
            if index in ended:
                assert json.loads(prefix) == ended[index]
            elif prefix:
                final = next(c.arguments for c in result_of(run_chunks(fmt, [text], tools)).calls if c.index == index)
                assert is_prefix(partial_json_parser.loads(prefix), final), prefix


NOISE_ALPHABET = [*"<>/{}[]\":,\\ \n='", "<tool_call>", "</tool_call>", "<think>", "</think>", "true", "1", "a"]
NOISE_ALPHABET += ["<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="f">', "</invoke>"]
NOISE_ALPHABET += ['<parameter name="p">', "</parameter>", "<invoke name=", "<parameter name="]
NOISE_ALPHABET += ["[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]", "f", "abc123def"]
NOISE_ALPHABET += ["<TOOL_CALLS>", "</TOOL_CALLS>", "f {", "g "]
NOISE_ALPHABET += ["<function=f>", "</function>", "<parameter=p>", "<function="]
NOISE_ALPHABET += ["\n```f a\n", "\n```\n", "~~~", "<tool-use>", "</tool-use>", '<f args="a">', "</f>", "&amp;"]
NOISE_ALPHABET += ["\n[", "f(", "x=", ")", "'", "<|python_tag|>", "<|python_start|>", "<|python_end|>", "True"]
NOISE_ALPHABET += ['\n{"name": "f", "parameters": ', '"type": "function", ', "; ", ".call(", "<|eom_id|>"]
noise = st.lists(st.sampled_from(NOISE_ALPHABET) | st.text(max_size=3), max_size=40).map("".join)


@SETTINGS
@given(st.data(), st.sampled_from(sorted(BLOCKS)), st.one_of(noise, st.text(max_size=80)))
def test_noise_never_raises_and_is_chunking_invariant(data, fmt, text):
    whole = run_chunks(fmt, [text])
    assert run_chunks(fmt, split(data.draw, text)) == whole
    result = result_of(whole)
    for call in result.calls:
        assert json.loads(call.arguments_json) == call.arguments
    if not result.calls and not any(isinstance(e, CallStart) for e in whole):
        assert result.content == content_of(fmt, [text])
    assert all(isinstance(e, (Text, CallStart, CallArgs, CallEnd)) for e in whole)


@settings(deadline=None)
@given(st.sampled_from(sorted(BLOCKS)), st.binary(max_size=200))
def test_binary_noise_is_text(fmt, blob):
    text = blob.decode("utf-8", errors="replace")
    assert result_of(run_chunks(fmt, list(text))).content == content_of(fmt, [text])


# -- mutated documents: the classes an adversarial review found (issue 9) -------------------------
#
# Valid documents, then broken the ways model output breaks: cut anywhere, spans deleted or doubled
# (doubled markers), and snippets injected anywhere (inside strings too): every format's markers,
# empty lists, bare words, odd numbers, over-long names, deep nesting, lone surrogates, whitespace
# runs. Whatever comes out, the invariants that need no expected result must hold.

INJECT = ["<tool_call>", "</tool_call>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "<TOOL_CALLS>", "</TOOL_CALLS>"]
INJECT += ["<minimax:tool_call>", '<invoke name="f">', "</invoke>", '<parameter name="p">', "</parameter>"]
INJECT += ["<function=f>", "</function>", "<parameter=p>", "\n<parameter=p>\n", "<function=", "<parameter="]
INJECT += ["\n[", "[f(", "<|python_tag|>", "<|python_start|>", "<|python_end|>", "<think>", "</think>"]
INJECT += ['\n{"name": "f", "parameters": ', '"type": "function", ', ";", ".call(", "<|eom_id|>", '"' + "n" * 1100]
INJECT += ["\n```f\n", "\n```\n", "\n````", "\n~~~", "`" * 70, "\n```f 'a", "<tool-use>", "</tool-use>", "</f>"]
INJECT += ["&amp", "&#x1F600;", "&#xD800;", '<f args="', 'args="a b">', "\n```f " + "a " * 3000]
INJECT += ["[]", "[ ]", "{}", "tomorrow", ",,", '"', "'", "\\", "=", ":", ")", "(", "]", "}", "{"]
INJECT += ["1e", "1e+", "1e999", "0x1F", "1_000", "1j", "01", "-", ".5", "9" * 5000, "'\\N{BULLET}'"]
INJECT += ["\ud800", "\\ud800", "\\ud83d\\ude00", "'\\ud83d\\ude00'", "x" * 1500, " " * 3000, "\t\n" * 500]
INJECT += ["[" * 600 + "]" * 600, '{"a":' * 300 + "1" + "}" * 300, "[" * 300, "f(a=" + "[" * 600]
GARBAGE_SCHEMAS = [{"anyOf": True}, {"type": 5}, {"properties": []}, {"items": "x"}, [], "string", {"oneOf": [1]}]


@st.composite
def mutated_documents(draw, fmt: str) -> tuple[str, Any]:
    text, _, _, tools = draw(documents(fmt))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["cut", "insert", "insert", "delete", "double"]))
        pos = draw(st.integers(0, len(text)))
        if op == "cut":
            text = text[:pos]
        elif op == "insert":
            text = text[:pos] + draw(st.sampled_from(INJECT)) + text[pos:]
        elif op == "delete":
            text = text[:pos] + text[pos + draw(st.integers(1, 4)) :]
        else:
            text = text[:pos] + text[pos : pos + draw(st.integers(1, 16))] + text[pos:]
    if tools and draw(st.booleans()):  # schemas as broken as a client can send them
        tools = [
            {"type": "function", "function": {**t["function"], "parameters": {"type": "object", "properties": {
                k: draw(st.sampled_from(GARBAGE_SCHEMAS)) for k in t["function"]["parameters"]["properties"]}}}}
            for t in tools
        ]  # fmt: skip
    return text, tools


def is_subsequence(part: str, whole: str) -> bool:
    it = iter(whole)
    return all(c in it for c in part)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


HOLD_BOUND = Limits().max_name + 64
"""The most a stream may hold back between feeds: a name, a number, a partial marker."""


def run_watched(fmt: str, chunks: list[str], tools: Any) -> tuple[list[Any], list[logging.LogRecord]]:
    """`run_chunks`, also checking the hold-back bound after every feed; returns the log records."""
    handler = _Records()
    log = logging.getLogger("toolcall_parsers")
    log.addHandler(handler)
    try:
        stream = get_format(fmt).stream(tools, lambda n, i: f"id{i}")
        events = []
        for chunk in chunks:
            events += stream.feed(chunk)
            assert len(stream._buf) <= HOLD_BOUND, f"{len(stream._buf)} characters held back"
        events += stream.close()
    finally:
        log.removeHandler(handler)
    return merge_text(events), handler.records


@pytest.mark.parametrize("fmt", sorted(BLOCKS))
@HEAVY
@given(st.data())
def test_mutated_documents_keep_every_invariant(fmt, data):
    text, tools = data.draw(mutated_documents(fmt))
    whole, records = run_watched(fmt, [text], tools)
    assert not [r for r in records if r.levelno >= logging.ERROR], "internal error"
    assert len(records) <= Limits().log_spans + 1, "one response flooded the log"
    assert run_watched(fmt, split(data.draw, text), tools)[0] == whole
    if len(text) <= 600:
        assert run_watched(fmt, list(text), tools)[0] == whole
    result = result_of(whole)
    assert [c.index for c in result.calls] == list(range(len(result.calls)))
    for call in result.calls:
        call.arguments_json.encode("utf-8")
        assert isinstance(call.arguments, dict) and json.loads(call.arguments_json) == call.arguments
    assert is_subsequence("".join(e.text for e in whole if isinstance(e, Text)), text), "text repeated"
    if not any(isinstance(e, CallStart) for e in whole):
        assert result.content == content_of(fmt, [text])


# -- exact streaming (issue 11) -------------------------------------------------------------------


def client_view(events: list[Any]) -> tuple[str | None, list[tuple[str, str]]]:
    """What a streaming client ends up with: the content, and every call it was shown (name and
    the arguments it accumulated), finished or not."""
    content = "".join(e.text for e in events if isinstance(e, Text)) or None
    calls: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    for e in events:
        if isinstance(e, CallStart):
            names[e.index], calls[e.index] = e.name, []
        elif isinstance(e, CallArgs):
            calls[e.index].append(e.fragment)
    return content, [(names[i], "".join(calls[i])) for i in sorted(calls)]


def longest_started_call(events: list[Any]) -> int:
    sizes: dict[int, int] = {}
    for e in events:
        if isinstance(e, CallStart):
            sizes[e.index] = 0
        elif isinstance(e, CallArgs):
            sizes[e.index] += len(e.fragment)
    return max(sizes.values(), default=0)


@pytest.mark.parametrize("policy", [None, "complete"])
@pytest.mark.parametrize("fmt", sorted(BLOCKS))
@HEAVY
@given(st.data())
def test_the_stream_tells_the_same_story_as_the_finished_response(fmt, policy, data):
    """Under `complete`, and under the default bound for calls shorter than it, a client's
    accumulated stream equals parse(), for any text (valid, cut, broken) and any chunking."""
    if data.draw(st.booleans()):
        text, tools = data.draw(mutated_documents(fmt))
    else:
        text, _, _, tools = data.draw(documents(fmt))
    if policy is None:  # a call past the bound streams as written: exactness is promised below it
        eager = run_chunks(fmt, [text], tools, streaming="eager")
        assume(longest_started_call(eager) <= Limits().streaming)  # type: ignore[operator]
    expected = parse(fmt, text, tools, lambda n, i: f"id{i}")
    want = (expected.content, [(c.name, c.arguments_json) for c in expected.calls])
    chunkings = [split(data.draw, text), [text]] + ([list(text)] if len(text) <= 600 else [])
    for chunks in chunkings:
        assert client_view(run_chunks(fmt, chunks, tools, streaming=policy)) == want


# -- line breaks: `\r\n` is one line break in every format (issue 18) -----------------------------


def crlf(text: str) -> str:
    """`text` with every line break written `\\r\\n`, and no `\\r` of its own anywhere else."""
    return text.replace("\r", "").replace("\n", "\r\n")


HALF_A_LINE_BREAK = re.compile(r"\r(?!\n)|(?<!\r)\n")
"""A `\\r` without its `\\n`, or a `\\n` without its `\\r`."""


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@HEAVY
@given(st.data())
def test_a_crlf_line_break_is_never_split(fmt, data):
    """Documents (valid, or mutated) whose every line break is `\\r\\n`: the stream in any chunking
    tells what parse() tells, and the content holds no half of a line break. The input has none, so
    a lone `\\r` (or `\\n`) in the content was not in the input at that place: a format took only the
    `\\n` (or only the `\\r`) of a `\\r\\n` as framing."""
    if data.draw(st.booleans()):
        text, tools = data.draw(mutated_documents(fmt))
    else:
        text, _, _, tools = data.draw(documents(fmt))
    text = crlf(text)
    expected = parse(fmt, text, tools)
    assert not HALF_A_LINE_BREAK.search(expected.content or ""), expected.content
    want = (expected.content, [(c.name, c.arguments_json) for c in expected.calls])
    whole = run_chunks(fmt, [text], tools, streaming="complete")
    for chunks in [split(data.draw, text)] + ([list(text)] if len(text) <= 600 else []):
        assert run_chunks(fmt, chunks, tools, streaming="complete") == whole
    result = result_of(whole)
    assert (result.content, [(c.name, c.arguments_json) for c in result.calls]) == want
