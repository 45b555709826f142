"""Reading Python call arguments without running them: a tokenizer that reads on demand, and a
builder of literal values.

Llama's pythonic tool calls are Python source: `[get_weather(city="SF", days=3)]`. Model text is
untrusted, so it is never given to `eval` or `ast`; and it arrives in pieces, so it is read once, token
by token, only as far as the caller asks (a call list ends at its `]`; what follows is not tokenized).

`PythonLexer.read(text, pos)` returns the token at `pos` as `(kind, value, start, end)`, positions in
`text`, or None when what starts at `pos` may still grow (a name, a number, a quote run such as `''`,
an escape): the lexer keeps no text of its own, the caller presents that text again with more. Kinds:

- `ws`: a run of whitespace (value ""); `op`: any other single character that starts no token below;
- `name`: an identifier as Python reads it (Unicode letters too), dotted ones included (`a.b.c`);
- `num`: the text of a number, checked by `number()` (so a bad number breaks only its value);
- `str` / `strend`: the decoded text of a string literal, in pieces (`strend` closes it). Single,
  double and triple quotes; escapes as Python reads them (`\\n`, `\\x41`, `\\u00e9`, `\\N{DEGREE SIGN}`,
  octal, line continuation; unknown ones such as `\\q` kept as written). A raw newline inside
  `'...'` is accepted as a newline, as the JSON lexer accepts raw control characters in strings.
  String prefixes (`r`, `b`, `f`) come out as a `name`;
- `bad`: text that cannot be part of a literal (value: why): an invalid escape (the string goes on
  after it), a name or number longer than its bound. The caller decides what it breaks.

A string is scanned with one compiled-regex search per special character (a backslash, its quote
character), so its cost is linear however it is split.

`Spelling` names what a model's Python may hold that Python refuses, read anyway where a format's
models write it and the reading is unambiguous (`lfm2_pythonic`'s); `PYTHON`, the default, refuses
all of it. With `loose_quotes`, a `'` inside a single-quoted string ends it only where what follows
it (after whitespace, at most `QUOTE_LOOKAHEAD` characters) may follow a value: `,` `)` `]` `}` `:`
or a quote (`'it's'`, `'sed -n '1,2p' f'`); elsewhere it is the string's own character. What
follows is looked at within that bound only, so the lexer holds back at most that much.

`LiteralBuilder` builds one value from its tokens: strings (adjacent ones concatenated), ints (also
hex, octal, binary, with underscores), floats, `True` / `False` / `None` and JSON's `true` / `false` /
`null`, unary `+` / `-` on numbers, lists, tuples (as lists) and dicts with string keys; with a
`Spelling` that allows them, sets (as lists, in the order written; `{}` stays a dict) and decimal
integers with leading zeros (`07` is 7; the text as written is kept in `written` for a value that
is that integer alone, for a caller whose schema asks for a string). Nesting uses an explicit stack
bounded by `max_depth`, never recursion. Anything else raises NotALiteral. A string
value is read as a JSON reader reads its JSON text (`joined_surrogates`): a high surrogate followed by
a low one, as JSON and Jinja's `tojson` write a character outside the BMP (`\\ud83d\\ude00`), is that
one character; a lone surrogate stays, and its JSON text escapes it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

PyToken = tuple[str, str, int, int]

_WS = re.compile(r"[ \t\r\n\f]+")
_NAME_RUN = re.compile(r"[\w.]*")
_NUMBER_RUN = re.compile(r"(?:[\w.]|(?<=[eE])[+-])*")
_QUOTE_SPECIAL = {q: re.compile(f"[\\\\{q}]") for q in "'\""}
_SURROGATE = re.compile("[\ud800-\udfff]")
_CHAR_NAME = re.compile(r"[A-Za-z0-9 \-]*")
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]*")
_OCTAL_DIGITS = re.compile(r"[0-7]*")
_SIMPLE = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_SIMPLE |= {"a": "\a", "\n": ""}
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}
_MAX_CHAR_NAME = 128
"""Longer than any Unicode character name: a `\\N{` without `}` within it is invalid."""

_D = "[0-9](?:_?[0-9])*"
_E = f"[eE][+-]?{_D}"
_DECIMAL_INT = re.compile(r"[1-9](?:_?[0-9])*|0(?:_?0)*")
_RADIX_INT = re.compile(r"0(?:[xX](?:_?[0-9a-fA-F])+|[oO](?:_?[0-7])+|[bB](?:_?[01])+)")
_FLOAT = re.compile(f"{_D}\\.(?:{_D})?(?:{_E})?|\\.{_D}(?:{_E})?|{_D}{_E}")
_CONSTANTS = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
_ZERO_LED_INT = re.compile(r"0[0-9]*(?:_[0-9]+)*")
"""A decimal integer with leading zeros (Python refuses `07`; `00` and `0_0` it reads already)."""
QUOTE_LOOKAHEAD = 64
"""Most whitespace looked at after a `'` that may end a loosely quoted string; past it, it does."""
_QUOTE_FOLLOWERS = frozenset(",)]}:'\"")
_SPACE_RUN = re.compile(r"[ \t\r\n\f]*")


@dataclass(frozen=True, slots=True)
class Spelling:
    """What a format's models write that Python refuses, read anyway (see the module docstring)."""

    sets: bool = False
    """`{a, b}` is an array of its items, in the order written."""
    leading_zeros: bool = False
    """`07` is the decimal integer 7."""
    loose_quotes: bool = False
    """A `'` inside a single-quoted string not followed by what may follow a value is the string's."""


