"""Raw text values typed by the tool's JSON schema, streamed as JSON.

Formats such as MiniMax's XML write parameter values as raw text with no quoting: `5`, `Paris`,
`{"a": 1}`. What the value means comes from the request's tool schema for that parameter. The rules:

- `string` keeps the text verbatim (whitespace included; `"02134"` and `"true"` stay strings). A
  schema that lists its strings (`enum` / `const`, all strings) reads a value that is a member once
  its surrounding whitespace is dropped as that member: xgrammar's XML styles let a strict call
  write whitespace around such a value (and models do).
- A union of a string and other types (`["string", "integer"]`, `["string", "object"]`, an `anyOf`
  with a string member): the non-string members come first, and the value is the first of them
  (null, integer, number, boolean, object, array) whose JSON spelling the text is, surrounding
  whitespace aside: `42` is 42, `{"a": 1}` an object, `null` null; anything else is the string,
  verbatim. JSON's spelling exactly (`02134`, `+5`, `TRUE`, `.5` stay strings), so text that only
  looks like a number is not rewritten. Other engines read such a value so, in this order (vLLM's
  qwen3_coder / glm45 / glm47, and its parser engine's `coerce_to_schema_type`): a model that
  fills `["string", "integer"]` with `42` means the number, and a client that accepts either gets
  what a JSON-writing model would have sent.
- `integer`: `5`, `-5`, `5.0` -> 5. `number`: `3.5`, `1e3`; integral text stays an int. `boolean`:
  `true` / `false` in any case. `null`: `null` in any case. `object` / `array`: JSON text of that
  kind, whose nested strings are typed by the nested `properties` / `items` the same way.
  Surrounding whitespace is ignored for these types.
- Types come from `type` (a name or a list; `int`, `float`, `bool`, `str`, `dict`, `list` are read
  as the JSON names), `anyOf` / `oneOf` / `allOf`, and otherwise `enum` / `const` values,
  `properties` (object) or `items` (array). A schema is request data: anything in it that is not
  what JSON Schema says (`"anyOf": true`, `"type": 5`, `"properties": []`, a member that is not an
  object) says nothing, and never raises.
- A value that fits none of its types stays a string. So does a value past the bounds (`Limits`):
  a number longer than `max_scalar` characters (Python cannot even read an integer over 4300
  digits), one that overflows to infinity, an object or array nested deeper than `max_depth` or
  holding such a number, `NaN` or `Infinity`.
- Python's spelling (`python=True`, for formats whose templates write values with Python's `str()`,
  as Qwen3-Coder's and Seed-OSS's do): where the schema admits null, `None` is null as `null` is
  (also when it admits a string: such a template writes a null argument and the string `"None"`
  alike, and the null is the one a client can tell apart); `True` / `False` are booleans already
  (in a union with a string too); an `object` / `array` value that is not JSON may be a Python
  literal (`{'k': None}`, `['a', 'b']`),
  read by `ast.literal_eval` within the same bounds and then typed as JSON is; and an object or
  array written as a JSON string holding either (`"{'k': 1}"`, a template that wrote
  `json.dumps(str(value))`) is unwrapped once. Nothing else changes: a string keeps Python-looking
  text verbatim, and with no schema the guess below stays JSON's.
- No schema (no tools, or a parameter the tool does not declare): a conservative guess. `true`,
  `false`, `null`, a number in strict JSON syntax (so `02134` or `+5` stay strings), or a JSON object
  or array become that (within the same bounds); everything else is a string, verbatim.

Streaming: `ValueWriter` sends a string value as soon as the text can no longer be anything but a
string (at once when the schema says string and lists no strings; in a union, once the text is no
beginning of another member's spelling, and never where an object or array member may still be
written), JSON-escaped piece by piece, so a string sent is never taken back; other values are sent
when complete. The decision looks at the value's first characters only, so a piece costs what it
holds. Lone surrogates are sent escaped, so the JSON always encodes as UTF-8; the value returned is
what a client decodes from that JSON (a high and a low surrogate written next to each other are then
the one character they encode). Numbers are read by unambiguous patterns, on text no longer than
`max_scalar`: no regex here backtracks more than linearly.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import deque
from collections.abc import Callable
from typing import Any

from .json_lexer import json_string_body, json_text, too_deep
from .limits import Limits

_ALIASES = {"str": "string", "text": "string", "int": "integer", "float": "number", "bool": "boolean"}
_ALIASES |= {"dict": "object", "list": "array"}
_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "null", "object", "array"})
_UNIONS = ("anyOf", "oneOf", "allOf")
_MAX_SUBSCHEMAS = 256
"""Most union members looked at in one schema (a schema may be any JSON, or a Python object that
refers to itself)."""
_MAX_ENUM = 256
"""Most `enum` values looked at for the types a schema implies (a client may send 20,000)."""
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_JSON_NUMBER_PREFIX = re.compile(r"-?(?:0|[1-9][0-9]*)?(?:\.[0-9]*)?(?:[eE][-+]?[0-9]*)?")
_LITERALS = ("true", "false", "null")
_GUESS_WINDOW = 64
"""Text is guessed from its first characters only; longer undecided text is a string."""
_NO_FIT = object()
_DEFAULT_LIMITS = Limits()
_SURROGATE = re.compile("[\ud800-\udfff]")


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


def _union_tree(schema: Any) -> list[tuple[dict[str, Any], int]]:
    """`schema` and the members of its unions, nested ones too, breadth first (a schema before its
    members, shallower before deeper), each with the position in the list of the schema whose union
    holds it (-1 for `schema` itself). Iterative and bounded; members that are not objects are left
    out."""
    tree: list[tuple[dict[str, Any], int]] = []
    queue: deque[tuple[Any, int]] = deque([(schema, -1)])
    while queue and len(tree) < _MAX_SUBSCHEMAS:
        sub, parent = queue.popleft()
        if not isinstance(sub, dict):
            continue
        tree.append((sub, parent))
        for key in _UNIONS:
            members = sub.get(key)
            if isinstance(members, (list, tuple)):
                queue.extend((member, len(tree) - 1) for member in members)
    return tree


def _named_types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    return {_ALIASES.get(n, n) for n in names if isinstance(n, str)}


def _implied_types(schema: dict[str, Any]) -> set[str]:
    """Types of a schema that names none: its `enum` / `const` values, else `properties`, `items`."""
    enum = schema.get("enum")
    values = [*(enum[:_MAX_ENUM] if isinstance(enum, list) else []), *([schema["const"]] if "const" in schema else [])]
    if values:
        return {_type_of(v) for v in values}
    if isinstance(schema.get("properties"), dict):
        return {"object"}
    return {"array"} if "items" in schema else set()


def schema_types(schema: Any) -> frozenset[str]:
    """The JSON types `schema` admits; empty when it says nothing usable. A schema's types are those
    it names and those of its union members; only when that is empty does it imply types."""
    tree = _union_tree(schema)
    found: list[set[str]] = [set() for _ in tree]  # the union members' types, filled in from the leaves
    for position in range(len(tree) - 1, -1, -1):  # members come after the schema that holds them
        sub, parent = tree[position]
        types = found[position] | _named_types(sub)
        found[position] = (types or _implied_types(sub)) & _JSON_TYPES
        if parent >= 0:
            found[parent] |= found[position]
    return frozenset(found[0]) if found else frozenset()


class SchemaFacts:
    """What the schemas met while typing one value admit, each worked out once: the items of an array
    share one schema, so typing a thousand items looks that schema up a thousand times but walks its
    unions and enum once. Bounded per schema (`_MAX_SUBSCHEMAS`, `_MAX_ENUM`), so the cost per
    character of a value is a constant whatever the schema. Keyed by identity: the schemas are the
    request's, alive (and unchanged) while its values are typed."""

    __slots__ = ("_items", "_properties", "_types")

    def __init__(self) -> None:
        self._types: dict[int, frozenset[str]] = {}
        self._properties: dict[int, dict[str, Any]] = {}
        self._items: dict[int, Any] = {}

    def types(self, schema: Any) -> frozenset[str]:
        """`schema_types(schema)`."""
        key = id(schema)
        found = self._types.get(key)
        if found is None:
            found = self._types[key] = schema_types(schema)
        return found

    def property_schema(self, schema: Any, key: str) -> Any:
        """The schema of property `key` in `schema` or its union members (the first that declares it)."""
        merged = self._properties.get(id(schema))
        if merged is None:
            merged = self._properties[id(schema)] = {}
            for sub, _ in _union_tree(schema):
                props = sub.get("properties")
                if isinstance(props, dict):
                    for name, value in props.items():
                        merged.setdefault(name, value)
        return merged.get(key)

    def items_schema(self, schema: Any) -> Any:
        """The `items` schema of `schema` or of its first union member that has one."""
        key = id(schema)
        if key not in self._items:
            found = next((sub["items"] for sub, _ in _union_tree(schema) if isinstance(sub.get("items"), dict)), None)
            self._items[key] = found
        return self._items[key]


