"""The family of calls written as literals between tokens, Gemma 4's `call:NAME{key:value,...}`:
`gemma_calls`'s docstring states the grammar and every decided case, and `core/gemma_literals.py`
reads the arguments. A format of the family is one `LiteralCalls` value: its marker sets
(`core.gemma_literals.Dialect`: opener, closer, string delimiter; the first is what the writer and
the constraints write), the word before a call's name, tokens dropped where they stand outside a
call, and its think pair; its stream class, writer, `required` and strict `auto` constraints and
`Format` come from it. Formats derived from a chat template that writes such calls are values of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.gemma_literals import BARE_KEY, ArgumentsGrammar, Dialect, GemmaArguments, GemmaSyntaxError
from ...core.ids import IdFactory
from ...core.outside import OutsideCalls, ThinkMarkers
from ...core.stream import DeferredBound, FormatStream, NotACall, shorten
from ..constraints import repeated, structural, triggered
from ..spec import Call, Constraint, ConstraintRequest, Format, Writer
from . import format_stream

_TEXT, _HEAD, _NAME, _ARGS, _END = "text", "head", "name", "args", "end"
_NAME_RUN = re.compile(r"[^\s{}()\[\]<>,\"']*")


class LiteralCallsStream(FormatStream):
    """Incremental parser for one response of a format of the family; `LiteralCalls.stream_class`
    sets its marker sets (`dialects`, by opener), `call_word` and the `dropped` tokens."""

    format_name = "?"
    dialects: ClassVar[dict[str, Dialect]] = {}
    call_word = "call:"
    dropped: tuple[str, ...] = ()

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = None
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [*self.dialects, *self.dropped], think_markers)
        self._state = _TEXT
        self._dialect = next(iter(self.dialects.values()))
        self._raw: list[str] = []  # the call's text so far: text again if it breaks
        self._args: GemmaArguments | None = None
        self._key = -1
        self._bound = DeferredBound(self._send_now)  # the arguments' bound, acted on at the call's end
        self._readers = {
            _TEXT: self._scan_text,
            _HEAD: self._scan_head,
            _NAME: self._scan_name,
            _ARGS: self._scan_args,
            _END: self._scan_end,
        }

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None and m.group() not in self.dropped:  # a dropped one ends the turn's calls
            self._dialect = self.dialects[m.group()]
            self._raw = [m.group()]
            self._state = _HEAD
        return at

    def _scan_head(self, text: str, pos: int) -> int | None:
        found = self._literal_at(text, pos, (self.call_word,))
        if found is None:
            return None
        if not found:
            raise NotACall(f"no {self.call_word} after the opener", pos)
        self._raw.append(found)
        self._state = _NAME
        return pos + len(found)

    def _scan_name(self, text: str, pos: int) -> int | None:
        bound = self.limits.max_name
        end = _NAME_RUN.match(text, pos, pos + bound + 1).end()  # type: ignore[union-attr]
        if end - pos > bound:
            raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        if end == len(text):
            return None
        name, bracket = text[pos:end], text[end]
        if not name or bracket not in "{(":
            raise NotACall(f"no '{{' after the tool name {shorten(name)}", end)
        self._key = self._start_call(name)
        self._bound.reset()
        self._args = GemmaArguments(self._dialect, bracket, self.tools.schemas.get(name), self._send_args, self.limits)
        if bracket == "(":
            self._warn(f"a parenthesized call to {shorten(name)}; read as braces")
        self._raw.append(text[pos : end + 1])
        self._state = _ARGS
        return end + 1

    def _send_args(self, fragment: str) -> None:
        """Pass a piece of the arguments on. Past the size bound the call is broken, but it is read
        on to its end, which then comes back as text: breaking where the bound is crossed would
        read the rest of the call again from there (a string that never closes holds every later
        opener: one pass each, quadratic)."""
        self._bound.send(fragment)

    def _send_now(self, fragment: str) -> None:
        self._call_args(self._key, fragment)

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        try:
            end = self._args.read(text, pos)
        except GemmaSyntaxError as err:
            raise NotACall(str(err), err.pos) from None
        if end is None:
            return None
        self._raw.append(text[pos:end])
        if self._args.done:
            self._state = _END
        return end

    def _scan_end(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._literal_at(text, pos, (self._dialect.closer,))
        if found is None:
            return None
        if not found:
            raise NotACall(f"no {self._dialect.closer} after the arguments", pos)
        self._finish(pos + len(found))
        return pos + len(found)

    def _finish(self, at: int | None) -> None:
        """The call ends: its closer read (reading goes on at `at`), or the output ended after its
        arguments. NotACall if its arguments passed the call's size bound."""
        assert self._args is not None
        self._bound.check(at)
        if self._args.missed:
            self._warn(f"{self._args.missed} string(s) without a closing delimiter, ended before the next key")
        self._end_call(self._key, self._args.arguments)
        self._raw, self._args = [], None
        self._state = _TEXT

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The call breaks: its text so far (and up to the break) is text; scanning goes on there."""
        at = pos if err.pos is None else max(err.pos, pos)
        self._reject(f"not a valid tool call ({err})", "".join(self._raw) + text[pos:at])
        self._raw, self._args = [], None
        self._state = _TEXT
        return at

    def _close(self) -> None:
        rest, self._buf = self._buf, ""
        if self._state == _END and not self._bound.passed:  # only the closer missing, or cut part-way
            self._finish(None)
        if self._state == _TEXT:
            self._text(rest)  # a closer cut part-way is text, as written
        else:
            self._reject("the output ended inside a tool call", "".join(self._raw) + rest)
        self._raw, self._args = [], None

    def _pending_text(self) -> str:
        return "".join(self._raw)


# -- the writer and the constraints ----------------------------------------------------------------


def literal(value: Any, delim: str) -> str:
    """A value as Gemma 4's template prints it (`format_argument`): strings between delimiters,
    unescaped; booleans `true` / `false`; mappings with bare, sorted keys (`my key` too); None as
    `None`. A key the template would write bare but that would not read back as one (`x:y`, ` a`)
    is written between delimiters, as the template writes keys in declarations."""
    if isinstance(value, str):
        return delim + value + delim
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        members = (f"{_key(k, delim)}:{literal(v, delim)}" for k, v in sorted(value.items()))
        return "{" + ",".join(members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(literal(v, delim) for v in value) + "]"
    return str(value)


def _key(key: str, delim: str) -> str:
    return key if BARE_KEY.fullmatch(key) else delim + key + delim


def writes_name(name: str) -> bool:
    return _NAME_RUN.fullmatch(name) is not None


@dataclass(frozen=True)
class LiteralCalls:
    """One format of the family, as data: `dialects` its marker sets (the first is what the writer
    and constraints write), `call_word` what stands between the opener and the name, `dropped` the
    tokens dropped wherever they stand outside a call (Gemma 4's `<|tool_response>`), `think` the
    think pair its stream reads as text; the rest is the `Format`'s own."""

    name: str
    summary: str
    dialects: tuple[Dialect, ...]
    call_word: str = "call:"
    dropped: tuple[str, ...] = ()
    think: tuple[str, str] = ("<think>", "</think>")
    think_label: str = ""
    special_tokens: tuple[str, ...] = ()
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    def stream_class(self, module: str) -> type[LiteralCallsStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        return format_stream(
            LiteralCallsStream,
            self.name,
            module,
            "calls as literals",
            self.think,
            dialects={d.opener: d for d in self.dialects},
            call_word=self.call_word,
            dropped=self.dropped,
        )

    def write(self, calls: Sequence[Call]) -> str:
        """The calls back to back, as the chat template writes a turn's calls."""
        d = self.dialects[0]
        head = d.opener + self.call_word
        return "".join(f"{head}{name}{literal(dict(arguments), d.delimiter)}{d.closer}" for name, arguments in calls)

    def _call_tag(self, request: ConstraintRequest, name: str) -> dict[str, Any]:
        d = self.dialects[0]
        grammar = ArgumentsGrammar(
            lambda v: literal(v, d.delimiter), lambda k: _key(k, d.delimiter), d.delimiter, d.opener
        )
        schema = request.parameters(name) if request.pins(name) else {"type": "object"}
        body = grammar.text(grammar.members(schema))
        return {
            "type": "tag",
            "begin": f"{d.opener}{self.call_word}{name}{{",
            "content": {"type": "grammar", "grammar": body},
            "end": f"}}{d.closer}",
        }

    def constraints(self) -> tuple[Constraint, Constraint]:
        """`required`: the calls at once, one or more (one if `single`), each to a named tool with
        its arguments held to the schema where pinned; strict `auto`: free text where the opener
        opens a call to a declared tool."""

        def required(request: ConstraintRequest) -> dict[str, Any]:
            return structural(repeated(request, [self._call_tag(request, name) for name in request.names]))

        def auto(request: ConstraintRequest) -> dict[str, Any]:
            tags = [self._call_tag(request, name) for name in request.schemas]
            return triggered(request, [self.dialects[0].opener], tags)

        return required, auto

    def writes_value(self, value: Any) -> bool:
        """A string (or key) holding the delimiter or the closer cannot be written: nothing escapes them."""
        d = self.dialects[0]
        pending = [value]
        while pending:
            item = pending.pop()
            if isinstance(item, str):
                if d.delimiter in item or d.closer in item:
                    return False
            elif isinstance(item, dict):
                pending.extend(item)
                pending.extend(item.values())
            elif isinstance(item, list):
                pending.extend(item)
        return True

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        required, auto = self.constraints()
        writer: Writer = self.write
        markers = tuple(m for d in self.dialects for m in (d.opener, d.closer, d.delimiter))
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            writer,
            markers=markers,
            special_tokens=self.special_tokens,
            required_constraint=required,
            auto_constraint=auto,
            writes_name=writes_name,
            writes_value=self.writes_value,
            typed_values=True,
            think_label=self.think_label,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )
