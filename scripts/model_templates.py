"""Fetch the real chat templates of the models we serve, offline after the first run.

llama.cpp keeps the chat templates of about seventy models (GLM, Gemma, MiniMax, DeepSeek, Kimi, Ling,
Hunyuan, Granite, ...) in `models/templates/` for its own tests, and the `llama-cpp-python` sdist on
PyPI vendors that folder. This downloads the pinned sdist once (checked against its sha256), keeps
only `models/templates/*.jinja` and prints the folder's path. The templates are the model authors'
(third-party, not committed here); the tests use them to prove `detect` and `auto` on each model's
own template.

    python scripts/model_templates.py [--dest DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.request
from pathlib import Path

VERSION = "0.3.36"
URL = (
    "https://files.pythonhosted.org/packages/ec/e9/e7de2b0463ea3ffbf0ede6cb21b58c1258a8f6521aae45ca773a59fe7cf3/"
    f"llama_cpp_python-{VERSION}.tar.gz"
)
SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
"""Of llama_cpp_python-0.3.36.tar.gz as PyPI serves it; a mismatch stops the fetch."""
MEMBERS = "/vendor/llama.cpp/models/templates/"
DEFAULT_DEST = Path(
    os.environ.get(
        "TOOLCALL_PARSERS_TEMPLATES_DIR", Path.home() / ".cache" / "toolcall-parsers" / f"model-templates-{VERSION}"
    )
)


def fetch(dest: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "sdist.tar.gz"
        with urllib.request.urlopen(URL, timeout=600) as response, archive.open("wb") as out:
            shutil.copyfileobj(response, out)
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SHA256:
            raise SystemExit(f"model_templates: {archive.name} has sha256 {digest}, expected {SHA256}")
        staging = dest.with_name(dest.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                name = member.name
                if member.isfile() and MEMBERS in name and name.endswith(".jinja"):
                    source = tar.extractfile(member)
                    assert source is not None
                    (staging / Path(name).name).write_bytes(source.read())
        staging.rename(dest)


def ensure_templates(dest: Path = DEFAULT_DEST) -> Path:
    """The folder of model templates, fetched on first use."""
    if not dest.is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        fetch(dest)
    return dest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    print(ensure_templates(parser.parse_args().dest))


if __name__ == "__main__":
    main()