PYTHON = Spelling()
"""Python's own reading: none of the above."""


class NotALiteral(ValueError):
    """The tokens are not (the start of) a literal value."""


class _BadEscape(Exception):
    """An escape Python would refuse; `length` is how much of it to skip."""

    def __init__(self, reason: str, length: int) -> None:
        super().__init__(reason)
        self.length = length


def is_name(word: str) -> bool:
    """Whether `word` is a dotted Python name (`f`, `a.b.c`, `получить`) that the lexer reads as one
    run of word characters (Python also takes a few other characters in a name, `A·`, `℘`: never a tool's)."""
    if _NAME_RUN.fullmatch(word) is None:
        return False
    return word.isidentifier() or ("." in word and all(part.isidentifier() for part in word.split(".")))


def number(text: str) -> int | float:
    """The value of a Python number literal; NotALiteral for anything JSON cannot hold (`1j`,
    `inf`) or Python would refuse (`1e`, `007`)."""
    try:
        if _DECIMAL_INT.fullmatch(text) or _RADIX_INT.fullmatch(text):
            return int(text, 0)
        if _FLOAT.fullmatch(text):
            value = float(text)
            if math.isfinite(value):
                return value
    except ValueError:  # more digits than Python converts
        pass
    if text[-1] in "jJ":
        raise NotALiteral(f"{text!r} is a complex number, which JSON cannot hold")
    raise NotALiteral(f"{text!r} is not a number")


