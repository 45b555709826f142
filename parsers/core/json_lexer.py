"""An incremental JSON tokenizer and syntax checker for one value.

Formats that carry JSON (hermes `<tool_call>{..}`, Mistral `[TOOL_CALLS][..]`, our `tagged` lines) have
to know, while the text is still arriving, three things: where the value ends (a `</tool_call>` or
`]` inside a string is data), whether what came so far can still be valid, and which part of it is
stable, i.e. can be sent to a client and never retracted. This lexer answers all three in one pass,
carrying across chunks only an unfinished escape, number or literal.

It returns tokens `(kind, raw, depth, is_key, end)`, `end` being the index just after the token in
the chunk that completed it:

- `open` / `close`: `{` `[` / `}` `]`; depth is the depth of the container itself (0 = the value);
- `colon`, `comma`: depth of the container's members;
- `ws`: whitespace between tokens (kept so that raw text can be forwarded exactly);
- `str`: a piece of a string that goes on; `strend`: the last piece, with its closing quote. The
  first piece starts with the opening quote. Pieces never split an escape. A raw control character
  inside a string (models write literal newlines in code) is accepted and re-escaped, so the
  forwarded text is always strict JSON;
- `scalar`: a complete number or `true` / `false` / `null`. Numbers and literals are only returned
  once a character after them shows they ended, so `1` never becomes `12` after it was sent.

Positions: the lexer reads `text` from `pos` and reports absolute positions in that text. It never
keeps text of its own: an unfinished escape, number or literal at the end of `text` is left
unconsumed (`stop` < len(text)), and the caller presents it again, with more, next time.

Cost is linear: strings are skipped with one regex search per special character (quote, backslash,
control character, surrogate), everything else is a short token.
"""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring  # type: ignore[attr-defined]

Token = tuple[str, str, int, bool, int]

MAX_DEPTH = 256
"""Deeper nesting is refused (json.loads would recurse; no tool schema is this deep)."""
MAX_SCALAR = 512
"""A number or literal longer than this is refused rather than held back forever."""

_WS = re.compile(r"[ \t\n\r]+")
_STRING_SPECIAL = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_SCALAR_CHARS = re.compile(r"[-+.0-9a-zA-Z]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')
_CONTROL_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}

# What the lexer expects next, outside strings.
_VALUE = 0  # any value
_VALUE_OR_CLOSE = 1  # after '['
_KEY_OR_CLOSE = 2  # after '{'
_KEY = 3  # after ',' in an object
_COLON = 4
_COMMA_OR_CLOSE = 5
_DONE = 6

_CLOSER = {"{": "}", "[": "]"}


def _escape_surrogates(text: str) -> str:
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_string_body(text: str) -> str:
    """`text` as the inside of a JSON string (json.dumps with ensure_ascii=False, without quotes;
    lone surrogates escaped, so the result always encodes as UTF-8)."""
    if _STRING_SPECIAL.search(text) is None:
        return text
    body = encode_basestring(text)[1:-1]
    return _escape_surrogates(body) if _SURROGATE.search(body) else body


