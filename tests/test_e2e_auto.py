"""End to end, `--tool-call-parser auto`: a real `vllm serve` (CPU build) with SmolLM2-135M and one
of our templates given as `--chat-template`; the `auto` parser must detect that template's format
and serve its forced outputs exactly as that format's own parser does. Two formats, two servers
(hermes_json: vLLM ids; mistral_json: its own nine-character ids). The hermes_json server also runs
`toolcall-parsers smoke --force` and `toolcall-parsers capture`, as an operator would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("vllm")

import openai
from e2e import MODEL, TOOLS, call_pairs, complete, stream
from toolcall_parsers import get_format, parse
from vllm_server import vllm_server

pytestmark = pytest.mark.e2e

CALLS = [("get_weather", {"city": "Paris"}), ("search", {"query": 'say "hi" \\ ü'})]


def _serve(fmt: str, model_dir: Path):
    args = ["--enable-auto-tool-choice", "--tool-call-parser", "auto"]
    args += ["--chat-template", str(get_format(fmt).template_path)]
    return vllm_server(model_dir, args)


def _raw(fmt: str) -> str:
    from toolcall_parsers.toolbox.forced import write_calls

    return "Let me check.\n" + write_calls(fmt, CALLS, tools=TOOLS)


def _cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "toolcall_parsers", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def hermes_server(smollm2_dir):
    with _serve("hermes_json", smollm2_dir) as base_url:
        yield base_url


def _check_forced_calls(client: openai.OpenAI, fmt: str) -> None:
    raw = _raw(fmt)
    expected = parse(fmt, raw, TOOLS)
    assert [(c.name, c.arguments) for c in expected.calls] == CALLS
    choice = complete(client, raw)
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == expected.content == "Let me check."
    assert call_pairs(choice.message.tool_calls) == CALLS
    got = stream(client, raw)
    assert got["finish"] == "tool_calls" and got["content"] == "Let me check."
    assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == CALLS
    plain = "Paris is sunny today."
    assert complete(client, plain).message.content == plain


def test_auto_serves_hermes_json(hermes_server):
    client = openai.OpenAI(base_url=hermes_server, api_key="unused", timeout=300)
    _check_forced_calls(client, "hermes_json")
    ids = [c.id for c in complete(client, _raw("hermes_json")).message.tool_calls]
    assert all(i.startswith("chatcmpl-tool-") for i in ids)  # vLLM's ids, as hermes_json gives


def test_smoke_command_forced(hermes_server):
    out = _cli("smoke", "--base-url", hermes_server, "--model", MODEL, "--parser", "hermes_json", "--force", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] and len(report["rows"]) == 4
    rows = {r["prompt"]: r for r in report["rows"]}
    assert rows["two parallel calls"]["calls"] == [
        ["get_weather", {"city": "Paris"}],
        ["get_weather", {"city": "Tokyo"}],
    ]
    assert rows["no tool needed"]["finish_reason"] == {"non_stream": "stop", "stream": "stop"}
    assert rows["one call"]["first_tool_call_delta_s"] > 0


def test_smoke_command_fails_on_a_mismatched_parser(hermes_server):
    """Forcing tagged text into a server that parses hermes_json: the calls are not found, exit 1."""
    out = _cli("smoke", "--base-url", hermes_server, "--model", MODEL, "--parser", "tagged", "--force")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED" in out.stdout and "one call" in out.stdout


def test_capture_command_is_resumable(hermes_server, tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('Say hi.\n{"id": "weather", "prompt": "What is the weather in Paris?"}\n', encoding="utf-8")
    out = tmp_path / "captured.jsonl"
    args = ["capture", "--base-url", hermes_server, "--model", MODEL, "--prompts", str(prompts), "--out", str(out)]
    args += ["--parser", "hermes_json", "--max-tokens", "24"]
    first = _cli(*args)
    assert first.returncode == 0, first.stderr
    entries = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [e["id"] for e in entries] == ["p1", "weather"]
    for entry in entries:
        assert entry["text"] and entry["tools"] and "tool_choice=none" in entry["source"]
        assert entry["expected"] == {
            "content": parse("hermes_json", entry["text"], entry["tools"]).content,
            "calls": [
                {"name": c.name, "arguments": c.arguments}
                for c in parse("hermes_json", entry["text"], entry["tools"]).calls
            ],
        }
    again = _cli(*args)
    assert again.returncode == 0 and "skipped 2" in again.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


def test_auto_serves_mistral_json(smollm2_dir):
    with _serve("mistral_json", smollm2_dir) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="unused", timeout=300)
        raw = "Let me check.\n" + "".join(
            f"[TOOL_CALLS]{name}[ARGS]{json.dumps(arguments)}" for name, arguments in CALLS
        )
        choice = complete(client, raw)
        assert choice.message.content == "Let me check."
        assert call_pairs(choice.message.tool_calls) == CALLS
        ids = [c.id for c in choice.message.tool_calls]
        assert all(len(i) == 9 and i.isalnum() for i in ids)  # Mistral's ids: auto is mistral_json
        got = stream(client, raw)
        assert [(c["name"], json.loads(c["arguments"])) for c in got["calls"]] == CALLS
