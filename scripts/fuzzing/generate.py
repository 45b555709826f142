"""Documents with known results, per format: prose, blocks of calls, reasoning blocks, noise.

What the fuzzer knows about a format is its `Profile`, made from the format's spec (`FORMATS`): its
markers, its writer (`fmt.write`), whether its calls need declared tools. A few tables add what a spec
cannot say (prose that stays text, hand-made empty calls, the reasoning markers of a family); they
are optional, and a format that is in none of them is fuzzed all the same.

Every block of calls is either grammar-aware (`blocks.BLOCKS`, where a format has one) or written by
the spec's writer (`written_block`: random names and arguments, declared tools typed by the values),
the second for every format, so a new format is fuzzed with no edit here.
"""

from __future__ import annotations

import functools
import json
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolcall_parsers.formats import FORMATS, Format

from .blocks import BLOCKS, Part, block_tool, tool
from .values import (
    ALL_MARKERS,
    PROSE_CHARS,
    SENTINEL,
    UNICODE,
    Expected,
    ExpectedCall,
    Tools,
    call_head,
    gen_ident,
    gen_json,
    gen_string,
    gen_word,
)

WRITTEN_SHARE = 0.25
"""The share of blocks written by the spec's writer in formats that also have a grammar-aware one."""

# Markers in prose that are text by the grammar, and that nothing generated next to them can complete.
PROSE_SNIPPETS: dict[str, list[str]] = {
    "hermes_json": ["<tool_", "<tool_call", "</tool_call>", "<tool_call> tag", "<think", "</think>", "<"],
    "minimax_xml": ["<minimax:tool", "</minimax:tool_call>", "<minimax:tool_call> tag", "</invoke>", "</parameter>"],
    "mistral_json": ["[TOOL_", "[TOOL_CALLS] is a token", "[ARGS]", "[CALL_ID]", "[/THINK]", "<tool_call>"],
    "llama_pythonic": ["<|python_", "<|python_tag|> token", "see [1]", "<think", "</think>"],  # no <|python_end|>
    "tagged": ["<TOOL_", "</TOOL_CALLS>", "<think", "</think>", "<tool_call>", "[TOOL_CALLS]"],
    "llama_json": ["<|python_", "<|python_tag|> token", '{"name": "John", "age": 3}', "{ not a call}", "<think",
                   "</think>", "<|eom_id|>", "[TOOL_CALLS]", '\n{"a": [1, {"name": "x"}]}\n', '\n{"name": 1}'],
    "qwen_xml": ["<tool_", "<tool_call> tag", "</tool_call>", "<function=f>", "</parameter>", "<parameter=p>",
                 "</function>", "<think", "</think>", "<invoke>"],
    "markdown_tools": ["`x`", "a ``` b", "\n```python\nprint(1)\n```\n", "\n~~~\n```save x\n~~~\n",
                       "\n````md\n```save a.py\nx\n```\n````\n", "<tool-use>", "<think", "</think>"],
    "xml_tools": ["<tool-", "<tool-use> tag", "</tool-use>", "&amp;", "<save>", "\n```save x\ny\n```\n",
                  "<think", "</think>", "<tool_call>"],
}  # fmt: skip
"""Optional: where a format has no entry, the first half of each of its markers, then a space."""
EXTRA_EMPTY_CALLS: dict[str, list[str]] = {
    "hermes_json": ["<tool_call>[]</tool_call>", "<tool_call>{}</tool_call>", "<tool_call></tool_call>",
                    '<tool_call>{"name": ""}</tool_call>', '<tool_call>{"name": "f", "arguments": null}</tool_call>',
                    '<tool_call>{"name": "f", "arguments": []}</tool_call>', "<tool_call>[[]]</tool_call>",
                    '<tool_call>{"name": "f", "arguments": "x"}</tool_call>', '<tool_call>"f"</tool_call>'],
    "minimax_xml": ["<minimax:tool_call></minimax:tool_call>", '<minimax:tool_call><invoke name=""></invoke>',
                    '<minimax:tool_call><invoke name="f"></invoke></minimax:tool_call>',
                    '<invoke name="f"><parameter name=""></parameter></invoke>', "<minimax:tool_call><invoke name=>"],
    "mistral_json": ["[TOOL_CALLS][]", "[TOOL_CALLS]{}", "[TOOL_CALLS]f[ARGS]{}", "[TOOL_CALLS]f[ARGS]",
                     "[TOOL_CALLS]f[CALL_ID][ARGS]{}", "[TOOL_CALLS] [{}]", '[TOOL_CALLS][{"name": "f"}]',
                     '[TOOL_CALLS]f[ARGS]"{}"', "[TOOL_CALLS]f[ARGS][]", "[TOOL_CALLS][ARGS]{}"],
    "llama_pythonic": ["\n[]", "\n[f()]", "<|python_tag|>[]", "<|python_start|>[]<|python_end|>", "\n[()]",
                       "\n[f(),]", "\n[,]", "\n[f(,)]", "\n[f()()]", "\n[f(a=)]"],
    "tagged": ["<TOOL_CALLS>\n</TOOL_CALLS>", "<TOOL_CALLS></TOOL_CALLS>", "<TOOL_CALLS>\nf {}\n",
               "<TOOL_CALLS>\nf null\n</TOOL_CALLS>", '<TOOL_CALLS>\nf "{}"\n', "<TOOL_CALLS>\n {}\n",
               "<TOOL_CALLS>\nf []\n", '<TOOL_CALLS>\nf "x"\n'],
    "llama_json": ['\n{"name": "", "parameters": {}}', '\n{"name": "f"}', '\n{"name": "f", "parameters": null}',
                   '\n{"name": "f", "parameters": []}', "<|python_tag|>", "<|python_tag|>f.call()", "<|python_tag|>{}",
                   "\n{}", '\n{"name": "f", "parameters": "x"}', '\n{"type": "function"}', "<|python_tag|>f.call(,)"],
    "qwen_xml": ["<tool_call></tool_call>", "<tool_call>\n<function=>\n</function>\n</tool_call>",
                 "<tool_call><function=f></function></tool_call>", "<function=f></function>",
                 "<tool_call>\n<function=f>\n", "<tool_call>\n\n",
                 "<tool_call><function=f><parameter=>1</parameter></function></tool_call>"],
    "markdown_tools": ["\n```\n```\n", "\n```f\n```\n", "\n~~~\n", "\n```` f\n````\n", "\n```f x y z\nbody\n```\n",
                       "\n```f 'open\nx\n```\n", "\n```f\\\n```\n"],
    "xml_tools": ["<tool-use></tool-use>", "<tool-use><f></f></tool-use>", "<tool-use><f/></tool-use>",
                  '<tool-use><f args="">x</f></tool-use>', "<tool-use>\n",
                  "<tool-use><f args=\"'open\">x</f></tool-use>", '<tool-use><f other="1">x</f></tool-use>',
                  "<tool-use><f>x</g></tool-use>"],
}  # fmt: skip
"""Optional: empty and degenerate calls no writer produces; the written ones are in every profile."""
EXTRA_LONG_CALLS: dict[str, list[str]] = {
    "mistral_json": ["[TOOL_CALLS]f[CALL_ID]%s[ARGS]{}", '[TOOL_CALLS][{"name": "%s"}]'],
    "llama_json": ["<|python_tag|>%s.call()"],
}
"""Optional: calls with a long name or word (`%s`) in spellings the writer does not use."""


