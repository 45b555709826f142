"""A transformers response template, compiled into a format of ours; and ours written as one.

transformers (5.x) reads a model's reply with a `response_template` from its tokenizer config:
regions with an open and a close (literals or regular expressions) and a content parser each
(`json`, `xml-inline`, ...); the region named `tool_calls` holds the calls, `thinking` the reasoning.
vLLM's `hf` parser and SGLang's `response_template` serve it. Its reader closes a region at the
first match of its close, inside a JSON string or not, and gives no argument until a region closes.

`from_response_template` reads the regions as what they are, a family spec of ours, and returns that
family's format: the same machine, writer, constraints and strictness as a named format, so the
template's model streams exactly, with incremental arguments and string-aware ends, and strict and
`required` requests are constrained (where vLLM's `hf` refuses them). The families it reads:

- `json` between two literals (`<tool_call>` .. `</tool_call>`), the call object being the function:
  JSON in markers (`hermes_json`'s family); its `tags.start` and `tags.end`, and the other open
  literals as `spellings`.
- `xml-inline` parameters `P KEY> V C`, the name in the open (`S\\s*F(?P<name>..)>`), the close
  `FC\\s*E`: Qwen3-Coder XML (`qwen_xml`'s family), with `start`, `end`, `function_open`,
  `function_close`, `param_open`, `param_close` from those markers, and `inline` where no
  whitespace frames a value.
- `json` in Gemma 4's dialect (`unquoted_keys`, `<|"|>` strings) after `<|tool_call>call:NAME`:
  `gemma_calls`, whose markers are the model's own.

A derived Qwen3-Coder XML format reads a function written without its block as a call to a
declared tool, as `qwen_xml` does (Qwen3-Coder models drop the block now and then); no response
template can say so, and a tool's declared name keeps prose from reading as one.

A `thinking` region gives the think pair; the `content` region's `strip: false` keeps the
content's whitespace (`keep_whitespace`). Anything else is refused with a ValueError that names
the region and what of it no family reads. What is not read: the patterns inside named groups (a
name, key or value is what the family reads there), and `repeats`, `optional`, `join` and
`transform_each` (every call region may repeat); `\\s+` is whitespace the model may write, as `\\s*` is.

`to_response_template` goes the other way for the formats of the first two families, so runtimes
that read response templates (transformers, llama-cpp-python) read our formats' output.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..formats.families.json_blocks import JsonBlockFormat, JsonBlockTags
from ..formats.families.qwen_functions import QwenFunctions
from ..formats.spec import Format
from .pieces import Group, Literal, Piece, Space, anchor_pieces, pattern_pieces, trimmed
from .probe import check_reads_back

DEFAULT_NAME = "response_template"
"""The derived format's name in log lines, unless the caller gives one."""

_FIELD_KEYS = frozenset(
    {"open", "open_pattern", "close", "close_pattern", "content", "content_args", "repeats", "join", "optional"}
    | {"transform", "transform_each"}
)
_TEMPLATE_KEYS = frozenset({"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"})
_THINKING = ("thinking", "reasoning_content", "reasoning")
_CALL_OBJECT = {"type": "function", "function": "{content}"}
_NAMED_CALL = {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}}
_GEMMA_CALL = "<|tool_call>call:"
_GEMMA_CALL_END = "<tool_call|>"
_GEMMA_STRING = '<|"|>'


def load_template(obj: dict[str, Any] | str) -> dict[str, Any]:
    """The template as a dict: `obj` itself, or JSON text; a tokenizer config holding one
    (`{"response_template": {...}}`) gives its template. ValueError on any other shape."""
    template = json.loads(obj) if isinstance(obj, str) else obj
    if isinstance(template, dict) and "response_template" in template:
        template = template["response_template"]
    if not isinstance(template, dict):
        raise ValueError(f"a response template is a JSON object, not {type(template).__name__}")
    if "fields" not in template:
        raise ValueError(f"no response template: the object has no 'fields' (its keys: {sorted(template)[:8]})")
    if template.get("version", 1) != 1:
        raise ValueError(f"response template version {template.get('version')!r}: only version 1 is known")
    if unknown := set(template) - _TEMPLATE_KEYS:
        raise ValueError(f"response template: unknown keys {sorted(unknown)}")
    fields = template.get("fields")
    if not isinstance(fields, dict) or not fields:
        raise ValueError("response template: 'fields' must be a non-empty object")
    for name, field in fields.items():
        if not isinstance(field, dict):
            raise ValueError(f"response template field {name!r} must be an object")
        if unknown := set(field) - _FIELD_KEYS:
            raise ValueError(f"response template field {name!r}: unknown keys {sorted(unknown)}")
        if not isinstance(field.get("content_args", {}), dict):
            raise ValueError(f"response template field {name!r}: 'content_args' must be an object")
    return template


