"""Reading Gemma's tool-call arguments: a lexer that reads on demand, and a reader that builds the
arguments object and streams it as JSON.

Gemma 4 writes arguments in its own literal syntax, `{key:<|"|>text<|"|>,n:3,on:true,xs:[1,2]}`
(FunctionGemma the same with `<escape>` as the string delimiter): bare keys, strings between two
delimiter tokens with no escaping at all, and every other value bare, as its chat template prints
it (`3`, `1.5`, `true`, `None`). Model text is untrusted and arrives in pieces, so it is read once,
token by token, only as far as the caller asks.

`GemmaLexer.read(text, pos, key, follow)` returns the token at `pos` as `(kind, value, start, end)`, or None
when what starts there may still grow (a bare word, a partial delimiter): it keeps no text of its
own, the caller presents that text again with more. Kinds:

- `ws`; `op`: one of `{ } [ ] ( ) , :`; `end`: the call's closing marker (`<tool_call|>`);
- `key`: a bare key (up to `:`; words with spaces between them, `my key`, as Gemma 4's template
  writes any key bare), `bare`: a bare value (up to `,`, `}`, `]`, the closer; in an object a `, `
  stays in it unless a member follows), both bounded by `max_scalar`; `bstr`: a bare value ended
  by a stray delimiter (`weather in Tokyo<|"|>}`, the model forgot the opening one): a string;
  the call's opener outside a string (in a bare value, where a key belongs) is `bad`, at the
  opener: the model began the call again, which is read from there;
- `str` / `strend` / `strcut` / `strnext`: a delimited string's text in pieces, so a long value
  streams. A delimiter closes the string only where the container's syntax goes on (`,`, or the
  bracket that closes the container the string is in, whitespace allowed before it); elsewhere it
  is a literal `"`, as Gemma 4 writes a quote inside a value (`duckdb.sql(<|"|><|"|><|"|>...`).
  Where the string runs into `,key:<|"|>`, the model forgot the closing delimiter: the string ends
  at the `,` (`strcut`, the `,` included) and the next key is read; where the delimiter is
  followed by `key:`, the model forgot the `,` (`strnext`: the string ends, and a `,` is implied).
  The call's closer inside a string is data: the string goes on to its close. Where that string
  then holds the call's opener, before it closes, the model ended its call at the closer without
  closing the string and began its next call: `bad`, at the opener (which is read from there);
- `quoted`: a value written as a JSON (`"x"`) or Python (`'x'`) string, as Gemma 4 writes some
  inside containers; `bad`: text no argument can hold (value: why).

`GemmaArguments` reads the tokens of one arguments object (after its `{` or `(`, up to its
closing bracket): an explicit stack bounded by `max_depth`, never recursion. Bare values are typed
by the tool's schema where one is declared (`core.typed_values`), else as written: JSON numbers,
`true` / `false`, `null` and the template's `None`; anything else is a string. FunctionGemma's
delimited values are typed the same way, streamed by `ValueWriter` (its template delimits every
value). `ArgumentsGrammar` writes the same syntax as EBNF for the decoding constraints.

Reading is linear: each special character in a string (a delimiter, the closer, the opener, a
`,`) is looked at once, with a lookahead bounded by `max_scalar` (a `,key:` or `key:` after it);
bare values are bounded by `max_scalar`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .json_lexer import json_string_body, json_text
from .limits import Limits
from .markers import MarkerScanner, literal_at
from .python_literals import NotALiteral, number
from .python_schema import ebnf_text
from .typed_values import SchemaFacts, ValueWriter, type_value

Token = tuple[str, str, int, int]


@dataclass(frozen=True)
class Dialect:
    """One marker set: the string delimiter, the call's closer, what an interior delimiter reads as."""

    delimiter: str
    closer: str
    quote: str = '"'
    typed_strings: bool = False
    """A delimited value is raw text typed by the schema (FunctionGemma delimits every value)."""
    opener: str = ""
    """The call's opener: met in a bare value, it ends the call there (the model began the next one)."""


class GemmaSyntaxError(ValueError):
    """The arguments break here; `pos` is where the text after the break starts."""

    def __init__(self, reason: str, pos: int) -> None:
        super().__init__(reason)
        self.pos = pos


