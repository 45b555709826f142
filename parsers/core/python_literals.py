"""An incremental tokenizer for Python call arguments, and a reader of literal values.

Llama's pythonic tool calls are Python source: `[get_weather(city="SF", days=3)]`. They must never be
`eval`ed, and `ast.parse` of the whole buffer on every delta is quadratic. This tokenizer reads the
text once, carrying across chunks only an unfinished name, number, quote run or escape, and returns
tokens `(kind, value, end)`:

- `name`: an identifier, dotted ones included (`a.b.c`); `num`: a number's text; `op`: any other
  single character that is not whitespace (brackets, `,`, `=`, `:`, `+`, `-`, and anything that will
  make the call invalid);
- `str` / `strend`: the decoded text of a string literal, in pieces (`strend` closes it). Single,
  double and triple quotes; escapes as Python reads them (`\\n`, `\\x41`, `\\u00e9`, octal, line
  continuation). String prefixes (`r`, `b`, `f`) come out as a `name` and make the value invalid.

`literal(tokens)` reads one complete value from tokens: strings (adjacent ones concatenated), ints,
floats, `True` / `False` / `None` and JSON's `true` / `false` / `null`, unary `+` / `-` on numbers,
lists, tuples (as lists) and dicts with string keys, nested. Anything else raises NotALiteral.
"""

from __future__ import annotations

import math
import re
from typing import Any

PyToken = tuple[str, str, int]

_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]*)?")
_WORD_CHARS = re.compile(r"[A-Za-z0-9_.]*")
_SIMPLE = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_SIMPLE |= {"a": "\a", "\n": ""}
_HEX_LENGTH = {"x": 2, "u": 4, "U": 8}
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_CONSTANTS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
MAX_TOKEN = 512
"""A name or number longer than this is refused rather than held back forever."""


class NotALiteral(ValueError):
    """The text is not (the start of) a literal value. `pos` indexes the chunk."""

    def __init__(self, message: str, pos: int = 0) -> None:
        super().__init__(message)
        self.pos = pos


class PythonLexer:
    """Tokenizes Python call arguments fed in chunks (see the module docstring)."""

    def __init__(self) -> None:
        self._quote = ""  # inside a string: its closing quote ("'", '"', "'''" or '\"\"\"')
        self._carry = ""

    def read(self, chunk: str) -> tuple[list[PyToken], NotALiteral | None]:
        """Tokenize `chunk`: the tokens, and the error that stopped the text being arguments, if
        any (the tokens completed before it come back too, so that no chunking loses them)."""
        offset = len(self._carry)
        text = self._carry + chunk
        self._carry = ""
        tokens: list[PyToken] = []
        i, n = 0, len(text)
        try:
            while i < n:
                if self._quote:
                    i = self._lex_string(text, i, tokens, offset)
                    continue
                c = text[i]
                if c in " \t\r\n":
                    i += 1
                elif c in "'\"":
                    if text.startswith(c * 3, i):
                        self._quote = c * 3
                    elif n - i < 3 and text[i:] == c * (n - i):  # maybe the start of a triple quote
                        self._carry = text[i:]
                        return tokens, None
                    else:
                        self._quote = c
                    i += len(self._quote)
                elif c.isalpha() or c == "_" or c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
                    m = _WORD_CHARS.match(text, i)
                    assert m is not None
                    end = m.end()
                    if end < n and text[end] in "+-" and text[end - 1] in "eE" and c.isdigit():
                        m2 = re.compile(r"[0-9]*").match(text, end + 1)
                        assert m2 is not None
                        end = m2.end()
                    if end - i > MAX_TOKEN:
                        raise NotALiteral("name or number too long", i)
                    if end == n:
                        self._carry = text[i:]
                        return tokens, None
                    word = text[i:end]
                    if _DOTTED_NAME.fullmatch(word):
                        tokens.append(("name", word, end - offset))
                    elif _NUMBER.fullmatch(word):
                        tokens.append(("num", word, end - offset))
                    else:
                        raise NotALiteral(f"invalid token {word!r}", i)
                    i = end
                elif c == "." and i + 1 == n:
                    self._carry = text[i:]
                    return tokens, None
                else:
                    tokens.append(("op", c, i + 1 - offset))
                    i += 1
        except NotALiteral as err:
            err.pos = max(err.pos - offset, 0)
            return tokens, err
        return tokens, None

    def _lex_string(self, text: str, i: int, tokens: list[PyToken], offset: int) -> int:
        quote = self._quote
        parts: list[str] = []
        start = i
        n = len(text)
        while True:
            j = text.find("\\", i)
            k = text.find(quote[0], i)
            newline = text.find("\n", i) if len(quote) == 1 else -1
            stops = [x for x in (j, k, newline) if x >= 0]
            if not stops:
                parts.append(text[start:])
                return self._piece(parts, tokens, n, offset, final=False)
            s = min(stops)
            if s == newline:
                raise NotALiteral("unterminated string", s)
            if s == k:
                if text.startswith(quote, s):
                    parts.append(text[start:s])
                    self._quote = ""
                    return self._piece(parts, tokens, s + len(quote), offset, final=True)
                if len(quote) == 3 and n - s < 3 and text.startswith(quote[: n - s], s):
                    parts.append(text[start:s])  # maybe the closing quotes: wait for more
                    self._carry = text[s:]
                    return self._piece(parts, tokens, n, offset, final=False)
                i = s + 1
                continue
            parts.append(text[start:s])
            decoded, length = self._escape(text, s)
            if length == 0:
                self._carry = text[s:]
                return self._piece(parts, tokens, n, offset, final=False)
            parts.append(decoded)
            start = i = s + length

    @staticmethod
    def _escape(text: str, s: int) -> tuple[str, int]:
        """The escape at text[s] (a backslash): (decoded, length); length 0 while incomplete."""
        if s + 1 >= len(text):
            return "", 0
        kind = text[s + 1]
        if kind in _SIMPLE:
            return _SIMPLE[kind], 2
        if kind in _HEX_LENGTH:
            digits = text[s + 2 : s + 2 + _HEX_LENGTH[kind]]
            if not all(d in _HEX for d in digits):
                raise NotALiteral(f"invalid \\{kind} escape", s)
            if len(digits) < _HEX_LENGTH[kind]:
                return "", 0
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise NotALiteral("invalid code point", s)
            return chr(code), 2 + len(digits)
        if kind in _OCTAL:
            m = re.compile(r"[0-7]{1,3}").match(text, s + 1)
            assert m is not None
            if m.end() == len(text) and len(m.group()) < 3:
                return "", 0
            return chr(int(m.group(), 8)), 1 + len(m.group())
        if kind == "N":
            raise NotALiteral("\\N{...} escapes are not read", s)
        return "\\" + kind, 2  # Python keeps unknown escapes as they are

    def _piece(self, parts: list[str], tokens: list[PyToken], end: int, offset: int, final: bool) -> int:
        tokens.append(("strend" if final else "str", "".join(parts), max(end - offset, 0)))
        return end