def from_response_template(obj: dict[str, Any] | str, name: str = DEFAULT_NAME) -> Format:
    """The format a transformers response template describes (module docstring); `name` is the
    format's name in log lines. ValueError naming the region and the reason where no family of
    ours reads it as written. The older regex `response_schema` is read too (`response_schema`)."""
    from .response_schema import from_response_schema, is_response_schema

    schema = json.loads(obj) if isinstance(obj, str) else obj
    schema = (
        schema.get("response_schema", schema)
        if isinstance(schema, dict) and "response_template" not in schema
        else schema
    )
    if is_response_schema(schema):
        return from_response_schema(schema, name)
    fields = load_template(obj)["fields"]
    calls = fields.get("tool_calls")
    if calls is None:
        raise ValueError(
            f"response template has no 'tool_calls' field (its fields: {sorted(fields)}): it reads no calls"
        )
    think = _think_pair(fields)
    for other, field in fields.items():
        if other != "tool_calls" and other not in _THINKING and ("open" in field or "open_pattern" in field):
            raise ValueError(
                f"response template field {other!r} opens a region of its own, which none of our families "
                "routes (only 'tool_calls', 'thinking' and the implicit content)"
            )
    keep_whitespace = fields.get("content", {}).get("content_args", {}).get("strip", True) is False
    content = calls.get("content", "text")
    if content == "json" and calls.get("content_args", {}).get("string_delims"):
        return _gemma(calls, think)
    if content == "json":
        fmt = _json_blocks(calls, think, name, keep_whitespace)
    elif content == "xml-inline":
        fmt = _qwen_functions(calls, think, name, keep_whitespace)
    else:
        raise ValueError(f"response template field 'tool_calls': content {content!r} is read by none of our families")
    _check_markers(fmt)
    check_reads_back(fmt, "response template")
    return fmt


def _check_markers(fmt: Format) -> None:
    """The markers a family tells apart must differ, none blank and none the start of another:
    a marker that is a prefix of another would be read as the shorter one or the longer one
    depending on where a stream's chunks end."""
    spec = fmt.spec
    read = (spec.tags.start, *spec.spellings, spec.end or "") if isinstance(spec, JsonBlockFormat) else fmt.markers
    markers = [marker for marker in dict.fromkeys(read) if marker]
    for marker in markers:
        if not marker.strip():
            raise ValueError(f"response template: the marker {marker!r} is blank; prose would open calls")
    for a in markers:
        for b in markers:
            if a != b and b.startswith(a):
                raise ValueError(f"response template: the marker {a!r} is the start of another, {b!r}")
    if len(markers) < len(fmt.markers) and isinstance(spec, QwenFunctions):
        raise ValueError("response template: a call's and a parameter's tags must differ")


def _think_pair(fields: dict[str, Any]) -> tuple[str, str]:
    """The `thinking` region's open and close (`<think>`, `</think>` when the template has none)."""
    for key in _THINKING:
        if key in fields:
            scope = f"response template field {key!r}"
            return _single_literal(fields[key], "open", scope), _single_literal(fields[key], "close", scope)
    return ("<think>", "</think>")


def _single_literal(field: dict[str, Any], which: str, scope: str) -> str:
    """The one literal an anchor spells, whitespace around it aside."""
    alternatives = anchor_pieces(field, which, scope) or []
    if len(alternatives) == 1:
        pieces = trimmed(alternatives[0])
        if len(pieces) == 1 and isinstance(pieces[0], Literal):
            return pieces[0].text
    raise ValueError(f"{scope}: its {which} must be one literal marker (whitespace around it aside)")


def _literals(field: dict[str, Any], which: str, scope: str) -> list[str]:
    """Each alternative of an anchor as one literal, whitespace around it aside."""
    out = []
    for pieces in anchor_pieces(field, which, scope) or []:
        pieces = trimmed(pieces)
        if len(pieces) != 1 or not isinstance(pieces[0], Literal):
            raise ValueError(f"{scope}: its {which} must be literal markers, not {_spelled(pieces)}")
        out.append(pieces[0].text)
    if not out:
        raise ValueError(f"{scope}: it has no {which}; a call region needs both its markers")
    return out


def _spelled(pieces: list[Piece]) -> str:
    if not pieces:
        return "nothing (only whitespace)"
    return " ".join(
        repr(p.text) if isinstance(p, Literal) else f"(?P<{p.name}>)" if isinstance(p, Group) else "\\s" for p in pieces
    )


