"""Broken inputs: mutations of valid documents (truncated, flipped, markers injected or repeated,
nesting thousands deep, huge values, odd numbers, surrogates, bad UTF-8, empty and long-named calls),
and the mix of inputs a run makes from (format, seed, index).

The format-specific pieces (openers, empty calls, calls with a long name) come from the format's
`generate.Profile`, i.e. from its spec.
"""

from __future__ import annotations

import random
import re
import zlib
from collections.abc import Callable

from .generate import Case, gen_document, gen_noise, profile
from .values import ALL_MARKERS, NAME_TAIL, UNICODE, Chunks, FastRandom

SEPARATORS = ",\"'[]{}()=:<>/"
BARE_WORDS = ["foo", "undefined", "NaN", "Infinity", "True", "none", "x.y", "f()", "{a}", "set()", "...", "$"]
VALUE = re.compile(r"\"(?:[^\"\\\n]|\\.){0,40}\"|'(?:[^'\\\n]|\\.){0,40}'|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|null")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
ODD_NUMBERS = ["1e", "1e+", "1E-", "0x1F", "1_000", "1j", "01", "-", "+1", "1.", ".5", "-0", "1e999", "-1e999"]
ODD_NUMBERS += ["1" + "0" * 4999, "NaN", "Infinity", "-Infinity", "1.5.2", "--1", "0b101", "0o17", "1e-999"]
WHITESPACE = [" ", "\n", "\t", "\r", "\r\n", "\u00a0", "\u2028", "\u3000", "\x0b", "\x0c"]
SURROGATES = ["\\ud800", "\ud800", "\\udc00", "\udfff", "\\ud800\\u0041", "\\udc00\\ud800", "\\ud83d", "\\ud83d\\ude00"]
SURROGATES += ["\\ud800\\", "\\uD800", "\\ud8", "\\u"]


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
    prof = profile(fmt)
    own = [*prof.openers, *prof.empty_calls[:1], *prof.prose_snippets]
    return _insert(rng, text, rng.choice(own if rng.random() < 0.6 else ALL_MARKERS))


def m_duplicate_marker(rng: random.Random, text: str, fmt: str) -> str:
    marker = rng.choice(profile(fmt).openers)
    i = _nth(rng, text, marker)
    if i < 0:
        return _insert(rng, text, marker * rng.choice([1, 2]))
    return text[:i] + marker * rng.choice([1, 1, 2, 50]) + text[i:]


def m_marker_in_string(rng: random.Random, text: str, fmt: str) -> str:
    i = _nth(rng, text, rng.choice(['"', "'", ">"]))
    marker = rng.choice([*profile(fmt).openers, *ALL_MARKERS])
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
        return text + rng.choice(profile(fmt).long_calls).replace("%s", piece.replace('"', "").replace("\\", ""))
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
    return _insert(rng, text, rng.choice(profile(fmt).empty_calls))


def m_long_name(rng: random.Random, text: str, fmt: str) -> str:
    n = rng.choice([257, 300, 1025, 1100, 2000, 5000])
    name = "".join(rng.choices(NAME_TAIL, k=n)) if rng.random() < 0.5 else "a" * n
    return _insert(rng, text, rng.choice(profile(fmt).long_calls).replace("%s", name))


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


def make_case(fmt: str, seed: int, index: int, written_only: bool = False) -> tuple[Case, FastRandom]:
    """Input number `index`: a valid document (30%), a mutated one (60%), or marker noise (10%);
    `written_only`: every block written by the spec's writer (what a format without a grammar-aware
    generator gets)."""
    rng = case_rng(fmt, seed, index)
    r = rng.random()
    if r < 0.3:
        case = gen_document(rng, fmt, written_only)
    elif r < 0.9:
        doc = gen_document(rng, fmt, written_only)
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
