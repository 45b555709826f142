"""docs/engine-names.md is written by scripts/engine_names.py from the installed engines' registries
and each format's spec: every name either engine registers is listed, with ours or why none yet."""

from __future__ import annotations

import re
from pathlib import Path

import engine_names
import pytest
from helpers import needs
from toolcall_parsers.formats import FORMATS

pytestmark = needs("vllm", "sglang")


def _page() -> str:
    return engine_names.PAGE.read_text(encoding="utf-8")


def test_the_committed_page_is_what_the_script_writes(capsys: pytest.CaptureFixture[str]) -> None:
    """Where the installed vLLM is the page's (the page is for the newest release; its unpacked
    wheel, if this machine has it, is read as `scripts/check_vllm.sh` keeps it)."""
    version = re.search(r"^## vLLM (\S+)$", _page(), re.MULTILINE)
    assert version is not None
    overlay = Path.home() / ".cache" / "toolcall-parsers" / f"vllm-{version.group(1)}"
    args = ["--check", "--vllm", str(overlay)] if (overlay / ".unpacked").exists() else ["--check"]
    if len(args) == 1 and engine_names.vllm_registry()[0] != version.group(1):
        pytest.skip(f"the page is for vLLM {version.group(1)}, not installed or unpacked here")
    assert engine_names.main(args) == 0, capsys.readouterr().err


def test_every_engine_name_is_listed_with_ours_or_a_reason() -> None:
    """The committed page lists every name the installed engines register (a newer vLLM removed
    none), each of ours where its spec claims it, and a reason for the others."""
    _, vllm, sglang = engine_names.engine_names()
    page = _page()
    vllm_part, sglang_part = page.split("## SGLang")
    for name, fmt in FORMATS.items():
        for engine_name in fmt.vllm_names:
            assert f"| `{engine_name}` | [`{name}`](formats.md#{name}) |" in vllm_part
        for engine_name in fmt.sglang_names:
            assert f"| `{engine_name}` | [`{name}`](formats.md#{name}) |" in sglang_part
    for engine_name in vllm:
        assert re.search(rf"^\| `{re.escape(engine_name)}` \| (\[`\w+`\]|- \| \S)", vllm_part, re.MULTILINE), (
            engine_name
        )
    for engine_name in sglang:
        assert re.search(rf"^\| `{re.escape(engine_name)}` \| (\[`\w+`\]|- \| \S)", sglang_part, re.MULTILINE), (
            engine_name
        )
    for reader in ("hf", "beam", "response_template"):
        assert f"| `{reader}` | [`from_response_template`](response-templates.md) |" in page, reader


def test_no_format_of_ours_takes_an_engine_name() -> None:
    """Our names never collide with a name the engines register (the page lists every one, the
    newest vLLM's included): vLLM 0.34 registers `zaya_xml`, so ZAYA1's format is `zyphra_xml`."""
    page = _page()
    for name in FORMATS:
        assert f"| `{name}` |" not in page, name