def _json_blocks(calls: dict[str, Any], think: tuple[str, str], name: str, keep_whitespace: bool) -> Format:
    """A JSON call object between two markers: the JSON-in-markers family."""
    scope = "response template field 'tool_calls'"
    arguments_key = _arguments_key(calls.get("transform"), scope)
    if set(calls.get("content_args", {})) - {"allow_non_json"}:
        raise ValueError(
            f"{scope}: JSON dialect options {sorted(calls['content_args'])} are read by none of our families"
        )
    starts, (end, *other_ends) = _literals(calls, "open", scope), _literals(calls, "close", scope)
    if other_ends:
        raise ValueError(f"{scope}: one close marker, not {len(other_ends) + 1}")
    spec = JsonBlockFormat(
        name,
        f'{starts[0]}{{"name": .., "arguments": {{..}}}}{end}, from a response template',
        JsonBlockTags(starts[0], end, arguments_key=arguments_key),
        spellings=tuple(starts[1:]),
        think=think,
        keep_whitespace=keep_whitespace,
        models="a model with this response template",
    )
    return spec.format(__name__)


def _arguments_key(transform: Any, scope: str) -> str:
    """The call object's key for the arguments: `arguments` where the region is the call object
    itself (the transform `_CALL_OBJECT`, or none), KEY where the transform reads `{content.KEY}`."""
    if transform in (None, _CALL_OBJECT):
        return "arguments"
    function = transform.get("function") if isinstance(transform, dict) else None
    if isinstance(function, dict) and transform.get("type") == "function" and function.get("name") == "{content.name}":
        arguments = function.get("arguments")
        if set(function) == {"name", "arguments"} and isinstance(arguments, str):
            key = arguments.removeprefix("{content.").removesuffix("}")
            if f"{{content.{key}}}" == arguments and key.isidentifier() and key != "name":
                return key
    raise ValueError(
        f"{scope}: a JSON region must be the call object (transform {_CALL_OBJECT}, or one reading "
        "{content.name} and {content.KEY} as the function's name and arguments)"
    )


def _qwen_functions(calls: dict[str, Any], think: tuple[str, str], name: str, keep_whitespace: bool) -> Format:
    """`S F NAME> (P KEY> V C)* FC E`: the Qwen3-Coder XML family with the template's tags."""
    scope = "response template field 'tool_calls'"
    if calls.get("transform") != _NAMED_CALL:
        raise ValueError(f"{scope}: an xml-inline region must name the call by its open (transform {_NAMED_CALL})")
    args = calls.get("content_args", {})
    if set(args) - {"tag_pattern"}:
        raise ValueError(f"{scope}: xml-inline options {sorted(set(args) - {'tag_pattern'})} are read by none of ours")
    (opening,) = _alternatives(calls, "open", scope)
    (closing,) = _alternatives(calls, "close", scope)
    start, _, function_open, name_group, name_end = _shape(
        opening, (Literal, Space, Literal, Group, Literal), scope, "open"
    )
    if name_end != Literal(">") or name_group != Group("name"):
        raise ValueError(f"{scope}: the open must end in a (?P<name>..) group and '>'")
    function_close, _, end = _shape(closing, (Literal, Space, Literal), scope, "close")
    tag = _tag_pattern(args.get("tag_pattern"), scope)
    param_open, frame, param_close = tag
    spec = QwenFunctions(
        name,
        f"{start.text}{function_open.text}f>{param_open}p>v{param_close}.. from a response template",
        start.text,
        end.text,
        function_open=function_open.text,
        function_close=function_close.text,
        param_open=param_open,
        param_close=param_close,
        inline=not frame,
        think=think,
        keep_whitespace=keep_whitespace,
        models="a model with this response template",
    )
    return spec.format(__name__)


def _alternatives(field: dict[str, Any], which: str, scope: str) -> list[list[Piece]]:
    alternatives = anchor_pieces(field, which, scope)
    if alternatives is None or len(alternatives) != 1:
        raise ValueError(f"{scope}: its {which} must be one marker or pattern")
    return [trimmed(alternatives[0])]


def _shape(pieces: list[Piece], kinds: tuple[type, ...], scope: str, which: str) -> list[Any]:
    """`pieces` when they are of `kinds` in order (ValueError otherwise)."""
    if len(pieces) != len(kinds) or not all(isinstance(p, k) for p, k in zip(pieces, kinds, strict=True)):
        expected = " ".join(k.__name__.lower() for k in kinds)
        raise ValueError(f"{scope}: its {which} is {_spelled(pieces)}, not the family's {expected}")
    return pieces