_WS = re.compile(r"[ \t\r\n]+")
_SPACE = re.compile(r"[ \t\r\n]*")
_KEY_AFTER = re.compile(r"[^\W\d][\w.-]*[ \t]*:")
_KEY_AFTER_PREFIX = re.compile(r"[^\W\d][\w.-]*[ \t]*")
_KEY_CHARS = "[^\\s:,{}\\[\\]()<>\"'=]"
_KEY_WORDS = f"{_KEY_CHARS}+(?:[ \\t]+{_KEY_CHARS}+)*"
BARE_KEY = re.compile(_KEY_WORDS)
"""A key as it reads bare: words of key characters, spaces or tabs between them (`my key`)."""
_BLANKS = re.compile(r"[ \t]*")
_MEMBER_AFTER = re.compile(f"[ \\t\\r\\n]*(?:{_KEY_WORDS}[ \\t]*:|[}}\"'<)])")
_MEMBER_AFTER_PREFIX = re.compile(f"[ \\t\\r\\n]*(?:{_KEY_WORDS}[ \\t]*)?")
_NEXT_KEY = re.compile(r",[ \t]*[^\W\d][\w.-]*[ \t]*:[ \t]*")
_NEXT_KEY_PREFIX = re.compile(r",[ \t]*(?:[^\W\d][\w.-]*[ \t]*(?::[ \t]*)?)?")
_JSON_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SINGLE_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'", re.S)
_OPS = frozenset("{}[](),:")
_PY_NUMBER = re.compile(r"-?[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?")


