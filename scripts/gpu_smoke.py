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
    python scripts/gpu_smoke.py --engine sglang --model Qwen/Qwen2.5-7B-Instruct --parser hermes_json --required
    python scripts/gpu_smoke.py --engine sglang --model MiniMaxAI/MiniMax-M2 --parser minimax_xml \\
        --extra "--reasoning-parser minimax"

It starts `vllm serve` (or `python -m sglang.launch_server`, which loads our `sglang.srt.plugins`
entry point before parsing its arguments) with `--tool-call-parser PARSER` and the format's template
(unless `--model-template` keeps the model's own), asks for the weather in two cities, streamed and
not, and checks that both answers hold calls to `get_weather` with a `city` and the same calls in
both. `--required` also asks with `tool_choice="required"` (our format's decoding constraint).
"""

from __future__ import annotations

import argparse
import contextlib
import json
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

from sample_tools import GET_WEATHER
from vllm_server import SERVED_NAME, free_port, vllm_server

TOOLS = [GET_WEATHER]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris and in Tokyo? Use the tool."}]


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
    from openai import OpenAI
    from toolcall_parsers import get_format

    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--model", required=True)
    cli.add_argument("--parser", required=True)
    cli.add_argument("--model-template", action="store_true", help="keep the model's own chat template")
    cli.add_argument("--extra", default="", help="more server arguments, one string")
    cli.add_argument("--engine", choices=["vllm", "sglang"], default="vllm")
    cli.add_argument("--required", action="store_true", help='also check tool_choice="required"')
    args = cli.parse_args()

    serve_args = ["--tool-call-parser", args.parser, *shlex.split(args.extra)]
    if not args.model_template:
        serve_args += ["--chat-template", str(get_format(args.parser).template_path)]
    if args.engine == "vllm":
        server = vllm_server(Path(args.model), ["--enable-auto-tool-choice", *serve_args], timeout=1800)
    else:
        server = sglang_server(args.model, serve_args, timeout=1800)
    with server as base_url:
        client = OpenAI(base_url=base_url, api_key="unused")
        common = {"model": SERVED_NAME, "messages": MESSAGES, "tools": TOOLS, "temperature": 0, "max_tokens": 512}
        message = client.chat.completions.create(**common).choices[0].message
        complete = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        streamed: dict[int, list[str]] = {}
        for chunk in client.chat.completions.create(**common, stream=True):
            for call in chunk.choices[0].delta.tool_calls or [] if chunk.choices else []:
                entry = streamed.setdefault(call.index, [call.function.name or "", ""])
                entry[1] += call.function.arguments or ""
        streamed_calls = [(name, json.loads(arguments)) for name, arguments in streamed.values()]
        required = None
        if args.required:
            forced = client.chat.completions.create(**common, tool_choice="required").choices[0].message
            required = [(c.function.name, json.loads(c.function.arguments)) for c in forced.tool_calls or []]
    print("non-streamed:", complete, "content:", repr(message.content))
    print("streamed:    ", streamed_calls)
    ok = bool(complete) and all(n == "get_weather" and "city" in a for n, a in complete) and complete == streamed_calls
    if required is not None:
        print("required:    ", required)
        ok = ok and bool(required) and all(n == "get_weather" and "city" in a for n, a in required)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
