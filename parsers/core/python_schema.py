"""A JSON schema as a grammar of Python literals: what a pythonic call's keyword arguments may be.

xgrammar compiles JSON schemas to JSON only; a pythonic call (`f(city="Paris", days=3)`) writes its
values as Python literals (`True`, `None`, `'x'`), so its constraint needs the schema in that
spelling. This writes it as xgrammar EBNF, for the shapes tools declare: `type` (one or a list),
`enum` / `const`, `anyOf` / `oneOf`, arrays with `items`, objects with `properties` and `required`
(in the declared order; a call's keyword arguments likewise). What it does not model (patterns,
bounds, `allOf`, ...) is any literal of the type, or any literal at all: the grammar admits no value
the schema's types refuse, and may admit some its finer keywords would. Values are what
`core/python_literals.py` reads: strings in either quote with Python's escapes, numbers, `True`,
`False`, `None` (and `true`, `false`, `null` for formats whose models write JSON's literals, as
Olmo 3 does: `json_literals`), lists and dicts. Bounded: past `MAX_DEPTH` nesting or `MAX_RULES`
rules a value is any literal.
"""

from __future__ import annotations

import json
from keyword import iskeyword
from typing import Any

MAX_DEPTH = 16
MAX_RULES = 2_000

# Numbers are bounded as `formats.constraints.finite_number` bounds a raw one: a finite float, shorter
# than the parsers' scalar bound, so the parser reads back every number the constraint admits.
BASE_RULES = r"""
ws ::= [ \t\n]*
sep ::= ws "," ws
hex ::= [0-9a-fA-F]
esc ::= "\\" ( ["\\'nrtbfav0/] | "u" hex hex hex hex | "x" hex hex )
str ::= "\"" ( [^"\\\n\r] | esc )* "\"" | "'" ( [^'\\\n\r] | esc )* "'"
int ::= "-"? ( "0" | [1-9] [0-9]{0,299} )
num ::= int ( "." [0-9]{1,150} )? | mantissa [eE] [+\-]? ( [0-9]{1,2} | [12] [0-9] [0-9] )
mantissa ::= "-"? ( "0" | [1-9] [0-9]{0,16} ) ( "." [0-9]{1,17} )?
any ::= str | num | bool | none | "[" ws ( any ( sep any )* )? ws "]" | "{" ws ( pair ( sep pair )* )? ws "}"
pair ::= str ws ":" ws any
ident ::= [A-Za-z_] [A-Za-z0-9_]*
anykwargs ::= ( ident "=" any ( sep ident "=" any )* )?
"""
"""Rules every grammar of this module has: `any` is any literal, `anykwargs` any keyword arguments
(`bool` and `none` are the grammar's spelling of those literals)."""
PYTHON_SPELLING = 'bool ::= "True" | "False"\nnone ::= "None"'
JSON_SPELLING = 'bool ::= "True" | "False" | "true" | "false"\nnone ::= "None" | "null"'


def ebnf_text(text: str) -> str:
    """`text` as an EBNF string literal."""
    return json.dumps(text, ensure_ascii=False)


def python_literal(value: Any) -> str:
    """A JSON value as the Python literal a model writes (strings in JSON's spelling, which Python
    reads the same way)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


class PythonSchemaGrammar:
    """Collects the rules of one grammar; `kwargs(schema)` and `value(schema)` return rule names."""

    def __init__(self, *, json_literals: bool = False) -> None:
        self.rules: list[str] = []
        self._json_literals = json_literals  # JSON's spellings of booleans and null admitted too

    def text(self, root: str) -> str:
        """The whole grammar, `root` being the expression `root ::=` stands for."""
        spelling = JSON_SPELLING if self._json_literals else PYTHON_SPELLING
        return "\n".join([f"root ::= {root}", BASE_RULES.strip(), spelling, *self.rules])

    def _literal(self, value: Any) -> str:
        """The alternatives spelling `value` (a `const` or an `enum` member)."""
        spellings = {python_literal(value)}
        if self._json_literals:
            spellings.add(json.dumps(value, ensure_ascii=False))
        return " | ".join(ebnf_text(spelling) for spelling in sorted(spellings))

    def _rule(self, body: str) -> str:
        if len(self.rules) >= MAX_RULES:
            return "any"
        name = f"r{len(self.rules)}"
        self.rules.append(f"{name} ::= {body}")
        return name

    def kwargs(self, schema: Any) -> str:
        """Keyword arguments (`a=1, b="x"`) holding an object of `schema`."""
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict) or not properties:
            return "anykwargs"
        # a key that is no identifier cannot be a keyword argument: not offered
        named = {key: sub for key, sub in properties.items() if key.isidentifier() and not iskeyword(key)}
        return self._entries(schema, named, lambda key: ebnf_text(f"{key}="), 1)

    def value(self, schema: Any, depth: int = 0) -> str:
        """A literal of `schema`."""
        if not isinstance(schema, dict) or depth > MAX_DEPTH:
            return "any"
        if "const" in schema:
            return self._rule(self._literal(schema["const"]))
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._rule(" | ".join(self._literal(v) for v in schema["enum"]))
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self._rule(" | ".join(self.value(s, depth + 1) for s in schema[key]))
        kinds = schema.get("type")
        if isinstance(kinds, list) and kinds:
            return self._rule(" | ".join(self._typed(schema, k, depth) for k in kinds))
        if isinstance(kinds, str):
            return self._typed(schema, kinds, depth)
        return self._typed(schema, "object", depth) if isinstance(schema.get("properties"), dict) else "any"

    def _typed(self, schema: dict[str, Any], kind: Any, depth: int) -> str:
        simple = {"string": "str", "integer": "int", "number": "num", "boolean": "bool", "null": "none"}
        if kind in simple:
            return simple[kind]
        if kind == "array":
            item = self.value(schema.get("items"), depth + 1) if "items" in schema else "any"
            return self._rule(f'"[" ws ( {item} ( sep {item} )* )? ws "]"')
        if kind == "object":
            properties = schema.get("properties")
            if not isinstance(properties, dict) or not properties:
                return self._rule('"{" ws ( pair ( sep pair )* )? ws "}"')
            entries = self._entries(schema, properties, lambda key: f'{ebnf_text(json.dumps(key))} ws ":" ws', depth)
            return self._rule(f'"{{" ws {entries} ws "}}"')
        return "any"

    def _entries(self, schema: dict[str, Any], properties: dict[str, Any], key_of: Any, depth: int) -> str:
        """The properties in their declared order, the required ones present, separated by commas:
        `first_i` is the entries from i on when none was written yet, `rest_i` when one was."""
        required = set(schema.get("required") or ())
        items = [(key_of(key), self.value(sub, depth + 1), key in required) for key, sub in properties.items()]
        first, rest = "ws", "ws"  # past the last property: nothing more
        for key, value, needed in reversed(items):
            entry = f"{key} {value}"
            first, rest = (
                self._rule(f"{entry} {rest}" + ("" if needed else f" | {first}")),
                self._rule(f"sep {entry} {rest}" + ("" if needed else f" | {rest}")),
            )
        return first
