"""Grammar-aware fuzzer for the nine wire formats, checking the parser contract from outside.

Why a fuzzer next to the hypothesis properties (tests/test_properties.py): hypothesis explores small
structured documents well but slowly; this throws thousands of inputs at the public API, most of them
broken on purpose (truncated, flipped, nested thousands deep, full of markers), and checks every input
against the invariants of docs/design.md that are visible from outside:

1. `feed` / `close` never raise and return lists of the four event types (`raises`); an exception
   the parser's own safety net caught and logged is reported too (`internal_error`);
2. chunking invariance: the merged events are equal for the whole text, a random split and
   (short inputs) one character per chunk; `parse()` equals the whole text fed once (`chunking`);
3. events are well formed (`well_formed`);
4. arguments: the fragments of each ended call concatenate to JSON that decodes to its arguments,
   a dict, with no lone surrogate (`arguments`);
5. the finished result's call indexes are 0..n-1 (`indexes`);
6. nothing lost: without any CallStart the content is the text, stripped; content is always a
   subsequence of the input (`nothing_lost`);
7. a generated valid document (before mutation) gives exactly its content and calls (`expected`);
8. a per-input time limit (`hang`, confirmed in CPU time); a cost per character far above the
   median, or an input that, repeated k times, costs far more than k times as much, is reported
   but does not fail (`slow`);
9. at most `--max-log-lines` log records per response (`log_bound`, switch off with --no-log-check).

Only the public API is used: `parse`, `get_format(name).stream(tools, id_factory)` with `feed` /
`close`, the events and `build_result`. A violation is shrunk (delta debugging over characters, then
chunks, then tools), saved as JSON under --out, and printed; the run goes on (up to a cap per
invariant) and exits non-zero at the end.

    python scripts/fuzz.py --format all --seconds 60
    python scripts/fuzz.py --format hermes_json --inputs 20000 --seed 7 --no-log-check
    python scripts/fuzz.py --replay fuzz-out/hermes_json-chunking-0123456789.json   # still failing?
    python scripts/fuzz.py --shrink fuzz-out/*.json --shrink-seconds 60             # smaller, in place

Input `i` of a run is made from (format, --seed, i) alone, so `--start i --inputs 1` makes it again.
Speed: about three quarters of the time is the parsers' own `feed`; the one-character chunking of
every input under --char-limit dominates (--char-every N runs it on every N-th one). The summary
gives inputs per wall second and per CPU second (on a shared machine the second is the one to read).
"""

from __future__ import annotations

import argparse
import faulthandler
import hashlib
import json
import keyword
import logging
import multiprocessing
import random
import re
import signal
import statistics
import string
import sys
import time
import traceback
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.core.events import build_result

FORMATS = (
    "hermes_json", "minimax_xml", "mistral_json", "llama_pythonic", "tagged",
    "llama_json", "qwen_xml", "markdown_tools", "xml_tools",
)  # fmt: skip

INVARIANTS: dict[str, str] = {
    "raises": "1 never raises: feed/close raised, or returned something else than a list of events",
    "internal_error": "1 never raises: the parser's safety net caught (and logged) an exception of its own",
    "chunking": "2 chunking invariance: merged events differ between chunkings, or parse() != the whole feed",
    "well_formed": "3 events well formed",
    "arguments": "4 monotone arguments: fragments == arguments_json, json.loads(arguments_json) == arguments",
    "indexes": "5 the finished result's call indexes are 0..n-1",
    "nothing_lost": "6 nothing lost: no CallStart -> content == text.strip(); content is a subsequence of text",
    "expected": "7 a valid generated document parses to exactly its content and calls",
    "hang": "8 cost: no answer within the time limit",
    "slow": "8 cost: cost per character far above the median (reported, not failed)",
    "log_bound": "9 log records per response above the bound",
}
REPORT_ONLY = frozenset({"slow"})

Event = Text | CallStart | CallArgs | CallEnd
Tools = list[dict[str, Any]] | None
Chunks = list[str]
ExpectedCall = tuple[str, dict[str, Any], str]  # name, arguments, id
Expected = tuple[str | None, list[ExpectedCall]]


def counter_ids(name: str, index: int) -> str:
    """Deterministic ids, so that events from different chunkings compare equal."""
    return f"call_{index}"


# -- random values ------------------------------------------------------------------------------

ALL_MARKERS = [
    "<tool_call>", "</tool_call>", "<minimax:tool_call>", "</minimax:tool_call>", '<invoke name="f">',
    "</invoke>", '<parameter name="p">', "</parameter>", "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]",
    "[/THINK]", "<|python_tag|>", "<|python_start|>", "<|python_end|>", "<TOOL_CALLS>", "</TOOL_CALLS>",
    "<think>", "</think>", "\n[f(", "\nf {", "<function=f>", "<parameter=p>", "</function>", "<tool-use>",
    "</tool-use>", "\n```", "\n```f x\n", "<|eom_id|>", '\n{"name": "f", "parameters": ',
]  # fmt: skip
UNICODE = ["\u00fc", "\u6771", "\U0001f327", "\x01", "\x7f", "\u2028", "\ufeff", "\u0085", "\u00a0", "\U0001f600"]
TRICKY = ['"', "'", "\\", "{", "}", "[", "]", "(", ")", "\n", "\t", "\r", ",", ":", "=", "\\n", "\\u00e9", "</"]
WORD_CHARS = string.ascii_letters + string.digits + "    _-."
PROSE_CHARS = string.ascii_letters + string.digits + "      \n.,;:!?-_'\"/\\()=+*&%$#@|}"  # no { [ < ] >
NAME_HEAD = string.ascii_letters + "_"
NAME_TAIL = NAME_HEAD + string.digits + ".-"
IDENT_TAIL = NAME_HEAD + string.digits
ALNUM = string.ascii_letters + string.digits
RESERVED = frozenset({"True", "False", "None", "true", "false", "null"})


class FastRandom(random.Random):
    """`random.Random` with `choice` and `randrange` from one `random()` call each: generation is
    a third of the fuzzer's time otherwise (the stdlib versions draw bits in a loop)."""

    def choice(self, seq: Any) -> Any:
        return seq[int(self.random() * len(seq))]

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        if stop is None:
            start, stop = 0, start
        return start + int(self.random() * (stop - start))


def gen_word(rng: random.Random, chars: str = WORD_CHARS, most: int = 6) -> str:
    return "".join(rng.choices(chars, k=rng.randrange(most + 1)))


def gen_string(rng: random.Random) -> str:
    """A short string that likes the characters parsers care about: quotes, escapes, brackets, markers."""
    parts = []
    for _ in range(rng.randrange(5)):
        r = rng.random()
        if r < 0.2:
            parts.append(rng.choice(TRICKY))
        elif r < 0.3:
            parts.append(rng.choice(ALL_MARKERS))
        elif r < 0.38:
            parts.append(rng.choice(UNICODE))
        else:
            parts.append(gen_word(rng))
    return "".join(parts)


def gen_name(rng: random.Random) -> str:
    return rng.choice(NAME_HEAD) + "".join(rng.choices(NAME_TAIL, k=rng.randrange(16)))


def gen_ident(rng: random.Random) -> str:
    """A Python identifier that is neither a keyword nor a constant (a keyword argument's name)."""
    while True:
        name = rng.choice(NAME_HEAD) + "".join(rng.choices(IDENT_TAIL, k=rng.randrange(11)))
        if not keyword.iskeyword(name) and name not in RESERVED:
            return name


def gen_int(rng: random.Random) -> int:
    return rng.choice([0, 1, -1, 7, rng.randrange(-(10**6), 10**6), rng.randrange(-(10**18), 10**18), 2**53 + 1])


def gen_float(rng: random.Random) -> float:
    return rng.choice([0.5, -0.0, 1e-07, 1.5e300, 3.0, 1e16, 2.5e-308, round(rng.uniform(-1e6, 1e6), rng.randrange(6))])