def literal(tokens: list[PyToken]) -> Any:
    """The value of one complete literal (see the module docstring)."""
    value, i = _value(tokens, 0)
    if i != len(tokens):
        raise NotALiteral(f"unexpected {tokens[i][1]!r} after a value")
    return value


def _value(tokens: list[PyToken], i: int) -> tuple[Any, int]:
    if i >= len(tokens):
        raise NotALiteral("a value is missing")
    kind, text, _ = tokens[i]
    if kind in ("str", "strend"):
        parts = []
        while i < len(tokens) and tokens[i][0] in ("str", "strend"):
            parts.append(tokens[i][1])
            i += 1
        return "".join(parts), i
    if kind == "num":
        return _number(text), i + 1
    if kind == "name":
        if text in _CONSTANTS:
            return _CONSTANTS[text], i + 1
        raise NotALiteral(f"{text!r} is not a literal")
    if text in "+-":
        if i + 1 < len(tokens) and tokens[i + 1][0] == "num":
            number = _number(tokens[i + 1][1])
            return (-number if text == "-" else number), i + 2
        raise NotALiteral("a sign without a number")
    if text in "[(":
        return _sequence(tokens, i + 1, "]" if text == "[" else ")")
    if text == "{":
        return _mapping(tokens, i + 1)
    raise NotALiteral(f"unexpected {text!r}")


def _number(text: str) -> int | float:
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    value = float(text)
    if not math.isfinite(value):
        raise NotALiteral(f"{text!r} is not a finite number")
    return value


def _sequence(tokens: list[PyToken], i: int, close: str) -> tuple[list[Any], int]:
    items: list[Any] = []
    while True:
        if i < len(tokens) and tokens[i][:2] == ("op", close):
            return items, i + 1
        item, i = _value(tokens, i)
        items.append(item)
        if i < len(tokens) and tokens[i][:2] == ("op", ","):
            i += 1
        elif not (i < len(tokens) and tokens[i][:2] == ("op", close)):
            raise NotALiteral("an unclosed list or tuple")


def _mapping(tokens: list[PyToken], i: int) -> tuple[dict[str, Any], int]:
    items: dict[str, Any] = {}
    while True:
        if i < len(tokens) and tokens[i][:2] == ("op", "}"):
            return items, i + 1
        key, i = _value(tokens, i)
        if not isinstance(key, str):
            raise NotALiteral("a dict key that is not a string")
        if not (i < len(tokens) and tokens[i][:2] == ("op", ":")):
            raise NotALiteral("a set, or a dict without ':'")
        items[key], i = _value(tokens, i + 1)
        if i < len(tokens) and tokens[i][:2] == ("op", ","):
            i += 1
        elif not (i < len(tokens) and tokens[i][:2] == ("op", "}")):
            raise NotALiteral("an unclosed dict")
