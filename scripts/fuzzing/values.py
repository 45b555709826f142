"""Random values for the fuzzer: words, strings that like the characters parsers care about, names,
JSON values, and Python literals; the markers of every registered format (from their specs).

Everything here is format-neutral: the markers come from `FORMATS`, so a new format's markers turn up
in every format's random strings without an edit here.
"""

from __future__ import annotations

import json
import keyword
import random
import string
from collections.abc import Callable
from typing import Any

from toolcall_parsers import CallArgs, CallEnd, CallStart, Text
from toolcall_parsers.formats import FORMATS, Format

Event = Text | CallStart | CallArgs | CallEnd
Tools = list[dict[str, Any]] | None
Chunks = list[str]
ExpectedCall = tuple[str, dict[str, Any], str]  # name, arguments, id
Expected = tuple[str | list[str] | None, list[ExpectedCall]]
"""A document's content and calls. Content as a list: these prose pieces in order, with any
whitespace (or none) where a call stood (documents with written blocks, see `generate`)."""

SENTINEL = "zq9name"
"""A name no writer spells otherwise: where it appears in a written call, the name goes."""
REASONING_MARKERS = ("<think>", "</think>", "[THINK]", "[/THINK]")


def call_head(fmt: Format) -> str:
    """What `fmt` writes before a call's name: its opener as the chat template writes it (for
    formats without an opening marker, the JSON or Python head, or the fence)."""
    text = fmt.write([(SENTINEL, {})])
    return text[: text.index(SENTINEL)] if SENTINEL in text else text


def _all_markers() -> list[str]:
    """Every format's markers and the head of a call to `f` at a line start, then the reasoning markers."""
    found: list[str] = []
    for fmt in FORMATS.values():
        found += [*fmt.markers, "\n" + call_head(fmt) + "f"]
    return list(dict.fromkeys([*found, *REASONING_MARKERS]))


ALL_MARKERS = _all_markers()
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
