"""Raw text values typed by the tool's JSON schema, streamed as JSON.

Formats such as MiniMax's XML write parameter values as raw text with no quoting: `5`, `Paris`,
`{"a": 1}`. What the value means comes from the request's tool schema for that parameter. The rules:

- `string` keeps the text verbatim (whitespace included; `"02134"` and `"true"` stay strings). When a
  schema admits a string and other types, the string wins, except that the exact text `null` is null
  when null is admitted too.
- `integer`: `5`, `-5`, `5.0` -> 5. `number`: `3.5`, `1e3`; integral text stays an int. `boolean`:
  `true` / `false` in any case. `null`: `null` in any case. `object` / `array`: JSON text of that
  kind, whose nested strings are typed by the nested `properties` / `items` the same way.
  Surrounding whitespace is ignored for these types.
- Types come from `type` (a name or a list; `int`, `float`, `bool`, `str`, `dict`, `list` are read
  as the JSON names), `anyOf` / `oneOf` / `allOf`, and otherwise `enum` / `const` values,
  `properties` (object) or `items` (array).
- A value that fits none of its types stays a string.
- No schema (no tools, or a parameter the tool does not declare): a conservative guess. `true`,
  `false`, `null`, a number in strict JSON syntax (so `02134` or `+5` stay strings), or a JSON object
  or array become that; everything else is a string, verbatim.

Streaming: `ValueWriter` sends a string value as soon as the text can no longer be anything but a
string (at once when the schema says string), JSON-escaped piece by piece; other values are sent
when complete.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from .json_lexer import json_string_body

_ALIASES = {"str": "string", "text": "string", "int": "integer", "float": "number", "bool": "boolean"}
_ALIASES |= {"dict": "object", "list": "array"}
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "object", "array"})
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_JSON_NUMBER_PREFIX = re.compile(r"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][-+]?[0-9]*)?")
_GUESS_WINDOW = 64
"""Text is guessed from its first characters only; longer undecided text is a string."""
_NO_FIT = object()


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {str: "string", dict: "object", list: "array"}.get(type(value), "string")


def schema_types(schema: Any) -> frozenset[str]:
    """The JSON types `schema` admits; empty when it says nothing usable."""
    if not isinstance(schema, dict):
        return frozenset()
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    types = {_ALIASES.get(n, n) for n in names if isinstance(n, str)}
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            types |= schema_types(sub)
    if not types:
        values = schema.get("enum") if isinstance(schema.get("enum"), list) else []
        if "const" in schema:
            values = [*values, schema["const"]]
        types = {_type_of(v) for v in values}
    if not types and isinstance(schema.get("properties"), dict):
        types = {"object"}
    if not types and "items" in schema:
        types = {"array"}
    return frozenset(types & _JSON_TYPES)


def _subschemas(schema: Any) -> list[dict[str, Any]]:
    """`schema` and the members of its unions, where nested properties / items may be declared."""
    if not isinstance(schema, dict):
        return []
    found = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            found += _subschemas(sub)
    return found


def _property_schema(schema: Any, key: str) -> Any:
    for sub in _subschemas(schema):
        props = sub.get("properties")
        if isinstance(props, dict) and key in props:
            return props[key]
    return None


def _items_schema(schema: Any) -> Any:
    for sub in _subschemas(schema):
        if isinstance(sub.get("items"), dict):
            return sub["items"]
    return None


def _as_type(text: str, kind: str) -> Any:
    """`text` read as JSON type `kind`, or _NO_FIT."""
    stripped = text.strip()
    if kind == "null":
        return None if stripped.lower() == "null" else _NO_FIT
    if kind == "boolean":
        lowered = stripped.lower()
        return True if lowered == "true" else False if lowered == "false" else _NO_FIT
    if kind in ("integer", "number"):
        if _INT.fullmatch(stripped):
            return int(stripped)
        if _FLOAT.fullmatch(stripped):
            number = float(stripped)
            if not math.isfinite(number):
                return _NO_FIT
            if kind == "integer":
                return int(number) if number.is_integer() else _NO_FIT
            return number
        return _NO_FIT
    if kind in ("object", "array"):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            return _NO_FIT
        return value if isinstance(value, dict if kind == "object" else list) else _NO_FIT
    return text if kind == "string" else _NO_FIT


def _type_nested(value: Any, schema: Any) -> Any:
    """Strings inside parsed objects / arrays, typed by the nested schema where it is not a string."""
    if isinstance(value, dict):
        return {k: _type_nested(v, _property_schema(schema, k)) for k, v in value.items()}
    if isinstance(value, list):
        items = _items_schema(schema)
        return [_type_nested(v, items) for v in value]
    if isinstance(value, str):
        types = schema_types(schema)
        if types and "string" not in types:
            return type_value(value, schema)
    return value


def _guess(text: str) -> Any:
    stripped = text.strip()
    if stripped in ("true", "false", "null"):
        return json.loads(stripped)
    if _JSON_NUMBER.fullmatch(stripped):
        return json.loads(stripped)
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            return text
    return text


def type_value(text: str, schema: Any) -> Any:
    """The value `text` stands for under `schema` (see the module docstring)."""
    types = schema_types(schema)
    if not types:
        return _guess(text)
    if "string" in types:
        return None if "null" in types and text == "null" else text
    for kind in ("null", "integer", "number", "boolean", "object", "array"):
        if kind in types:
            value = _as_type(text, kind)
            if value is not _NO_FIT:
                return _type_nested(value, schema) if kind in ("object", "array") else value
    return text


def _string_from_start(types: frozenset[str]) -> Callable[[str], bool | None]:
    """For a value's first characters: True once it can only be a string, False if it will surely
    not be streamed as one, None while undecided."""
    if not types:

        def guess_decision(head: str) -> bool | None:
            stripped = head.lstrip()
            if not stripped:
                return None
            if stripped[0] in "{[":
                return False
            if len(head) > _GUESS_WINDOW:
                return True
            if any(lit.startswith(stripped.rstrip()) for lit in ("true", "false", "null")):
                return None
            return None if _JSON_NUMBER_PREFIX.fullmatch(stripped.rstrip()) else True

        return guess_decision
    if "string" not in types:
        return lambda head: False
    if "null" in types:
        return lambda head: None if "null".startswith(head) else True
    return lambda head: True


class ValueWriter:
    """Streams one raw-text value as JSON. `feed` and `finish` return the JSON text to send."""

    def __init__(self, schema: Any) -> None:
        self._schema = schema
        self._decide = _string_from_start(schema_types(schema))
        self._streaming = False
        self._decided = False
        self._held: list[str] = []

    def feed(self, text: str) -> str:
        if self._streaming:
            self._held.append(text)
            return json_string_body(text)
        self._held.append(text)
        if self._decided:
            return ""
        # Undecided text is at most a window long: past it every rule has decided.
        decision = self._decide("".join(self._held)[: _GUESS_WINDOW + 1])
        if decision is None:
            return ""
        self._decided = True
        if not decision:
            return ""
        self._streaming = True
        return '"' + json_string_body("".join(self._held))

    def finish(self) -> tuple[str, Any]:
        """The rest of the JSON text, and the value."""
        text = "".join(self._held)
        if self._streaming:
            return '"', text
        value = type_value(text, self._schema)
        return json.dumps(value, ensure_ascii=False), value