class GemmaLexer:
    """Tokenizes Gemma arguments on demand (see the module docstring)."""

    def __init__(self, dialect: Dialect, max_scalar: int) -> None:
        self.dialect = dialect
        self._max = max_scalar
        d, c = re.escape(dialect.delimiter), re.escape(dialect.closer)
        o = f"|{re.escape(dialect.opener)}" if dialect.opener else ""
        self._string_stops = re.compile(f"{d}|{c}{o}|,")
        self._stops = re.compile(f"[,}}\\]]|{d}|{c}{o}")
        self._stops_paren = re.compile(f"[,}}\\])]|{d}|{c}{o}")
        self._markers = (dialect.delimiter, dialect.closer, *((dialect.opener,) if dialect.opener else ()))
        self._partial = MarkerScanner(self._markers)
        self._follow = ""  # inside a string: the characters after a delimiter that close it
        self._closer_seen = False  # inside a string: the call's closer was in it

    def read(self, text: str, pos: int, key: bool, follow: str) -> Token | None:
        """The token at `pos` (< len(text)); `key`: a key is expected; `follow`: the characters
        that may follow a value here (`,` and the open container's closing bracket)."""
        if self._follow:
            return self._string(text, pos, pos)
        c = text[pos]
        if c in " \t\r\n":
            return ("ws", "", pos, _WS.match(text, pos).end())  # type: ignore[union-attr]
        if c == "<":
            found = literal_at(text, pos, self._markers)
            if found is None:
                return None
            if found == self.dialect.closer:
                return ("end", found, pos, pos + len(found))
            if found and found == self.dialect.opener:  # the model began its call again, here
                return ("bad", "the next call's opener inside the arguments", pos, pos)
            if found:
                self._follow = follow
                return self._string(text, pos + len(found), pos)
        if c in _OPS:
            return ("op", c, pos, pos + 1)
        if c in "\"'":
            return self._quoted(text, pos, c)
        if key:
            m = BARE_KEY.match(text, pos, pos + self._max + 1)
            if m is None:
                return ("bad", f"{c!r} cannot start a key", pos, pos + 1)
            end = m.end()
            if end - pos > self._max:
                return ("bad", f"a key longer than {self._max} characters (a TOOLCALL_PARSERS_ bound)", pos, end)
            if _BLANKS.match(text, end, end + self._max + 1).end() == len(text):  # type: ignore[union-attr]
                return None  # the key may go on after its space (`my key`)
            return ("key", text[pos:end], pos, end)
        return self._bare(text, pos, follow)

    def _bare(self, text: str, pos: int, follow: str) -> Token | None:
        """A bare value, up to the next `,` or closing bracket (or a stray delimiter before one).
        In an object, a `, ` (with its space, as prose writes it) ends it only where a member
        follows (`, key:`): otherwise it is part of the value (`Paris, France<|"|>`, the opening
        delimiter forgotten)."""
        stops = self._stops_paren if ")" in follow else self._stops
        in_list = "]" in follow
        i, limit = pos, pos + self._max + len(self.dialect.closer) + 1
        while True:
            m = stops.search(text, i, limit)
            if m is None or m.start() - pos > self._max:
                if len(text) - pos > self._max:
                    return (
                        "bad",
                        f"a bare value longer than {self._max} characters (a TOOLCALL_PARSERS_ bound)",
                        pos,
                        pos + self._max,
                    )
                return None
            j = m.start()
            if m.group() == "," and not in_list and text[j + 1 : j + 2] in (" ", ""):
                member = _MEMBER_AFTER.match(text, j + 1, j + self._max + 16)
                if member is None:
                    grow = _MEMBER_AFTER_PREFIX.match(text, j + 1, j + self._max + 16)
                    if grow is not None and grow.end() == len(text):
                        return None  # a member may follow: hold the value
                    i = j + 1
                    continue
            if m.group() == self.dialect.opener:  # the call is broken; the next one starts here
                return ("bad", "the next call's opener inside a value", pos, j)
            if m.group() != self.dialect.delimiter:
                return ("bare", text[pos:j], pos, j)
            after = j + len(self.dialect.delimiter)
            if after == len(text):
                return None
            if text[after] in follow:
                return ("bstr", text[pos:j], pos, after)
            return ("bad", "a string delimiter inside a bare value", pos, after)

    def _quoted(self, text: str, pos: int, quote: str) -> Token | None:
        """A JSON- or Python-quoted string value, held until it closes (bounded by `max_scalar`)."""
        m = (_JSON_QUOTED if quote == '"' else _SINGLE_QUOTED).match(text, pos, pos + self._max + 2)
        if m is None:
            if len(text) - pos > self._max + 1:
                return (
                    "bad",
                    f"a quoted value longer than {self._max} characters (a TOOLCALL_PARSERS_ bound)",
                    pos,
                    pos + 1,
                )
            return None
        body = m.group()
        try:
            value = json.loads(body) if quote == '"' else body[1:-1].replace("\\'", "'")
        except ValueError:
            value = body[1:-1]
        return ("quoted", value, pos, m.end())

    def _string(self, text: str, pos: int, start: int) -> Token | None:
        """A delimited string's text from `pos`, as far as it is certain; `start`: where the token
        starts (its opening delimiter, for the first piece)."""
        delim, n = self.dialect.delimiter, len(text)
        parts: list[str] = []
        run = i = pos
        while True:
            m = self._string_stops.search(text, i)
            if m is None:
                cut = max(self._partial.releasable(text, i), i)
                parts.append(text[run:cut])
                return ("str", "".join(parts), start, cut) if cut > start else None
            j = m.start()
            hit = m.group()
            if hit == ",":
                nxt = _NEXT_KEY.match(text, j, j + self._max + 16)
                if nxt is None or nxt.end() == n:
                    prefix = _NEXT_KEY_PREFIX.match(text, j, j + self._max + 16)
                    if nxt is not None or (prefix is not None and prefix.end() == n):
                        break  # maybe a forgotten closing delimiter: see what follows
                    i = j + 1
                    continue
                found = literal_at(text, nxt.end(), (delim,))
                if found is None or (found and nxt.end() + len(delim) == n):
                    break
                if found and text[nxt.end() + len(delim)] not in self._follow:  # it opens a value
                    parts.append(text[run:j])
                    self._follow, self._closer_seen = "", False
                    return ("strcut", "".join(parts), start, j + 1)  # the `,` too
                i = j + 1
                continue
            if hit == self.dialect.opener:
                if self._closer_seen:  # the model ended its call at that closer, and begins the next one
                    return ("bad", "the call's closer, then the next call's opener, inside a string", j, j)
                i = j + len(hit)
                continue
            if hit == self.dialect.closer:  # data, as long as the string goes on
                self._closer_seen = True
                i = j + len(hit)
                continue
            after = j + len(delim)
            gap = _SPACE.match(text, after, after + self._max).end()  # type: ignore[union-attr]
            if gap == n:
                break
            if text[gap] in self._follow:  # whitespace before it is the container's (`<|"|>x<|"|> }`)
                parts.append(text[run:j])
                self._follow, self._closer_seen = "", False
                return ("strend", "".join(parts), start, after)
            if self._follow != ":":
                key = _KEY_AFTER.match(text, after, after + self._max + 8)
                if key is None:
                    grow = _KEY_AFTER_PREFIX.match(text, after, after + self._max + 8)
                    if grow is not None and grow.end() == n:
                        break  # maybe `KEY:` next: the model forgot the `,`
                else:
                    parts.append(text[run:j])
                    self._follow, self._closer_seen = "", False
                    return ("strnext", "".join(parts), start, after)
            parts.append(text[run:j])
            parts.append(self.dialect.quote)
            run = i = after
        parts.append(text[run:j])
        return ("str", "".join(parts), start, j) if j > start else None


