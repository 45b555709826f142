"""The command line, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "toolcall_parsers", *args]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)


def test_template_path_points_at_the_shipped_template():
    out = run("template", "hermes_json")
    assert out.returncode == 0
    assert Path(out.stdout.strip()).read_text().startswith("{#- toolcall-parsers: hermes_json")


def test_parse_prints_the_result_as_json():
    out = run("parse", "hermes_json", stdin='Hi <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>')
    result = json.loads(out.stdout)
    assert result["content"] == "Hi"
    assert [(c["name"], c["arguments"]) for c in result["calls"]] == [("f", {"a": 1})]


def test_unknown_format_is_a_clear_error():
    out = run("template", "nope")
    assert out.returncode == 2 and "unknown tool-call format 'nope'" in out.stderr and "hermes_json" in out.stderr
