"""The call bound (`TOOLCALL_PARSERS_MAX_CALL_CHARS`) in every format: wherever a call crosses it (in a
parameter's header, its value, between parameters, at the call's close), the call is text once,
nothing of it written twice, and the finished response, a one-character stream and random chunkings
agree. An outside review found GCML, Beam, DSML and Kimi's XTML writing a parameter header twice
when the bound fell while it was read (`parse()`), and a one-character stream doing otherwise."""

from __future__ import annotations

import pytest
from helpers import char_chunks, random_chunks, result_of, run_chunks
from toolcall_parsers import FORMATS


def _tool(name: str, *keys: str) -> dict:
    parameters = {"type": "object", "properties": {key: {"type": "string"} for key in keys}, "required": list(keys)}
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


TOOLS = [_tool("get_weather", "city", "note"), _tool("search", "query")]
CALLS = [
    ("get_weather", {"city": "Paris", "note": "bring an umbrella and a coat, rain all day"}),
    ("search", {"query": "weather in Oslo tomorrow and the day after, and the weekend"}),
]
"""Two calls, each with arguments longer than every bound below, so each crosses every bound."""
BOUNDS = (2, 9, 16, 23, 30, 37, 44, 51, 58, 65)
"""Bounds every few characters: the first key's header, its value, the second header, and on."""


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_call_past_the_bound_is_its_text_once_in_every_chunking(fmt, monkeypatch):
    text = FORMATS[fmt].write(CALLS)
    for bound in BOUNDS:
        monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", str(bound))
        whole = run_chunks(fmt, [text], TOOLS)
        result = result_of(whole)
        assert (result.calls, result.content) == ([], text.strip()), bound
        for chunks in (char_chunks(text), random_chunks(text, bound)):
            assert run_chunks(fmt, chunks, TOOLS) == whole, (bound, chunks)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_call_within_the_bound_stands_next_to_one_past_it(fmt, monkeypatch):
    """The first call fits the bound, the second does not: one call, and both paths agree."""
    text = FORMATS[fmt].write([("search", {"query": "x"}), CALLS[0]])
    monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", "40")
    whole = run_chunks(fmt, [text], TOOLS)
    assert [(call.name, call.arguments) for call in result_of(whole).calls] == [("search", {"query": "x"})]
    assert run_chunks(fmt, char_chunks(text), TOOLS) == whole


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_call_the_output_cuts_off_past_the_bound_is_its_text_once(fmt, monkeypatch, caplog):
    """The same with the output cut a few characters short (the call's closing markup missing or
    cut part-way, where the bound is settled at the end of the output): no internal error either."""
    text = FORMATS[fmt].write(CALLS[:1])
    for cut in (1, 3, 7):
        short = text[:-cut]
        for bound in BOUNDS:
            monkeypatch.setenv("TOOLCALL_PARSERS_MAX_CALL_CHARS", str(bound))
            whole = run_chunks(fmt, [short], TOOLS)
            result = result_of(whole)
            assert (result.calls, result.content) == ([], short.strip()), (cut, bound)
            assert run_chunks(fmt, char_chunks(short), TOOLS) == whole, (cut, bound)
    assert "internal parser error" not in caplog.text