def json_text(value: object) -> str:
    """`value` as JSON text (json.dumps with ensure_ascii=False; lone surrogates escaped). Raises
    ValueError for an infinite or NaN number, which JSON cannot carry."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return _escape_surrogates(text) if _SURROGATE.search(text) else text


def too_deep(value: object, limit: int) -> bool:
    """Whether a decoded JSON value nests deeper than `limit` (checked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            if depth >= limit:
                return True
            stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return False


class Unfinished(int):
    """What a step of the lexer returns when `text` ends inside a token that may go on (an escape, a
    number, a literal): the position where that token starts, to present again with more text. A
    step that read its token returns a plain int, the position after it."""

    __slots__ = ()


class JsonSyntaxError(ValueError):
    """The text cannot be (the start of) a JSON value. `pos` is where, in the text being read."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class JsonLexer:
    """Tokenizes one JSON value read in pieces. See the module docstring for the tokens. With
    `loose_list`, an object right after another in the value's top list is read as if the comma
    between them were written (a list of call objects whose comma the model dropped)."""

    def __init__(self, max_depth: int = MAX_DEPTH, max_scalar: int = MAX_SCALAR, *, loose_list: bool = False) -> None:
        self._max_depth = max_depth
        self._max_scalar = max_scalar
        self._loose_list = loose_list
        self._stack: list[str] = []
        self._expect = _VALUE
        self._in_string = False
        self._string_is_key = False

    @property
    def done(self) -> bool:
        """Whether the value is complete."""
        return self._expect == _DONE

    def after_key(self) -> None:
        """Go on inside the value's top object, right after a key the caller read itself (the
        object's `{` and its first keys): a `:` comes next."""
        self._stack = ["{"]
        self._expect = _COLON

    def read(self, text: str, pos: int = 0, most: int | None = None) -> tuple[list[Token], int, JsonSyntaxError | None]:
        """Tokenize `text` from `pos`. Returns the tokens, the position where lexing stopped (just
        after the value when it ended, before an unfinished escape or scalar to present again, after
        the `most`-th token when given, else the end of `text`), and the error that stopped the text
        being JSON, if any: the tokens completed before an error come back too, so that no chunking
        loses them. Stopping after `most` tokens is a chunk boundary there, nothing else."""
        n = len(text)
        if self._in_string and _STRING_SPECIAL.search(text, pos) is None:
            # The common case while a long string argument streams: the whole rest is content.
            return [("str", text[pos:], len(self._stack), self._string_is_key, n)], n, None
        tokens: list[Token] = []
        i = pos
        try:
            while i < n and self._expect != _DONE and (most is None or len(tokens) < most):
                if self._in_string:
                    stop = self._lex_string(text, i, tokens)
                    if type(stop) is Unfinished:
                        return tokens, int(stop), None
                    i = stop
                    continue
                c = text[i]
                if c in " \t\n\r":
                    m = _WS.match(text, i)
                    assert m is not None
                    tokens.append(("ws", m.group(), len(self._stack), False, m.end()))
                    i = m.end()
                elif c == '"':
                    if self._expect in (_KEY, _KEY_OR_CLOSE):
                        self._string_is_key = True
                    elif self._expect in (_VALUE, _VALUE_OR_CLOSE):
                        self._string_is_key = False
                    else:
                        raise JsonSyntaxError("unexpected string", i)
                    self._in_string = True
                    stop = self._lex_string(text, i + 1, tokens, opened=True)
                    if type(stop) is Unfinished:
                        return tokens, int(stop), None
                    i = stop
                elif c in "{[":
                    if self._expect not in (_VALUE, _VALUE_OR_CLOSE) and not self._dropped_comma(c):
                        raise JsonSyntaxError(f"unexpected {c!r}", i)
                    if len(self._stack) >= self._max_depth:
                        raise JsonSyntaxError("nesting too deep (TOOLCALL_PARSERS_MAX_DEPTH)", i)
                    tokens.append(("open", c, len(self._stack), False, i + 1))
                    self._stack.append(c)
                    self._expect = _KEY_OR_CLOSE if c == "{" else _VALUE_OR_CLOSE
                    i += 1
                elif c in "}]":
                    top = self._stack[-1] if self._stack else ""
                    closable = self._expect == _COMMA_OR_CLOSE or (
                        self._expect == (_KEY_OR_CLOSE if c == "}" else _VALUE_OR_CLOSE)
                    )
                    if not closable or _CLOSER.get(top) != c:
                        raise JsonSyntaxError(f"unexpected {c!r}", i)
                    self._stack.pop()
                    tokens.append(("close", c, len(self._stack), False, i + 1))
                    self._after_value()
                    i += 1
                elif c == ":":
                    if self._expect != _COLON:
                        raise JsonSyntaxError("unexpected ':'", i)
                    tokens.append(("colon", c, len(self._stack), False, i + 1))
                    self._expect = _VALUE
                    i += 1
                elif c == ",":
                    if self._expect != _COMMA_OR_CLOSE:
                        raise JsonSyntaxError("unexpected ','", i)
                    tokens.append(("comma", c, len(self._stack), False, i + 1))
                    self._expect = _KEY if self._stack[-1] == "{" else _VALUE
                    i += 1
                else:
                    if self._expect not in (_VALUE, _VALUE_OR_CLOSE):
                        raise JsonSyntaxError(f"unexpected {c!r}", i)
                    stop = self._lex_scalar(text, i, tokens)
                    if type(stop) is Unfinished:
                        return tokens, int(stop), None
                    i = stop
        except JsonSyntaxError as err:
            return tokens, err.pos, err
        return tokens, i, None

    def finish(self, rest: str) -> list[Token]:
        """End of input, `rest` being the unfinished text left unconsumed: a number or literal
        waiting for a terminator is complete after all."""
        if self._in_string or not (rest in _LITERALS or _NUMBER.fullmatch(rest)):
            return []
        token = ("scalar", rest, len(self._stack), False, len(rest))
        self._after_value()
        return [token]

    def _dropped_comma(self, c: str) -> bool:
        """Whether `c`, where a comma or a close belongs, is an object of a loose top list."""
        return self._loose_list and c == "{" and self._expect == _COMMA_OR_CLOSE and self._stack == ["["]

    def _after_value(self) -> None:
        self._expect = _COMMA_OR_CLOSE if self._stack else _DONE

    def _lex_scalar(self, text: str, i: int, tokens: list[Token]) -> int:
        """A number or literal from `i`: the position after it, or Unfinished(i) when it may go on."""
        m = _SCALAR_CHARS.match(text, i, i + self._max_scalar + 1)
        assert m is not None
        raw = m.group()
        if len(raw) > self._max_scalar:
            raise JsonSyntaxError("number or literal too long (TOOLCALL_PARSERS_MAX_SCALAR)", i)
        if m.end() == len(text):  # may go on in the next piece
            if raw[0].isalpha() and not any(lit.startswith(raw) for lit in _LITERALS):
                raise JsonSyntaxError(f"invalid literal {raw!r}", i)
            return Unfinished(i)
        if not raw or not (raw in _LITERALS or _NUMBER.fullmatch(raw)):
            raise JsonSyntaxError(f"invalid value {raw or text[i]!r}", i)
        tokens.append(("scalar", raw, len(self._stack), False, m.end()))
        self._after_value()
        return m.end()

    def _lex_string(self, text: str, i: int, tokens: list[Token], opened: bool = False) -> int:
        """Scan string content from `i` to the closing quote or the end of `text`: the position
        reached, or Unfinished(j) when an unfinished escape at `j` is left for the next piece."""
        parts = ['"'] if opened else []
        start = i
        n = len(text)
        while True:
            m = _STRING_SPECIAL.search(text, i)
            if m is None:
                parts.append(text[start:])
                self._emit_string_piece(parts, tokens, n)
                return n
            j = m.start()
            c = text[j]
            if c == '"':
                self._in_string = False
                parts.append(text[start : j + 1])
                self._emit_string_piece(parts, tokens, j + 1)
                if self._string_is_key:
                    self._expect = _COLON
                else:
                    self._after_value()
                return j + 1
            if c == "\\":
                try:
                    esc_len = self._escape_length(text, j)
                except JsonSyntaxError:  # what came before the bad escape streams in every chunking
                    parts.append(text[start:j])
                    self._emit_string_piece(parts, tokens, j)
                    raise
                if esc_len == 0:  # unfinished escape: left for the next piece
                    parts.append(text[start:j])
                    self._emit_string_piece(parts, tokens, j)
                    return Unfinished(j)
                i = j + esc_len
                continue
            # A raw control character or lone surrogate: accepted, forwarded escaped.
            parts.append(text[start:j])
            parts.append(_CONTROL_ESCAPES.get(c, f"\\u{ord(c):04x}"))
            start = i = j + 1

    @staticmethod
    def _escape_length(text: str, j: int) -> int:
        """Length of the escape at `text[j]` (a backslash), 0 if it is not complete yet."""
        if j + 1 >= len(text):
            return 0
        kind = text[j + 1]
        if kind in _SIMPLE_ESCAPES:
            return 2
        if kind != "u":
            raise JsonSyntaxError(f"invalid escape \\{kind}", j)
        digits = text[j + 2 : j + 6]
        if not all(d in _HEX for d in digits):
            raise JsonSyntaxError("invalid \\u escape", j)
        if len(digits) < 4:
            return 0
        if "d800" <= digits.lower() <= "dbff":  # a high surrogate: keep its pair in the same piece
            pair = text[j + 6 : j + 12]
            if len(pair) < 6 and "\\u".startswith(pair[:2]) and all(d in _HEX for d in pair[2:]):
                return 0
            if pair.startswith("\\u") and all(d in _HEX for d in pair[2:]):
                return 12
        return 6

    def _emit_string_piece(self, parts: list[str], tokens: list[Token], end: int) -> None:
        raw = "".join(parts)
        final = not self._in_string
        if raw or final:
            kind = "strend" if final else "str"
            tokens.append((kind, raw, len(self._stack), self._string_is_key, end))