def _read_json(text: str, limits: Limits) -> Any:
    """`text` as JSON, or _NO_FIT: also when a number in it is longer than `max_scalar` or not
    finite (`1e400`, `NaN`), or it nests deeper than `max_depth` (json.loads itself would recurse,
    or refuse an integer over Python's 4300 digits by raising)."""

    def bounded_int(raw: str) -> int:
        if len(raw) > limits.max_scalar:
            raise ValueError("number too long")
        return int(raw)

    def finite_float(raw: str) -> float:
        number = float(raw) if len(raw) <= limits.max_scalar else math.inf
        if not math.isfinite(number):
            raise ValueError("number too long or not finite")
        return number

    def refuse(raw: str) -> Any:
        raise ValueError(f"{raw} is not JSON")

    try:
        value = json.loads(text, parse_int=bounded_int, parse_float=finite_float, parse_constant=refuse)
    except (ValueError, RecursionError):
        return _NO_FIT
    return _NO_FIT if too_deep(value, limits.max_depth) else value


def _read_number(stripped: str, kind: str, limits: Limits) -> Any:
    """`stripped` as an integer or number, or _NO_FIT."""
    if len(stripped) > limits.max_scalar:
        return _NO_FIT
    try:
        if _INT.fullmatch(stripped):
            return int(stripped)
        number = float(stripped) if _FLOAT.fullmatch(stripped) else math.nan
    except ValueError:  # over Python's int-string limit, when max_scalar allows that
        return _NO_FIT
    if not math.isfinite(number):
        return _NO_FIT
    if kind == "integer":
        return int(number) if number.is_integer() else _NO_FIT
    return number