@dataclass(frozen=True)
class Profile:
    """What the fuzzer uses of one format: its spec, its grammar-aware block generator (or None),
    the openers (a marker or the head the writer puts before a call), prose that stays text, the
    reasoning markers, empty calls, and calls with a place (`%s`) for a long name."""

    name: str
    spec: Format
    block: Callable[[random.Random], Part] | None
    openers: tuple[str, ...]
    prose_snippets: tuple[str, ...]
    think: tuple[str, str]
    empty_calls: tuple[str, ...]
    long_calls: tuple[str, ...]

    @property
    def opener(self) -> str:
        return self.openers[0]


@functools.cache
def profile(name: str) -> Profile:
    """The profile of format `name`, from its spec and the optional tables above."""
    fmt = FORMATS[name]
    head = call_head(fmt)
    openers = tuple(dict.fromkeys([*fmt.markers[:1], "\n" + head] if head else fmt.markers[:1]))
    snippets = PROSE_SNIPPETS.get(name) or [m[: max(1, len(m) // 2)] + " " for m in fmt.markers]
    return Profile(
        name=name,
        spec=fmt,
        block=BLOCKS.get(name),
        openers=openers or ("\n",),
        prose_snippets=tuple(snippets),
        think=text_think(fmt),
        empty_calls=tuple(dict.fromkeys([*EXTRA_EMPTY_CALLS.get(name, []), *written_empty_calls(fmt)])),
        long_calls=tuple(dict.fromkeys([*written_long_calls(fmt), *EXTRA_LONG_CALLS.get(name, [])])),
    )


def text_think(fmt: Format) -> tuple[str, str]:
    """The first of the format's think pairs that its stream reads as text with its markers, which the
    documents' expected content holds verbatim (Kimi K3's `think` channel is read with its markers
    dropped, so its plain `<think>` pair is written)."""
    from toolcall_parsers import parse

    for opener, closer in fmt.think_pairs:
        if parse(fmt.name, f"{opener}x{closer}").content == f"{opener}x{closer}":
            return opener, closer
    return fmt.think_markers


def written_empty_calls(fmt: Format) -> list[str]:
    """Calls without arguments or without a name, as the writer spells them, some with their empty
    arguments replaced by another empty value; the markers alone. Each at a line start."""
    one = fmt.write([("f", {})])
    shapes = [one, fmt.write([("f", {}), ("g", {})]), fmt.write([(SENTINEL, {})]).replace(SENTINEL, "")]
    for old, new in (("{}", "[]"), ("{}", "null"), ("{}", ""), ("{}", '"x"'), ("()", "(,)"), ("()", "()()")):
        if old in one:
            shapes.append(one.replace(old, new, 1))
    shapes += ["".join(fmt.markers), *fmt.markers[:1]]
    return ["\n" + s for s in shapes if s]


def written_long_calls(fmt: Format) -> list[str]:
    """Written calls with `%s` where a name, an argument's key or a word goes, at a line start."""
    shapes = [
        fmt.write([(SENTINEL, {})]),
        fmt.write([("f", {SENTINEL: 1})]),
        fmt.write([("f", {"a": SENTINEL, "b": "x"})]),
    ]
    return ["\n" + s.replace(SENTINEL, "%s") for s in shapes if SENTINEL in s]


# -- written blocks: the spec's writer -------------------------------------------------------------

JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", dict: "object", list: "array"}


def value_schema(value: Any) -> dict[str, Any]:
    """The JSON schema type of a generated value (schema-typed formats read raw values by it)."""
    return {"type": "null" if value is None else JSON_TYPES[type(value)]}


def plain(fmt: Format, value: Any) -> bool:
    """Whether `value` holds none of the format's markers (a raw-text format cannot hold its closer;
    which formats escape is the writer's business, so written blocks avoid markers in values)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return not any(marker in text for marker in fmt.markers) and (fmt.writes_value is None or fmt.writes_value(value))


def written_calls(rng: random.Random, fmt: Format) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, Any]]]:
    """One to three calls and their declared tools. Formats whose calls need declared tools take
    required string parameters in order, the last one the body (`blocks.block_tool`); the others
    take JSON values of every kind, the tool's schema typed by them."""
    calls, tools = [], []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if fmt.needs_declared_tools is not None:
            name, schema, _, _, args = block_tool(rng)
            while not all(plain(fmt, v) for v in args.values()):
                name, schema, _, _, args = block_tool(rng)
        else:
            name = gen_ident(rng) + f"_{rng.randrange(10**9)}"
            args = {}
            for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
                value = gen_json(rng)
                while not plain(fmt, value):
                    value = gen_json(rng)
                args[gen_ident(rng)] = value
            schema = tool(name, {k: value_schema(v) for k, v in args.items()})
        calls.append((name, args))
        tools.append(schema)
    return calls, tools


def written_block(rng: random.Random, fmt: Format) -> Part:
    """Random calls through `fmt.write`, at a line start; whitespace next to it is loose (the
    format's rule for it is its own)."""
    calls, tools = written_calls(rng, fmt)
    return Part(fmt.write(calls), False, [(n, a, None) for n, a in calls], tools, lead="\n", loose=True)


def gen_block(rng: random.Random, prof: Profile, written_only: bool = False) -> Part:
    """A block of calls: grammar-aware where the format has a generator, else (and in a share of
    cases, and always when `written_only`) written by the spec's writer."""
    if prof.block is not None and not written_only and rng.random() >= WRITTEN_SHARE:
        return prof.block(rng)
    return written_block(rng, prof.spec)


# -- documents ---------------------------------------------------------------------------------------


@dataclass
class Case:
    """One fuzz input. `expected` and `parts` only for a generated document that was not mutated."""

    fmt: str
    text: str
    tools: Tools
    origin: str
    index: int = 0
    expected: Expected | None = None
    parts: list[Part] | None = None


def gen_prose(rng: random.Random, fmt: str, think: bool = True, written_only: bool = False) -> str:
    """Text with no call in it: words, unicode, partial and mentioned markers, reasoning blocks that
    hold complete calls (which stay text)."""
    prof = profile(fmt)
    parts = []
    for _ in range(rng.randrange(5)):
        r = rng.random()
        if r < 0.55:
            parts.append(gen_word(rng, PROSE_CHARS, 12))
        elif r < 0.8:
            parts.append(rng.choice(prof.prose_snippets))
        elif r < 0.9 and think:
            parts.append(gen_think(rng, fmt, written_only))
        else:
            parts.append(rng.choice(UNICODE))
    return "".join(parts)


def gen_think(rng: random.Random, fmt: str, written_only: bool = False) -> str:
    """A reasoning block: the start marker and a whole valid block inside are text."""
    prof = profile(fmt)
    open_tag, close_tag = prof.think
    inner = gen_prose(rng, fmt, think=False)
    if rng.random() < 0.5:
        inner += gen_block(rng, prof, written_only).text
    if rng.random() < 0.3:
        inner += prof.opener + gen_word(rng)
    return open_tag + inner.replace(close_tag, "") + close_tag


def assemble(fmt: str, parts: list[Part]) -> Case:
    """Join parts into a document with its expected content, calls and tools. The content is exact,
    or, when a written block is in it, the prose pieces between written blocks (see `Expected`)."""
    texts: list[str] = []
    pieces: list[list[str]] = [[]]
    for k, part in enumerate(parts):
        text = part.text
        if k and parts[k - 1].guard_after and not text[:1].isspace():
            texts.append(" ")
            pieces[-1].append(" ")
        texts.append(part.lead + text)
        if part.loose:
            pieces.append([])
        else:
            pieces[-1].append(text if part.prose else part.lead)
    calls: list[ExpectedCall] = []
    used: set[str] = set()
    own_ids = FORMATS[fmt].own_ids
    for part in parts:
        for name, args, model_id in part.calls:
            if model_id is not None and re.fullmatch(r"[A-Za-z0-9]{9}", model_id) and model_id not in used:
                used.add(model_id)  # a valid model-written id is kept, once (Mistral's blocks write them)
                calls.append((name, args, model_id))
            elif own_ids and model_id is None and part.loose:
                calls.append((name, args, None))  # the format's own id rule, from text the writer made: any id
            else:
                calls.append((name, args, f"call_{len(calls)}"))
    tools = [t for part in parts for t in part.tools] or None
    joined = ["".join(piece).strip() for piece in pieces]
    content: str | list[str] | None = [p for p in joined if p] if len(pieces) > 1 else joined[0] or None
    return Case(fmt, "".join(texts), tools, "valid", expected=(content, calls), parts=parts)


def content_matches(content: str | None, want: str | list[str] | None) -> bool:
    """Whether a result's content is the expected one (a list: its pieces in order, any whitespace
    between them; literal pieces between `\\s*` cannot backtrack)."""
    if not isinstance(want, list):
        return content == want
    if not want:
        return content is None
    return content is not None and re.fullmatch(r"\s*".join(map(re.escape, want)), content) is not None


def gen_document(rng: random.Random, fmt: str, written_only: bool = False) -> Case:
    """Prose, then up to three blocks each followed by prose. After a written block the prose starts
    on a new line with a letter, so that it cannot continue the block (a `;` joining JSON calls)."""
    prof = profile(fmt)
    parts = [Part(gen_prose(rng, fmt, written_only=written_only), True)]
    for _ in range(rng.choice([0, 1, 1, 1, 1, 2, 2, 3])):
        block = gen_block(rng, prof, written_only)
        parts.append(block)
        if block.last_only:
            parts.append(Part(rng.choice(["", "\n", " "]), True))
            break
        prose = gen_prose(rng, fmt, written_only=written_only)
        while block.after_ok and not block.after_ok(prose):
            prose = gen_prose(rng, fmt, written_only=written_only)
        if block.loose:
            prose = "\n" + rng.choice(string.ascii_letters) + prose
        parts.append(Part(prose, True))
    return assemble(fmt, parts)


NOISE = [*"<>/{}[]():,=\"'\\ \n", *ALL_MARKERS, "true", "null", "1", "a", "f", "f(", "x=", "True", "g ", "\n[", "]"]
NOISE += ['"name": "f"', '"arguments": {', '{"a": 1}', "<invoke name=", "<parameter name=", "abc123def"]


def gen_noise(rng: random.Random) -> str:
    return "".join(rng.choice(NOISE) if rng.random() < 0.8 else gen_string(rng) for _ in range(rng.randrange(40)))
