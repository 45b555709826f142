"""The command line, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """No timeout: a loaded machine must not fail a test (a 60 s one timed `detect` out), and no
    command here waits on anything but its input and the unreachable port 9, refused at once."""
    cmd = [sys.executable, "-m", "toolcall_parsers", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True)


def test_template_path_points_at_the_shipped_template():
    out = run("template", "hermes_json")
    assert out.returncode == 0
    assert Path(out.stdout.strip()).read_text().startswith("{#- toolcall-parsers: hermes_json")


def test_formats_lists_every_format_and_the_engine_parsers_it_replaces():
    from toolcall_parsers import FORMATS

    out = run("formats", "--json")
    rows = {row["name"]: row for row in map(json.loads, out.stdout.splitlines())}
    assert out.returncode == 0 and set(rows) == set(FORMATS)
    assert rows["kimi_json"]["replaces"] == {"vllm": ["kimi_k2"], "sglang": ["kimi_k2"]}
    assert rows["kimi_json"]["models"] == "Kimi K2 / K2.5 / K2.6"
    assert all(row["models"] for row in rows.values())  # every spec says who writes it
    assert "vllm:hermes" in run("formats").stdout


def test_parse_prints_the_result_as_json():
    out = run("parse", "hermes_json", stdin='Hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
    result = json.loads(out.stdout)
    assert result["content"] == "Hi"
    assert [(c["name"], c["arguments"]) for c in result["calls"]] == [("f", {"a": 1})]


def test_unknown_format_is_a_clear_error():
    out = run("template", "nope")
    assert out.returncode == 2 and "unknown tool-call format 'nope'" in out.stderr and "hermes_json" in out.stderr


# -- the toolbox -------------------------------------------------------------------------------------

TWO_CALLS = (
    'Hi <tool_call>{"name": "f", "arguments": {"a": "x y z"}}</tool_call>'
    '<tool_call>{"name": "g", "arguments": {}}</tool_call>'
)


def test_parse_stream_chunks_tell_the_same_story():
    out = run("parse", "hermes_json", "--stream", "--chunk", "2", stdin=TWO_CALLS)
    assert out.returncode == 0, out.stderr
    assert [(c["name"], c["arguments"]) for c in json.loads(out.stdout)["calls"]] == [("f", {"a": "x y z"}), ("g", {})]


def test_parse_stream_events_with_real_token_deltas(smollm2_dir):
    out = run("parse", "hermes_json", "--stream", "--tokenizer", str(smollm2_dir), "--events", stdin=TWO_CALLS)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert [e["event"] for e in events] == ["text", *["call_start", "call_args", "call_end"] * 2]
    assert events[0]["text"] == "Hi" and events[1]["name"] == "f"
    deltas = [e["delta"] for e in events]
    assert deltas == sorted(deltas) and deltas[-1] > 10  # real token deltas, numbered in order


def test_parse_marker_without_a_valid_call_fails_with_the_reason():
    text = 'Hi <tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>'
    for extra in ([], ["--stream", "--chunk", "5"]):
        out = run("parse", "hermes_json", *extra, stdin=text)
        assert out.returncode == 1
        assert "holds a call marker but no valid call" in out.stderr and "kept as text" in out.stderr
    assert run("parse", "hermes_json", stdin="no marker at all").returncode == 0


def test_parse_bad_tools_file_or_chunk_is_a_usage_error(tmp_path):
    for content in ("5", '{"a": 1}'):
        tools = tmp_path / "tools.json"
        tools.write_text(content)
        out = run("parse", "llama_json", "--tools", str(tools), stdin="x")
        assert out.returncode == 2 and "expected a JSON list of tools" in out.stderr and "Traceback" not in out.stderr
    for chunk in ("0", "-1"):
        out = run("parse", "llama_json", "--stream", "--chunk", chunk, stdin="ok")
        assert out.returncode == 2 and "--chunk must be at least 1" in out.stderr


def test_parse_stream_options_need_stream():
    out = run("parse", "hermes_json", "--chunk", "3", stdin="x")
    assert out.returncode == 2 and "need --stream" in out.stderr


def test_detect_json_for_our_template_and_for_the_models_own(smollm2_dir):
    from toolcall_parsers import get_format

    template = str(get_format("tagged").template_path)
    out = run("detect", str(smollm2_dir), "--chat-template", template, "--json")
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    assert found["parser"] == "tagged"
    assert found["commands"]["vllm"].endswith(f"--tool-call-parser tagged --chat-template {template}")
    own = run("detect", str(smollm2_dir), "--json")
    assert own.returncode == 1
    report = json.loads(own.stdout)
    assert report["parser"] is None and report["suggested"] and "--chat-template" in report["commands"]["sglang"]


def test_detect_table_names_the_parser(smollm2_dir):
    from toolcall_parsers import get_format

    out = run("detect", str(smollm2_dir), "--chat-template", str(get_format("hermes_json").template_path))
    assert out.returncode == 0 and "hermes_json" in out.stdout and "vllm serve" in out.stdout


def test_detect_unreadable_model_is_a_usage_error(tmp_path):
    out = run("detect", str(tmp_path / "nowhere"))
    assert out.returncode == 2 and out.stderr.startswith("toolcall-parsers: ")


def test_smoke_force_needs_a_parser_and_a_reachable_server():
    out = run("smoke", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--force")
    assert out.returncode == 2 and "--force needs --parser" in out.stderr
    out = run("smoke", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--parser", "hermes_json")
    assert out.returncode == 2 and "cannot reach http://127.0.0.1:9/v1" in out.stderr


def test_capture_rejects_a_bad_prompts_file(tmp_path):
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"id": "a"}\n', encoding="utf-8")
    out = run("capture", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--prompts", str(prompts))
    assert out.returncode == 2 and "needs a `prompt` string or `messages`" in out.stderr