def _read_python(text: str, limits: Limits) -> Any:
    """`text` as a Python literal of JSON's kinds (`{'k': None}`, `['a', True]`), or _NO_FIT; the
    value goes through JSON text, so `_read_json`'s bounds apply to it too. The parser refuses deep
    nesting itself (a SyntaxError past its own limit), and a literal's size is the value's."""
    try:
        value = ast.literal_eval(text)
        encoded = json.dumps(value, allow_nan=False)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NO_FIT
    return _read_json(encoded, limits)


def _as_type(stripped: str, kind: str, limits: Limits, python: bool = False) -> Any:
    """Text (without surrounding whitespace) read as JSON type `kind`, or _NO_FIT; `python`: also in
    Python's spelling (see the module docstring)."""
    if kind == "null":
        return None if stripped.lower() == "null" or (python and stripped == "None") else _NO_FIT
    if kind == "boolean":
        lowered = stripped.lower()
        return True if lowered == "true" else False if lowered == "false" else _NO_FIT
    if kind in ("integer", "number"):
        return _read_number(stripped, kind, limits)
    container = dict if kind == "object" else list
    value = _read_json(stripped, limits)
    if python and isinstance(value, str):  # a JSON string that holds the value: unwrapped once
        stripped = value.strip()
        value = _read_json(stripped, limits)
    if python and value is _NO_FIT and stripped[:1] in ("{", "["):
        value = _read_python(stripped, limits)
    return value if isinstance(value, container) else _NO_FIT


def _type_nested(value: Any, schema: Any, limits: Limits, facts: SchemaFacts, python: bool = False) -> Any:
    """Type the strings inside a freshly decoded object or array by the nested schema, in place,
    where that schema does not admit a string. Iterative: the depth is the value's (<= max_depth)."""
    holder = [value]
    pending: list[tuple[Any, Any, Any]] = [(holder, 0, schema)]  # (container, key, schema of container[key])
    while pending:
        container, key, sub = pending.pop()
        if sub is None:
            continue  # nothing declared below here: the value stays as written
        item = container[key]
        if isinstance(item, dict):
            pending.extend((item, k, facts.property_schema(sub, k)) for k in item)
        elif isinstance(item, list):
            items = facts.items_schema(sub)
            pending.extend((item, i, items) for i in range(len(item)))
        elif isinstance(item, str):
            types = facts.types(sub)
            if types and "string" not in types:
                container[key] = type_value(item, sub, limits, facts, python=python)
    return holder[0]


def _guess(text: str, limits: Limits) -> Any:
    stripped = text.strip()
    if (
        stripped in _LITERALS
        or stripped[:1] in ("{", "[")
        or (len(stripped) <= limits.max_scalar and _JSON_NUMBER.fullmatch(stripped))
    ):
        value = _read_json(stripped, limits)
        return text if value is _NO_FIT else value
    return text


def type_value(
    text: str, schema: Any, limits: Limits = _DEFAULT_LIMITS, facts: SchemaFacts | None = None, *, python: bool = False
) -> Any:
    """The value `text` stands for under `schema` (see the module docstring). `facts` carries what
    the schemas admit from one call to the next (one per value is enough); `python`: Python's
    spelling is read too."""
    facts = facts if facts is not None else SchemaFacts()
    types = facts.types(schema)
    if not types:
        return _guess(text, limits)
    stripped = text.strip()
    kinds = types
    if "string" in types:
        pinned = pinned_strings(schema)
        if pinned is not None and text not in pinned and stripped in pinned:
            return stripped  # an enum member with the whitespace xgrammar's XML styles allow around it
        if pinned is not None and text in pinned:
            return text
        kinds = _spelled(stripped, types, python, limits)  # a union: the members it is spelled as
    for kind in _KINDS:
        if kind in kinds:
            value = _as_type(stripped, kind, limits, python)
            if value is not _NO_FIT:
                nested = kind in ("object", "array")
                return _type_nested(value, schema, limits, facts, python) if nested else value
    return text


_KINDS = ("null", "integer", "number", "boolean", "object", "array")
"""The non-string types, in the order a value is tried against them."""


def _words(kind: str, python: bool) -> tuple[str, ...]:
    """The exact spellings of null / boolean values (JSON's, and Python's where `python`)."""
    if kind == "null":
        return ("null", "None") if python else ("null",)
    return ("true", "false", "True", "False") if python else ("true", "false")


def _spelled(stripped: str, types: frozenset[str], python: bool, limits: Limits) -> frozenset[str]:
    """The non-string types of a union with a string whose exact spelling `stripped` may be (see the
    module docstring): a literal word, a strict JSON number, or text an object or array may be."""
    kinds = {kind for kind in ("null", "boolean") if stripped in _words(kind, python)} | {"object", "array"}
    if len(stripped) <= limits.max_scalar and _JSON_NUMBER.fullmatch(stripped):
        kinds |= {"integer", "number"}
    return types & kinds