def _tag_pattern(pattern: Any, scope: str) -> tuple[str, bool, str]:
    """`P(?P<key>..)>\\s*(?P<value>.*?)\\s*C` -> (P, whether a line break frames the value, C)."""
    if not isinstance(pattern, str):
        raise ValueError(f"{scope}: xml-inline needs a 'tag_pattern'")
    pieces = pattern_pieces(pattern, f"{scope} 'tag_pattern'")
    kinds = [type(p) for p in pieces]
    framed = kinds == [Literal, Group, Literal, Space, Group, Space, Literal]
    if not framed and kinds != [Literal, Group, Literal, Group, Literal]:
        raise ValueError(f"{scope}: its tag_pattern is {_spelled(pieces)}, not P(?P<key>..)>(?P<value>..)C")
    key, gt, value, close = pieces[1], pieces[2], pieces[-3 if framed else -2], pieces[-1]
    if key != Group("key") or value != Group("value") or gt != Literal(">"):
        raise ValueError(f"{scope}: its tag_pattern must be P(?P<key>..)>(?P<value>..)C")
    assert isinstance(pieces[0], Literal) and isinstance(close, Literal)
    return pieces[0].text, framed, close.text


def _gemma(calls: dict[str, Any], think: tuple[str, str]) -> Format:
    """Gemma 4's dialect: its family has one format, whose markers are the model's own."""
    from ..formats.gemma_calls import CHANNEL, CHANNEL_END
    from ..formats.gemma_calls import FORMAT as GEMMA

    scope = "response template field 'tool_calls'"
    args = calls.get("content_args", {})
    (opening,) = _alternatives(calls, "open", scope)
    expected_open = [Literal(_GEMMA_CALL), Group("name")]
    if (
        opening != expected_open
        or _literals(calls, "close", scope) != [_GEMMA_CALL_END]
        or args.get("string_delims") != [[_GEMMA_STRING, _GEMMA_STRING]]
        or not args.get("unquoted_keys")
        or not (think[0].startswith(CHANNEL) and think[1] == CHANNEL_END)
    ):
        raise ValueError(
            f"{scope}: a JSON dialect with string delimiters is read only as Gemma 4 writes it "
            f"({_GEMMA_CALL}NAME{{..}}{_GEMMA_CALL_END}, strings in {_GEMMA_STRING}, thinking in {CHANNEL})"
        )
    return GEMMA


# -- ours as a response template -------------------------------------------------------------------


def to_response_template(fmt: Format, start_anchor: str | list[str]) -> dict[str, Any]:
    """`fmt` as a transformers response template (version 1); `start_anchor` is where the model's
    turn begins in the rendered prompt (the chat template's generation prompt). ValueError for a
    format whose family a response template cannot spell."""
    spec = fmt.spec
    think_open, think_close = fmt.think_pairs[0]
    fields: dict[str, Any] = {"thinking": {"open": think_open, "close": think_close, "content": "text"}}
    if isinstance(spec, JsonBlockFormat) and spec.tags.end is not None and spec.end == spec.tags.end:
        key = spec.tags.arguments_key
        fields["tool_calls"] = {
            "open": [spec.tags.start, *spec.spellings] if spec.spellings else spec.tags.start,
            "close": spec.end,
            "repeats": True,
            "content": "json",
            "transform": _CALL_OBJECT
            if key == "arguments"
            else {"type": "function", "function": {"name": "{content.name}", "arguments": f"{{content.{key}}}"}},
        }
    elif isinstance(spec, QwenFunctions):
        frame = "" if spec.inline else r"\n?"
        fields["tool_calls"] = {
            "open_pattern": rf"{re.escape(spec.start)}\s*{re.escape(spec.function_open)}(?P<name>[^>\n]+)>",
            "close_pattern": rf"{re.escape(spec.function_close)}\s*{re.escape(spec.end)}",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": (
                    rf"{re.escape(spec.param_open)}(?P<key>[^>\n]+)>{frame}(?P<value>.*?){frame}"
                    rf"{re.escape(spec.param_close)}"
                )
            },
            "transform": _NAMED_CALL,
        }
    else:
        raise ValueError(f"{fmt.name}: its family has no response-template spelling (JSON in markers, Qwen3-Coder XML)")
    keeps = spec.keep_whitespace
    fields["content"] = {"content": "text", "content_args": {"strip": False}} if keeps else {"content": "text"}
    return {"version": 1, "defaults": {"role": "assistant"}, "start_anchor": start_anchor, "fields": fields}
