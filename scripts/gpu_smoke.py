"""GPU smoke test: a real model, unforced, through our parser. Run it on a GPU machine with vLLM or SGLang.

This machine has no GPU, so this script is not part of the test suite; it is what an operator runs
once on their own box to see a real model call tools through our parser and template:

    pip install vllm toolcall-parsers openai
    python scripts/gpu_smoke.py --model Qwen/Qwen2.5-7B-Instruct --parser hermes_json
    python scripts/gpu_smoke.py --model MiniMaxAI/MiniMax-M2 --parser minimax_xml \\
        --extra "--reasoning-parser minimax_m2"
    python scripts/gpu_smoke.py --model mistralai/Mistral-Small-3.2-24B-Instruct-2506 --parser mistral_json \\
        --extra "--tokenizer-mode mistral"

    pip install "sglang[all]" toolcall-parsers openai
    python scripts/gpu_smoke.py --engine sglang --model Qwen/Qwen2.5-7B-Instruct --parser hermes_json
    python scripts/gpu_smoke.py --engine sglang --model MiniMaxAI/MiniMax-M2 --parser minimax_xml \\
        --extra "--reasoning-parser minimax"

It starts `vllm serve` (or `python -m sglang.launch_server`, which loads our `sglang.srt.plugins`
entry point before parsing its arguments) with `--tool-call-parser PARSER` and the format's template
(unless `--model-template` keeps the model's own, or PARSER is `auto`), then runs
`toolcall-parsers smoke` against it: one call, two parallel calls, a long string argument and a
prompt that needs no tool, each streamed and not (see the README's toolbox section). Its exit status
is smoke's: 0 when every row agrees.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vllm_server import SERVED_NAME, free_port, vllm_server


@contextlib.contextmanager
def sglang_server(model: str, extra_args: Sequence[str], timeout: float) -> Iterator[str]:
    """`python -m sglang.launch_server` in its own process group; waits for /health, ends the group."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "sglang.launch_server", "--model-path", model, "--served-model-name", SERVED_NAME,
        "--host", "127.0.0.1", "--port", str(port), *extra_args,
    ]  # fmt: skip
    log = tempfile.NamedTemporaryFile(prefix="sglang-serve-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = Path(log.name).read_text(errors="replace")[-4000:]
                raise RuntimeError(f"sglang server not healthy (exit {proc.returncode}); log {log.name}:\n{tail}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r,
            ):
                if r.status == 200:
                    break
            time.sleep(2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        log.close()


def main() -> int:
    from toolcall_parsers import get_format
    from toolcall_parsers.cli import main as toolcall_parsers

    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--model", required=True)
    cli.add_argument("--parser", required=True, help="our format, or auto")
    cli.add_argument("--model-template", action="store_true", help="keep the model's own chat template")
    cli.add_argument("--extra", default="", help="more server arguments, one string")
    cli.add_argument("--engine", choices=["vllm", "sglang"], default="vllm")
    cli.add_argument("--force", action="store_true", help="pin the outputs (vLLM structured outputs)")
    args = cli.parse_args()

    serve_args = ["--tool-call-parser", args.parser, *shlex.split(args.extra)]
    if not args.model_template and args.parser != "auto":
        serve_args += ["--chat-template", str(get_format(args.parser).template_path)]
    if args.engine == "vllm":
        server = vllm_server(Path(args.model), ["--enable-auto-tool-choice", *serve_args], timeout=1800)
    else:
        server = sglang_server(args.model, serve_args, timeout=1800)
    with server as base_url:
        smoke = ["smoke", "--base-url", base_url, "--model", SERVED_NAME]
        if args.parser != "auto":
            smoke += ["--parser", args.parser]
        return toolcall_parsers(smoke + (["--force"] if args.force else []))


if __name__ == "__main__":
    sys.exit(main())
