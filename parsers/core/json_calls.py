"""Reading tool calls written as JSON, on top of the incremental lexer.

Three pieces, shared by every format that writes JSON:

- `ArgumentsWriter` takes the tokens of one arguments value and forwards its raw text, so arguments
  stream as the model writes them (partial strings included, numbers only once complete). An object is
  forwarded verbatim; `null` becomes `{}`; a JSON string that holds an object (models encode it once,
  twice, sometimes more; raw control characters accepted) is decoded when complete and sent as the
  object; anything else is not a call.
- `JsonCallReader` reads a call object, or an array of them, in any of the shapes models use:
  `{"name", "arguments"}`, `{"name", "parameters"}`, `{"tool", "parameters"}`,
  `{"function": {"name", "arguments"}}`, keys in any order. The call starts as soon as its name string
  is complete; arguments written before the name are kept until then. An empty array is not a call.
- `ArgumentsReader`: one bare arguments value, for formats that write the name outside the JSON.

Errors are `JsonSyntaxError` with the position in the text where it stopped being a call. That
position never depends on how the text was chunked: a shape error found inside a string (a name too
long, a string where a call object belongs) is reported where that string ends, so a marker written
inside the string is never read as one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .json_lexer import JsonLexer, JsonSyntaxError, Token, json_text, too_deep
from .limits import Limits
from .stream import NotACall

NAME_KEYS = frozenset({"name", "tool"})
ARGUMENT_KEYS = frozenset({"arguments", "parameters"})
WRAPPER_KEY = "function"
_MAX_KEY = 64
_MAX_UNWRAP = 4


class CallShapeError(JsonSyntaxError):
    """Valid JSON so far, but not a tool call."""


def decode_arguments(value: Any, pos: int, max_depth: int) -> dict[str, Any]:
    """Arguments given as a JSON string: decode (repeatedly) until an object; "" or null -> {}."""
    for _ in range(_MAX_UNWRAP):
        if value is None or (isinstance(value, str) and not value.strip()):
            return {}
        if isinstance(value, dict):
            if too_deep(value, max_depth):
                break
            return value
        if not isinstance(value, str):
            break
        try:
            value = json.loads(value, strict=False)
        except (ValueError, RecursionError):
            break
    raise CallShapeError("arguments are not a JSON object", pos)


class ArgumentsWriter:
    """Forwards one arguments value. `feed` returns True once the value is complete."""

    def __init__(self, depth: int, send: Callable[[str], None], max_depth: int) -> None:
        self._depth = depth
        self._send = send
        self._max_depth = max_depth
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
        self.arguments = decode_arguments(json.loads("".join(self._parts)), end, self._max_depth)
        try:
            text = json_text(self.arguments)
        except ValueError:  # a number too large for a float (1e999) became infinity
            raise CallShapeError("arguments hold a number JSON cannot carry", end) from None
        if "\\ud" in text or "\\uD" in text:  # escaped surrogates: a high one next to a low one reads as one
            self.arguments = json.loads(text)  # character, so the arguments are what the text says
        self._send(text)
        return True


class _TokenReader:
    """Runs lexer tokens through a handler, turning what the handler refuses into a
    JsonSyntaxError at a position that does not depend on chunking (see the module docstring)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._lexer = JsonLexer(limits.max_depth, limits.max_scalar)
        self._failure: str | None = None  # a refusal found inside a string, reported at its end

    def _run(self, text: str, pos: int, handle: Callable[[Token], bool]) -> tuple[int, bool]:
        """Lex `text` from `pos` and hand each token to `handle` (True: the value is complete).
        Returns (where reading stopped, whether the value is complete)."""
        tokens, stop, failure = self._lexer.read(text, pos)
        for token in tokens:
            kind, end = token[0], token[4]
            if self._failure is not None:
                if kind == "strend":
                    raise CallShapeError(self._failure, end)
                continue
            try:
                if handle(token):
                    return end, True
            except (JsonSyntaxError, NotACall) as err:
                if kind == "str":  # inside a string: the string's end is where it stops
                    self._failure = str(err)
                    continue
                raise CallShapeError(str(err), end) from None
        if failure is not None:
            raise failure
        return stop, False

    def finish(self, rest: str, handle: Callable[[Token], bool]) -> bool:
        """End of output with `rest` unconsumed: whether a waiting `null` completes the value."""
        if self._failure is not None:
            return False
        try:
            return any(handle(token) for token in self._lexer.finish(rest))
        except (JsonSyntaxError, NotACall):
            return False


class JsonCallReader(_TokenReader):
    """Reads one JSON value that is a call object or an array of call objects.

    The owner supplies `on_start(name) -> index` (raising NotACall to refuse the call),
    `on_args(index, fragment)` and `on_end(index, arguments)`.
    """

    def __init__(
        self,
        on_start: Callable[[str], int],
        on_args: Callable[[int, str], None],
        on_end: Callable[[int, dict[str, Any]], None],
        limits: Limits,
        prefix: str = "",
    ) -> None:
        super().__init__(limits)
        self.unfinished: list[str] = [prefix] if prefix else []
        """The text since the last finished call (from `prefix`, the markup before the value): what
        goes back as text when the value breaks."""
        self._ended_at = -1
        self._on_start = on_start
        self._on_args = on_args
        self._on_end = on_end
        self._object_depth = -1  # depth of the current call object; -1 between calls
        self._in_array = False
        self._calls = 0
        self._reset_call()

    def _reset_call(self) -> None:
        self._key_depth = -1  # depth at which the keys of the call object (or its wrapper) sit
        self._key_parts: list[str] | None = None
        self._key = ""
        self._value: str | None = None  # the key whose value is being read
        self._value_depth = -1
        self._name_parts: list[str] = []
        self._name_len = 0
        self._name: str | None = None
        self._index = -1
        self._args: ArgumentsWriter | None = None
        self._args_done = False
        self._early_args: list[str] = []

    def feed(self, text: str, pos: int) -> tuple[int, bool]:
        """Read `text` from `pos`: (where reading stopped, whether the value ended there). The text
        from the stop on, when the value did not end, is an unfinished token to present again.
        Raises JsonSyntaxError (`pos` in `text`) where the text stops being calls."""
        self._ended_at = -1
        try:
            stop, done = self._run(text, pos, self._token)
        except JsonSyntaxError as err:
            self._keep(text, pos, err.pos)
            raise
        self._keep(text, pos, stop)
        return stop, done

    def _keep(self, text: str, pos: int, upto: int) -> None:
        if self._ended_at >= 0:
            self.unfinished = [text[self._ended_at : upto]]
        else:
            self.unfinished.append(text[pos:upto])

    def _token(self, token: Token) -> bool:
        if self._args is not None and not self._args_done:  # hot path: arguments streaming
            if self._args.feed(token):
                self._args_done = True
                self._value = None
            return False
        kind, raw, depth, is_key, end = token
        if self._object_depth < 0:
            return self._between_calls(kind, raw, depth, end)
        if self._value is not None:
            self._value_token(token)
        elif kind == "close" and depth == self._object_depth:
            self._finish_call(end)
            return depth == 0
        elif kind == "close" and depth == self._key_depth - 1:  # leaving {"function": {..}}
            self._key_depth -= 1
        elif is_key and depth == self._key_depth:
            self._key_token(kind, raw)
        elif kind == "open" and raw == "{" and self._key == WRAPPER_KEY and depth == self._key_depth:
            self._key_depth += 1
            self._key = ""
        elif kind in ("open", "str", "strend", "scalar") and depth == self._key_depth:
            self._value = self._key
            self._value_depth = depth
            self._value_token(token)
        return False

    def _between_calls(self, kind: str, raw: str, depth: int, end: int) -> bool:
        if kind in ("ws", "comma"):
            return False
        if kind == "close" and self._in_array and depth == 0:
            if self._calls == 0:
                raise CallShapeError("an empty list of calls", end)
            return True
        if kind == "open" and raw == "[" and depth == 0:
            self._in_array = True
        elif kind == "open" and raw == "{" and depth == (1 if self._in_array else 0):
            self._object_depth = depth
            self._key_depth = depth + 1
        else:
            raise CallShapeError("expected a call object", end)
        return False

    def _key_token(self, kind: str, raw: str) -> None:
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
            self._args = ArgumentsWriter(self._value_depth, self._send_args, self.limits.max_depth)
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
        self._name_len += len(raw)
        if self._name_len > self.limits.max_name + 2:
            raise CallShapeError("the name is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        self._name_parts.append(raw)
        if kind != "strend":
            return
        self._value = None
        name = json.loads("".join(self._name_parts))
        self._name_parts = []
        self._name_len = 0
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
        self._calls += 1
        self._object_depth = -1
        self._reset_call()
        self._ended_at = end


class ArgumentsReader(_TokenReader):
    """One arguments value fed in pieces (the lexer and an ArgumentsWriter together), for formats
    that write a call's name and then its arguments as a bare JSON value (`name[ARGS]{..}`,
    `name {..}`). Fragments go to `send` as they become stable."""

    def __init__(self, send: Callable[[str], None], limits: Limits) -> None:
        super().__init__(limits)
        self._writer = ArgumentsWriter(0, send, limits.max_depth)

    @property
    def arguments(self) -> dict[str, Any]:
        return self._writer.arguments

    def read(self, text: str, pos: int, raw: list[str]) -> tuple[int, bool]:
        """Read `text` from `pos`: (where reading stopped, whether the value ended there). What the
        value consumed is added to `raw` (the call's text, returned as text if it breaks); a break
        raises NotACall with the position where reading goes on."""
        try:
            stop, done = self._run(text, pos, self._writer.feed)
        except JsonSyntaxError as err:
            raw.append(text[pos : err.pos])
            raise NotACall(f"arguments are not valid ({err})", err.pos) from None
        raw.append(text[pos:stop])
        return stop, done

    def finish(self, rest: str) -> bool:  # type: ignore[override]
        """End of output with `rest` unconsumed: whether a waiting `null` completes the arguments."""
        return super().finish(rest, self._writer.feed)
