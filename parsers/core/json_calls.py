"""Reading tool calls written as JSON, on top of the incremental lexer.

Two pieces, shared by every format that writes JSON:

- `ArgumentsWriter` takes the tokens of one arguments value and forwards its raw text, so arguments
  stream as the model writes them (partial strings included, numbers only once complete). An object is
  forwarded verbatim; `null` becomes `{}`; a JSON string that holds an object (models encode it once,
  twice, sometimes more) is decoded when complete and sent as the object; anything else is not a call.
- `JsonCallReader` reads a call object, or an array of them, in any of the shapes models use:
  `{"name", "arguments"}`, `{"name", "parameters"}`, `{"tool", "parameters"}`,
  `{"function": {"name", "arguments"}}`, keys in any order. The call starts as soon as its name string
  is complete; arguments written before the name are kept until then.

Errors are `JsonSyntaxError` with the position in the chunk where the text stopped being a call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .json_lexer import JsonLexer, JsonSyntaxError, Token
from .stream import NotACall

NAME_KEYS = frozenset({"name", "tool"})
ARGUMENT_KEYS = frozenset({"arguments", "parameters"})
WRAPPER_KEY = "function"
MAX_NAME = 1024
"""Longer names are not names; bounds what is kept while a name string arrives."""
_MAX_KEY = 64
_MAX_UNWRAP = 4


class CallShapeError(JsonSyntaxError):
    """Valid JSON so far, but not a tool call."""


def decode_arguments(value: Any, pos: int) -> dict[str, Any]:
    """Arguments given as a JSON string: decode (repeatedly) until an object; "" or null -> {}."""
    for _ in range(_MAX_UNWRAP):
        if value is None or (isinstance(value, str) and not value.strip()):
            return {}
        if isinstance(value, dict):
            return value
        if not isinstance(value, str):
            break
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            break
    raise CallShapeError("arguments are not a JSON object", pos)


class ArgumentsWriter:
    """Forwards one arguments value. `feed` returns True once the value is complete."""

    def __init__(self, depth: int, send: Callable[[str], None]) -> None:
        self._depth = depth
        self._send = send
        self._mode = ""  # "", "object" or "string"
        self._parts: list[str] = []
        self.arguments: dict[str, Any] = {}

    def feed(self, token: Token) -> bool:
        kind, raw, depth, _, end = token
        if self._mode == "object":
            self._parts.append(raw)
            self._send(raw)
            if kind == "close" and depth == self._depth:
                self.arguments = json.loads("".join(self._parts))
                return True
            return False
        if self._mode == "string":
            self._parts.append(raw)
            return self._settle_string(end) if kind == "strend" else False
        if kind == "ws":
            return False
        if kind == "open" and raw == "{":
            self._mode = "object"
            self._parts.append(raw)
            self._send(raw)
            return False
        if kind in ("str", "strend"):
            self._mode = "string"
            self._parts.append(raw)
            return self._settle_string(end) if kind == "strend" else False
        if kind == "scalar" and raw == "null":
            self._send("{}")
            return True
        raise CallShapeError("arguments are not a JSON object", end)

    def _settle_string(self, end: int) -> bool:
        self.arguments = decode_arguments(json.loads("".join(self._parts)), end)
        self._send(json.dumps(self.arguments, ensure_ascii=False))
        return True


class JsonCallReader:
    """Reads one JSON value that is a call object or an array of call objects.

    The owner supplies `on_start(name) -> index`, `on_args(index, fragment)` and
    `on_end(index, arguments)`.
    """

    def __init__(
        self,
        on_start: Callable[[str], int],
        on_args: Callable[[int, str], None],
        on_end: Callable[[int, dict[str, Any]], None],
        prefix: str = "",
    ) -> None:
        self._lexer = JsonLexer()
        self.unfinished: list[str] = [prefix] if prefix else []
        """The text since the last finished call (from `prefix`, the markup before the value): what
        goes back as text when the value breaks."""
        self._ended_at = -1
        self._on_start = on_start
        self._on_args = on_args
        self._on_end = on_end
        self._object_depth = -1  # depth of the current call object; -1 between calls
        self._in_array = False
        self._reset_call()

    def _reset_call(self) -> None:
        self._key_depth = -1  # depth at which the keys of the call object (or its wrapper) sit
        self._key_parts: list[str] | None = None
        self._key = ""
        self._value: str | None = None  # the key whose value is being read
        self._value_depth = -1
        self._name_parts: list[str] = []
        self._name: str | None = None
        self._index = -1
        self._args: ArgumentsWriter | None = None
        self._args_done = False
        self._early_args: list[str] = []

    def feed(self, chunk: str) -> int:
        """Read `chunk`; return the index just after the value if it ended here, else -1. Raises
        JsonSyntaxError (`pos` in `chunk`) where the text stops being calls."""
        self._ended_at = -1
        try:
            tokens, end, failure = self._lexer.read(chunk)
            for token in tokens:
                self._token(token)
            if failure is not None:
                raise failure
        except JsonSyntaxError as err:
            self._keep(chunk, err.pos)
            raise
        self._keep(chunk, len(chunk) if end < 0 else end)
        return end

    def _keep(self, chunk: str, upto: int) -> None:
        if self._ended_at >= 0:
            self.unfinished = [chunk[self._ended_at : upto]]
        else:
            self.unfinished.append(chunk[:upto])

    def _token(self, token: Token) -> None:
        if self._args is not None and not self._args_done:  # hot path: arguments streaming
            if self._args.feed(token):
                self._args_done = True
                self._value = None
            return
        kind, raw, depth, is_key, end = token
        if self._object_depth < 0:
            self._between_calls(kind, raw, depth, end)
        elif self._value is not None:
            self._value_token(token)
        elif kind == "close" and depth == self._object_depth:
            self._finish_call(end)
        elif kind == "close" and depth == self._key_depth - 1:  # leaving {"function": {..}}
            self._key_depth -= 1
        elif is_key and depth == self._key_depth:
            self._key_token(kind, raw, end)
        elif kind == "open" and raw == "{" and self._key == WRAPPER_KEY and depth == self._key_depth:
            self._key_depth += 1
            self._key = ""
        elif kind in ("open", "str", "strend", "scalar") and depth == self._key_depth:
            self._value = self._key
            self._value_depth = depth
            self._value_token(token)

    def _between_calls(self, kind: str, raw: str, depth: int, end: int) -> None:
        if kind in ("ws", "comma") or (kind == "close" and self._in_array and depth == 0):
            return
        if kind == "open" and raw == "[" and depth == 0:
            self._in_array = True
        elif kind == "open" and raw == "{" and depth == (1 if self._in_array else 0):
            self._object_depth = depth
            self._key_depth = depth + 1
        else:
            raise CallShapeError("expected a call object", end)

    def _key_token(self, kind: str, raw: str, end: int) -> None:
        if self._key_parts is None:
            self._key_parts = []
        if sum(map(len, self._key_parts)) <= _MAX_KEY:
            self._key_parts.append(raw)
        if kind == "strend":
            text = "".join(self._key_parts)
            self._key = json.loads(text) if len(text) <= _MAX_KEY else ""
            self._key_parts = None

    def _value_token(self, token: Token) -> None:
        kind, raw, depth, _, end = token
        key = self._value
        if key in NAME_KEYS:
            self._name_token(kind, raw, end)
        elif key in ARGUMENT_KEYS:
            if self._args_done:
                raise CallShapeError("arguments given twice", end)
            self._args = ArgumentsWriter(self._value_depth, self._send_args)
            if self._args.feed(token):
                self._args_done = True
                self._value = None
            return
        if (kind in ("strend", "scalar") and depth == self._value_depth) or (
            kind == "close" and depth == self._value_depth
        ):
            self._value = None

    def _name_token(self, kind: str, raw: str, end: int) -> None:
        if kind not in ("str", "strend"):
            raise CallShapeError("the name is not a string", end)
        self._name_parts.append(raw)
        if sum(map(len, self._name_parts)) > MAX_NAME + 2:
            raise CallShapeError("the name is too long", end)
        if kind != "strend":
            return
        self._value = None
        name = json.loads("".join(self._name_parts))
        self._name_parts = []
        if self._name is not None:
            if name != self._name:
                raise CallShapeError("two different names in one call", end)
            return
        if not name:
            raise CallShapeError("the name is empty", end)
        self._name = name
        self._index = self._on_start(name)
        for fragment in self._early_args:
            self._on_args(self._index, fragment)
        self._early_args = []

    def _send_args(self, fragment: str) -> None:
        if self._index >= 0:
            self._on_args(self._index, fragment)
        else:
            self._early_args.append(fragment)

    def _finish_call(self, end: int) -> None:
        if self._name is None:
            raise CallShapeError("the call has no name", end)
        if self._args is None:
            self._on_args(self._index, "{}")
            arguments: dict[str, Any] = {}
        else:
            arguments = self._args.arguments
        self._on_end(self._index, arguments)
        self._object_depth = -1
        self._reset_call()
        self._ended_at = end


class ArgumentsReader:
    """One arguments value fed in chunks (the lexer and an ArgumentsWriter together), for formats
    that write a call's name and then its arguments as a bare JSON value (`name[ARGS]{..}`,
    `name {..}`). Fragments go to `send` as they become stable."""

    def __init__(self, send: Callable[[str], None]) -> None:
        self._lexer = JsonLexer()
        self._writer = ArgumentsWriter(0, send)

    @property
    def arguments(self) -> dict[str, Any]:
        return self._writer.arguments

    def feed(self, chunk: str) -> int:
        """Read `chunk`; the index just after the value when it ended here, else -1. Raises
        JsonSyntaxError (`pos` in `chunk`) where the text stops being arguments."""
        tokens, end, failure = self._lexer.read(chunk)
        for token in tokens:
            if self._writer.feed(token):
                return end
        if failure is not None:
            raise failure
        return -1

    def read(self, chunk: str, raw: list[str]) -> int:
        """`feed` for a format's reader: what the value consumed is added to `raw` (the call's text,
        returned as text if it breaks), and a break raises NotACall with the rest of the chunk."""
        try:
            end = self.feed(chunk)
        except JsonSyntaxError as err:
            raw.append(chunk[: err.pos])
            raise NotACall(f"arguments are not valid ({err})", chunk[err.pos :]) from None
        raw.append(chunk if end < 0 else chunk[:end])
        return end

    def finish(self) -> bool:
        """End of output: whether a value waiting for a terminator (`null`) completes the arguments."""
        try:
            return any(self._writer.feed(token) for token in self._lexer.finish())
        except JsonSyntaxError:
            return False
