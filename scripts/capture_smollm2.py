"""Capture what SmolLM2-135M itself writes when prompted with our `tagged` template.

Starts a real `vllm serve` (CPU) with `--tool-call-parser tagged` and `chat_templates/tagged.jinja`,
sends 20 fixed prompts with tools at temperature 0, unforced, and keeps the raw text of each answer
(`tool_choice="none"` makes our parser hand the text back untouched, while the template still
renders the tools). Each answer is then parsed offline; the script prints how many hold at least one
parseable call, and with `--write` appends the answers to tests/corpus/tagged.jsonl as real model
output (their expected result is what the parser reads, to be reviewed before committing).

    python scripts/capture_smollm2.py [--write]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from prepare_model import ensure_model
from sample_tools import GET_WEATHER, SEARCH_WEB, SEND_EMAIL
from vllm_server import SERVED_NAME, vllm_server

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [GET_WEATHER, SEARCH_WEB, SEND_EMAIL]
PROMPTS = [
    "What is the weather in Paris?",
    "Get the weather for Tokyo.",
    "Is it raining in London right now?",
    "Weather in Berlin and in Madrid, please.",
    "Search the web for the latest Python release.",
    "Find news about electric cars.",
    "Look up the population of Canada.",
    "Send an email to bob@example.com with the subject Lunch.",
    "Email alice@example.com: subject Report, body The report is ready.",
    "Tell my boss (boss@example.com) I am late, subject Late.",
    "What's the temperature in Zürich?",
    "Check the weather in São Paulo.",
    "Search for 'how to bake bread'.",
    "I need the weather for New York City.",
    "Use the search tool to find the tallest building.",
    "Call get_weather for Rome.",
    "What is 2 + 2?",
    "Say hello.",
    "Weather in Oslo? Then search for Oslo museums.",
    "Please send an email to team@example.com with subject Meeting and body 3pm today.",
]


def main() -> None:
    from openai import OpenAI
    from toolcall_parsers import parse

    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--write", action="store_true", help="append the answers to tests/corpus/tagged.jsonl")
    args = cli.parse_args()
    serve_args = ["--enable-auto-tool-choice", "--tool-call-parser", "tagged"]
    serve_args += ["--chat-template", str(ROOT / "chat_templates" / "tagged.jinja")]
    answers = []
    with vllm_server(ensure_model(), serve_args) as base_url:
        client = OpenAI(base_url=base_url, api_key="unused")
        for prompt in PROMPTS:
            response = client.chat.completions.create(
                model=SERVED_NAME,
                messages=[{"role": "user", "content": prompt}],
                tools=TOOLS,
                tool_choice="none",
                temperature=0,
                max_tokens=120,
            )
            answers.append((prompt, response.choices[0].message.content or ""))
    cases, parsed = [], 0
    for i, (prompt, raw) in enumerate(answers):
        result = parse("tagged", raw, tools=TOOLS)
        parsed += bool(result.calls)
        print(f"{'CALL' if result.calls else 'text'} | {prompt} | {raw[:100]!r}")
        cases.append(
            {
                "id": f"smollm2-capture-{i:02d}",
                "source": f"capture: SmolLM2-135M-Instruct, tagged template, temperature 0, prompt {prompt!r}",
                "classes": ["capture"],
                "tools": TOOLS,
                "text": raw,
                "expected": {
                    "content": result.content,
                    "calls": [{"name": c.name, "arguments": c.arguments} for c in result.calls],
                },
            }
        )
    print(f"\n{parsed}/{len(answers)} answers hold at least one parseable call")
    if args.write:
        with open(ROOT / "tests" / "corpus" / "tagged.jsonl", "a", encoding="utf-8") as corpus:
            for case in cases:
                corpus.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
