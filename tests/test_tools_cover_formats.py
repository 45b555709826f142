"""Every registered format is covered by every performance and robustness tool in scripts/: the
fuzzer's generators, the benchmarks' workloads and the hostile inputs. The tools iterate `FORMATS`
(so that they cover it is no test); these tests fail where what they build for a format does not
work for it, or a hand-made table names a format that is not registered."""

from __future__ import annotations

import json

import bench
import bench_sglang
import hostile_inputs
from fuzzing import blocks, generate, mutate
from toolcall_parsers import parse
from toolcall_parsers.formats import FORMATS


def test_the_fuzzer_generates_calls_for_every_format() -> None:
    covered = set()
    for fmt in FORMATS:
        for index in range(200):
            case = mutate.make_case(fmt, 0, index)[0]
            if case.expected is not None and case.expected[1]:
                covered.add(fmt)
                break
    assert covered == set(FORMATS)


def test_the_fuzzers_own_tables_name_only_registered_formats() -> None:
    for table in (blocks.BLOCKS, generate.PROSE_SNIPPETS, generate.EXTRA_EMPTY_CALLS, generate.EXTRA_LONG_CALLS):
        assert set(table) <= set(FORMATS)


def test_the_benchmarks_hand_tables_name_only_registered_formats() -> None:
    assert set(bench.BUILTINS) <= set(FORMATS)
    assert set(bench_sglang.BUILTINS) <= set(FORMATS)


def test_every_workload_reads_back_as_its_call() -> None:
    code = bench.code_of_length(2000)
    tools = [bench_sglang.WRITE_FILE]
    for name, workload in bench.WORKLOADS.items():
        calls = parse(workload.ours, workload.text(code), tools).calls
        assert [(c.name, json.loads(c.arguments_json)["content"]) for c in calls] == [("write_file", code)], name


def test_the_hostile_inputs_work_for_every_format() -> None:
    """Each format's valid call reads back as one call, its spec gives it hostile shapes, the
    hand-made shapes name registered formats, and no shape is named twice."""
    for fmt, text in hostile_inputs.VALID.items():
        assert len(parse(fmt, text, hostile_inputs.TOOLS).calls) == 1, fmt
    assert all(hostile_inputs.written_hostiles(name, fmt) for name, fmt in FORMATS.items())
    assert {h.fmt for h in hostile_inputs.HAND_MADE} <= set(FORMATS)
    names = [(h.fmt, h.name) for h in hostile_inputs.HOSTILE]
    assert len(names) == len(set(names))


def test_the_engine_names_a_format_replaces_are_registered_and_in_the_readme() -> None:
    """`vllm_names` / `sglang_names` name parsers the installed engines register (or, for vLLM, the
    newest release: docs/engine-names.md is written from its registry), and the README's format
    table shows them (its "replaces" column, vLLM / SGLang)."""
    import re
    from pathlib import Path

    import pytest

    pytest.importorskip("vllm")
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from vllm.tool_parsers import ToolParserManager

    root = Path(__file__).resolve().parent.parent
    newest = (root / "docs" / "engine-names.md").read_text(encoding="utf-8").split("## SGLang")[0]
    vllm_names = set(ToolParserManager.list_registered()) | set(re.findall(r"^\| `([^`]+)` \|", newest, re.M))
    sglang_names = set(FunctionCallParser.ToolCallParserEnum)
    readme = (root / "README.md").read_text(encoding="utf-8")
    for name, fmt in FORMATS.items():
        assert set(fmt.vllm_names) <= vllm_names and set(fmt.sglang_names) <= sglang_names, name
        row = re.search(rf"^\| \[`{name}`\].*$", readme, re.MULTILINE)
        assert row is not None, f"{name} has no row in the README's format table"
        replaces = row.group().split("|")[3]
        vllm_cell, _, sglang_cell = replaces.partition(" / ")
        assert re.findall(r"`([^`]+)`", vllm_cell) == list(fmt.vllm_names), name
        assert re.findall(r"`([^`]+)`", sglang_cell) == list(fmt.sglang_names), name
