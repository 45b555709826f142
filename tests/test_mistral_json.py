"""mistral_json behaviour that the corpus does not pin down: ids, marker tokens, streaming, constraint."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from helpers import counter_ids
from toolcall_parsers import CallArgs, CallEnd, CallStart, Text, get_format, parse
from toolcall_parsers.formats.mistral_json import MistralJsonStream, required_constraint


def test_default_ids_are_nine_letters_and_digits_and_unique():
    text = "".join(f'[TOOL_CALLS]f[ARGS]{{"i": {i}}}' for i in range(50))
    ids = [c.id for c in parse("mistral_json", text).calls]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids) and len(set(ids)) == 50


def test_streaming_v11_name_at_args_and_arguments_as_written():
    s = get_format("mistral_json").stream(None, counter_ids)
    assert s.feed("Sure.[TOOL_CALLS]get_wea") == [Text("Sure.")]
    assert s.feed("ther[AR") == []
    assert s.feed('GS]{"city": "Pa') == [CallStart(0, "call_0", "get_weather"), CallArgs(0, '{"city": "Pa')]
    assert s.feed('ris", "days": 1') == [CallArgs(0, 'ris", "days": ')]
    assert s.feed("2}") == [CallArgs(0, "12}"), CallEnd(0, {"city": "Paris", "days": 12})]
    assert s.feed(" Done.") == [Text(" Done.")]


def test_call_id_is_kept_when_it_fits():
    s = get_format("mistral_json").stream(None, counter_ids)
    events = s.feed("[TOOL_CALLS]f[CALL_ID]abc123def[ARGS]{}[TOOL_CALLS]g[CALL_ID]bad-id[ARGS]{}") + s.close()
    assert [e.id for e in events if isinstance(e, CallStart)] == ["abc123def", "call_1"]


def test_marker_token_gating():
    """With `marker_is_token`, only as many markers count as [TOOL_CALLS] tokens were generated."""
    s = MistralJsonStream(None, counter_ids, marker_is_token=True)
    prose = s.feed('See [TOOL_CALLS]read[ARGS]{"a": 1} in the docs. ', marker_tokens=0)
    assert prose == [Text('See [TOOL_CALLS]read[ARGS]{"a": 1} in the docs.')]
    real = s.feed('[TOOL_CALLS]read[ARGS]{"a": 2}', marker_tokens=1) + s.close()
    assert [e for e in real if isinstance(e, CallEnd)] == [CallEnd(0, {"a": 2})]


TOOLS = {
    "add": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]},
    "now": {},
}


@pytest.mark.parametrize("v11", [True, False])
def test_required_constraint_describes_the_format(v11):
    tag = required_constraint(TOOLS, only=None, single=False, v11=v11)
    assert tag["type"] == "structural_tag"
    body = tag["format"]
    if v11:
        assert [t["begin"] for t in body["tags"]] == ["[TOOL_CALLS]add[ARGS]", "[TOOL_CALLS]now[ARGS]"]
        assert body["at_least_one"] and not body["stop_after_first"]
        assert body["tags"][0]["content"]["json_schema"] == TOOLS["add"]
    else:
        marker, array = body["elements"]
        assert marker == {"type": "const_string", "value": "[TOOL_CALLS]"}
        schema = array["json_schema"]
        jsonschema.validate([{"name": "add", "arguments": {"a": 1}}], schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([{"name": "add", "arguments": {}}], schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([], schema)
    named = required_constraint(TOOLS, only="now", single=True, v11=v11)
    assert "add" not in json.dumps(named)