# What a container expects next.
_KEY_NEXT, _COLON, _VALUE, _SEP = "key_next", "colon", "value", "sep"
_CLOSERS = {"{": "}", "[": "]", "(": ")"}


@dataclass(slots=True)
class _Frame:
    opener: str
    items: dict[str, Any] | list[Any]
    schema: Any
    expect: int
    key: str = ""
    count: int = 0
    string: list[str] = field(default_factory=list)


class GemmaArguments:
    """Reads one arguments object token by token and sends it as JSON (see the module docstring).

    `read(text, pos)` reads one token: the position after it, or None to hold `text[pos:]`;
    GemmaSyntaxError where the arguments break. `done` once the object's bracket closed it."""

    def __init__(self, dialect: Dialect, opener: str, schema: Any, send: Callable[[str], None], limits: Limits) -> None:
        self.lexer = GemmaLexer(dialect, limits.max_scalar)
        self._send = send
        self._limits = limits
        self._facts = SchemaFacts()
        self._stack = [_Frame(opener, {}, schema, _KEY_NEXT)]
        self.arguments: dict[str, Any] = self._stack[0].items  # type: ignore[assignment]
        self.done = False
        self.missed = 0  # strings whose closing delimiter (or the `,` after it) the model forgot
        self._writer: ValueWriter | None = None  # a typed delimited value being read
        send("{")

    def read(self, text: str, pos: int) -> int | None:
        top = self._stack[-1]
        key = top.expect == _KEY_NEXT
        tok = self.lexer.read(text, pos, key, ":" if key else "," + _CLOSERS[top.opener])
        if tok is None:
            return None
        kind, value, start, end = tok
        if kind == "ws":
            return end
        if kind == "bad":
            raise GemmaSyntaxError(value, end)
        if kind in ("str", "strend", "strcut", "strnext"):
            if top.expect not in (_VALUE, _KEY_NEXT):  # broken at the delimiter: where the text says,
                raise GemmaSyntaxError("a string where a ',' or a closing bracket belongs", start)  # not the feed
            self._string_piece(top, value, kind != "str", end)
            if kind in ("strcut", "strnext"):  # a `,` taken, or implied
                self.missed += 1
                self._op(top, ",", end)
            return end
        if kind == "op":
            self._op(top, value, end)
            return end
        if kind == "key" or (kind == "quoted" and top.expect == _KEY_NEXT):
            self._key(top, value, end)
            return end
        if top.expect != _VALUE:
            raise GemmaSyntaxError(f"unexpected {text[start:end]!r}", end)
        if kind == "bare":
            bare = value.rstrip()
            if not bare:
                raise GemmaSyntaxError("an empty value", end)
            self._value(top, self._typed(bare, top))
        elif kind in ("bstr", "quoted"):
            self._value(top, value)
        else:  # the closer while a value is expected
            raise GemmaSyntaxError("the call ends before its arguments do", start)
        return end

    # -- tokens -----------------------------------------------------------------------------------

    def _string_piece(self, top: _Frame, piece: str, last: bool, end: int) -> None:
        if top.expect == _KEY_NEXT:  # a key written between delimiters, as declarations write them
            top.string.append(piece)
            if last:
                self._key(top, "".join(top.string), end)
                top.string.clear()
            return
        if top.expect != _VALUE:
            raise GemmaSyntaxError("a string where a ',' or a closing bracket belongs", end)
        if self._writer is not None:  # a typed value: the schema (or its text) says what it is
            self._send(self._writer.feed(piece) if piece else "")
            if last:
                fragment, value = self._writer.finish()
                self._writer = None
                self._send(fragment)
                self._store(top, value)
            return
        if not top.string:
            self._prefix(top)
            if self.lexer.dialect.typed_strings:
                self._writer = ValueWriter(self._member_schema(top), self._limits)
                self._string_piece(top, piece, last, end)
                return
            self._send('"')
            top.string.append("")
        top.string.append(piece)
        self._send(json_string_body(piece))
        if last:
            self._send('"')
            value = "".join(top.string)
            top.string.clear()
            self._store(top, value)

    def _op(self, top: _Frame, op: str, end: int) -> None:
        if op == ":" and top.expect == _COLON:
            top.expect = _VALUE
        elif op == "," and top.expect == _SEP:
            top.expect = _KEY_NEXT if isinstance(top.items, dict) else _VALUE
        elif op in "{[" and top.expect == _VALUE:
            if len(self._stack) >= self._limits.max_depth:
                raise GemmaSyntaxError("nesting deeper than TOOLCALL_PARSERS_MAX_DEPTH", end)
            schema = self._member_schema(top)
            self._prefix(top)
            self._send(op)
            items: dict[str, Any] | list[Any] = {} if op == "{" else []
            self._stack.append(_Frame(op, items, schema, _KEY_NEXT if op == "{" else _VALUE))
        elif op == _CLOSERS[top.opener] and (
            top.expect in (_SEP, _KEY_NEXT) or (top.expect == _VALUE and top.opener == "[")
        ):
            self._stack.pop()
            self._send("}" if isinstance(top.items, dict) else "]")
            if not self._stack:
                self.done = True
                return
            self._store(self._stack[-1], top.items)
        else:
            raise GemmaSyntaxError(f"unexpected {op!r}", end)

    def _key(self, top: _Frame, key: str, end: int) -> None:
        if top.expect != _KEY_NEXT or not isinstance(top.items, dict):
            raise GemmaSyntaxError(f"unexpected {key!r}", end)
        top.key = key
        top.expect = _COLON

    def _prefix(self, top: _Frame) -> None:
        """The JSON before a value: its key in an object, a comma after an earlier item."""
        sep = ", " if top.count else ""
        if isinstance(top.items, dict):
            self._send(sep + '"' + json_string_body(top.key) + '": ')
        elif sep:
            self._send(sep)

    def _value(self, top: _Frame, value: Any) -> None:
        self._prefix(top)
        self._send(json_text(value))  # a lone surrogate escaped: the JSON encodes as UTF-8
        self._store(top, value)

    def _store(self, top: _Frame, value: Any) -> None:
        if isinstance(top.items, dict):
            top.items[top.key] = value
        else:
            top.items.append(value)
        top.count += 1
        top.expect = _SEP

    def _member_schema(self, top: _Frame) -> Any:
        if top.schema is None:
            return None
        if isinstance(top.items, dict):
            return self._facts.property_schema(top.schema, top.key)
        return self._facts.items_schema(top.schema)

    def _typed(self, bare: str, top: _Frame) -> Any:
        """A bare value: by the schema where one is declared, else as written."""
        schema = self._member_schema(top)
        types = self._facts.types(schema) if schema is not None else frozenset()
        if bare in ("None", "null") and ("null" in types or "string" not in types):
            return None  # a string would have been delimited: a bare None is null
        if bare in ("True", "False") and "string" not in types:
            return bare == "True"
        value = type_value(bare, schema, self._limits, self._facts)
        if isinstance(value, str) and "string" not in types and _PY_NUMBER.fullmatch(bare):
            try:  # Python's spellings too (`108.`), which JSON's reading refuses
                magnitude = number(bare.lstrip("-"))
            except NotALiteral:
                return value
            return -magnitude if bare[0] == "-" else magnitude
        return value if isinstance(value, (str, int, float, bool)) or value is None else bare


