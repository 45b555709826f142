"""The shared half of every format machine: the reader loop, event output, content trimming, ids,
bounded logging, never raising.

A format subclasses `FormatStream`, fills `_readers` (one reader per state) and implements
`_close()`, reporting what it recognises through `_text`, `_start_call`, `_call_args`, `_end_call`
and `_reject`. This class turns that into the public `feed()` / `close()` contract:

- **One buffer, a scan position** (h11's receive buffer): a reader is called as
  `reader(text, pos)` and returns the position it read up to, or None to hold `text[pos:]` back until
  more text comes. No step copies the rest of the text, so a delta costs what it holds, however many
  small steps it takes; what a reader holds back is short (a partial marker, a name, a number), so
  prepending it to the next delta is cheap too.
- Content is trimmed at both ends of the response the same way in streaming and in `parse()`:
  leading whitespace is never sent, and whitespace is held back until real text follows it (then
  sent), so whitespace next to a call or at the end never reaches the client. A format whose
  models' clients expect the content as written (`keeps_whitespace`, Step-5) sends the text before
  its first call untrimmed.
- **The streaming policy** (`Limits.streaming`): a call's events are held until the call completes
  (or its arguments pass the policy's bound), and dropped if it breaks first, its text then coming
  back as text exactly as `parse()` returns it; so a stream never shows a call that the finished
  response would not return. The decision depends only on the text, never on the chunking.
- **Strict calls** (`pin_arguments`): a call to a tool whose arguments a strict request pins is held
  until complete whatever the policy, then checked against the tool's schema (`SchemaCheck`); one
  the schema refuses is given back as text, as the format writes it, with a logged reason. So a
  strict request never shows or returns a call its schema refuses, streamed or finished.
- Call indexes run 0..n-1 over the calls a client is shown, given when a call is released; ids
  come from the engine's factory.
- Logging is bounded per response: the first few rejected spans (`Limits.log_spans`), then one
  summary line at `close()` with the count.
- Nothing raises into the engine: an internal error is logged once with the format name, and the
  text not yet accounted for is passed through, once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .events import CallArgs, CallEnd, CallStart, Event, Text, merge_text
from .ids import IdFactory, random_call_id
from .limits import Limits, streaming_policy
from .logs import logger, shorten
from .markers import literal_at
from .schema_check import SchemaCheck
from .tally import Tally, reason_kind
from .tools import ToolIndex

_SURROGATE = re.compile("[\ud800-\udfff]")

JSON_SPACE = re.compile(r"[ \t\r\n]*")
"""Whitespace as JSON reads it: what most formats allow between their markup."""
ANY_SPACE = re.compile(r"\s*")
"""Any whitespace, Unicode included: what the XML-like formats allow between their tags."""

Reader = Callable[[str, int], "int | None"]
"""A state's reader: consumes `text` from `pos`; returns where it stopped, or None to hold the rest."""


class NotACall(Exception):
    """Raised by a format's reader: the text it is reading turns out not to be a call. `pos` is
    where reading goes on in the reader's text (None: where that reader started); `ended`: the
    broken call's text ends there (its close was read), so nothing is skipped to find its end."""

    def __init__(self, reason: str, pos: int | None = None, *, ended: bool = False) -> None:
        super().__init__(reason)
        self.pos = pos
        self.ended = ended


class DeferredBound:
    """A call's argument fragments, sent on until one passes the call's size bound. Past it nothing
    more is sent, and the break waits for the end of the value or call (`check`): a place the text
    fixes, so every chunking breaks the call at the same place and its text is read once."""

    __slots__ = ("_reason", "_send")

    def __init__(self, send: Callable[[str], None]) -> None:
        self._send = send
        self._reason: str | None = None

    def reset(self) -> None:
        self._reason = None

    @property
    def passed(self) -> bool:
        return self._reason is not None

    def send(self, fragment: str) -> None:
        if self._reason is None:
            try:
                self._send(fragment)
            except NotACall as err:
                self._reason = str(err)

    def check(self, pos: int | None = None) -> None:
        """Raise NotACall (with `pos`, where reading goes on) if the bound was passed."""
        if self._reason is not None:
            raise NotACall(self._reason, pos)


