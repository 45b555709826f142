"""Every captured or synthetic output in tests/corpus, in every chunking: whole, char by char,
random splits, and the token deltas of real tokenizers. All must give the expected result and the
same events."""

from __future__ import annotations

import pytest
from helpers import char_chunks, load_corpus, random_chunks, result_of, run_chunks, summary, token_chunks

FORMATS = [
    "hermes_json",
    "llama_json",
    "llama_pythonic",
    "minimax_xml",
    "mistral_json",
    "tagged",
    "markdown_tools",
    "xml_tools",
    "qwen_xml",
]
CASES = [(fmt, case) for fmt in FORMATS for case in load_corpus(fmt)]


@pytest.mark.parametrize(("fmt", "case"), CASES, ids=[f"{f}:{c['id']}" for f, c in CASES])
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


def test_corpus_sizes():
    for fmt in FORMATS:
        cases = load_corpus(fmt)
        assert len(cases) >= (25 if fmt == "tagged" else 30)
        assert all(case["source"] for case in cases)