# -- constraints: the same syntax as a grammar ------------------------------------------------------

# Numbers bounded as `formats.constraints.finite_number` bounds a raw one (a finite float, shorter than
# the scalar bound): the parser reads back every number the constraint admits.
_BASE = r"""
int ::= "-"? [0-9]{1,300}
num ::= int ("." [0-9]{1,150})? | "-"? [0-9]{1,17} ("." [0-9]{1,17})? [eE] [+-]? ([0-9]{1,2} | [12] [0-9] [0-9])
bool ::= "true" | "false"
null ::= "None"
key ::= [A-Za-z_] [A-Za-z0-9_.-]*
any ::= str | num | bool | null | anyobj | anylist
anyobj ::= "{" (key ":" any ("," key ":" any)*)? "}"
anylist ::= "[" (any ("," any)*)? "]"
"""


def _class_char(c: str) -> str:
    """`c` inside an EBNF character class."""
    return c if c.isalnum() else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


class ArgumentsGrammar:
    """EBNF for arguments held to a schema, in Gemma 4's syntax as its template writes them (keys
    in sorted order, strings between `delimiter`s holding neither it nor `opener`, see `text`);
    `literal` writes a constant, `key` a declared key (as the writer does: bare where it reads back
    bare)."""

    def __init__(
        self, literal: Callable[[Any], str], key: Callable[[str], str], delimiter: str = '<|"|>', opener: str = ""
    ) -> None:
        self.rules: list[str] = []
        self._literal = literal
        self._key = key
        self._delimiter = delimiter
        self._opener = opener

    def text(self, root: str) -> str:
        """The grammar: `root` (a rule's body) first, then the rules it uses; a string between two
        delimiters holds neither the delimiter's first two characters nor the opener's (Gemma 4's
        both: no `<|`, also after a run of `<`), so it can neither end early nor hold what the
        reader takes for the next call."""
        d = self._delimiter
        markers = [m for m in (d, self._opener) if m]
        firsts = {m[0] for m in markers}
        strchar = [f"[^{''.join(map(_class_char, sorted(firsts)))}]"]
        for c in sorted(firsts):
            seconds = {m[1] for m in markers if m[0] == c and len(m) > 1}
            if seconds - firsts:  # a run of `c`, then what goes on no marker (`<<|` would hide `<|`; `<<EOF` is data)
                strchar.append(f"{ebnf_text(c)}+ [^{''.join(map(_class_char, sorted(seconds | firsts)))}]")
        strings = f"str ::= {ebnf_text(d)} strchar* {ebnf_text(d)}\nstrchar ::= {' | '.join(strchar)}"
        return f"root ::= {root}\n" + "\n".join(self.rules) + "\n" + strings + _BASE

    def rule(self, body: str) -> str:
        name = f"r{len(self.rules)}"
        self.rules.append(f"{name} ::= {body}")
        return name

    def value(self, schema: Any) -> str:
        if not isinstance(schema, dict):
            return "any"
        if "enum" in schema or "const" in schema:
            values = schema.get("enum", [schema.get("const")])
            if isinstance(values, list) and values:
                return self.rule(" | ".join(ebnf_text(self._literal(v)) for v in values))
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
        if not kinds:
            return "any"
        alts = []
        for kind in kinds:
            if kind == "object":
                alts.append('"{" ' + self.members(schema) + ' "}"')
            elif kind == "array":
                item = self.value(schema.get("items"))
                alts.append(f'"[" ({item} ("," {item})*)? "]"')
            else:
                alts.append({"string": "str", "integer": "int", "number": "num", "boolean": "bool"}.get(kind, "null"))
        return self.rule(" | ".join(alts))

    def members(self, schema: dict[str, Any]) -> str:
        """An object's members: its properties in sorted order, the required ones present; any
        members where it declares none."""
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            return '(key ":" any ("," key ":" any)*)?'
        required = set(schema.get("required") or ())
        keys = sorted(properties)
        members = [f"{ebnf_text(self._key(k) + ':')} {self.value(properties[k])}" for k in keys]
        rest = '""'  # after some member: the members from i on
        first = '""'  # before any member
        for k, member in reversed(list(zip(keys, members, strict=True))):
            if k in required:
                rest, first = self.rule(f'"," {member} {rest}'), self.rule(f"{member} {rest}")
            else:
                rest, first = self.rule(f'("," {member})? {rest}'), self.rule(f"{member} {rest} | {first}")
        return first
