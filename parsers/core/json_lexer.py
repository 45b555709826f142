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

Cost is linear: strings are skipped with one regex search per special character (quote, backslash,
control character), everything else is a short token.
"""

from __future__ import annotations

import re
from json.encoder import encode_basestring  # type: ignore[attr-defined]

Token = tuple[str, str, int, bool, int]

MAX_DEPTH = 256
"""Deeper nesting is refused (json.loads would recurse; no tool schema is this deep)."""
MAX_SCALAR = 512
"""A number or literal longer than this is refused rather than held back forever."""

_WS = re.compile(r"[ \t\n\r]+")
_STRING_SPECIAL = re.compile(r'["\\\x00-\x1f]')
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


def json_string_body(text: str) -> str:
    """`text` as the inside of a JSON string (json.dumps with ensure_ascii=False, without quotes)."""
    return encode_basestring(text)[1:-1] if _STRING_SPECIAL.search(text) else text


class JsonSyntaxError(ValueError):
    """The text cannot be (the start of) a JSON value. `pos` indexes the chunk that failed."""

    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


class JsonLexer:
    """Tokenizes one JSON value fed in chunks. See the module docstring for the tokens."""

    def __init__(self) -> None:
        self._stack: list[str] = []
        self._expect = _VALUE
        self._in_string = False
        self._string_is_key = False
        self._carry = ""  # unfinished escape (inside a string) or scalar (outside)
        self._offset = 0  # length of the carry prepended to the chunk being lexed

    def feed(self, chunk: str) -> tuple[list[Token], int]:
        """`read`, raising its error."""
        tokens, end, error = self.read(chunk)
        if error is not None:
            raise error
        return tokens, end

    def read(self, chunk: str) -> tuple[list[Token], int, JsonSyntaxError | None]:
        """Tokenize `chunk`. Returns the tokens, the index in `chunk` just after the value when it
        ended inside this chunk (the rest is not the lexer's) or -1, and the error that stopped the
        text being JSON, if any: the tokens completed before an error come back too, so that no
        chunking loses them."""
        if self._in_string and not self._carry and _STRING_SPECIAL.search(chunk) is None:
            # The common case while a long string argument streams: the whole chunk is content.
            return [("str", chunk, len(self._stack), self._string_is_key, len(chunk))], -1, None
        offset = self._offset = len(self._carry)
        text = self._carry + chunk
        self._carry = ""
        tokens: list[Token] = []
        i = 0
        n = len(text)
        try:
            while i < n and self._expect != _DONE:
                if self._in_string:
                    i = self._lex_string(text, i, tokens)
                    continue
                c = text[i]
                if c in " \t\n\r":
                    m = _WS.match(text, i)
                    assert m is not None
                    tokens.append(("ws", m.group(), len(self._stack), False, m.end() - offset))
                    i = m.end()
                elif c == '"':
                    if self._expect in (_KEY, _KEY_OR_CLOSE):
                        self._string_is_key = True
                    elif self._expect in (_VALUE, _VALUE_OR_CLOSE):
                        self._string_is_key = False
                    else:
                        raise JsonSyntaxError("unexpected string", i)
                    self._in_string = True
                    i = self._lex_string(text, i + 1, tokens, opened=True)
                elif c in "{[":
                    if self._expect not in (_VALUE, _VALUE_OR_CLOSE):
                        raise JsonSyntaxError(f"unexpected {c!r}", i)
                    if len(self._stack) >= MAX_DEPTH:
                        raise JsonSyntaxError("nesting too deep", i)
                    tokens.append(("open", c, len(self._stack), False, i + 1 - offset))
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
                    tokens.append(("close", c, len(self._stack), False, i + 1 - offset))
                    self._after_value()
                    i += 1
                elif c == ":":
                    if self._expect != _COLON:
                        raise JsonSyntaxError("unexpected ':'", i)
                    tokens.append(("colon", c, len(self._stack), False, i + 1 - offset))
                    self._expect = _VALUE
                    i += 1
                elif c == ",":
                    if self._expect != _COMMA_OR_CLOSE:
                        raise JsonSyntaxError("unexpected ','", i)
                    tokens.append(("comma", c, len(self._stack), False, i + 1 - offset))
                    self._expect = _KEY if self._stack[-1] == "{" else _VALUE
                    i += 1
                else:
                    if self._expect not in (_VALUE, _VALUE_OR_CLOSE):
                        raise JsonSyntaxError(f"unexpected {c!r}", i)
                    i = self._lex_scalar(text, i, tokens)
        except JsonSyntaxError as err:
            err.pos = max(err.pos - offset, 0)
            return tokens, -1, err
        if self._expect == _DONE:
            return tokens, max(i - offset, 0), None
        return tokens, -1, None

    def finish(self) -> list[Token]:
        """End of input: a number or literal waiting for a terminator is complete after all."""
        raw = self._carry
        if self._in_string or not (raw in _LITERALS or _NUMBER.fullmatch(raw)):
            return []
        self._carry = ""
        token = ("scalar", raw, len(self._stack), False, 0)
        self._after_value()
        return [token]

    def _after_value(self) -> None:
        self._expect = _COMMA_OR_CLOSE if self._stack else _DONE

    def _lex_scalar(self, text: str, i: int, tokens: list[Token]) -> int:
        m = _SCALAR_CHARS.match(text, i)
        assert m is not None
        raw = m.group()
        if len(raw) > MAX_SCALAR:
            raise JsonSyntaxError("number or literal too long", i)
        if m.end() == len(text):  # may go on in the next chunk
            if raw[0].isalpha() and not any(lit.startswith(raw) for lit in _LITERALS):
                raise JsonSyntaxError(f"invalid literal {raw!r}", i)
            self._carry = raw
            return m.end()
        if not raw or not (raw in _LITERALS or _NUMBER.fullmatch(raw)):
            raise JsonSyntaxError(f"invalid value {raw or text[i]!r}", i)
        tokens.append(("scalar", raw, len(self._stack), False, m.end() - self._offset))
        self._after_value()
        return m.end()

    def _lex_string(self, text: str, i: int, tokens: list[Token], opened: bool = False) -> int:
        """Scan string content from `i` to the closing quote or the end of `text`."""
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
                esc_len = self._escape_length(text, j)
                if esc_len == 0:  # unfinished escape: carry it to the next chunk
                    parts.append(text[start:j])
                    self._emit_string_piece(parts, tokens, n)
                    self._carry = text[j:]
                    return n
                i = j + esc_len
                continue
            # A raw control character: accepted, forwarded escaped.
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
            tokens.append((kind, raw, len(self._stack), self._string_is_key, max(end - self._offset, 0)))