class PythonLexer:
    """Tokenizes Python call arguments on demand (see the module docstring)."""

    def __init__(self, max_name: int, max_scalar: int, *, loose_quotes: bool = False) -> None:
        self._max_name = max_name
        self._max_scalar = max_scalar
        self._loose_quotes = loose_quotes
        self.loose_quotes = 0
        """How many quotes (`loose_quotes`) were taken as their string's own character so far."""
        self._quote = ""  # inside a string: its closing quote ("'", '"', "'''" or '\"\"\"')

    @property
    def in_string(self) -> bool:
        """Whether the last token read left a string open (a `str` piece, or a bad escape in one)."""
        return bool(self._quote)

    def read(self, text: str, pos: int) -> PyToken | None:
        """The token at `pos` (< len(text)), or None when it may still grow: present it again."""
        if self._quote:
            return self._string(text, pos, pos)
        c = text[pos]
        if c in " \t\r\n\f":
            return ("ws", "", pos, _WS.match(text, pos).end())  # type: ignore[union-attr]
        if c in "'\"":
            return self._open_string(text, pos, c)
        if c.isidentifier():
            return self._word(text, pos, _NAME_RUN, self._max_name, "name")
        if "0" <= c <= "9" or (c == "." and pos + 1 < len(text) and "0" <= text[pos + 1] <= "9"):
            return self._word(text, pos, _NUMBER_RUN, self._max_scalar, "num")
        if c == "." and pos + 1 == len(text):
            return None  # maybe ".5"
        return ("op", c, pos, pos + 1)

    def _word(self, text: str, pos: int, run: re.Pattern[str], bound: int, kind: str) -> PyToken | None:
        end = run.match(text, pos, pos + bound + 1).end()  # type: ignore[union-attr]
        if end == pos:  # a character Python takes as a name's start but `\w` does not (U+2118)
            return ("op", text[pos], pos, pos + 1)
        if end - pos > bound:
            return ("bad", f"a {kind} longer than {bound} characters (a TOOLCALL_PARSERS_ bound)", pos, end)
        if end == len(text):
            return None
        word = text[pos:end]
        if kind == "name" and not is_name(word):
            return ("bad", f"{word!r} is not a name", pos, end)
        return (kind, word, pos, end)

    def _open_string(self, text: str, pos: int, c: str) -> PyToken | None:
        if text.startswith(c * 3, pos):
            self._quote = c * 3
        elif len(text) - pos < 3 and text[pos:] == c * (len(text) - pos):
            return None  # maybe the start of a triple quote
        else:
            self._quote = c
        return self._string(text, pos + len(self._quote), pos)

    def _string(self, text: str, pos: int, start: int) -> PyToken | None:
        """String content from `pos` to the closing quote or as far as it is certain; `start` is
        where the token starts (the opening quote, for the first piece)."""
        quote = self._quote
        special = _QUOTE_SPECIAL[quote[0]]
        parts: list[str] = []
        run = i = pos  # `run`: where the characters not yet in `parts` start
        n = len(text)
        while True:
            m = special.search(text, i)
            if m is None:
                parts.append(text[run:])
                return ("str", "".join(parts), start, n)
            j = m.start()
            if text[j] == quote[0]:
                ends = quote != "'" or not self._loose_quotes or self._quote_ends(text, j + 1)
                if ends is None:  # what follows the quote has not come yet
                    break
                if not ends:  # the string's own quote
                    self.loose_quotes += 1
                    i = j + 1
                    continue
                if len(quote) == 1 or text.startswith(quote, j):
                    parts.append(text[run:j])
                    self._quote = ""
                    return ("strend", "".join(parts), start, j + len(quote))
                if n - j < 3 and quote.startswith(text[j:]):  # maybe the closing quotes
                    break
                i = j + 1
                continue
            try:
                decoded, length = self._escape(text, j)
            except _BadEscape as err:
                if j > start:
                    break  # the piece before it first
                return ("bad", str(err), j, j + err.length)
            if length == 0:  # unfinished: present it again with more text
                break
            parts.append(text[run:j])
            parts.append(decoded)
            run = i = j + length
        if j == start:
            return None
        parts.append(text[run:j])
        return ("str", "".join(parts), start, j)

    @staticmethod
    def _quote_ends(text: str, at: int) -> bool | None:
        """Whether a `'` right before `at` ends a loosely quoted string: what follows it (after
        whitespace, within QUOTE_LOOKAHEAD) may follow a value; None while that has not come."""
        end = _SPACE_RUN.match(text, at, at + QUOTE_LOOKAHEAD).end()  # type: ignore[union-attr]
        if end == at + QUOTE_LOOKAHEAD:
            return True
        if end == len(text):
            return None
        return text[end] in _QUOTE_FOLLOWERS

    @staticmethod
    def _escape(text: str, j: int) -> tuple[str, int]:
        """The escape at `text[j]` (a backslash): (decoded, length); length 0 while unfinished."""
        if j + 1 >= len(text):
            return "", 0
        kind = text[j + 1]
        if kind in _SIMPLE:
            return _SIMPLE[kind], 2
        if kind in _HEX_WIDTH:
            width = _HEX_WIDTH[kind]
            digits = _HEX_DIGITS.match(text, j + 2, j + 2 + width).group()  # type: ignore[union-attr]
            if len(digits) < width:
                if j + 2 + len(digits) == len(text):
                    return "", 0
                raise _BadEscape(f"an invalid \\{kind} escape", 2)
            code = int(digits, 16)
            if code > 0x10FFFF:
                raise _BadEscape(f"\\{kind}{digits} is past the last code point", 2 + width)
            return chr(code), 2 + width
        if "0" <= kind <= "7":
            digits = _OCTAL_DIGITS.match(text, j + 1, j + 4).group()  # type: ignore[union-attr]
            if len(digits) < 3 and j + 1 + len(digits) == len(text):
                return "", 0
            return chr(int(digits, 8)), 1 + len(digits)
        if kind == "N":
            return _named(text, j)
        return "\\", 1  # Python keeps an unknown escape as written; what follows is read as usual


