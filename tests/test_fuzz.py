"""Bounded fuzzing in the test suite: scripts/fuzz.py with a fixed seed, 2,000 inputs per format.

Why here as well as in the script: the script hunts for minutes; this keeps a fixed slice of that hunt
in every test run, so a regression in any invariant shows up without anyone running the fuzzer. Each
(format, invariant) pair is its own test, so a failure names the invariant; the assertion message
holds the shrunk reproducers (exact text, chunking, tools), ready to paste into a unit test.

Every registered format (`FORMATS`) is fuzzed; a second, smaller run per format uses only blocks
written by the spec's writer, as a format without a grammar-aware generator gets them, so that path
is known to hold (and to find nothing) before a new format relies on it.

Pairs in FAILING_TODAY are known failures, marked xfail (not strict) with their reason.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Iterator

import pytest
from fuzzing import generate, invariants, mutate, run, shrink, values
from helpers import DERIVED, needs, subject
from toolcall_parsers.formats import FORMATS

SEED = 20260601
INPUTS = 2000
WRITTEN_INPUTS = 400

FAILING_TODAY: dict[tuple[str, str], str] = {}
"""(format, invariant) pairs known to fail, marked xfail with the reason; empty: every format holds them."""
CHECKED = [name for name in invariants.INVARIANTS if name not in invariants.REPORT_ONLY]


def _options(**overrides: object) -> invariants.Options:
    return invariants.Options(
        char_every=4, shrink_seconds=0.3, max_per_invariant=1, probe_every=0, progress=False, out=None, **overrides
    )


@pytest.fixture(scope="module")
def fuzz_stats() -> Callable[[str], run.Stats]:
    """Fuzz each format once per module run (lazily), with the log check on and short shrinking."""
    cache: dict[str, run.Stats] = {}
    options = _options()

    def stats(fmt: str) -> run.Stats:
        if fmt not in cache:
            cache[fmt] = run.fuzz_format(fmt, options, seed=SEED, inputs=INPUTS)
        return cache[fmt]

    return stats


def _failures(stats: run.Stats, invariant: str) -> str:
    count = stats.counts.get(invariant, 0)
    examples = "\n".join(run.render(r) for r in stats.saved if r["invariant"] == invariant)
    return f"{count} of {stats.inputs} inputs break {invariants.INVARIANTS[invariant]}\n{examples}"


def _cases() -> Iterator[object]:
    for fmt in FORMATS:
        for invariant in CHECKED:
            reason = FAILING_TODAY.get((fmt, invariant))
            marks = [pytest.mark.xfail(reason=reason, strict=False)] if reason else []
            yield pytest.param(fmt, invariant, id=f"{fmt}-{invariant}", marks=marks)


@pytest.mark.parametrize(("fmt", "invariant"), list(_cases()))
def test_fuzz_holds_invariant(fuzz_stats: Callable[[str], run.Stats], fmt: str, invariant: str) -> None:
    stats = fuzz_stats(fmt)
    assert stats.inputs == INPUTS
    assert stats.counts.get(invariant, 0) == 0, _failures(stats, invariant)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_written_blocks_alone_hold_every_invariant(fmt: str) -> None:
    """What a format with no grammar-aware generator is fuzzed with: its writer's blocks only."""
    stats = run.fuzz_format(fmt, _options(written_only=True), seed=SEED, inputs=WRITTEN_INPUTS)
    assert stats.inputs == WRITTEN_INPUTS
    for invariant in CHECKED:
        assert stats.counts.get(invariant, 0) == 0, _failures(stats, invariant)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_written_documents_hold_calls(fmt: str) -> None:
    """The written generator makes valid documents with calls in them (else it would test nothing)."""
    cases = [mutate.make_case(fmt, SEED, index, written_only=True)[0] for index in range(200)]
    documents = [c for c in cases if c.expected is not None]
    assert sum(len(c.expected[1]) for c in documents if c.expected) >= 50


def test_python_literals_mean_what_the_generator_says() -> None:
    """The llama_pythonic expectations are only as good as the literal renderer: Python agrees."""
    rng = values.FastRandom(1)
    for _ in range(3000):
        value = values.gen_json(rng)
        source = values.py_literal(rng, value)
        assert invariants.same(_lists(ast.literal_eval(_json_constants(source))), value), source


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
    for fmt in FORMATS:
        for index in (0, 7, 1234):
            assert mutate.make_case(fmt, 3, index)[0].text == mutate.make_case(fmt, 3, index)[0].text


def test_ddmin_finds_the_two_characters_that_matter() -> None:
    units = list("abcXdefghijYklm")
    found = shrink.ddmin(units, lambda u: "X" in u and "Y" in u, deadline=float("inf"))
    assert found == ["X", "Y"]


def test_mutations_keep_text_a_str_without_raising() -> None:
    rng = random.Random(5)
    for fmt in FORMATS:
        for mutation in mutate._MUTATION_FUNCS:
            for text in ("", "x", generate.gen_document(values.FastRandom(rng.randrange(2**32)), fmt).text):
                assert isinstance(mutation(values.FastRandom(rng.randrange(2**32)), text, fmt), str)


def test_loose_content_allows_only_whitespace_where_a_call_was() -> None:
    assert generate.content_matches("a\n\nb c", ["a", "b c"])
    assert generate.content_matches("ab c", ["a", "b c"])
    assert not generate.content_matches("a x b c", ["a", "b c"])
    assert not generate.content_matches("a b", ["a", "b c"])
    assert generate.content_matches(None, [])
    assert not generate.content_matches("a", [])


@needs("transformers")
@pytest.mark.parametrize("name", DERIVED)
def test_derived_formats_hold_every_invariant(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Formats compiled from a template (markers renamed to strings no format of ours uses) are
    fuzzed with their writer's blocks, registered under their test name for the run."""
    monkeypatch.setitem(FORMATS, name, subject(name))
    cases = [mutate.make_case(name, SEED, index, written_only=True)[0] for index in range(200)]
    assert sum(len(c.expected[1]) for c in cases if c.expected) >= 50  # the run below reads calls
    stats = run.fuzz_format(name, _options(written_only=True), seed=SEED, inputs=WRITTEN_INPUTS)
    assert stats.inputs == WRITTEN_INPUTS
    for invariant in CHECKED:
        assert stats.counts.get(invariant, 0) == 0, _failures(stats, invariant)
