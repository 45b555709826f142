"""GPU smoke test: a real model, unforced, through our parser. Run it on a GPU machine with vLLM.

This machine has no GPU, so this script is not part of the test suite; it is what an operator runs
once on their own box to see a real model call tools through our parser and template:

    pip install vllm toolcall-parsers openai
    python scripts/gpu_smoke.py --model Qwen/Qwen2.5-7B-Instruct --parser hermes_json
    python scripts/gpu_smoke.py --model MiniMaxAI/MiniMax-M2 --parser minimax_xml \\
        --extra "--reasoning-parser minimax_m2"
    python scripts/gpu_smoke.py --model mistralai/Mistral-Small-3.2-24B-Instruct-2506 --parser mistral_json \\
        --extra "--tokenizer-mode mistral"

It starts `vllm serve` with `--tool-call-parser PARSER` and the format's template (unless
`--model-template` keeps the model's own), asks for the weather in two cities, streamed and not, and
checks that both answers hold calls to `get_weather` with a `city` and the same calls in both.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sample_tools import GET_WEATHER
from vllm_server import SERVED_NAME, vllm_server

TOOLS = [GET_WEATHER]
MESSAGES = [{"role": "user", "content": "What is the weather in Paris and in Tokyo? Use the tool."}]


def main() -> int:
    from openai import OpenAI
    from toolcall_parsers import get_format

    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--model", required=True)
    cli.add_argument("--parser", required=True)
    cli.add_argument("--model-template", action="store_true", help="keep the model's own chat template")
    cli.add_argument("--extra", default="", help="more `vllm serve` arguments, one string")
    args = cli.parse_args()

    serve_args = ["--enable-auto-tool-choice", "--tool-call-parser", args.parser, *shlex.split(args.extra)]
    if not args.model_template:
        serve_args += ["--chat-template", str(get_format(args.parser).template_path)]
    with vllm_server(Path(args.model), serve_args, timeout=1800) as base_url:
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
    print("non-streamed:", complete, "content:", repr(message.content))
    print("streamed:    ", streamed_calls)
    ok = bool(complete) and all(n == "get_weather" and "city" in a for n, a in complete) and complete == streamed_calls
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