def _named(text: str, j: int) -> tuple[str, int]:
    """A `\\N{NAME}` escape at `j`: the character, looked up by name."""
    if j + 2 >= len(text):
        return "", 0
    if text[j + 2] != "{":
        raise _BadEscape("an invalid \\N escape", 2)
    close = _CHAR_NAME.match(text, j + 3, j + 3 + _MAX_CHAR_NAME).end()  # type: ignore[union-attr]
    if close == len(text) and close < j + 3 + _MAX_CHAR_NAME:
        return "", 0
    if close == j + 3 + _MAX_CHAR_NAME or text[close] != "}":
        raise _BadEscape("an unclosed \\N{ escape", close - j)
    try:
        return unicodedata.lookup(text[j + 3 : close]), close + 1 - j
    except KeyError:
        raise _BadEscape(f"an unknown character name in {text[j : close + 1]!r}", close + 1 - j) from None


def joined_surrogates(text: str) -> str:
    """`text` as a JSON reader reads its JSON text: each high surrogate followed by a low one made
    the one character they encode, lone ones kept."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


# What a container expects next.
_ITEM = 0  # a value, or its closing bracket (after `[`, `(` or `,`)
_KEY = 1  # a key, or `}` (after `{` or `,` in a dict)
_COLON = 2
_VALUE = 3  # a dict's value (after `:`)
_SEPARATOR = 4  # `,` or the closing bracket

_CLOSER = {"[": "]", "(": ")", "{": "}"}
_NOTHING = object()


@dataclass(slots=True)
class _Container:
    closer: str
    items: list[Any] | dict[str, Any]
    expect: int
    key: str = ""


class LiteralBuilder:
    """Builds one literal value from its tokens, fed one at a time (see the module docstring)."""

    def __init__(self, max_depth: int, spelling: Spelling = PYTHON) -> None:
        self._max_depth = max_depth
        self._spelling = spelling
        self._stack: list[_Container] = []
        self._string: list[str] | None = None  # the pieces of a string (or adjacent strings) being read
        self._sign = ""
        self._value: Any = _NOTHING
        self.written: str | None = None
        """The text of the value, when it is a decimal integer with leading zeros alone (`07`)."""

    @property
    def depth(self) -> int:
        """How many containers are open."""
        return len(self._stack)

    def feed(self, kind: str, value: str) -> None:
        """Take the next token (not whitespace); NotALiteral when it cannot continue the value."""
        if kind in ("str", "strend"):
            if self._string is None:
                self._string = []
            self._string.append(value)
            return
        if self._string is not None:
            self._put(joined_surrogates("".join(self._string)))
            self._string = None
        if kind == "num":
            result = self._number(value)
            if self._sign == "-":
                result = -result
            self._sign = ""
            self._put(result)
        elif kind == "name":
            if value not in _CONSTANTS:
                raise NotALiteral(f"{value!r} is not a literal")
            self._put(_CONSTANTS[value])
        elif kind == "op" and value in "+-" and not self._sign and self._wants_value():
            self._sign = value
        elif kind == "op" and value in _CLOSER:
            self._open(value)
        elif kind == "op" and value in ")]}":
            self._close(value)
        elif kind == "op" and value == "," and self._stack and self._set_or(_SEPARATOR):
            top = self._stack[-1]
            top.expect = _KEY if isinstance(top.items, dict) else _ITEM
        elif kind == "op" and value == ":" and self._stack and self._stack[-1].expect == _COLON:
            self._stack[-1].expect = _VALUE
        else:
            raise NotALiteral(value if kind == "bad" else f"unexpected {value!r}")

    def _number(self, text: str) -> int | float:
        try:
            return number(text)
        except NotALiteral:
            if not (self._spelling.leading_zeros and _ZERO_LED_INT.fullmatch(text)):
                raise
        if not self._stack:
            self.written = self._sign + text
        return int(text, 10)

    def _set_or(self, expect: int) -> bool:
        """Whether the innermost container expects `expect`, after making a `{` whose first item is
        followed by `,` or `}` a set, where the spelling reads sets."""
        top = self._stack[-1]
        if self._spelling.sets and top.expect == _COLON and isinstance(top.items, dict) and not top.items:
            top.items, top.expect = [top.key], _SEPARATOR
        return top.expect == expect

    def finish(self) -> Any:
        """The value, now that a `,` or `)` ended it; NotALiteral when it is incomplete."""
        if self._string is not None:
            self._put(joined_surrogates("".join(self._string)))
            self._string = None
        if self._stack or self._sign or self._value is _NOTHING:
            raise NotALiteral("an incomplete value")
        return self._value

    def _wants_value(self) -> bool:
        if not self._stack:
            return self._value is _NOTHING
        return self._stack[-1].expect in (_ITEM, _VALUE)

    def _open(self, bracket: str) -> None:
        if self._sign or not self._wants_value():
            raise NotALiteral(f"unexpected {bracket!r}")
        if len(self._stack) + 1 >= self._max_depth:  # the arguments object is one level too
            raise NotALiteral("nesting deeper than TOOLCALL_PARSERS_MAX_DEPTH")
        items: list[Any] | dict[str, Any] = {} if bracket == "{" else []
        self._stack.append(_Container(_CLOSER[bracket], items, _KEY if bracket == "{" else _ITEM))

    def _close(self, bracket: str) -> None:
        if bracket == "}" and self._stack:
            self._set_or(_SEPARATOR)
        top = self._stack[-1] if self._stack else None
        if top is None or top.closer != bracket or top.expect not in (_ITEM, _KEY, _SEPARATOR) or self._sign:
            raise NotALiteral(f"unexpected {bracket!r}")
        self._stack.pop()
        self._put(top.items)

    def _put(self, value: Any) -> None:
        """A complete value: the result, a dict key, or a container's next item."""
        if self._sign:
            raise NotALiteral("a sign without a number")
        if not self._stack:
            if self._value is not _NOTHING:
                raise NotALiteral("two values without a comma")
            self._value = value
            return
        top = self._stack[-1]
        if top.expect == _KEY and self._spelling.sets and not isinstance(value, str) and top.items == {}:
            top.items, top.expect = [value], _SEPARATOR  # a set's first item
        elif top.expect == _KEY:
            if not isinstance(value, str):
                raise NotALiteral("a dict key that is not a string")
            top.key = value
            top.expect = _COLON
        elif top.expect in (_ITEM, _VALUE):
            if isinstance(top.items, dict):
                top.items[top.key] = value
            else:
                top.items.append(value)
            top.expect = _SEPARATOR
        else:
            raise NotALiteral("a missing ',' or ':'")
