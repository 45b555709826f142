"""Demo: a real vLLM server on this CPU with SmolLM2-135M, our `hermes_json` parser and template.

Sends one non-streamed and one streamed request with tools and prints the tool calls the client gets.
SmolLM2-135M is too small to call tools on its own, so the demo pins its output to a realistic raw
tool-call text through vLLM's structured outputs; the detokenizer, the serving layer and our parser
all run for real on the resulting token stream. A third request asks the model unforced, to show
what it writes by itself.

    python scripts/demo.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from prepare_model import ensure_model
from sample_tools import GET_WEATHER
from toolcall_parsers.toolbox.forced import forced_body
from vllm_server import SERVED_NAME, vllm_server

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [GET_WEATHER]
MESSAGES = [{"role": "user", "content": "What's the weather in Paris and in Tōkyō?"}]
RAW = (
    "Let me check both cities.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Tōkyō"}}\n</tool_call>'
)


def main() -> None:
    from openai import OpenAI

    args = ["--enable-auto-tool-choice", "--tool-call-parser", "hermes_json"]
    args += ["--chat-template", str(ROOT / "chat_templates" / "hermes_json.jinja")]
    print("starting vllm serve (CPU) with --tool-call-parser hermes_json ...", flush=True)
    with vllm_server(ensure_model(), args) as base_url:
        client = OpenAI(base_url=base_url, api_key="unused")
        pinned = forced_body(RAW)
        common = {"model": SERVED_NAME, "messages": MESSAGES, "tools": TOOLS, "temperature": 0, "max_tokens": 200}

        print("\nmodel output (pinned):\n" + RAW)
        message = client.chat.completions.create(**common, extra_body=pinned).choices[0]
        print(f"\n== non-streamed (finish_reason={message.finish_reason})")
        print(f"content: {message.message.content!r}")
        for call in message.message.tool_calls or []:
            print(f"tool call {call.id}: {call.function.name}({call.function.arguments})")

        print("\n== streamed, delta by delta")
        finish = None
        for chunk in client.chat.completions.create(**common, extra_body=pinned, stream=True):
            choice = chunk.choices[0]
            finish = choice.finish_reason or finish
            if choice.delta.content:
                print(f"content   {choice.delta.content!r}")
            for call in choice.delta.tool_calls or []:
                head = f"call {call.index} {call.id} {call.function.name}" if call.id else f"call {call.index} args"
                print(f"{head:<45} {json.dumps(call.function.arguments or '', ensure_ascii=False)}")
        print(f"finish_reason={finish}")

        free = client.chat.completions.create(**common).choices[0]
        print(f"\n== unforced SmolLM2-135M (finish_reason={free.finish_reason})")
        print(f"content: {free.message.content!r}")
        for call in free.message.tool_calls or []:
            print(f"tool call: {call.function.name}({call.function.arguments})")
    print("\nserver stopped.")


if __name__ == "__main__":
    main()
