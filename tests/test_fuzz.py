"""Bounded fuzzing in the test suite: scripts/fuzz.py with a fixed seed, 2,000 inputs per format.

Why here as well as in the script: the script hunts for minutes; this keeps a fixed slice of that hunt
in every test run, so a regression in any invariant shows up without anyone running the fuzzer. Each
(format, invariant) pair is its own test, so a failure names the invariant; the assertion message
holds the shrunk reproducers (exact text, chunking, tools), ready to paste into a unit test.

Pairs in FAILING_TODAY are known failures, marked xfail (not strict) with their reason.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator

import fuzz
import pytest

SEED = 20260601
INPUTS = 2000

FAILING_TODAY: dict[tuple[str, str], str] = {}
"""(format, invariant) pairs known to fail, marked xfail with the reason; empty: every format holds them."""
CHECKED = [name for name in fuzz.INVARIANTS if name not in fuzz.REPORT_ONLY]


@pytest.fixture(scope="module")
def fuzz_stats() -> Callable[[str], fuzz.Stats]:
    """Fuzz each format once per module run (lazily), with the log check on and short shrinking."""
    cache: dict[str, fuzz.Stats] = {}
    options = fuzz.Options(
        char_every=4, shrink_seconds=0.3, max_per_invariant=1, probe_every=0, progress=False, out=None
    )

    def stats(fmt: str) -> fuzz.Stats:
        if fmt not in cache:
            cache[fmt] = fuzz.fuzz_format(fmt, options, seed=SEED, inputs=INPUTS)
        return cache[fmt]

    return stats


def _cases() -> Iterator[object]:
    for fmt in fuzz.FORMATS:
        for invariant in CHECKED:
            reason = FAILING_TODAY.get((fmt, invariant))
            marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
            yield pytest.param(fmt, invariant, id=f"{fmt}-{invariant}", marks=marks)


@pytest.mark.parametrize(("fmt", "invariant"), list(_cases()))
def test_fuzz_holds_invariant(fuzz_stats: Callable[[str], fuzz.Stats], fmt: str, invariant: str) -> None:
    stats = fuzz_stats(fmt)
    assert stats.inputs == INPUTS
    count = stats.counts.get(invariant, 0)
    examples = "\n".join(fuzz.render(r) for r in stats.saved if r["invariant"] == invariant)
    assert count == 0, f"{count} of {stats.inputs} inputs break {fuzz.INVARIANTS[invariant]}\n{examples}"


def test_python_literals_mean_what_the_generator_says() -> None:
    """The llama_pythonic expectations are only as good as the literal renderer: Python agrees."""
    rng = fuzz.FastRandom(1)
    for _ in range(3000):
        value = fuzz.gen_json(rng)
        source = fuzz.py_literal(rng, value)
        assert fuzz.same(_lists(ast.literal_eval(_json_constants(source))), value), source


class _JsonConstants(ast.NodeTransformer):
    """`null` / `true` / `false`, which the format accepts and Python does not, as Python constants."""

    def visit_Name(self, node: ast.Name) -> ast.AST:
        values = {"null": None, "true": True, "false": False}
        return ast.Constant(values[node.id]) if node.id in values else node


def _json_constants(source: str) -> ast.AST:
    return _JsonConstants().visit(ast.parse(f"({source})", mode="eval"))  # inside f(..), as in a call


def _lists(value: object) -> object:
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


def test_inputs_are_reproducible_from_seed_and_index() -> None:
    for fmt in fuzz.FORMATS:
        for index in (0, 7, 1234):
            assert fuzz.make_case(fmt, 3, index)[0].text == fuzz.make_case(fmt, 3, index)[0].text


def test_ddmin_finds_the_two_characters_that_matter() -> None:
    units = list("abcXdefghijYklm")
    found = fuzz.ddmin(units, lambda u: "X" in u and "Y" in u, deadline=float("inf"))
    assert found == ["X", "Y"]


def test_mutations_keep_text_a_str_without_raising() -> None:
    rng = random.Random(5)
    for fmt in fuzz.FORMATS:
        for mutation in fuzz._MUTATION_FUNCS:
            for text in ("", "x", fuzz.gen_document(fuzz.FastRandom(rng.randrange(2**32)), fmt).text):
                assert isinstance(mutation(fuzz.FastRandom(rng.randrange(2**32)), text, fmt), str)
