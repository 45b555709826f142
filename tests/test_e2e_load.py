"""End to end under concurrency, `hermes_json`: scripts/loadtest.py in small, against a real `vllm serve`.

Eight requests in flight, streamed and not, each forcing a raw output from the load test's pool (plain
text, one call, two calls, a long string with quotes, newlines and non-ASCII, malformed blocks), each
answer compared exactly with `parse()`, malformed blocks included (`strict_malformed`: a block that
breaks after its name must not reach a streaming client as a started call). What it guards: parser
state leaking between concurrent requests, and streaming that disagrees with the finished response
under real token deltas.
"""

from __future__ import annotations

import asyncio

import pytest
from helpers import needs
from toolcall_parsers import FORMATS, parse

# one vllm serve at a time: on one worker
pytestmark = [needs("vllm"), pytest.mark.e2e, pytest.mark.xdist_group("vllm_serve")]

REQUESTS = 36  # each of the 6 pool entries 3 times streamed and 3 times not


def test_concurrent_requests_match_parse(hermes_server):
    """Against the session's hermes_json server (conftest.py), shared with test_e2e_hermes_json.py."""
    from loadtest import Options, load, passed

    limits = {"concurrency": 8, "requests": REQUESTS, "timeout": 240, "deadline": 360}
    opts = Options("hermes_json", **limits, strict_malformed=True, progress=False)
    summary = asyncio.run(load(hermes_server, opts))
    assert passed(summary), summary["examples"]
    assert summary["completed"] == REQUESTS and summary["streamed"] == REQUESTS // 2


def test_reference_results_leave_the_parsers_log_on(caplog):
    """The pool's malformed entries are parsed without log lines, and the parsers log again after
    (the load test once set the package logger's level for good, silencing every later test)."""
    from loadtest import expected_results, pool

    expected_results("hermes_json", pool("hermes_json"))
    assert not [r for r in caplog.records if r.name == "toolcall_parsers"]
    parse("hermes_json", "<tool_call>{broken</tool_call>")
    assert len([r for r in caplog.records if r.name == "toolcall_parsers"]) == 1


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_has_a_pool_that_reads_back(fmt):
    """The load test writes every registered format, and parse() finds exactly the calls each entry
    was written with (the malformed ones: none)."""
    from loadtest import expected_results, pool

    entries = pool(fmt)
    results = expected_results(fmt, entries)  # SystemExit when an entry does not read back
    assert [len(r.calls) for r in results] == [len(e.intended) for e in entries]
    assert all(not r.calls for e, r in zip(entries, results, strict=True) if e.name.startswith("malformed"))


def test_start_offers_every_registered_format(capsys):
    from loadtest import main

    with pytest.raises(SystemExit):
        main(["--help"])
    help_text = capsys.readouterr().out
    assert all(name in help_text for name in FORMATS)
