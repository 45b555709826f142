"""docs/engine-names.md is written by scripts/engine_names.py from the installed engines' registries
and each format's spec: every name either engine registers is listed, with ours or why none yet."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("vllm")
pytest.importorskip("sglang")

import engine_names
from toolcall_parsers.formats import FORMATS


def test_the_committed_page_is_what_the_script_writes(capsys: pytest.CaptureFixture[str]) -> None:
    page = engine_names.PAGE.read_text(encoding="utf-8")
    vllm_version = re.search(r"^## vLLM (\S+)$", page, re.MULTILINE)
    installed = engine_names.render(FORMATS, [], []).split("## vLLM ")[1].split("\n")[0]
    if vllm_version is None or vllm_version.group(1) != installed:
        pytest.skip(f"the page is for vLLM {vllm_version and vllm_version.group(1)}, this is {installed}")
    assert engine_names.main(["--check"]) == 0, capsys.readouterr().err


def test_every_engine_name_is_listed_with_ours_or_a_reason() -> None:
    vllm, sglang = engine_names.engine_names()
    page = engine_names.render(FORMATS, vllm, sglang)
    for name, fmt in FORMATS.items():
        for engine_name in fmt.vllm_names:
            assert f"| `{engine_name}` | [`{name}`](formats.md#{name}) |" in page.split("## SGLang")[0]
        for engine_name in fmt.sglang_names:
            assert f"| `{engine_name}` | [`{name}`](formats.md#{name}) |" in page.split("## SGLang")[1]
    for engine_name in [*vllm, *sglang]:
        assert re.search(rf"^\| `{re.escape(engine_name)}` \| (\[`\w+`\]|- \| \S)", page, re.MULTILINE), engine_name
    assert "| `hf` | - | a generic mechanism" in page and "| `response_template` | - | a generic mechanism" in page
