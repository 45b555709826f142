"""Every captured or synthetic output in tests/corpus, in every chunking: whole, char by char,
random splits, and the token deltas of real tokenizers. All must give the expected result and the
same events."""

from __future__ import annotations

import pytest
from helpers import (
    CORPUS_DIR,
    char_chunks,
    corpus_cases,
    corpus_ids,
    load_corpus,
    random_chunks,
    result_of,
    run_chunks,
    summary,
    token_chunks,
)
from toolcall_parsers import FORMATS

CASES = corpus_cases()


@pytest.mark.parametrize(("fmt", "case"), CASES, ids=corpus_ids(CASES))
def test_corpus_case(fmt, case, codecs):
    text, tools = case["text"], case.get("tools")
    chunkings = {"whole": [text], "chars": char_chunks(text)}
    for seed in range(3):
        chunkings[f"random{seed}"] = random_chunks(text, seed)
    for name, (encode, decode) in codecs.items():
        chunkings[f"tokens:{name}"] = token_chunks(encode, decode, text)
    reference = run_chunks(fmt, chunkings["whole"], tools)
    assert summary(result_of(reference)) == case["expected"]
    if "expected_ids" in case:  # model-written ids the format keeps
        assert [c.id for c in result_of(reference).calls] == case["expected_ids"]
    for mode, chunks in chunkings.items():
        assert run_chunks(fmt, chunks, tools) == reference, mode


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_has_its_corpus_file_template_and_outside_cases(fmt):
    """A format is its module, its template and its corpus file (docs/adding-a-format.md); the corpus
    holds at least 30 cases (the compact `tagged` 25), each with its source, and not only cases our
    writer made: some come from outside the parser (engine tests, reports, the model's template)."""
    assert (CORPUS_DIR / f"{fmt}.jsonl").is_file(), f"no tests/corpus/{fmt}.jsonl"
    assert FORMATS[fmt].template_path.is_file()
    cases = load_corpus(fmt)
    assert len(cases) >= (25 if fmt == "tagged" else 30)
    assert all(case["source"] for case in cases)
    ours = ("ours", "synthetic", "hostile", "bounds")
    assert any(not case["source"].lower().startswith(ours) for case in cases), "no case from outside the parser"


# Tests and tools that iterate `FORMATS` (issue 18): none lists formats by hand. A table keyed by
# format is allowed only for extras some formats have (each checked to name registered formats).
ITERATING = ["tests/test_corpus.py", "tests/test_templates.py", "tests/test_properties.py", "tests/e2e.py"]
ITERATING += ["tests/test_e2e_inprocess.py", "tests/test_e2e_sglang_serving.py", "tests/test_e2e_load.py"]
ITERATING += ["tests/test_e2e_hermes_json.py", "tests/test_e2e_auto.py", "scripts/loadtest.py"]
PARTIAL_TABLES = {"HAND_WRITTEN_BLOCKS", "EXTRA", "TURNS", "PROSE"}


def test_nothing_lists_the_formats_by_hand():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    found = []
    for rel in ITERATING:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        names = {
            id(node.value): target.id
            for node in ast.walk(tree)
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else None
            if isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            if not items:
                continue
            listed = [i.value for i in items if isinstance(i, ast.Constant) and i.value in FORMATS]
            if len(listed) >= 3 and not (isinstance(node, ast.Dict) and names.get(id(node)) in PARTIAL_TABLES):
                found.append(f"{rel}:{node.lineno} {listed}")
    assert not found, found