def gen_json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value: nested lists and objects (depth <= 3) over every scalar kind."""
    r = rng.random()
    if depth < 3 and r < 0.1:
        return [gen_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    if depth < 3 and r < 0.2:
        return {gen_string(rng): gen_json(rng, depth + 1) for _ in range(rng.randrange(4))}
    return rng.choice([None, True, False, gen_int(rng), gen_float(rng), gen_string(rng), gen_string(rng)])


def gen_arguments(rng: random.Random, key: Callable[[random.Random], str] = gen_string) -> dict[str, Any]:
    return {key(rng): gen_json(rng) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4]))}


def dump_json(rng: random.Random, value: Any) -> str:
    """JSON text in one of the spellings models use: compact or spaced, indented, ASCII or not."""
    indent = rng.choice([None, None, None, 2])
    separators = rng.choice([None, (",", ":")]) if indent is None else None
    return json.dumps(value, ensure_ascii=rng.random() < 0.3, indent=indent, separators=separators)


def py_string(rng: random.Random, s: str) -> str:
    """`s` as a Python string literal in any quote style, with a random choice of escapes, line
    continuations and adjacent-literal concatenation (ast.literal_eval of the result is `s`)."""
    if len(s) > 1 and rng.random() < 0.1:
        k = rng.randrange(1, len(s))
        return py_string(rng, s[:k]) + rng.choice([" ", "\n", "  "]) + py_string(rng, s[k:])
    quote = rng.choice(["'", '"', "'''", '"""'])
    triple = len(quote) == 3
    out = []
    for c in s:
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif c in "'\"":
            out.append("\\" + c if c == quote[0] or rng.random() < 0.2 else c)
        elif c in "\n\t" and triple and rng.random() < 0.5:
            out.append(c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append(rng.choice(["\\t", "\\x09", "\\011"]))
        elif o < 0x20 or o == 0x7F:
            out.append(rng.choice([f"\\x{o:02x}", f"\\u{o:04x}", f"\\{o:03o}"]))
        elif rng.random() < 0.1:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
        else:
            out.append(c)
        if rng.random() < 0.02:
            out.append("\\\n")  # line continuation: adds nothing
    return quote + "".join(out) + quote


def py_literal(rng: random.Random, value: Any) -> str:
    """A JSON value written as Python source: every literal spelling the pythonic format accepts."""
    if value is None:
        return rng.choice(["None", "None", "null"])
    if isinstance(value, bool):
        return rng.choice([str(value), str(value), json.dumps(value)])
    if isinstance(value, int):
        return rng.choice([str(value), str(value), f"+{value}" if value >= 0 else f"- {-value}"])
    if isinstance(value, float):
        text = repr(value)
        if value.is_integer() and abs(value) < 1e15 and rng.random() < 0.3:
            return text[:-1]  # "3." is a float
        if 0 < value < 1 and text.startswith("0.") and rng.random() < 0.3:
            return text[1:]  # ".5"
        return text
    if isinstance(value, str):
        return py_string(rng, value)
    sep = rng.choice([", ", ",", ",\n    "])
    if isinstance(value, dict):
        return "{" + sep.join(f"{py_string(rng, k)}: {py_literal(rng, v)}" for k, v in value.items()) + "}"
    items = [py_literal(rng, v) for v in value]
    if rng.random() < 0.3:  # a tuple reads as an array
        return "(" + (items[0] + "," if len(items) == 1 else sep.join(items)) + ")"
    return "[" + sep.join(items) + ("," if items and rng.random() < 0.2 else "") + "]"


# -- documents ----------------------------------------------------------------------------------


@dataclass
class Part:
    """A piece of a generated document: prose (content) or a block of calls with known results."""

    text: str
    prose: bool
    calls: list[tuple[str, dict[str, Any], str | None]] = field(default_factory=list)  # name, args, model id
    tools: list[dict[str, Any]] = field(default_factory=list)
    guard_after: bool = False  # the block ends in a literal (`null`): what follows must not continue it
    last_only: bool = False  # the block has no end marker: nothing but whitespace may follow
    lead: str = ""  # text before the block that stays content (the line break a fence starts after)
    after_ok: Callable[[str], bool] | None = None  # whether prose may follow the block


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


def tool(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required is not None:
        params["required"] = required
    return {"type": "function", "function": {"name": name, "parameters": params}}


def hermes_block(rng: random.Random) -> Part:
    """`<tool_call>` with one call object in any of the shapes models write, an array of them, or
    two objects in one block."""
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]

    def obj(name: str, args: dict[str, Any]) -> dict[str, Any]:
        shape = rng.choice(["name-args", "args-name", "name-params", "function", "args-string", "no-args"])
        if shape == "no-args" and not args:
            return {"name": name}
        if shape == "args-name":
            return {"arguments": args, "name": name}
        if shape == "name-params":
            return {"name": name, "parameters": args}
        if shape == "function":
            return {"function": {"name": name, "arguments": args}}
        if shape == "args-string":
            return {"name": name, "arguments": json.dumps(args)}
        return {"name": name, "arguments": args}

    if len(calls) > 1 and rng.random() < 0.5:
        body = rng.choice(["", "\n", " "]).join(dump_json(rng, obj(n, a)) for n, a in calls)
    elif len(calls) > 1 or rng.random() < 0.1:
        body = dump_json(rng, [obj(n, a) for n, a in calls])
    else:
        body = dump_json(rng, obj(*calls[0]))
    sep = rng.choice(["", "\n", " "])
    tools = [tool(n) for n, _ in calls] if rng.random() < 0.3 else []
    return Part(f"<tool_call>{sep}{body}{sep}</tool_call>", False, [(n, a, None) for n, a in calls], tools)


AMBIGUOUS_CLOSE = re.compile(r"</parameter>\s*(<parameter|</invoke>|$)")
GUESS_WORD = re.compile(r"[A-Za-z][A-Za-z ]*")


def minimax_value(
    rng: random.Random, typed: bool, ambiguous: re.Pattern[str] = AMBIGUOUS_CLOSE
) -> tuple[dict[str, Any] | None, str, Any]:
    """(schema, raw text, typed value) for one parameter; `typed=False` only where a schema-less
    guess is unambiguous; `ambiguous` finds the text a raw value cannot hold."""
    if not typed:
        kind = rng.choice(["word", "int", "float", "true", "false", "null", "object", "array", "zip"])
        if kind == "word":
            word = rng.choice(string.ascii_letters) + gen_word(rng, string.ascii_letters + " ", 10)
            word = word if word.lower() not in ("true", "false", "null") else word + "x"
            return None, word, word
        if kind == "zip":
            return None, "02134", "02134"
        if kind in ("true", "false", "null"):
            return None, kind, json.loads(kind)
        value = {"int": gen_int(rng), "float": -3.5, "object": {"a": [1, "x"]}, "array": [1, None, "y"]}[kind]
        return None, json.dumps(value), value
    kind = rng.choice(["string", "string", "integer", "number", "boolean", "null", "object", "array", "mixed"])
    if kind == "string":
        value = gen_string(rng)
        while ambiguous.search(value):
            value = gen_string(rng)
        return {"type": rng.choice(["string", "string", "str"])}, value, value
    if kind == "integer":
        n = gen_int(rng)
        raw = rng.choice([str(n), f" {n}\n", f"{n}.0" if abs(n) < 2**53 else str(n)])  # past 2**53 `.0` is lossy
        return {"type": rng.choice(["integer", "integer", "int"])}, raw, n
    if kind == "number":
        x: float | int = rng.choice([gen_float(rng), gen_int(rng)])
        return {"type": "number"}, json.dumps(x), x
    if kind == "boolean":
        b = rng.random() < 0.5
        return {"type": "boolean"}, rng.choice([json.dumps(b), str(b), json.dumps(b).upper()]), b
    if kind == "null":
        return {"type": "null"}, rng.choice(["null", "Null", "NULL"]), None
    if kind in ("object", "array"):
        value: Any = (
            {gen_string(rng): gen_json(rng, 1) for _ in range(rng.randrange(3))}
            if kind == "object"
            else [gen_json(rng, 1) for _ in range(rng.randrange(3))]
        )
        raw = dump_json(rng, value)
        if ambiguous.search(raw):  # raw JSON is not escaped either: a closing tag in it is ambiguous
            return {"type": "null"}, "null", None
        return {"type": kind}, raw, value
    if rng.random() < 0.5:  # string or null: the exact text `null` is null
        return {"type": ["string", "null"]}, "null", None
    return {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "42", "42"  # the string wins


def xml_calls(
    rng: random.Random,
    ambiguous: re.Pattern[str],
    write_param: Callable[[random.Random, str, str], str],
    write_call: Callable[[random.Random, str, str], str],
) -> tuple[list[tuple[str, dict[str, Any], None]], list[dict[str, Any]], list[str]]:
    """One to three calls for the XML formats (`minimax_xml`, `qwen_xml`): names, raw parameter
    values typed by a generated schema (80% of blocks) or guessable without one; returns the calls,
    the tools and each call written (`write_param(rng, key, raw)`, `write_call(rng, name, params)`)."""
    calls, tools, written = [], [], []
    typed = rng.random() < 0.8
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name = gen_name(rng) + f"_{rng.randrange(10**9)}"
        args: dict[str, Any] = {}
        props: dict[str, Any] = {}
        params = []
        for _ in range(rng.randrange(5)):
            key = gen_name(rng)
            if key in args:
                continue
            schema, raw, value = minimax_value(rng, typed and rng.random() < 0.95, ambiguous)
            if schema is not None:
                props[key] = schema
            args[key] = value
            params.append(write_param(rng, key, raw))
        if typed:
            tools.append(tool(name, props))
        written.append(write_call(rng, name, "".join(params)))
        calls.append((name, args, None))
    return calls, tools, written


def minimax_block(rng: random.Random) -> Part:
    """`<minimax:tool_call>` with invokes whose raw values are typed by a generated tool schema."""

    def param(rng: random.Random, key: str, raw: str) -> str:
        return f"<parameter name={quote_name(rng, key)}>{raw}</parameter>" + rng.choice(["", "\n"])

    def invoke(rng: random.Random, name: str, params: str) -> str:
        sep = rng.choice(["", "\n"])
        return f"<invoke name={quote_name(rng, name)}>{sep}{params}</invoke>{sep}"

    calls, tools, invokes = xml_calls(rng, AMBIGUOUS_CLOSE, param, invoke)
    end = rng.random() < 0.9
    text = "<minimax:tool_call>" + rng.choice(["", "\n"]) + "".join(invokes) + ("</minimax:tool_call>" if end else "")
    return Part(text, False, calls, tools, last_only=not end)


def quote_name(rng: random.Random, name: str) -> str:
    return rng.choice([f'"{name}"', f'"{name}"', f"'{name}'", name])


def mistral_block(rng: random.Random) -> Part:
    """`[TOOL_CALLS]` in either generation: a JSON array (or object) of calls, or v11+
    `name[CALL_ID]id[ARGS]{..}` per call, with or without `[ARGS]`."""
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    if rng.random() < 0.4:
        items = [{"name": n, "arguments": a} for n, a in calls]
        body = dump_json(rng, items[0] if len(items) == 1 and rng.random() < 0.3 else items)
        return Part("[TOOL_CALLS]" + rng.choice(["", " "]) + body, False, [(n, a, None) for n, a in calls])
    out, expected, guard = [], [], False
    for name, args in calls:
        model_id = None
        head = f"[TOOL_CALLS]{name}"
        if rng.random() < 0.3:
            model_id = rng.choice(["".join(rng.choices(ALNUM, k=9)), "abc", "call_1234"])
            head += f"[CALL_ID]{model_id}"
        args_marker = rng.choice(["[ARGS]", "[ARGS]", "[ARGS] ", ""]) if model_id is None else "[ARGS]"
        guard = not args and bool(args_marker) and rng.random() < 0.3  # `null` / a string need [ARGS]
        string_args = bool(args_marker) and rng.random() < 0.1
        body = "null" if guard else json.dumps(json.dumps(args)) if string_args else dump_json(rng, args)
        out.append(head + args_marker + body)
        expected.append((name, args, model_id))
    return Part("".join(out), False, expected, guard_after=guard)


def llama_block(rng: random.Random) -> Part:
    """A Python call list at the start of a line, after `<|python_tag|>`, or in
    `<|python_start|>..<|python_end|>`, arguments as random literal trees."""
    calls = []
    rendered = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name = ".".join(gen_ident(rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))
        args = gen_arguments(rng, gen_ident)
        eq = rng.choice(["=", "=", " = "])
        sep = rng.choice([", ", ",", ",\n  "])
        kwargs = sep.join(f"{k}{eq}{py_literal(rng, v)}" for k, v in args.items())
        trailing = "," if args and rng.random() < 0.1 else ""
        rendered.append(f"{name}({kwargs}{trailing})")
        calls.append((name, args, None))
    prefix = rng.choice(["\n", "\n", "<|python_tag|>", "<|python_start|>"])
    suffix = "<|python_end|>" if prefix == "<|python_start|>" and rng.random() < 0.7 else ""
    body = rng.choice([", ", ","]).join(rendered)
    return Part(f"{prefix}[{body}]{suffix}", False, calls)


def tagged_block(rng: random.Random) -> Part:
    """`<TOOL_CALLS>` then `name {json}` per line; without `</TOOL_CALLS>` only at the very end."""
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    lines = []
    for name, args in calls:
        r = rng.random()
        body = "null" if not args and r < 0.3 else json.dumps(json.dumps(args)) if r < 0.1 else dump_json(rng, args)
        lines.append(f"{name} {body}" + rng.choice(["\n", "\n", "\n\n", " \n"]))
    end = rng.random() < 0.8
    text = "<TOOL_CALLS>" + rng.choice(["\n", "\n", "", " "]) + "".join(lines) + ("</TOOL_CALLS>" if end else "")
    return Part(text, False, [(n, a, None) for n, a in calls], last_only=not end)


def llama_json_block(rng: random.Random) -> Part:
    """Llama 3.x JSON calls on a line of their own or after `<|python_tag|>`, joined by `;`, a line
    break or nothing, in every head shape the format reads; or a built-in `NAME.call(k=literal)`."""
    if rng.random() < 0.15:
        name = gen_ident(rng)
        args = gen_arguments(rng, gen_ident)
        kwargs = rng.choice([", ", ","]).join(f"{k}={py_literal(rng, v)}" for k, v in args.items())
        return Part(f"<|python_tag|>{name}.call({kwargs})", False, [(name, args, None)], after_ok=_no_lone_semicolon)
    calls = [(gen_name(rng), gen_arguments(rng)) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
    objects = []
    for name, args in calls:
        head: dict[str, Any] = {"type": "function", "name": name} if rng.random() < 0.2 else {"name": name}
        head[rng.choice(["parameters", "parameters", "arguments"])] = json.dumps(args) if rng.random() < 0.1 else args
        if rng.random() < 0.1:
            head["id"] = gen_string(rng)  # keys after the arguments are ignored
        objects.append(dump_json(rng, head))
    start = rng.choice(["\n", "\n", "\n  ", "\r\n", "<|python_tag|>", "<|python_tag|>\n"])
    lead = "\n" if start[0] == "<" and rng.random() < 0.5 else ""  # a line break before the tag is content
    body = "".join(obj + rng.choice([";", "; ", ";\n", "\n", ""]) for obj in objects[:-1]) + objects[-1]
    return Part(start + body, False, [(n, a, None) for n, a in calls], lead=lead, after_ok=_no_lone_semicolon)


def _no_lone_semicolon(prose: str) -> bool:
    """After a llama_json call (a built-in one too), prose of only `;` and whitespace would join the
    next call to it."""
    return not re.fullmatch(r"\s*;[\s;]*", prose)


QWEN_AMBIGUOUS = re.compile(
    r"</parameter>\s*(<parameter=|</function>|$)|</function>\s*(</tool_call>|<tool_call>|<function=|$)"
    r"|(^|\n)<parameter="
)


def qwen_block(rng: random.Random) -> Part:
    """`<tool_call>` with `<function=..>` / `<parameter=..>` tags, raw values typed by a generated
    schema (the `minimax_xml` rules), one call or several per block."""

    def param(rng: random.Random, key: str, raw: str) -> str:
        framed = raw[:1] == "\n" or raw[-1:] == "\n" or rng.random() < 0.7
        raw = f"\n{raw}\n" if framed else raw
        return f"<parameter={key}>{raw}</parameter>" + rng.choice(["\n", "\n", ""])

    def function(rng: random.Random, name: str, params: str) -> str:
        sep = rng.choice(["\n", "\n", ""])
        return f"<function={name}>{sep}{params}</function>"

    calls, tools, functions = xml_calls(rng, QWEN_AMBIGUOUS, param, function)
    if rng.random() < 0.3:  # several functions in one block
        blocks = ["<tool_call>\n" + "\n".join(functions) + "\n</tool_call>"]
    else:
        blocks = [f"<tool_call>\n{f}\n</tool_call>" for f in functions]
    end = rng.random() < 0.9
    text = "".join(blocks)  # a line break between blocks is content
    return Part(text if end else text.removesuffix("\n</tool_call>"), False, calls, tools, last_only=not end)


WORD_ALPHABET = string.ascii_letters + string.digits + "._/-"
TOUGH_WORDS = ["a b", "it's", 'say "hi"', "back\\slash", "$HOME", "", "*.py", "x&y", "<p>", "tab\there"]


def gen_words(rng: random.Random, count: int) -> list[str]:
    return [
        rng.choice(TOUGH_WORDS) if rng.random() < 0.3 else rng.choice(NAME_HEAD) + gen_word(rng, WORD_ALPHABET)
        for _ in range(count)
    ]


def shell_quote(rng: random.Random, word: str) -> str:
    """`word` as one POSIX shell word, in one of the quotings that splits back to it."""
    if word and re.fullmatch(r"[A-Za-z0-9._/-]+", word) and rng.random() < 0.7:
        return word
    if "'" not in word and rng.random() < 0.5:
        return f"'{word}'"
    if rng.random() < 0.5:
        return '"' + re.sub(r'([\\"$`])', r"\\\1", word) + '"'
    return "".join("\\" + c if not c.isalnum() else c for c in word) or "''"


def block_tool(rng: random.Random) -> tuple[str, dict[str, Any], list[str], str, dict[str, Any]]:
    """A tool for gptme-style blocks: its name, schema, words, body ("" when it takes none), and
    the arguments they map to."""
    name = gen_ident(rng) + f"_{rng.randrange(10**9)}"
    keys = list(dict.fromkeys(gen_ident(rng) for _ in range(rng.choice([0, 1, 1, 2, 2, 3]))))
    optional = {gen_ident(rng) + "_opt": {"type": rng.choice(["string", "integer"])}} if rng.random() < 0.3 else {}
    props = {k: {"type": rng.choice(["string", "string", ["string", "null"]])} for k in keys} | optional
    with_body = bool(keys) and rng.random() < 0.8
    words = gen_words(rng, len(keys) - with_body)
    body = ""
    if with_body:
        body = gen_string(rng).replace("\r", "") if rng.random() < 0.7 else rng.choice(["", "\n", "x\n\ny", "  z  "])
    args = dict(zip(keys, [*words, body] if with_body else words, strict=True))
    return name, tool(name, props, keys), words, body, args


def fence_run(rng: random.Random, body: str) -> str:
    """An opening fence that no line of `body` can close."""
    char = rng.choice("`~")
    longest = max((len(m.group()) for m in re.finditer(re.escape(char) + "+", body)), default=0)
    return char * max(3, longest + 1) if rng.random() < 0.8 else char * (max(3, longest + 1) + rng.randrange(3))


def markdown_block(rng: random.Random) -> Part:
    """A fence whose info string is a declared tool and its shell-quoted words, at a line start."""
    name, schema, words, body, args = block_tool(rng)
    fence = fence_run(rng, body)
    info = " ".join([name, *(shell_quote(rng, w) for w in words)])
    newline = rng.choice(["\n", "\n", "\r\n"])
    text = f"{rng.choice(['', '', ' ', '   '])}{fence}{info}{newline}"
    text += (body + newline if body or rng.random() < 0.5 else "") + fence + rng.choice(["\n", "\n", " \n"])
    return Part(text, False, [(name, args, None)], [schema], lead="\n")


def xml_escape(rng: random.Random, text: str, quote: str = "") -> str:
    out = []
    for c in text:
        if c == "&" or c == "<" or c == quote or c == "\r":
            out.append(rng.choice({"&": ["&amp;", "&#38;"], "<": ["&lt;", "&#60;"], '"': ["&quot;"],
                                   "'": ["&apos;"], "\r": ["&#13;", "&#xD;"]}[c]))  # fmt: skip
        elif c == ">" and rng.random() < 0.3:
            out.append("&gt;")
        else:
            out.append(c)
    return "".join(out)


def xml_tools_block(rng: random.Random) -> Part:
    """`<tool-use>` with one element per call, named after a declared tool, `args` shell-quoted and
    entity-escaped, the body escaped, with or without framing line breaks."""
    calls, tools, elements = [], [], []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        name, schema, words, body, args = block_tool(rng)
        quote = rng.choice(['"', "'"])
        attr = f" args={quote}{xml_escape(rng, ' '.join(shell_quote(rng, w) for w in words), quote)}{quote}"
        attr = attr if words or rng.random() < 0.3 else ""
        inner = xml_escape(rng, body)
        if body[:1] == "\n" or body[-1:] == "\n" or rng.random() < 0.5:
            inner = rng.choice(["\n", "\r\n"]) + inner + rng.choice(["\n", "\r\n"])
        elements.append(f"<{name}{attr}>{inner}</{name}>")
        calls.append((name, args, None))
        tools.append(schema)
    end = rng.random() < 0.9
    sep = rng.choice(["", "\n", " \n "])
    text = "<tool-use>" + sep + sep.join(elements) + sep + ("</tool-use>" if end else "")
    return Part(text, False, calls, tools, last_only=not end)


BLOCKS: dict[str, Callable[[random.Random], Part]] = {
    "hermes_json": hermes_block,
    "minimax_xml": minimax_block,
    "mistral_json": mistral_block,
    "llama_pythonic": llama_block,
    "tagged": tagged_block,
    "llama_json": llama_json_block,
    "qwen_xml": qwen_block,
    "markdown_tools": markdown_block,
    "xml_tools": xml_tools_block,
}
THINK = {"mistral_json": ("[THINK]", "[/THINK]")}
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
START = {
    "hermes_json": "<tool_call>",
    "minimax_xml": "<minimax:tool_call>",
    "mistral_json": "[TOOL_CALLS]",
    "llama_pythonic": "\n[",
    "tagged": "<TOOL_CALLS>",
    "llama_json": '\n{"name": ',
    "qwen_xml": "<tool_call>",
    "markdown_tools": "\n```",
    "xml_tools": "<tool-use>",
}


def gen_prose(rng: random.Random, fmt: str, think: bool = True) -> str:
    """Text with no call in it: words, unicode, partial and mentioned markers, reasoning blocks that
    hold complete calls (which stay text)."""
    parts = []
    for _ in range(rng.randrange(5)):
        r = rng.random()
        if r < 0.55:
            parts.append(gen_word(rng, PROSE_CHARS, 12))
        elif r < 0.8:
            parts.append(rng.choice(PROSE_SNIPPETS[fmt]))
        elif r < 0.9 and think:
            parts.append(gen_think(rng, fmt))
        else:
            parts.append(rng.choice(UNICODE))
    return "".join(parts)


def gen_think(rng: random.Random, fmt: str) -> str:
    """A reasoning block: the start marker and a whole valid block inside are text."""
    open_tag, close_tag = THINK.get(fmt, ("<think>", "</think>"))
    inner = gen_prose(rng, fmt, think=False)
    if rng.random() < 0.5:
        inner += BLOCKS[fmt](rng).text
    if rng.random() < 0.3:
        inner += START[fmt] + gen_word(rng)
    return open_tag + inner.replace(close_tag, "") + close_tag


def assemble(fmt: str, parts: list[Part]) -> Case:
    """Join parts into a document with its exact expected content, calls and tools."""
    texts: list[str] = []
    prose: list[str] = []
    for k, part in enumerate(parts):
        text = part.text
        if k and parts[k - 1].guard_after and not text[:1].isspace():
            texts.append(" ")
            prose.append(" ")
        texts.append(part.lead + text)
        prose.append(text if part.prose else part.lead)
    calls: list[ExpectedCall] = []
    used: set[str] = set()
    for part in parts:
        for name, args, model_id in part.calls:
            if model_id is not None and re.fullmatch(r"[A-Za-z0-9]{9}", model_id) and model_id not in used:
                used.add(model_id)  # a valid model-written id is kept, once
                calls.append((name, args, model_id))
            else:
                calls.append((name, args, f"call_{len(calls)}"))
    tools = [t for part in parts for t in part.tools] or None
    return Case(fmt, "".join(texts), tools, "valid", expected=("".join(prose).strip() or None, calls), parts=parts)


def gen_document(rng: random.Random, fmt: str) -> Case:
    parts = [Part(gen_prose(rng, fmt), True)]
    for _ in range(rng.choice([0, 1, 1, 1, 1, 2, 2, 3])):
        block = BLOCKS[fmt](rng)
        parts.append(block)
        if block.last_only:
            parts.append(Part(rng.choice(["", "\n", " "]), True))
            break
        prose = gen_prose(rng, fmt)
        while block.after_ok and not block.after_ok(prose):
            prose = gen_prose(rng, fmt)
        parts.append(Part(prose, True))
    return assemble(fmt, parts)


NOISE = [*"<>/{}[]():,=\"'\\ \n", *ALL_MARKERS, "true", "null", "1", "a", "f", "f(", "x=", "True", "g ", "\n[", "]"]
NOISE += ['"name": "f"', '"arguments": {', '{"a": 1}', "<invoke name=", "<parameter name=", "abc123def"]


def gen_noise(rng: random.Random) -> str:
    return "".join(rng.choice(NOISE) if rng.random() < 0.8 else gen_string(rng) for _ in range(rng.randrange(40)))


# -- mutations ----------------------------------------------------------------------------------

SEPARATORS = ",\"'[]{}()=:<>/"
BARE_WORDS = ["foo", "undefined", "NaN", "Infinity", "True", "none", "x.y", "f()", "{a}", "set()", "...", "$"]
VALUE = re.compile(r"\"(?:[^\"\\\n]|\\.){0,40}\"|'(?:[^'\\\n]|\\.){0,40}'|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|null")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
ODD_NUMBERS = ["1e", "1e+", "1E-", "0x1F", "1_000", "1j", "01", "-", "+1", "1.", ".5", "-0", "1e999", "-1e999"]
ODD_NUMBERS += ["1" + "0" * 4999, "NaN", "Infinity", "-Infinity", "1.5.2", "--1", "0b101", "0o17", "1e-999"]
WHITESPACE = [" ", "\n", "\t", "\r", "\r\n", "\u00a0", "\u2028", "\u3000", "\x0b", "\x0c"]
SURROGATES = ["\\ud800", "\ud800", "\\udc00", "\udfff", "\\ud800\\u0041", "\\udc00\\ud800", "\\ud83d", "\\ud83d\\ude00"]
SURROGATES += ["\\ud800\\", "\\uD800", "\\ud8", "\\u"]
EMPTY_CALLS: dict[str, list[str]] = {
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
LONG_NAME_CALL = {
    "hermes_json": ['<tool_call>{"name": "%s", "arguments": {}}</tool_call>'],
    "minimax_xml": ['<minimax:tool_call><invoke name="%s"></invoke></minimax:tool_call>',
                    '<minimax:tool_call><invoke name="f"><parameter name="%s">1</parameter></invoke>'],
    "mistral_json": ["[TOOL_CALLS]%s[ARGS]{}", "[TOOL_CALLS]f[CALL_ID]%s[ARGS]{}", '[TOOL_CALLS][{"name": "%s"}]'],
    "llama_pythonic": ["\n[%s()]", "\n[f(%s=1)]"],
    "tagged": ["<TOOL_CALLS>\n%s {}\n"],
    "llama_json": ['\n{"name": "%s", "parameters": {}}', "<|python_tag|>%s.call()", '\n{"%s": 1}'],
    "qwen_xml": ["<tool_call>\n<function=%s>\n</function>\n</tool_call>",
                 "<tool_call>\n<function=f>\n<parameter=%s>\n1\n</parameter>\n</function>\n</tool_call>"],
    "markdown_tools": ["\n```%s\n```\n", "\n```f %s\nx\n```\n"],
    "xml_tools": ["<tool-use><%s></%s></tool-use>", '<tool-use><f args="%s">x</f></tool-use>'],
}  # fmt: skip


def _pos(rng: random.Random, text: str) -> int:
    return rng.randrange(len(text) + 1)


def _insert(rng: random.Random, text: str, piece: str) -> str:
    i = _pos(rng, text)
    return text[:i] + piece + text[i:]


def _nth(rng: random.Random, text: str, needle: str) -> int:
    """The position of a random occurrence of `needle` (at most the 50th), or -1."""
    count = min(text.count(needle), 50)
    if not count:
        return -1
    i = -1
    for _ in range(rng.randrange(count) + 1):
        i = text.find(needle, i + 1)
    return i


def _pick(rng: random.Random, pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    matches = []
    for m in pattern.finditer(text):
        matches.append(m)
        if len(matches) >= 50:
            break
    return rng.choice(matches) if matches else None


def m_truncate(rng: random.Random, text: str, fmt: str) -> str:
    return text[: _pos(rng, text)]


def m_flip(rng: random.Random, text: str, fmt: str) -> str:
    if not text:
        return text
    i = rng.randrange(len(text))
    c = rng.choice([*SEPARATORS, *UNICODE, "\\", "\n", " ", "a", "0", chr(rng.randrange(32, 0xD7FF))])
    return text[:i] + c + text[i + 1 :]


def m_delete_separator(rng: random.Random, text: str, fmt: str) -> str:
    sep = rng.choice(SEPARATORS)
    if rng.random() < 0.15:
        return text.replace(sep, "")
    i = _nth(rng, text, sep)
    return text if i < 0 else text[:i] + text[i + 1 :]


def m_double_separator(rng: random.Random, text: str, fmt: str) -> str:
    sep = rng.choice(SEPARATORS)
    i = _nth(rng, text, sep)
    return text if i < 0 else text[:i] + sep + text[i:]


def m_bare_word(rng: random.Random, text: str, fmt: str) -> str:
    m = _pick(rng, VALUE, text)
    return text if m is None else text[: m.start()] + rng.choice(BARE_WORDS) + text[m.end() :]


def m_inject_marker(rng: random.Random, text: str, fmt: str) -> str:
    own = [START[fmt], *EMPTY_CALLS[fmt][:1], *PROSE_SNIPPETS[fmt]]
    return _insert(rng, text, rng.choice(own if rng.random() < 0.6 else ALL_MARKERS))


def m_duplicate_marker(rng: random.Random, text: str, fmt: str) -> str:
    marker = START[fmt]
    i = _nth(rng, text, marker)
    if i < 0:
        return _insert(rng, text, marker * rng.choice([1, 2]))
    return text[:i] + marker * rng.choice([1, 1, 2, 50]) + text[i:]


def m_marker_in_string(rng: random.Random, text: str, fmt: str) -> str:
    i = _nth(rng, text, rng.choice(['"', "'", ">"]))
    marker = rng.choice([START[fmt], *ALL_MARKERS])
    return _insert(rng, text, marker) if i < 0 else text[: i + 1] + marker + text[i + 1 :]


def m_deep_nesting(rng: random.Random, text: str, fmt: str) -> str:
    depth = rng.choice([rng.randrange(200, 400), rng.randrange(400, 3000)])
    opener, closer = rng.choice([("[", "]"), ("{", "}"), ('{"a":', "}"), ("(", ")"), ('{"a": [', "]}"), ("[[", "]]")])
    nest = opener * depth + rng.choice(["1", '"x"', "", "None"]) + (closer * depth if rng.random() < 0.7 else "")
    anchor = _nth(rng, text, rng.choice([":", "=", "[", ">", "(", "]"]))
    return _insert(rng, text, nest) if anchor < 0 else text[: anchor + 1] + nest + text[anchor + 1 :]


def m_huge(rng: random.Random, text: str, fmt: str) -> str:
    size = int(10 ** rng.uniform(3, 5))
    unit = rng.choice(["a", "\\\\", '\\"', " ", "\u6771", "ab\n", "<", "[", "\\u00e9"])
    piece = (unit * (size // len(unit) + 1))[:size]
    if rng.random() < 0.3:
        return text + rng.choice(LONG_NAME_CALL[fmt]).replace("%s", piece.replace('"', "").replace("\\", ""))
    i = _nth(rng, text, rng.choice(['"', "'", ">", " "]))
    return _insert(rng, text, piece) if i < 0 else text[: i + 1] + piece + text[i + 1 :]


def m_surrogate(rng: random.Random, text: str, fmt: str) -> str:
    i = _nth(rng, text, rng.choice(['"', "'", ">"]))
    piece = rng.choice(SURROGATES)
    return _insert(rng, text, piece) if i < 0 else text[: i + 1] + piece + text[i + 1 :]


def m_bad_utf8(rng: random.Random, text: str, fmt: str) -> str:
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(rng.randrange(1, 4)):
        i = rng.randrange(len(data) + 1)
        junk = rng.choice([b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xf0\x9f", b"\xed\xa0\x80", b"\xc0\xaf"])
        if data and rng.random() < 0.5:
            data[i - 1 : i] = junk
        else:
            data[i:i] = junk
    return bytes(data).decode("utf-8", "replace")


def m_empty_calls(rng: random.Random, text: str, fmt: str) -> str:
    return _insert(rng, text, rng.choice(EMPTY_CALLS[fmt]))


def m_long_name(rng: random.Random, text: str, fmt: str) -> str:
    n = rng.choice([257, 300, 1025, 1100, 2000, 5000])
    name = "".join(rng.choices(NAME_TAIL, k=n)) if rng.random() < 0.5 else "a" * n
    return _insert(rng, text, rng.choice(LONG_NAME_CALL[fmt]).replace("%s", name))


def m_odd_number(rng: random.Random, text: str, fmt: str) -> str:
    m = _pick(rng, NUMBER, text)
    odd = rng.choice(ODD_NUMBERS)
    return _insert(rng, text, odd) if m is None else text[: m.start()] + odd + text[m.end() :]


def m_whitespace(rng: random.Random, text: str, fmt: str) -> str:
    n = rng.choice([1, 2, 3, 10, 40, rng.randrange(100)]) if rng.random() < 0.97 else 10_000
    return _insert(rng, text, "".join(rng.choices(WHITESPACE, k=min(n, 50))) * max(1, n // 50))


def m_splice(rng: random.Random, text: str, fmt: str) -> str:
    a = _pos(rng, text)
    b = min(len(text), a + rng.randrange(1, 40))
    if rng.random() < 0.5:
        return text[:a] + text[b:]
    return _insert(rng, text, text[a:b] * rng.choice([1, 1, 1, 2, 3]))


Mutation = Callable[[random.Random, str, str], str]
MUTATIONS: list[tuple[Mutation, float]] = [
    (m_truncate, 8), (m_flip, 6), (m_delete_separator, 6), (m_double_separator, 4), (m_bare_word, 4),
    (m_inject_marker, 6), (m_duplicate_marker, 3), (m_marker_in_string, 3), (m_odd_number, 3),
    (m_surrogate, 2), (m_bad_utf8, 2), (m_empty_calls, 3), (m_whitespace, 2), (m_splice, 5),
    (m_long_name, 0.5), (m_deep_nesting, 0.4), (m_huge, 0.2),
]  # fmt: skip
_MUTATION_FUNCS = [m for m, _ in MUTATIONS]
_MUTATION_WEIGHTS = [w for _, w in MUTATIONS]


def case_rng(fmt: str, seed: int, index: int) -> FastRandom:
    """One generator per input, so that any input can be made again from (format, seed, index)."""
    return FastRandom((seed * 1_000_003 + zlib.crc32(fmt.encode())) * 10_000_019 + index)


def make_case(fmt: str, seed: int, index: int) -> tuple[Case, FastRandom]:
    """Input number `index`: a valid document (30%), a mutated one (60%), or marker noise (10%)."""
    rng = case_rng(fmt, seed, index)
    r = rng.random()
    if r < 0.3:
        case = gen_document(rng, fmt)
    elif r < 0.9:
        doc = gen_document(rng, fmt)
        text = doc.text
        names = []
        for mutation in rng.choices(_MUTATION_FUNCS, _MUTATION_WEIGHTS, k=rng.choice([1, 1, 1, 2, 3])):
            text = mutation(rng, text, fmt)
            names.append(mutation.__name__[2:])
        case = Case(fmt, text, doc.tools, "mutated:" + "+".join(names))
    else:
        text = gen_noise(rng)
        if rng.random() < 0.3:
            text = rng.choices(_MUTATION_FUNCS, _MUTATION_WEIGHTS)[0](rng, text, fmt)
        case = Case(fmt, text, None, "noise")
    case.index = index
    return case, rng


def random_split(rng: random.Random, text: str) -> Chunks:
    """A random chunking: a few random cuts, or many small deltas (always small ones for big texts,
    where a per-delta cost that grows with the buffer shows)."""
    n = len(text)
    if n > 2000 or rng.random() < 0.5:
        top = 16 if n > 2000 else rng.choice([2, 4, 8])
        chunks, i = [], 0
        while i < n:
            step = rng.randint(1, top)
            chunks.append(text[i : i + step])
            i += step
        return chunks
    cuts = sorted(rng.randrange(n + 1) for _ in range(rng.randrange(1, 12)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]


# -- checking -----------------------------------------------------------------------------------


class Hang(BaseException):
    """Raised by the SIGALRM watchdog; a BaseException so the parsers' `except Exception` lets it pass."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang


@contextmanager
def watchdog() -> Iterator[None]:
    """Install the SIGALRM handler that turns an over-long run into `Hang` (restored afterwards)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class LogCounter(logging.Handler):
    """Counts the parser's log records for one response and keeps the exceptions its safety net logged."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.count = 0
        self.errors: list[str] = []

    def handle(self, record: logging.LogRecord) -> bool:  # no lock, no formatting: single-threaded and fast
        self.count += 1
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(describe(record.exc_info[1]))
        return True

    def emit(self, record: logging.LogRecord) -> None:
        pass


@contextmanager
def capture_logs() -> Iterator[LogCounter]:
    """Route the `toolcall_parsers` logger (INFO and up) to a counter only, and restore it afterwards."""
    logger = logging.getLogger("toolcall_parsers")
    saved = (logger.handlers[:], logger.propagate, logger.level)
    counter = LogCounter()
    logger.handlers = [counter]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        yield counter
    finally:
        logger.handlers, logger.propagate = saved[0], saved[1]
        logger.setLevel(saved[2])


def describe(exc: BaseException) -> str:
    """`Type at file:line` of the innermost frame in the package: stable enough to tell bugs apart."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "parsers" in f.filename or "toolcall_parsers" in f.filename] or frames
    where = f" at {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
    return f"{type(exc).__name__}{where}"


@dataclass
class Violation:
    invariant: str
    kind: str  # a coarse class: what went wrong, without the input's details
    message: str
    chunks: Chunks | None = None  # the chunking it happened on; None: the whole text at once

    @property
    def key(self) -> tuple[str, str]:
        return self.invariant, self.kind


@dataclass
class Options:
    """What to check and how hard; one instance is shared by a run's checker, fuzzer and shrinker."""

    timeout: float = 2.0
    log_check: bool = True
    max_log_lines: int = 12
    char_limit: int = 300
    char_every: int = 1  # the one-character chunking on every n-th input under char_limit
    parse_every: int = 8
    shrink_seconds: float = 5.0
    max_per_invariant: int = 3
    slow_factor: float = 25.0
    probe_every: float = 20.0  # seconds between scaling probes (0: none)
    probe_length: int = 250_000  # a probe repeats an input up to at least this many characters
    out: Path | None = None
    progress: bool = True
    hard_watchdog: bool = False


def short(value: Any, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit // 2] + " ... " + text[-limit // 2 :]


def merge(events: list[Event]) -> list[Event]:
    """Join adjacent Text events and same-call CallArgs events (linear: pieces are joined once)."""
    out: list[Event] = []
    pieces: list[str] = []
    for event in events:
        last = out[-1] if out else None
        if type(event) is Text and type(last) is Text:
            pieces.append(event.text)
            continue
        if type(event) is CallArgs and type(last) is CallArgs and last.index == event.index:
            pieces.append(event.fragment)
            continue
        _flush(out, pieces)
        out.append(event)
        pieces = [event.text] if type(event) is Text else [event.fragment] if type(event) is CallArgs else []
    _flush(out, pieces)
    return out


def _flush(out: list[Event], pieces: list[str]) -> None:
    if len(pieces) > 1:
        last = out[-1]
        out[-1] = Text("".join(pieces)) if type(last) is Text else CallArgs(last.index, "".join(pieces))  # type: ignore[union-attr]


def same(a: Any, b: Any) -> bool:
    """JSON equality that tells True from 1 and a string from a number (numbers compare by value).
    Iterative: arguments may nest far deeper than Python's recursion limit."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        tx, ty = type(x), type(y)
        if tx in (int, float) and ty in (int, float):
            if not (x == y or (x != x and y != y)):
                return False
        elif tx is not ty:
            return False
        elif tx is dict:
            if x.keys() != y.keys():
                return False
            stack.extend((v, y[k]) for k, v in x.items())
        elif tx is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def _no_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_KIND = "arguments_json holds a lone surrogate"


def check_arguments(arguments_json: str, arguments: Any) -> tuple[str, str] | None:
    """(kind, message) when an ended call's arguments break invariant 4."""
    if type(arguments) is not dict:
        return "arguments is not a dict", short(arguments)
    try:
        arguments_json.encode("utf-8")
    except UnicodeEncodeError as err:
        return SURROGATE_KIND, f"{err}: {short(arguments_json)}"
    try:
        loaded = json.loads(arguments_json, parse_constant=_no_constant)
    except RecursionError:
        return "arguments_json nests too deep to load", short(arguments_json)
    except ValueError as err:
        return "arguments_json is not JSON", f"{err}: {short(arguments_json)}"
    if not same(loaded, arguments):
        return "json.loads(arguments_json) != arguments", f"{short(arguments_json)} vs {short(arguments)}"
    return None


def check_events(events: list[Any]) -> list[tuple[str, str, str]]:
    """Invariants 1 (types), 3 (well formed) and 4 (arguments) over one run's events."""
    problems: list[tuple[str, str, str]] = []
    fragments: dict[int, list[str]] = {}
    ended: dict[int, Any] = {}
    last = -1
    for n, event in enumerate(events):
        kind = type(event)
        if kind is CallArgs:
            if event.index not in fragments:
                problems.append(("well_formed", "CallArgs for an index never started", f"event {n}: {event!r}"))
            elif event.index in ended:
                problems.append(("well_formed", "CallArgs after CallEnd", f"event {n}: {short(event)}"))
            elif type(event.fragment) is not str:
                problems.append(("raises", "CallArgs.fragment is not a str", f"event {n}: {short(event)}"))
            else:
                fragments[event.index].append(event.fragment)
        elif kind is Text:
            if type(event.text) is not str:
                problems.append(("raises", "Text.text is not a str", f"event {n}: {short(event)}"))
        elif kind is CallStart:
            if type(event.index) is not int or event.index <= last:
                problems.append(("well_formed", "CallStart index not increasing", f"event {n}: {event!r} after {last}"))
                continue
            if type(event.id) is not str or not event.id or type(event.name) is not str or not event.name:
                problems.append(("well_formed", "CallStart with an empty id or name", f"event {n}: {short(event)}"))
            last = event.index
            fragments[event.index] = []
        elif kind is CallEnd:
            if event.index not in fragments:
                problems.append(("well_formed", "CallEnd for an index never started", f"event {n}: {event!r}"))
            elif event.index in ended:
                problems.append(("well_formed", "CallEnd twice", f"event {n}: {short(event)}"))
            else:
                ended[event.index] = event.arguments
        else:
            problems.append(("raises", "an event of an unknown type", f"event {n}: {short(event)}"))
    for index, arguments in ended.items():
        bad = check_arguments("".join(fragments[index]), arguments)
        if bad:
            problems.append(("arguments", bad[0], f"call {index}: {bad[1]}"))
    return problems


def is_subsequence(pieces: list[str], text: str) -> bool:
    """Whether the pieces, in order, are a subsequence of `text` (whole pieces first, then by char)."""
    pos = 0
    for piece in pieces:
        i = text.find(piece, pos)
        if i < 0:
            break
        pos = i + len(piece)
    else:
        return True
    pos = 0
    find = text.find
    for c in "".join(pieces):
        pos = find(c, pos) + 1
        if not pos:
            return False
    return True


def events_equal(a: list[Event], b: list[Event]) -> bool:
    return a == b or repr(a) == repr(b)  # repr: NaN arguments are equal to themselves


def first_difference(a: list[Event], b: list[Event]) -> tuple[str, str]:
    """(class, message) of where two merged event lists part: the class names the event types."""
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if repr(x) != repr(y):
            return (
                f"events differ: {type(x).__name__} vs {type(y).__name__}",
                f"event {n}: whole {short(x)} vs {short(y)}",
            )
    more = a[len(b) :] or b[len(a) :]
    return "events differ: one has more", f"whole has {len(a)} events, chunked {len(b)}: next {short(more[:1])}"


class Checker:
    """Runs one format's parser on a text under several chunkings and reports every violation."""

    def __init__(self, fmt: str, options: Options, log: LogCounter) -> None:
        self.fmt = fmt
        self.format = get_format(fmt)
        self.options = options
        self.log = log
        self.elapsed = 0.0  # the last whole run's time
        self.chunked_elapsed = 0.0  # the first chunked run's time (the random split)
        self.timed_chunks: Chunks = []

    def run(self, text: str, chunks: Chunks, tools: Tools, found: list[Violation]) -> list[Any] | None:
        """Feed `chunks` to a fresh stream and close it, under the time limit: its raw events, or None
        when it raised or hung. Per-run checks (1, 3, 4, 9) are appended to `found`."""
        where = None if len(chunks) == 1 and chunks[0] == text else chunks
        log = self.log
        log.count = 0
        log.errors.clear()
        events: list[Any] = []
        started = time.thread_time()  # CPU time (the machine may be shared); process_time is a slow syscall here
        signal.setitimer(signal.ITIMER_REAL, self.options.timeout)
        try:
            stream = self.format.stream(tools, counter_ids)
            for chunk in chunks:
                out = stream.feed(chunk)
                if type(out) is not list:
                    raise TypeError(f"feed() returned {type(out).__name__}")
                events += out
            out = stream.close()
            if type(out) is not list:
                raise TypeError(f"close() returned {type(out).__name__}")
            events += out
        except Hang:
            found.append(Violation("hang", "timeout", f"no answer within {self.options.timeout}s", where))
            return None
        except Exception as exc:
            found.append(Violation("raises", describe(exc), short(exc, 300), where))
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            elapsed = time.thread_time() - started
        if where is None:
            self.elapsed = elapsed
        elif not self.timed_chunks:
            self.chunked_elapsed, self.timed_chunks = elapsed, chunks
        for error in dict.fromkeys(log.errors):
            found.append(Violation("internal_error", error, f"logged by the parser's safety net: {error}", where))
        if self.options.log_check and log.count > self.options.max_log_lines:
            message = f"{log.count} log records for one response (bound {self.options.max_log_lines})"
            found.append(Violation("log_bound", "too many log records", message, where))
        for invariant, kind, message in check_events(events):
            found.append(Violation(invariant, kind, message, where))
        return events

    def timed(self, text: str, chunks: Chunks, tools: Tools, limit: float | None = None) -> float | None:
        """CPU seconds for one more run of `chunks` (violations ignored) within `limit` wall seconds
        (default: the time limit); None when it does not finish."""
        saved = self.options.timeout
        self.options.timeout = limit or saved
        try:
            started = time.thread_time()
            found: list[Violation] = []
            self.run(text, chunks, tools, found)
            hung = any(v.invariant == "hang" for v in found)
            return None if hung else time.thread_time() - started
        finally:
            self.options.timeout = saved

    def check(
        self,
        text: str,
        tools: Tools,
        chunkings: list[Chunks],
        expected: Expected | None = None,
        check_parse: bool = True,
    ) -> list[Violation]:
        """Every invariant for `text`: the whole text, then each chunking against it. One violation
        per (invariant, kind)."""
        found: list[Violation] = []
        self.elapsed = self.chunked_elapsed = 0.0
        self.timed_chunks = []
        whole = self.run(text, [text], tools, found)
        merged = merge(whole) if whole is not None else None
        if whole is not None and not any(v.invariant in ("well_formed", "raises") for v in found):
            self._check_result(text, tools, whole, expected, check_parse, found)
        for chunks in chunkings:
            events = self.run(text, chunks, tools, found)
            if events is not None and merged is not None:
                chunked = merge(events)
                if not events_equal(merged, chunked):
                    found.append(Violation("chunking", *first_difference(merged, chunked), chunks))
        unique: dict[tuple[str, str], Violation] = {}
        for violation in found:
            if violation.kind == SURROGATE_KIND:  # two bugs: passing a raw one through, or making one
                raw = SURROGATE.search(text) is not None
                violation.kind += " (the input has a raw one)" if raw else " (made from an escape)"
            unique.setdefault(violation.key, violation)
        return list(unique.values())

    def _check_result(
        self,
        text: str,
        tools: Tools,
        events: list[Any],
        expected: Expected | None,
        check_parse: bool,
        found: list[Violation],
    ) -> None:
        """Invariants 2 (parse), 5, 6 and 7 on the finished result of the whole text."""
        result = build_result(events)
        indexes = [c.index for c in result.calls]
        if indexes != list(range(len(indexes))):
            found.append(Violation("indexes", "result indexes not 0..n-1", f"indexes {indexes}"))
        content = result.content
        if not any(type(e) is CallStart for e in events) and content != (text.strip() or None):
            found.append(Violation("nothing_lost", "no call, content != text", f"content {short(content)}"))
        pieces = [e.text for e in events if type(e) is Text]
        if not is_subsequence(pieces, text):
            found.append(Violation("nothing_lost", "content not in the input", f"content {short(''.join(pieces))}"))
        if check_parse:
            signal.setitimer(signal.ITIMER_REAL, self.options.timeout)
            try:
                parsed = parse(self.fmt, text, tools, counter_ids)
            except Hang:
                found.append(Violation("hang", "timeout", f"parse() gave no answer within {self.options.timeout}s"))
                parsed = None
            except Exception as exc:
                found.append(Violation("raises", describe(exc), f"parse(): {short(exc, 300)}"))
                parsed = None
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            if parsed is not None and parsed != result and repr(parsed) != repr(result):
                found.append(Violation("chunking", "parse() differs", f"parse() {short(parsed)} vs {short(result)}"))
        if expected is not None:
            want_content, want_calls = expected
            if content != want_content:
                found.append(
                    Violation("expected", "content differs", f"want {short(want_content)}, got {short(content)}")
                )
            got = [(c.name, c.arguments, c.id) for c in result.calls]
            if len(got) != len(want_calls) or not all(
                g[0] == w[0] and g[2] == w[2] and same(g[1], w[1]) for g, w in zip(got, want_calls, strict=False)
            ):
                found.append(Violation("expected", "calls differ", f"want {short(want_calls)}, got {short(got)}"))


# -- shrinking ----------------------------------------------------------------------------------


def ddmin(units: list[Any], fails: Callable[[list[Any]], bool], deadline: float) -> list[Any]:
    """Delta debugging (complements only): the smallest list found that still fails, by `deadline`."""
    n = 2
    while len(units) >= 2 and time.monotonic() < deadline:
        size = -(-len(units) // n)
        for start in range(0, len(units), size):
            trial = units[:start] + units[start + size :]
            if time.monotonic() >= deadline:
                return units
            if fails(trial):
                units = trial
                n = max(n - 1, 2)
                break
        else:
            if n >= len(units):
                break
            n = min(len(units), n * 2)
    return units


def sweep(units: list[Any], fails: Callable[[list[Any]], bool], deadline: float) -> list[Any]:
    """Remove windows of 16 down to 1 units wherever that still fails: takes out the small balanced
    pieces (`"a":1,`) that ddmin's halves cannot remove one unit at a time."""
    for width in (16, 8, 4, 3, 2, 1):
        start = 0
        while start + width <= len(units):
            if time.monotonic() >= deadline:
                return units
            trial = units[:start] + units[start + width :]
            if fails(trial):
                units = trial
            else:
                start += 1
    return units


def _units(chunks: Chunks) -> list[tuple[str, int]]:
    return [(c, k) for k, chunk in enumerate(chunks) for c in chunk]


def _rebuild(units: list[tuple[str, int]]) -> tuple[str, Chunks]:
    chunks: list[list[str]] = []
    last = None
    for c, k in units:
        if k != last:
            chunks.append([])
            last = k
        chunks[-1].append(c)
    joined = ["".join(chunk) for chunk in chunks]
    return "".join(joined), joined or [""]


def shrink(checker: Checker, case: Case, violation: Violation, deadline: float) -> tuple[str, Tools, Chunks]:
    """The smallest (text, tools, chunks) that still shows a violation with the same key."""
    key = violation.key
    chunks = violation.chunks or [case.text]

    def fails(text: str, tools: Tools, chunks: Chunks) -> bool:
        chunkings = [] if len(chunks) == 1 and chunks[0] == text else [chunks]
        return any(v.key == key for v in checker.check(text, tools, chunkings))

    tools = case.tools
    if not fails(case.text, tools, chunks):
        return case.text, tools, chunks  # not reproducible alone (load, or it needs the other chunking)

    def fails_units(units: list[tuple[str, int]]) -> bool:
        text, chunks = _rebuild(units)
        return fails(text, tools, chunks)

    units = ddmin(_units(chunks), fails_units, deadline)
    if len(units) <= 2000:
        units = sweep(units, fails_units, deadline)
    text, chunks = _rebuild(units)
    i = 0
    while i < len(chunks) - 1 and time.monotonic() < deadline:
        trial = [*chunks[:i], chunks[i] + chunks[i + 1], *chunks[i + 2 :]]
        if fails(text, tools, trial):
            chunks = trial
        else:
            i += 1
    if tools and fails(text, None, chunks):
        tools = None
    k = 0
    while tools and k < len(tools) and time.monotonic() < deadline:
        trial_tools = tools[:k] + tools[k + 1 :]
        if fails(text, trial_tools or None, chunks):
            tools = trial_tools or None
        else:
            k += 1
    return text, tools, chunks


def shrink_document(checker: Checker, case: Case, violation: Violation, deadline: float) -> Case:
    """A valid document's expectation only holds for whole parts: drop parts while it still fails."""
    assert case.parts is not None
    parts = case.parts
    i = 0
    while i < len(parts) and time.monotonic() < deadline:
        trial = parts[:i] + parts[i + 1 :]
        doc = assemble(case.fmt, trial)
        if trial and any(v.key == violation.key for v in checker.check(doc.text, doc.tools, [], doc.expected)):
            parts = trial
        else:
            i += 1
    doc = assemble(case.fmt, parts)
    doc.index = case.index
    return doc


# -- the driver ---------------------------------------------------------------------------------


@dataclass
class Stats:
    """One format's run: inputs, time, violations counted per invariant, and the saved reproducers."""

    fmt: str
    inputs: int = 0
    seconds: float = 0.0  # fuzzing time, shrinking excluded
    cpu_seconds: float = 0.0  # the same in CPU time: the rate on a shared machine
    shrink_seconds: float = 0.0
    shrink_cpu_seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)  # inputs with a violation of each invariant
    saved: list[dict[str, Any]] = field(default_factory=list)
    largest: int = 0

    @property
    def rate(self) -> float:
        return self.inputs / self.seconds if self.seconds else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.inputs / self.cpu_seconds if self.cpu_seconds else 0.0

    def add(self, other: Stats) -> None:
        self.inputs += other.inputs
        self.seconds = max(self.seconds, other.seconds)
        self.cpu_seconds += other.cpu_seconds
        self.shrink_seconds += other.shrink_seconds
        for k, v in other.counts.items():
            self.counts[k] = self.counts.get(k, 0) + v
        self.saved += other.saved
        self.largest = max(self.largest, other.largest)

    def failures(self) -> int:
        return sum(v for k, v in self.counts.items() if k not in REPORT_ONLY)


class Fuzzer:
    """Fuzzes one format: generates, checks, shrinks and saves what breaks, keeps statistics."""

    def __init__(self, fmt: str, options: Options, seed: int, log: LogCounter) -> None:
        self.fmt = fmt
        self.options = options
        self.seed = seed
        self.checker = Checker(fmt, options, log)
        self.stats = Stats(fmt)
        self.seen_keys: set[tuple[str, str]] = set()
        self.seen_texts: set[tuple[str, str]] = set()
        self.costs: list[float] = []
        self.chunked_costs: list[float] = []
        self.next_probe = time.monotonic() + options.probe_every
        self.probe_case: Case | None = None  # the densest input in markup since the last probe
        self.probe_density = 0.0

    def check_case(self, case: Case, rng: random.Random) -> list[Violation]:
        text = case.text
        chunkings = [random_split(rng, text)] if len(text) > 1 else []
        if 1 < len(text) < self.options.char_limit and (len(text) < 64 or case.index % self.options.char_every == 0):
            chunkings.append(list(text))
        parse_now = self.options.parse_every > 0 and case.index % self.options.parse_every == 0
        try:
            return self.checker.check(text, case.tools, chunkings, case.expected, parse_now)
        except Hang:  # the alarm went off between a run and its disarming
            return [Violation("hang", "timeout", "timer fired outside a run")]

    def one(self, index: int) -> None:
        case, rng = make_case(self.fmt, self.seed, index)
        self.stats.largest = max(self.stats.largest, len(case.text))
        if len(case.text) > 5000 and self.options.out is not None:
            inflight = {"format": self.fmt, "seed": self.seed, "index": index, "length": len(case.text)}
            (self.options.out / f"inflight-{self.fmt}.json").write_text(json.dumps(inflight))
        found = [self.confirm_hang(case, v) if v.invariant == "hang" else v for v in self.check_case(case, rng)]
        self.stats.inputs += 1
        if len(case.text) >= 1000:
            found += self.cost(case)
        if self.options.probe_every and len(case.text) >= 200:
            self.probe(case)
        for invariant in {v.invariant for v in found}:
            self.stats.counts[invariant] = self.stats.counts.get(invariant, 0) + 1
        for violation in found:
            self.report(case, violation)

    def confirm_hang(self, case: Case, hang: Violation) -> Violation:
        """A run over the wall-clock limit hangs only if it also needs that much CPU time: on a busy
        machine it is re-run with ten times the limit and, if it finishes, reported as slow."""
        cpu = self.checker.timed(case.text, hang.chunks or [case.text], case.tools, 10 * self.options.timeout)
        if cpu is None or cpu >= self.options.timeout:
            return hang
        message = f"over {self.options.timeout}s of wall time on a busy machine, but {cpu:.3f} CPU seconds"
        return Violation("slow", "over the time limit only under load", message, hang.chunks)

    def cost(self, case: Case) -> list[Violation]:
        """Invariant 8 (report only): a cost per character far above the median of the big inputs,
        confirmed by timing the run again (the machine may just have been busy)."""
        n = len(case.text)
        flagged = []
        for costs, value, label, chunks in (
            (self.costs, self.checker.elapsed / n, "whole", [case.text]),
            (self.chunked_costs, self.checker.chunked_elapsed / n, "chunked", self.checker.timed_chunks),
        ):
            if not value or not chunks:
                continue
            costs.append(value)
            if len(costs) < 20:
                continue
            median = statistics.median(costs[-400:])
            if value > self.options.slow_factor * median and value * n > 0.05:
                value = min(value, (self.checker.timed(case.text, chunks, case.tools) or value * n) / n)
            if value > self.options.slow_factor * median and value * n > 0.05:
                flagged.append(
                    Violation(
                        "slow",
                        f"{label} cost per character",
                        f"{label}: {value * 1e6:.2f} us/char over {n} chars, median {median * 1e6:.2f} us/char",
                    )
                )
        return flagged

    def probe(self, case: Case) -> None:
        """Keep the input densest in markup (each marker or bracket may be a span of its own, and a
        per-span cost that grows with the text is what the probe looks for); probe it when due."""
        text = case.text
        density = sum(text.count(c) for c in "<[{(\n") / len(text)
        if density > self.probe_density:
            self.probe_case, self.probe_density = case, density
        if time.monotonic() < self.next_probe or self.probe_case is None:
            return
        probed, self.probe_case, self.probe_density = self.probe_case, None, 0.0
        for violation in self.scaling(probed):
            self.stats.counts["slow"] = self.stats.counts.get("slow", 0) + 1
            self.report(probed, violation)
        self.next_probe = time.monotonic() + self.options.probe_every

    def scaling(self, case: Case) -> list[Violation]:
        """Invariant 8 (report only): the input repeated k times must cost about k times as much, fed
        whole. Generated inputs stay under about 100K characters, where a quadratic term is still
        small next to the median; repeated to a quarter million characters it is not."""
        k = -(-self.options.probe_length // len(case.text))
        times = [self.checker.timed(case.text, [case.text], case.tools) for _ in range(3)]
        if any(t is None for t in times):
            return []
        one = min(t for t in times if t is not None)
        big = case.text * k
        many = self.checker.timed(big, [big], case.tools, 20 * self.options.timeout)
        if many is not None and (many < 0.2 or many < 3 * k * one):  # 3x: cache and GC effects are not it
            return []
        spent = "over the time limit" if many is None else f"{many:.2f} CPU s"
        message = f"{len(case.text)} chars: {one * 1e3:.2f} ms; {k} times repeated ({len(big)} chars): {spent}"
        return [Violation("slow", "superlinear in the length (whole text)", message)]

    def report(self, case: Case, violation: Violation) -> None:
        """Shrink, save and print a violation, unless its invariant's cap is reached."""
        invariant = violation.invariant
        saved_here = sum(1 for r in self.stats.saved if r["invariant"] == invariant)
        new_class = violation.key not in self.seen_keys
        cap = self.options.max_per_invariant
        if not (saved_here < cap or (new_class and saved_here < 3 * cap)):
            return
        self.seen_keys.add(violation.key)
        started, started_cpu = time.monotonic(), time.thread_time()
        budget = max(self.options.shrink_seconds, 10 * self.options.timeout if invariant == "hang" else 0)
        deadline = started + budget
        text, tools, chunks, expected = case.text, case.tools, violation.chunks, case.expected
        if invariant == "expected" and case.parts:
            doc = shrink_document(self.checker, case, violation, deadline)
            text, tools, chunks, expected = doc.text, doc.tools, None, doc.expected
            confirm = self.checker.check(text, tools, [], expected)
            violation = next((v for v in confirm if v.key == violation.key), violation)
        elif invariant not in REPORT_ONLY and budget > 0:
            text, tools, chunks = shrink(self.checker, case, violation, deadline)
            if len(chunks) == 1 and chunks[0] == text:
                chunks = None
            confirm = self.checker.check(text, tools, [chunks] if chunks else [])
            violation = next((v for v in confirm if v.key == violation.key), violation)
        self.stats.shrink_seconds += time.monotonic() - started
        self.stats.shrink_cpu_seconds += time.thread_time() - started_cpu
        if (invariant, text + repr(chunks)) in self.seen_texts:
            return
        self.seen_texts.add((invariant, text + repr(chunks)))
        record = {
            "format": self.fmt,
            "invariant": invariant,
            "invariant_doc": INVARIANTS[invariant],
            "kind": violation.kind,
            "message": violation.message,
            "text": text,
            "tools": tools,
            "chunks": chunks,
            "expected": expected_json(expected) if invariant == "expected" else None,
            "seed": self.seed,
            "index": case.index,
            "origin": case.origin,
            "original_length": len(case.text),
        }
        if self.options.out is not None:
            digest = hashlib.sha1((text + repr(chunks) + invariant).encode("utf-8", "surrogatepass")).hexdigest()
            path = self.options.out / f"{self.fmt}-{invariant}-{digest[:10]}.json"
            path.write_text(json.dumps(record, indent=1, ensure_ascii=True))
            record["path"] = str(path)
        self.stats.saved.append(record)
        if self.options.progress:
            print(render(record), flush=True)


def expected_json(expected: Expected | None) -> dict[str, Any] | None:
    if expected is None:
        return None
    content, calls = expected
    return {"content": content, "calls": [{"name": n, "arguments": a, "id": i} for n, a, i in calls]}


def expected_from_json(data: dict[str, Any] | None) -> Expected | None:
    if not data:
        return None
    return data["content"], [(c["name"], c["arguments"], c["id"]) for c in data["calls"]]


def render(record: dict[str, Any]) -> str:
    """A reproducer as printed: invariant, kind, message, exact text and chunking."""
    lines = [
        f"VIOLATION {record['format']} [{record['invariant_doc']}] {record['kind']}",
        f"  message: {record['message']}",
        f"  text:    {short(record['text'], 600)}",
        f"  chunks:  {short(record['chunks'], 600) if record['chunks'] else 'whole text'}",
    ]
    if record["tools"]:
        lines.append(f"  tools:   {short(record['tools'], 300)}")
    if record.get("expected"):
        lines.append(f"  expected: {short(record['expected'], 300)}")
    lines.append(f"  from:    seed {record['seed']} input {record['index']} ({record['origin']})")
    if "path" in record:
        lines.append(f"  saved:   {record['path']}")
    return "\n".join(lines)


def fuzz_format(
    fmt: str,
    options: Options,
    seed: int = 0,
    inputs: int | None = None,
    seconds: float | None = None,
    start: int = 0,
    shard: int = 0,
    shards: int = 1,
) -> Stats:
    """Fuzz one format until `inputs` inputs (this shard takes every `shards`-th index) or `seconds`
    of wall time, whichever comes first."""
    with capture_logs() as log, watchdog():
        fuzzer = Fuzzer(fmt, options, seed, log)
        began = last_report = time.monotonic()
        began_cpu = time.thread_time()
        end_index = start + inputs if inputs is not None else None
        index = start + shard
        if options.hard_watchdog:
            faulthandler.dump_traceback_later(30 * options.timeout + 60, exit=True)
        while end_index is None or index < end_index:
            fuzzer.one(index)
            index += shards
            if fuzzer.stats.inputs % 32 == 0:
                now = time.monotonic()
                if seconds is not None and now - began >= seconds:
                    break
                if now - last_report >= 2.0:
                    last_report = now
                    fuzzer.stats.seconds = now - began - fuzzer.stats.shrink_seconds
                    fuzzer.stats.cpu_seconds = time.thread_time() - began_cpu - fuzzer.stats.shrink_cpu_seconds
                    if options.hard_watchdog:
                        faulthandler.dump_traceback_later(30 * options.timeout + 60, exit=True)
                    if options.progress:
                        print(progress_line(fuzzer.stats, index), file=sys.stderr, flush=True)
        if options.hard_watchdog:
            faulthandler.cancel_dump_traceback_later()
        fuzzer.stats.seconds = time.monotonic() - began - fuzzer.stats.shrink_seconds
        fuzzer.stats.cpu_seconds = time.thread_time() - began_cpu - fuzzer.stats.shrink_cpu_seconds
        if options.out is not None:
            (options.out / f"inflight-{fmt}.json").unlink(missing_ok=True)
        return fuzzer.stats


def progress_line(stats: Stats, index: int) -> str:
    counts = " ".join(f"{k}={v}" for k, v in sorted(stats.counts.items()))
    rates = f"{stats.rate:.0f}/s ({stats.cpu_rate:.0f} per CPU second)"
    return f"[fuzz] {stats.fmt}: {stats.inputs} inputs (next {index}), {rates}; {counts or 'no violations'}"


def _shard(job: tuple[str, Options, int, int | None, float | None, int, int, int]) -> Stats:
    return fuzz_format(*job)


def summary_table(all_stats: list[Stats]) -> str:
    """One line per format: inputs, rates (wall and CPU), exceptions, hangs, violations per invariant."""
    columns = [k for k in INVARIANTS if any(s.counts.get(k) for s in all_stats)]
    widths = (("format", 16), ("inputs", 9), ("inputs/s", 10), ("/CPU s", 8), ("exceptions", 11), ("hangs", 7))
    lines = ["".join(f"{h:<{w}}" if h == "format" else f"{h:>{w}}" for h, w in widths) + f"{'largest':>9}  violations"]
    for s in all_stats:
        violations = ", ".join(f"{k}={s.counts[k]}" for k in columns if s.counts.get(k)) or "none"
        exceptions = s.counts.get("raises", 0) + s.counts.get("internal_error", 0)
        cells = f"{s.fmt:<16}{s.inputs:>9}{s.rate:>10.0f}{s.cpu_rate:>8.0f}{exceptions:>11}{s.counts.get('hang', 0):>7}"
        lines.append(f"{cells}{s.largest:>9}  {violations}")
    return "\n".join(lines)


def replay(paths: list[str], options: Options) -> int:
    """Check saved reproducers again (their own chunking and the whole text): 1 if any still fails."""
    failed = 0
    with capture_logs() as log, watchdog():
        for path in paths:
            record = json.loads(Path(path).read_text())
            checker = Checker(record["format"], options, log)
            chunks = record.get("chunks")
            expected = expected_from_json(record.get("expected"))
            found = checker.check(record["text"], record.get("tools"), [chunks] if chunks else [], expected)
            print(f"{path}: " + ("; ".join(f"{v.invariant}: {v.kind}: {v.message}" for v in found) or "passes"))
            failed += bool(found)
    return 1 if failed else 0


def reshrink(paths: list[str], options: Options) -> int:
    """Shrink saved reproducers again with this run's budget, rewriting them in place."""
    with capture_logs() as log, watchdog():
        for path in paths:
            record = json.loads(Path(path).read_text())
            checker = Checker(record["format"], options, log)
            case = Case(record["format"], record["text"], record.get("tools"), record.get("origin", ""))
            violation = Violation(record["invariant"], record["kind"], record["message"], record.get("chunks"))
            if violation.invariant in REPORT_ONLY or violation.invariant == "expected":
                continue
            text, tools, chunks = shrink(checker, case, violation, time.monotonic() + options.shrink_seconds)
            found = checker.check(text, tools, [] if len(chunks) == 1 and chunks[0] == text else [chunks])
            shrunk = next((v for v in found if v.key == violation.key), None)
            if shrunk is None or len(text) >= len(record["text"]):
                print(f"{path}: not smaller ({len(record['text'])} chars)")
                continue
            record.update(text=text, tools=tools, message=shrunk.message)
            record["chunks"] = None if len(chunks) == 1 and chunks[0] == text else chunks
            Path(path).write_text(json.dumps(record, indent=1, ensure_ascii=True))
            print(render(record | {"path": path}))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--format", default="all", help=f"one of {', '.join(FORMATS)}, or all")
    ap.add_argument("--seconds", type=float, help="wall time per format (default 10 unless --inputs is given)")
    ap.add_argument("--inputs", type=int, help="inputs per format")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0, help="index of the first input (to replay a range)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--jobs", type=int, default=1, help="processes per format")
    ap.add_argument("--timeout", type=float, default=2.0, help="seconds per run before it counts as a hang")
    ap.add_argument("--max-log-lines", type=int, default=12)
    ap.add_argument("--no-log-check", action="store_true", help="do not check the log bound (invariant 6)")
    ap.add_argument("--char-limit", type=int, default=300, help="feed inputs shorter than this one char at a time")
    ap.add_argument("--char-every", type=int, default=1, help="... on every n-th such input (always under 64 chars)")
    ap.add_argument("--shrink-seconds", type=float, default=5.0)
    ap.add_argument("--max-per-invariant", type=int, default=3, help="reproducers saved per invariant and format")
    ap.add_argument("--replay", nargs="+", metavar="JSON", help="check saved reproducers instead of fuzzing")
    ap.add_argument("--shrink", nargs="+", metavar="JSON", help="shrink saved reproducers again (--shrink-seconds)")
    args = ap.parse_args(argv)
    options = Options(
        timeout=args.timeout,
        log_check=not args.no_log_check,
        max_log_lines=args.max_log_lines,
        char_limit=args.char_limit,
        char_every=max(1, args.char_every),
        shrink_seconds=args.shrink_seconds,
        max_per_invariant=args.max_per_invariant,
        out=args.out,
        hard_watchdog=True,
    )
    if args.replay:
        return replay(args.replay, options)
    if args.shrink:
        return reshrink(args.shrink, options)
    formats = FORMATS if args.format == "all" else (args.format,)
    for fmt in formats:
        try:
            get_format(fmt)
        except ValueError as err:  # the message lists the known formats
            ap.error(str(err))
    seconds = args.seconds if args.seconds is not None or args.inputs is not None else 10.0
    args.out.mkdir(parents=True, exist_ok=True)
    all_stats = []
    for fmt in formats:
        jobs = [(fmt, options, args.seed, args.inputs, seconds, args.start, k, args.jobs) for k in range(args.jobs)]
        if args.jobs == 1:
            parts = [_shard(jobs[0])]
        else:
            with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
                parts = pool.map(_shard, jobs)
        stats = Stats(fmt)
        for part in parts:
            stats.add(part)
        all_stats.append(stats)
        print(progress_line(stats, -1), file=sys.stderr, flush=True)
    print("\n" + summary_table(all_stats))
    classes = [(s.fmt, r) for s in all_stats for r in s.saved]
    if classes:
        print("\nreproducers:")
        for fmt, r in classes:
            print(f"  {fmt:<15} {r['invariant']:<15} {r['kind']:<45} {short(r['text'], 90)}")
    return 1 if any(s.failures() for s in all_stats) else 0


if __name__ == "__main__":
    sys.exit(main())
