"""How often a real model's calls validate against their schema, with strict tool calling and without,
in a real `vllm serve` per format (CPU build, SmolLM2 unforced, sampled).

For each format a server runs with `--tool-call-parser FORMAT` and the format's template, and the same
request (three example calls in history, then the same ask) is sent with several seeds, streamed and
not, in three settings:

- `required`: `tool_choice="required"`, strict tools, `parallel_tool_calls=false` (the format's own
  grammar from the first token, at most one call);
- `strict auto`: `tool_choice="auto"`, strict tools (free text; once the model opens a call, the call
  of a declared tool with arguments pinned to the schema);
- `free auto`: `tool_choice="auto"`, the same tools without `strict` (no constraint: the baseline).

A call counts as valid when its arguments are JSON and validate with `jsonschema` against the tool's
parameters. Each cell gives the responses that held a call (`with/responses`) and the calls that
validated (`valid/calls`); `required` also names any response with more than one call.

    python scripts/strict_rates.py [--formats hermes_json,...] [--seeds 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jsonschema
import openai
from prepare_model import ensure_model
from toolcall_parsers.formats import FORMATS
from toolcall_parsers.toolbox.openai_stream import fold_stream
from vllm_server import SERVED_NAME, vllm_server

ROOT = Path(__file__).resolve().parent.parent
PARAMETERS = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": ["Paris", "Tokyo", "Lima"]},
        "days": {"type": "integer"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["city", "days", "unit"],
    "additionalProperties": False,
}
SEARCH = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
    "additionalProperties": False,
}


def _example(index: int, city: str, days: int) -> list[dict[str, Any]]:
    """One earlier turn: the ask, the call (the template writes it in the format), its result."""
    arguments = json.dumps({"city": city, "days": days})
    call = {"id": f"call_{index}", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    return [
        {"role": "user", "content": f"Use the get_weather tool: {city}, {days} days."},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "ok"},
    ]


MESSAGES = [
    *_example(1, "Tokyo", 2),
    *_example(2, "Lima", 5),
    *_example(3, "Tokyo", 1),
    {"role": "user", "content": "Use the get_weather tool: Paris, 3 days, in celsius."},
]
"""Three earlier calls in history, then the same ask: a model this small calls a tool after examples,
rarely from the system prompt alone. The examples leave out `unit`, which the schema requires: the
model copying them writes a call that does not validate unless decoding holds it to the schema."""
MAX_TOKENS = 300  # the verbose formats' calls (XTML, DSML) take over 150 of SmolLM2's tokens
Call = tuple[str, str]
SETTINGS = {
    "required": {"tool_choice": "required", "parallel_tool_calls": False, "strict": True},
    "strict auto": {"tool_choice": "auto", "strict": True},
    "free auto": {"tool_choice": "auto", "strict": False},
}


def tools(strict: bool) -> list[dict[str, Any]]:
    def tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
        function = {"name": name, "description": description, "parameters": parameters}
        return {"type": "function", "function": {**function, "strict": True} if strict else function}

    return [tool("get_weather", "The forecast for a city", PARAMETERS), tool("search", "Search the web", SEARCH)]


SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in tools(False)}


def valid(name: str, arguments: str) -> bool:
    try:
        jsonschema.validate(json.loads(arguments), SCHEMAS[name])
    except (KeyError, ValueError, jsonschema.ValidationError):
        return False
    return True


def ask(client: openai.OpenAI, setting: dict[str, Any], seed: int, streamed: bool) -> tuple[list[Call], str | None]:
    """The calls of one sampled response, as (name, arguments), and its finish reason."""
    options = {k: v for k, v in setting.items() if k != "strict"}
    common = dict(
        model=SERVED_NAME, messages=MESSAGES, tools=tools(setting["strict"]), temperature=0.8, seed=seed,
        max_tokens=MAX_TOKENS, **options,
    )  # fmt: skip
    if streamed:
        fold = fold_stream(client.chat.completions.create(stream=True, **common))
        return [(c.name, c.arguments) for c in fold.calls], fold.finish
    choice = client.chat.completions.create(**common).choices[0]
    return [(c.function.name, c.function.arguments) for c in choice.message.tool_calls or []], choice.finish_reason


def measure(fmt: str, seeds: int, model_dir: Path) -> dict[str, dict[str, int]]:
    args = ["--enable-auto-tool-choice", "--tool-call-parser", fmt]
    args += ["--chat-template", str(ROOT / "chat_templates" / f"{fmt}.jinja")]
    rows: dict[str, dict[str, int]] = {}
    with vllm_server(model_dir, args) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="unused", timeout=300)
        for label, setting in SETTINGS.items():
            row = {"responses": 0, "with_calls": 0, "calls": 0, "valid": 0, "over_one": 0, "cut": 0}
            for seed in range(seeds):
                for streamed in (False, True):
                    calls, finish = ask(client, setting, seed, streamed)
                    row["responses"] += 1
                    row["cut"] += finish == "length"
                    row["with_calls"] += bool(calls)
                    row["calls"] += len(calls)
                    row["valid"] += sum(valid(name, arguments) for name, arguments in calls)
                    row["over_one"] += len(calls) > 1
            rows[label] = row
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()
    model_dir = ensure_model()
    results: dict[str, Any] = {}
    print("| format | required (strict, one call) | strict auto | free auto |")
    print("|---|---|---|---|")
    for fmt in options.formats.split(","):
        started = time.monotonic()
        rows = results[fmt] = measure(fmt, options.seeds, model_dir)
        cells = []
        for label, row in rows.items():
            cell = f"{row['with_calls']}/{row['responses']}, {row['valid']}/{row['calls']}"
            if row["over_one"] and label == "required":
                cell += f" ({row['over_one']} with more than one call)"
            if row["cut"]:
                cell += f" ({row['cut']} cut by max_tokens)"
            cells.append(cell)
        print(f"| {fmt} | " + " | ".join(cells) + f" |  <!-- {time.monotonic() - started:.0f} s -->", flush=True)
    if options.json:
        options.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