def pinned_strings(schema: Any) -> list[str] | None:
    """The strings `schema` allows where it lists them all (`enum` / `const`, every member a
    string, 1 to `_MAX_ENUM` of them, not only the empty one), else None."""
    if not isinstance(schema, dict):
        return None
    values = [schema["const"]] if "const" in schema else schema.get("enum")
    if not isinstance(values, list) or not 0 < len(values) <= _MAX_ENUM:
        return None
    if not all(isinstance(value, str) for value in values) or not any(values):
        return None
    return list(dict.fromkeys(values))


def decoded_string(text: str) -> str:
    """`text` as a client reads it back from `json_string_body(text)`: the same, except that a lone
    high surrogate and a lone low one written next to each other come back as the one character
    they encode (JSON has no way to say they were two)."""
    if _SURROGATE.search(text) is None:
        return text
    return json.loads('"' + json_string_body(text) + '"')


def _string_from_start(types: frozenset[str], python: bool = False) -> Callable[[str], bool | None]:
    """For a value's first characters: True once it can only be a string, False if it will surely
    not be streamed as one, None while undecided (`python`: `None` may still be null)."""
    if not types:

        def guess_decision(head: str) -> bool | None:
            stripped = head.lstrip()
            if not stripped:
                return None
            if stripped[0] in "{[":
                return False
            if len(head) > _GUESS_WINDOW:
                return True
            if any(lit.startswith(stripped.rstrip()) for lit in _LITERALS):
                return None
            return None if _JSON_NUMBER_PREFIX.fullmatch(stripped.rstrip()) else True

        return guess_decision
    if "string" not in types:
        return lambda head: False
    if types == {"string"}:
        return lambda head: True
    words = tuple(word for kind in ("null", "boolean") if kind in types for word in _words(kind, python))
    numbers = bool(types & {"integer", "number"})
    containers = "{[" + '"' * python if types & {"object", "array"} else ""  # python: a JSON string may hold one

    def union_decision(head: str) -> bool | None:
        stripped = head.lstrip()
        if not stripped:
            return None
        if stripped[0] in containers:
            return False  # it may be an object or array, known only when complete
        begun = stripped.rstrip()  # whitespace may still end the value
        if any(word.startswith(begun) for word in words) or (numbers and _JSON_NUMBER_PREFIX.fullmatch(begun)):
            return None
        return True

    return union_decision


class ValueWriter:
    """Streams one raw-text value as JSON. `feed` and `finish` return the JSON text to send."""

    def __init__(self, schema: Any, limits: Limits = _DEFAULT_LIMITS, *, python: bool = False) -> None:
        self._schema = schema
        self._limits = limits
        self._python = python
        self._facts = SchemaFacts()
        pinned = pinned_strings(schema) is not None  # held whole: read as a member once complete
        self._decide = (lambda head: None) if pinned else _string_from_start(self._facts.types(schema), python)
        self._streaming = False
        self._decided = False
        self._head = ""  # the value's first characters, one past the guess window: all a decision reads
        self._held: list[str] = []

    def feed(self, text: str) -> str:
        self._held.append(text)
        if self._streaming:
            return json_string_body(text)
        if self._decided:
            return ""
        self._head += text[: _GUESS_WINDOW + 1 - len(self._head)]
        decision = self._decide(self._head)
        if decision is None:
            # A full window that decides nothing never will (e.g. 65 spaces): typed when complete.
            self._decided = len(self._head) > _GUESS_WINDOW
            return ""
        self._decided = True
        if not decision:
            return ""
        self._streaming = True
        return '"' + json_string_body("".join(self._held))

    def finish(self) -> tuple[str, Any]:
        """The rest of the JSON text, and the value (as a client decodes the JSON text sent)."""
        text = "".join(self._held)
        if self._streaming:
            return '"', decoded_string(text)
        value = type_value(text, self._schema, self._limits, self._facts, python=self._python)
        fragment = json_text(value)
        if "\\ud" in fragment:  # escaped lone surrogates: next to each other they decode as one character
            value = json.loads(fragment)
        return fragment, value