@dataclass(slots=True)
class _HeldCall:
    """A call whose events wait for the streaming policy's decision."""

    key: int  # the format's own index for it
    name: str
    call_id: str | None
    fragments: list[str] = field(default_factory=list)
    chars: int = 0
    pinned: bool = False  # a strict call: held until complete and checked


class FormatStream:
    """Base of the incremental parsers; one instance parses one response.

    A format is a table of readers, one per state (as in h11): `_readers[_state](text, pos)`
    consumes what it can, possibly changes `_state`, and returns where the next reader starts.
    A reader raising NotACall hands over to `_recover`, which returns where reading goes on.
    """

    format_name = "?"
    markup_space: re.Pattern[str] = JSON_SPACE
    """The whitespace the format allows between its markup (`_markup_ws`)."""
    keeps_whitespace = False
    """Content before the first call is sent as written, its whitespace untrimmed; after a call,
    whitespace reaches the client only when text follows it (so the line breaks between blocks and
    after the last one stay markup)."""
    _readers: dict[str, Reader]
    _state: str

    def __init__(self, tools: Any = None, id_factory: IdFactory | None = None) -> None:
        self.tools = ToolIndex(tools)
        self.limits = Limits.from_env()
        self._id_factory = id_factory or random_call_id
        self._out: list[Event] = []
        self._sent_text = False
        self._held_whitespace: list[str] = []
        self._next_key = 0  # the formats' own call numbers, one per started call
        self._shown: dict[int, int] = {}  # a format's call number -> the index the client sees
        self._held: _HeldCall | None = None  # the call the streaming policy holds back
        self._calls_done = 0
        self._call_chars = 0  # arguments JSON sent for the current call
        self._warnings = 0
        self._failed = False
        self._closed = False
        self._buf = ""  # held back by the current reader until more text comes
        self._text_in = ""  # the text being read, where its current step started, and the events
        self._step_at = 0  # before that step: on an internal error, what is not accounted for yet
        self._step_mark = 0
        self._pinned: frozenset[str] | None = frozenset()  # strict tools (None: every tool)
        self._check: SchemaCheck | None = None
        self._write_refused: Callable[[str, dict[str, Any]], str] | None = None
        self.tally = Tally()
        """What the response came to so far (`core.tally`), for the operator's metrics."""
        self._audit: SchemaCheck | None = None  # checks every returned call's arguments, for the tally
        self._names: dict[int, str] = {}  # a format's call number -> its tool's name

    # -- public contract ----------------------------------------------------------------------

    def set_streaming(self, policy: object) -> None:
        """Use another streaming policy for this response (`complete`, `eager` or a number of
        argument characters; ValueError otherwise). Call it before the first feed."""
        self.limits = replace(self.limits, streaming=streaming_policy(policy))

    def pin_arguments(self, names: frozenset[str] | None, write: Callable[[str, dict[str, Any]], str]) -> None:
        """A strict request: calls to `names` (every tool if None; an undeclared tool always) are held
        until complete and checked against the tool's schema; one the schema refuses is given back
        as `write(name, arguments)`, the format's own text for it. Call it before the first feed."""
        self._pinned = names
        self._check = SchemaCheck(self.tools.schemas)
        self._write_refused = write

    def audit_schemas(self) -> None:
        """Count the returned calls whose arguments the tool's schema refuses (`tally`), strict or
        not: each is checked once, when it ends; what is returned does not change. Call it before
        the first feed."""
        self._audit = self._check or SchemaCheck(self.tools.schemas)

    def feed(self, text: str) -> list[Event]:
        """Consume the next piece of model output; return the events it makes unambiguous."""
        if not isinstance(text, str):
            raise TypeError(f"{self.format_name}: feed() takes str, not {type(text).__name__}")
        if self._closed:
            raise RuntimeError(f"{self.format_name}: feed() after close()")
        if not text:
            return []
        if self._failed:
            self._text(text)
        else:
            if self._buf:
                text = self._buf + text
                self._buf = ""
            self._text_in, self._step_at, self._step_mark = text, 0, len(self._out)
            try:
                self._feed(text)
            except Exception:  # a bug of ours must not take the engine down
                self._fail()
        return self._drain()

    def close(self) -> list[Event]:
        """End of output: release held text and settle unfinished blocks."""
        if self._closed:
            return []
        self._closed = True
        if not self._failed:
            self._text_in, self._step_at, self._step_mark = self._buf, 0, len(self._out)
            try:
                self._close()
            except Exception:
                self._fail()
        self._held = None  # a call still held at the end never completed
        self._held_whitespace.clear()
        if self._warnings > self.limits.log_spans:
            logger.warning(
                "%s: %d rejected spans or warnings in this response, %d not logged (TOOLCALL_PARSERS_LOG_SPANS=%d)",
                self.format_name,
                self._warnings,
                self._warnings - self.limits.log_spans,
                self.limits.log_spans,
            )
        return self._drain()

    # -- the reader loop ------------------------------------------------------------------------

    def _feed(self, text: str) -> None:
        """Run the readers over `text` (what was held back, then the new piece)."""
        readers = self._readers
        pos, end = 0, len(text)
        while pos < end:
            state = self._state
            self._step_at = pos
            self._step_mark = len(self._out)
            try:
                step = readers[state](text, pos)
            except NotACall as err:
                step = self._recover(err, text, pos)
            if step is None:
                self._buf = text[pos:]
                break
            if step == pos and self._state == state:
                raise RuntimeError(f"state {state} read nothing at {pos}")  # a bug: never loop forever
            pos = step
        self._text_in = ""

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The text being read is not a call: report it as text; return where reading goes on."""
        raise err

    # -- for the formats ----------------------------------------------------------------------

    def _markup_ws(self, text: str, pos: int, markup: list[str], space: re.Pattern[str] | None = None) -> int:
        """Whitespace as markup: consume the run at `pos` (of `space`, the format's `markup_space` by
        default) into `markup`, the text that goes back as text if what it frames breaks; return the
        position after it, `pos` when there is none. A run is consumed as it arrives, never held."""
        end = (space or self.markup_space).match(text, pos).end()  # type: ignore[union-attr]
        if end > pos:
            markup.append(text[pos:end])
        return end

    @staticmethod
    def _literal_at(text: str, pos: int, literals: Sequence[str]) -> str | None:
        """Literal here, partial literal, or mismatch: which of `literals` starts at `pos` (that
        literal); None while `text[pos:]` may still grow into one (hold it back); "" if none can."""
        return literal_at(text, pos, literals)

    def _close(self) -> None:
        raise NotImplementedError

    def _pending_text(self) -> str:
        """Text the format has consumed but not reported yet (released when it fails)."""
        return ""

    def _text(self, text: str) -> None:
        if not text:
            return
        self._held = None  # text while a call is held: that call broke, and its text comes back
        if self.keeps_whitespace and not self._calls_done:  # before the first call: as written
            self._out.append(Text(text))
            self._sent_text = True
            return
        if not self._sent_text:
            text = text.lstrip()
            if not text:
                return
        body = text.rstrip()
        if not body:
            self._held_whitespace.append(text)
            return
        if self._held_whitespace:
            self._out.append(Text("".join(self._held_whitespace)))
            self._held_whitespace.clear()
        self._out.append(Text(body))
        self._sent_text = True
        if len(body) < len(text):
            self._held_whitespace.append(text[len(body) :])

    def _start_call(self, name: str, call_id: str | None = None) -> int:
        """Announce a call; `call_id` is a model-written id the format decided to keep. Returns the
        format's number for the call (pass it to `_call_args` / `_end_call`). Raises NotACall when
        the call is refused (a bound, or an undeclared tool the operator refuses)."""
        if self._calls_done >= self.limits.max_calls:
            raise NotACall(f"more than {self.limits.max_calls} calls in one response (TOOLCALL_PARSERS_MAX_CALLS)")
        if _SURROGATE.search(name):
            raise NotACall("the tool name holds a lone surrogate")
        if not self.tools.knows(name):
            if self.limits.undeclared_as_text:
                raise NotACall(f"a call to {name!r}, which the request did not declare")
            self._warn(f"call to {name!r}, which is not among the request's tools")
        key = self._next_key
        self._next_key += 1
        self._names[key] = name
        self._call_chars = 0
        pinned = self._check is not None and (
            self._pinned is None or name in self._pinned or name not in self.tools.schemas
        )
        self._held = _HeldCall(key, name, call_id, pinned=pinned)
        if self.limits.streaming == 0 and not pinned:
            self._release()
        return key

    def _make_id(self, name: str, index: int) -> str:
        return self._id_factory(name, index)

    def _call_args(self, key: int, fragment: str) -> None:
        """Send a piece of the call's arguments JSON. Raises NotACall past the size bound."""
        if not fragment:
            return
        self._call_chars += len(fragment)
        if self._call_chars > self.limits.max_call_chars:
            raise NotACall(
                f"the call's arguments pass {self.limits.max_call_chars} characters (TOOLCALL_PARSERS_MAX_CALL_CHARS)"
            )
        held = self._held
        if held is not None and held.key == key:
            held.fragments.append(fragment)
            held.chars += len(fragment)
            bound = self.limits.streaming
            if bound is not None and held.chars > bound and not held.pinned:
                self._release()
        elif key in self._shown:
            self._out.append(CallArgs(self._shown[key], fragment))

    def _end_call(self, key: int, arguments: dict[str, Any]) -> None:
        held = self._held
        if held is not None and held.key == key:
            if held.pinned and self._refused(held.name, arguments, "".join(held.fragments)):
                return
            self._release()
        if key in self._shown:
            self._out.append(CallEnd(self._shown[key], arguments))
            self._calls_done += 1
            self._count_call(self._names.get(key, ""), arguments, held is not None and held.key == key and held.pinned)

    def _count_call(self, name: str, arguments: dict[str, Any], checked: bool) -> None:
        """A returned call, in the tally: to an undeclared tool, or with arguments its schema refuses
        (a strict call was checked already)."""
        tally = self.tally
        tally.calls += 1
        if not self.tools.knows(name):
            tally.undeclared_calls += 1
        elif self._audit is not None and not checked and self._audit.refuses(name, arguments, self._call_chars):
            tally.schema_failures += 1

    def _refused(self, name: str, arguments: dict[str, Any], arguments_json: str) -> bool:
        """A strict call is complete: whether its schema refuses it (then it is text, and logged)."""
        assert self._check is not None and self._write_refused is not None
        reason = self._check.reason(name, arguments, arguments_json)
        if reason is None:
            return False
        self._held = None
        self._warn(f"a strict call to {name!r} that its schema refuses ({reason}); kept as text")
        written = self._write_refused(name, arguments)
        self.tally.reject("schema" if name in self.tools.schemas else "undeclared_tool", len(written))
        self._text(written)
        return True

    def _release(self) -> None:
        """The held call is shown: it gets the next index, its id, and what it held so far."""
        held, self._held = self._held, None
        assert held is not None
        index = self._shown[held.key] = len(self._shown)
        self._out.append(CallStart(index, held.call_id or self._make_id(held.name, index), held.name))
        if held.fragments:
            self._out.append(CallArgs(index, "".join(held.fragments)))

    def _reject(self, reason: str, span: str, *, rest_of_last: bool = False) -> None:
        """A span that looked like a call is not one: log why, and return it as text. The tally
        counts it by its reason's kind (`core.tally.reason_kind`); `rest_of_last`: it is what is
        left of the block just counted (its markup after a refused call), counted as its text."""
        self._held = None
        if span:
            if rest_of_last:
                self.tally.add_chars(len(span))
            else:
                self.tally.reject(reason_kind(reason), len(span))
            self._warn(f"{reason}; kept as text: {shorten(span)}")
            self._text(span)

    def _warn(self, message: str) -> None:
        self._warnings += 1
        if self._warnings <= self.limits.log_spans:
            logger.warning("%s: %s", self.format_name, message)

    # -- internals ----------------------------------------------------------------------------

    def _fail(self) -> None:
        """An internal error: drop what the failed step produced, log once, and pass through what
        the format holds plus the text from the failed step on, so nothing is lost or repeated."""
        logger.exception("%s: internal parser error; passing the rest of the output through", self.format_name)
        self._failed = True
        self._held = None
        del self._out[self._step_mark :]
        try:
            pending = self._pending_text()
        except Exception:
            pending = ""
        text, self._text_in = self._text_in[self._step_at :], ""
        self.tally.reject("internal_error", len(pending + text))
        self._text(pending + text)
        self._buf = ""

    def _drain(self) -> list[Event]:
        out = merge_text(self._out)
        self._out = []
        return out
