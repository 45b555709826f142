"""Reading tool calls written as JSON, on top of the incremental lexer.

Three pieces, shared by every format that writes JSON:

- `ArgumentsWriter` takes the tokens of one arguments value and forwards its raw text, so arguments
  stream as the model writes them (partial strings included, numbers only once complete). An object is
  forwarded verbatim; `null` becomes `{}`; a JSON string that holds an object (models encode it once,
  twice, sometimes more; raw control characters accepted) is decoded when complete and sent as the
  object; anything else is not a call.
- `JsonCallReader` reads a call object, or an array of them, in the shapes its format declares
  (`CallShape`). By default those most models use: `{"name", "arguments"}`, `{"name", "parameters"}`,
  `{"tool", "parameters"}`, `{"function": {"name", "arguments"}}`, keys in any order; a format may
  name other keys (Cohere's `{"tool_name", "parameters"}`) or the one-key shape `{"NAME": {..}}`
  (Apertus), and may take only an array. The shapes are the format's, never added for all: a key
  another format writes stays an ignored key here. The call starts as soon as its name string is
  complete; arguments written before the name are kept until then. An empty array is not a call.
  A comma missing between two call objects of the array (`[{..} {..}]`) is read as if written: both
  are calls, as two values of a block are with or without a comma between them; otherwise the
  first would stand and the rest of the list, cut from its opening, come back as text.
- `ArgumentsReader`: one bare arguments value, for formats that write the name outside the JSON.
- `HeadedCallReader`: a call object written where prose may hold any object (Llama's, at a line
  start), decided by its head as declared by the format (`CallHead`), then read by a
  `JsonCallReader` that starts where the head ended.

Errors are `JsonSyntaxError` with the position in the text where it stopped being a call. That
position never depends on how the text was chunked: a shape error found inside a string (a name too
long, a string where a call object belongs) is reported where that string ends, so a marker written
inside the string is never read as one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .json_lexer import JsonLexer, JsonSyntaxError, Token, json_text, too_deep
from .limits import Limits
from .stream import NotACall

if TYPE_CHECKING:
    from .stream import FormatStream

NAME_KEYS = frozenset({"name", "tool"})
ARGUMENT_KEYS = frozenset({"arguments", "parameters"})
WRAPPER_KEY = "function"
_NAME_IS_KEY = "\x00"  # `_key` for the value of a one-key call (that shape reads no key into `_key`)
_MAX_KEY = 64
_MAX_UNWRAP = 4


class CallShapeError(JsonSyntaxError):
    """Valid JSON so far, but not a tool call."""


@dataclass(frozen=True, slots=True)
class CallShape:
    """Which call objects a format's JSON holds: the keys whose string is the name, the keys whose
    value is the arguments, the key of a wrapper object holding both (None: none), whether the call
    is instead an object of one key, the name, whose value is the arguments (`name_is_key`), and
    whether the value must be an array of calls (`array_only`). Other keys are ignored."""

    name_keys: frozenset[str] = NAME_KEYS
    argument_keys: frozenset[str] = ARGUMENT_KEYS
    wrapper_key: str | None = WRAPPER_KEY
    name_is_key: bool = False
    array_only: bool = False


DEFAULT_SHAPE = CallShape()
"""The shapes most models write (see the module docstring)."""
NAME_AS_KEY = CallShape(frozenset(), frozenset({_NAME_IS_KEY}), None, name_is_key=True)
"""`{"NAME": {..}}`: the object's one key is the tool's name, its value the arguments."""


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


_FIRST_BATCH = 16
"""Tokens lexed before the handler first looks at them (see `_TokenReader._run`)."""


class _TokenReader:
    """Runs lexer tokens through a handler, turning what the handler refuses into a
    JsonSyntaxError at a position that does not depend on chunking (see the module docstring)."""

    def __init__(self, limits: Limits, *, loose_list: bool = False) -> None:
        self.limits = limits
        self._lexer = JsonLexer(limits.max_depth, limits.max_scalar, loose_list=loose_list)
        self._failure: str | None = None  # a refusal found inside a string, reported at its end

    def _run(self, text: str, pos: int, handle: Callable[[Token], bool]) -> tuple[int, bool]:
        """Lex `text` from `pos` and hand each token to `handle` (True: the value is complete).
        Returns (where reading stopped, whether the value is complete). The tokens are lexed in
        batches that double (`_FIRST_BATCH` first), so a value the handler refuses early costs what
        it read, not what the lexer could have read: text that is valid JSON far beyond the point
        where it stops being a call (`[1,\n[1,\n..` where each line may open a list of calls) is
        not lexed again from every line."""
        most = _FIRST_BATCH
        while True:
            tokens, stop, failure = self._lexer.read(text, pos, most)
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
            if len(tokens) < most or stop >= len(text) or self._lexer.done:
                return stop, False
            pos, most = stop, most * 2

    def finish(self, rest: str, handle: Callable[[Token], bool]) -> bool:
        """End of output with `rest` unconsumed: whether a waiting `null` completes the value."""
        if self._failure is not None:
            return False
        try:
            return any(handle(token) for token in self._lexer.finish(rest))
        except (JsonSyntaxError, NotACall):
            return False


class JsonCallReader(_TokenReader):
    """Reads one JSON value that is a call object or an array of call objects, in `shape`.

    The owner supplies `on_start(name) -> index` (raising NotACall to refuse the call),
    `on_args(index, fragment)` and `on_end(index, arguments)`; `accepts`, when given, the names a
    call may have here (another name breaks the value where that name's string ends).
    """

    def __init__(
        self,
        on_start: Callable[[str], int],
        on_args: Callable[[int, str], None],
        on_end: Callable[[int, dict[str, Any]], None],
        limits: Limits,
        prefix: str = "",
        shape: CallShape = DEFAULT_SHAPE,
        *,
        accepts: Callable[[str], bool] | None = None,
    ) -> None:
        super().__init__(limits, loose_list=True)  # a comma dropped between call objects: both calls
        self._shape = shape
        self._accepts = accepts  # when given: the names a call may have (another name breaks the value)
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

    @classmethod
    def after_head(
        cls,
        name: str,
        key: str,
        on_start: Callable[[str], int],
        on_args: Callable[[int, str], None],
        on_end: Callable[[int, dict[str, Any]], None],
        limits: Limits,
        head: str,
    ) -> JsonCallReader:
        """A reader for a call object whose head the caller read and decided itself: `head` is its
        text (markup before it included) up to the arguments key `key`, whose `:` and value come
        next; the call to `name` starts now (`on_start` may raise NotACall). Nothing is read twice."""
        reader = cls(on_start, on_args, on_end, limits, head)
        reader._lexer.after_key()
        reader._object_depth, reader._key_depth, reader._key = 0, 1, key
        reader._named(name)
        return reader

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
            if self._shape.name_is_key:
                self._name_key_token(kind, raw, end)
            else:
                self._key_token(kind, raw)
        elif kind == "open" and raw == "{" and self._key == self._shape.wrapper_key and depth == self._key_depth:
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
        elif self._shape.array_only and not self._in_array:
            raise CallShapeError("expected an array of calls", end)
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

    def _name_key_token(self, kind: str, raw: str, end: int) -> None:
        """A key of a one-key call object: the name; its value is the arguments."""
        if self._name is not None:
            raise CallShapeError("a call object with more than one key", end)
        self._name_token(kind, raw, end)
        if self._name is not None:
            self._key = _NAME_IS_KEY

    def _value_token(self, token: Token) -> None:
        kind, raw, depth, _, end = token
        key = self._value
        if key in self._shape.name_keys:
            self._name_token(kind, raw, end)
        elif key in self._shape.argument_keys:
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
        if self._accepts is not None and not self._accepts(name):
            raise CallShapeError(f"a call to {name!r} is not read here", end)
        self._named(name)

    def _named(self, name: str) -> None:
        """The call's name is known: the call starts, with the arguments read before the name."""
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


Literals = tuple[str | tuple[str, ...], ...]
"""Literals in order, whitespace between them; a tuple of literals is one of them."""
_NAME_BODY = re.compile(r'(?:[^"\\\x00-\x1f]|\\[^\x00-\x1f])*')


@dataclass(frozen=True, slots=True)
class CallHead:
    """A call object's head as a format declares it: the literals up to the name's JSON string, then
    those after it, up to the arguments key (the last literal read); `inserted`: what a literal
    brings before the rest of the head (the keys of an optional first key)."""

    before_name: Literals
    after_name: Literals
    inserted: dict[str, Literals] = field(default_factory=dict)


class HeadedCallReader:
    """A call object decided by its head (`CallHead`), as its keys arrive: what waits for the
    decision is bounded (the keys, and the name, at most TOOLCALL_PARSERS_MAX_NAME characters, are
    consumed as they come, never re-read; only a partial key or a lone backslash is held back).

    An object whose head is not a call's is content, from the markup before it (`prefix`) to where
    that became known, where the format reads on. Once the head is a call's, the call starts and a
    `JsonCallReader` reads the rest from there; a call that breaks is text up to the break. Cut off
    once its name began, the object is a broken call; before, content. Events go to the owner
    (`_start_call`, `_call_args`, `_end_call`; `_text` and `_reject` for what is text); `done` tells
    it the object is read, `broken` that it was not a call after all. `accepts`, when given, decides
    by the name (once its string closes) whether the object may be a call at all (a format that
    reads calls of declared tools only in some places)."""

    def __init__(
        self, owner: FormatStream, head: CallHead, prefix: str, accepts: Callable[[str], bool] | None = None
    ) -> None:
        self._owner = owner
        self._shape = head
        self._accepts = accepts
        self._head = [prefix]  # the markup before the object, then the head as read
        self._todo = head.before_name  # what the head expects next (the name once this is empty)
        self._name_at = -1  # in `_head`: where the name's string starts, once its quote came
        self._name_read = 0  # characters of the name's string read so far
        self._name: str | None = None
        self._json: JsonCallReader | None = None
        self.done = self.broken = False

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`: where reading stopped (the owner reads on there once `done`), or None to
        hold `text[pos:]` back."""
        if self._json is not None:
            return self._read_json(self._json, text, pos)
        if self._name_at >= 0 and self._name is None:
            return self._read_name(text, pos)
        if len(self._head) > 1 and (at := self._owner._markup_ws(text, pos, self._head)) > pos:
            return at
        if not self._todo:  # the name's string
            if text[pos] != '"':
                return self._not_a_call(pos)
            self._name_at = len(self._head)
            self._head.append('"')
            return pos + 1
        want = self._todo[0]
        literal = self._owner._literal_at(text, pos, (want,) if isinstance(want, str) else want)
        if literal is None:
            return None  # a partial literal
        if not literal:
            return self._not_a_call(pos)
        self._head.append(literal)
        self._todo = self._shape.inserted.get(literal, ()) + self._todo[1:]
        if not self._todo and self._name is not None:
            self._commit(json.loads(literal))
        return pos + len(literal)

    def read_eof(self, rest: str) -> None:
        """The output ended here (`rest`: the text held back)."""
        if self._json is not None or self._name_at >= 0:
            self._owner._reject("the output ended inside a call", self.pending() + rest)
        else:
            self._owner._text("".join(self._head) + rest)
        self.done = self.broken = True

    def pending(self) -> str:
        """The text read and not reported yet."""
        return "".join(self._json.unfinished if self._json is not None else self._head)

    def _read_name(self, text: str, pos: int) -> int | None:
        """Inside the name's string: consumed as it comes (a lone trailing backslash waits for its
        escape), decided when it closes. Where it stops being a name is fixed by the text (its first
        character past the bound, a control character), so the rest reads the same in every chunking."""
        room = self._owner.limits.max_name - self._name_read
        end = _NAME_BODY.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        if end - pos > room:
            self._head.append(text[pos : pos + room])
            return self._not_a_call(pos + room)
        if end == len(text) or (end == len(text) - 1 and text[end] == "\\"):
            self._head.append(text[pos:end])
            self._name_read += end - pos
            return end if end > pos else None  # the name goes on (a lone backslash: its escape too)
        if text[end] != '"':
            self._head.append(text[pos:end])
            return self._not_a_call(end)
        self._head.append(text[pos : end + 1])
        try:
            name = json.loads("".join(self._head[self._name_at :]))
        except ValueError:
            return self._not_a_call(end + 1)
        if not name or (self._accepts is not None and not self._accepts(name)):
            return self._not_a_call(end + 1)
        self._name, self._todo = name, self._shape.after_name
        return end + 1

    def _not_a_call(self, pos: int) -> int:
        """Not a call: what the head read is content; the owner reads on at `pos`."""
        self._owner._text("".join(self._head))
        self.done = self.broken = True
        return pos

    def _commit(self, key: str) -> None:
        """The head is a call's: the call starts, and the JSON call reader takes over after it."""
        assert self._name is not None
        owner, head = self._owner, "".join(self._head)
        try:
            self._json = JsonCallReader.after_head(
                self._name, key, owner._start_call, owner._call_args, owner._end_call, owner.limits, head
            )
        except NotACall as err:  # the core refused the call (a bound, an undeclared tool)
            owner._reject(f"not a valid call ({err})", head)
            self.done = self.broken = True

    def _read_json(self, reader: JsonCallReader, text: str, pos: int) -> int | None:
        try:
            stop, done = reader.feed(text, pos)
        except JsonSyntaxError as err:
            self._owner._reject(f"not a valid call ({err})", "".join(reader.unfinished))
            self.done = self.broken = True
            return err.pos
        self.done = done
        return stop if stop > pos or done else None
