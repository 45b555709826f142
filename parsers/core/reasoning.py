"""Reasoning before the answer: the split that a reasoning parser of ours makes, sans I/O.

A reasoning model writes a think block (`<think>..</think>`, or its family's markers) and then its
answer, with calls. This machine splits the output into `Reasoning` text and the rest (`Text`,
which a format machine then reads for calls), the same way for a finished output and for any
chunking of it, so that a reasoning parser and a tool parser composed by an engine tell one story:

- **Where reasoning is.** The output's first think block, where the output starts with one
  (whitespace before it is dropped), or from the start when the prompt left one open (an opener
  the model writes again there is dropped, as DeepSeek R1's does); none when
  the prompt closed one (thinking switched off);
  anything else before the answer means the model is not reasoning, and all of it is the answer.
  The block's markers are dropped, and whitespace at both ends of the reasoning (the block's
  line breaks) is never sent. A later think block is the answer's text, as the format machines
  read it (reasoning markup inside an answer never starts a call).
- **A call inside an unclosed think is a call.** Models that call while thinking (Qwen3.5,
  DeepSeek V4, Kimi K2) open a call inside the block and never close the block. A call opener
  inside the block (`openers`, the format's distinctive start markers) holds what follows until
  the text says which it is: the block's closer after it means the call was drafted in reasoning,
  and all of it is reasoning; the end of the output without a closer means reasoning ended at the
  opener, and the answer starts at the first call the format reads in the rest (prose that named
  the opener before it is reasoning). So markup named in reasoning prose stays reasoning when the
  block closes, and a closed block never calls. A closer written inside a held call's value
  (`{"q": "a </think> b"}`) does not close the block: a `probe`, the format's machine streaming
  eagerly, reads the held text and says where a call is open; at the end, that closer was data
  only if the call around it is read complete with it and not without it, and is not still open
  at a later call opener from which the format reads a call (else the block closed there: a draft
  call left unfinished, or one abandoned mid-value before the real call, which a raw value would
  swallow into one call). Held text in which the format reads no call, and any held
  text of a request with no tools (or `tool_choice="none"`), is reasoning (`close(calls=...)`).
  What is held is bounded (`Limits.max_call_chars`, all the held text together); past that it is
  reasoning, at a place the text fixes, whatever the chunking.

An engine's decoding constraint asks where reasoning ends as tokens come, some of them drafts it
may reject: `closed` says the block ended at its closer, and `would_close` whether text not fed yet
would end it there, so the constraint starts where the split ends the block (not at a closer kept
inside a held call's value, nor at one where no block opened).

Cost is linear: one `MarkerScanner` pass per state, holding back only a partial marker (or the held
text, whose length the bound caps).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .events import CallEnd, CallStart, Text
from .logs import logs_silenced
from .markers import MarkerScanner, literal_at


@dataclass(frozen=True, slots=True)
class Reasoning:
    """Reasoning text (the inside of the think block, its markers dropped)."""

    text: str


Piece = Reasoning | Text

CallReading = Callable[[str], "tuple[int, int] | None"]
"""A format's reading of text held after a call opener: (where its first call starts, how many
calls it reads), or None where it reads no call (or the request may not call)."""

BEFORE, INSIDE, HELD, AFTER = "before", "inside", "held", "after"

_LATER_OPENERS = 3
"""How many later call openers in held text are tried when the format reads no call from the first."""

_JUDGED_CLOSERS = 4
"""How many closers let pass in held text are judged at the end (the first inside each call the
probe opened); one let pass inside a later call is taken as data. Each judgment reads held text."""


class ReasoningSplit:
    """Splits one output into reasoning and answer text. `pairs`: the think markers the model may
    write, (open, close) (a block the prompt opened ends at any pair's closer); `openers`: call openers that
    may end an unclosed block; `start`: where the prompt left reasoning (`generation_start`:
    "before", "opened" in a block of any pair, "closed"); `bound`: the most text held after an
    opener; `probe`: makes the format's machine (eager streaming) that reads the held text, to
    tell a closer inside a call's value from the block's; `label`: markup the model writes at the
    start of the block (Gemma 4's `thought\n`), dropped there and nowhere else."""

    def __init__(
        self,
        pairs: Sequence[tuple[str, str]],
        openers: Sequence[str] = (),
        *,
        start: str = "before",
        label: str = "",
        bound: int = 1 << 20,
        probe: Callable[[], Any] | None = None,
    ) -> None:
        if not pairs:
            raise ValueError("a reasoning split needs at least one (open, close) pair")
        self._closers = dict(pairs)
        self._open = MarkerScanner(self._closers)
        self._openers = tuple(openers)
        self._bound = bound
        self._state = {"before": BEFORE, "opened": BEFORE, "closed": AFTER}[start]
        # Where the output does not start with an opener: the answer, or (the prompt opened the
        # block, and the model did not write its opener again) inside the prompt's block.
        self._opened = start == "opened"
        self._inside: MarkerScanner | None = None
        self._close_only: MarkerScanner | None = None
        if start == "opened":  # the prompt's opener may be any pair's: any closer ends the block
            self._enter([close for _, close in pairs])
        self._buf = ""  # a partial marker held until more text comes
        self._lead_space: list[str] = []  # BEFORE: whitespace before the block (dropped if one opens)
        self._held: list[str] = []  # HELD: the text from the opener on
        self._held_len = 0
        self._new_probe = probe
        self._probe: Any = None  # HELD: the format machine reading the held text
        self._open_calls = 0
        self._calls_opened = 0  # HELD: calls the probe has opened
        # HELD: (offset, length, call) of the first closer let pass inside each call, in order
        self._skipped: list[tuple[int, int, int]] = []
        self._space: list[str] = []  # reasoning whitespace not sent yet (it may be the block's last)
        self._sent_reasoning = False
        self._label = label
        self._lead = ""  # the reasoning's first characters while they may still be the label
        self._out: list[Piece] = []
        self._closed = False  # the block ended at its closer
        self._unclosed = False  # the output ended inside the block

    @property
    def ended(self) -> bool:
        """Reasoning is over: everything from here on is the answer."""
        return self._state == AFTER

    @property
    def reasoning(self) -> bool:
        """Reading inside the block (its text so far is reasoning, or held after a call opener)."""
        return self._state in (INSIDE, HELD)

    @property
    def holding(self) -> bool:
        """Text after a call opener inside the block waits for the block's end or the output's."""
        return self._state == HELD

    @property
    def block(self) -> str | None:
        """How the reasoning block ended: "closed" at its closer, "unclosed" (the output ended
        inside it; known once `close` ran), None: no block (yet)."""
        return "closed" if self._closed else "unclosed" if self._unclosed else None

    @property
    def closed(self) -> bool:
        """The block ended at its closer as the text came (not: the output had no block, or ended
        inside it): where an engine may start constraining the answer."""
        return self._closed

    def would_close(self, text: str) -> bool:
        """Whether feeding `text` next would end the block at its closer, the split left as it is:
        what a decoding constraint asks of tokens it has not accepted yet (a speculative step's).
        Only text that completes a closer can; the common shapes (a closer after reasoning text,
        or first in the step inside held text) are answered from the state, any other on a copy of
        the split (a closer after other text of the same step inside held text: a speculative step's
        drafts)."""
        if self._state == AFTER:
            return False
        whole = self._buf + text
        if not any(closer in whole for closer in self._closers.values()):
            return False
        if self._state == INSIDE:
            assert self._inside is not None
            m = self._inside.search(whole, 0)
            if m is not None and m.group() not in self._openers:
                return True  # the block's closer, reasoning before it
        elif self._state == HELD:
            assert self._close_only is not None
            m = self._close_only.search(whole, 0)
            if m is not None and m.start() == 0:  # the probe has read all that comes before it
                if not self._open_calls:
                    return True  # the block's closer
                if self._close_only.search(whole, m.end()) is None:
                    return False  # let pass inside a call's value, and no other closer follows
        trial = copy.deepcopy(self)
        trial.feed(text)
        return trial.closed

    def feed(self, text: str) -> list[Piece]:
        if self._buf:
            text, self._buf = self._buf + text, ""
        pos = 0
        while pos < len(text):
            pos = self._step(text, pos)
            if pos < 0:
                self._buf = text[-pos - 1 :] if pos != -1 - len(text) else ""
                break
        return self._drain()

    def close(self, *, calls: bool | CallReading = True) -> list[Piece]:
        """End of output. `calls` says where calls are in the text held from an opener in an
        unclosed block (the answer from the first one on; reasoning before it): a bool (True: one,
        at the opener; False: none, the request may not call), or the format's reading of the held
        text (`CallReading`)."""
        rest, self._buf = self._buf, ""
        self._unclosed = self._state in (INSIDE, HELD) or (self._state == BEFORE and self._opened)
        if self._state == BEFORE and self._opened:
            self._reason(rest)
        elif self._state == BEFORE:
            self._answer(rest.lstrip())
        elif self._state == INSIDE:
            self._reason(rest)
        elif self._state == HELD:
            self._take(rest)
            self._settle_held(calls)
        else:
            self._answer(rest)
        self._flush_lead()
        self._state = AFTER
        return self._drain()

    # -- the states ---------------------------------------------------------------------------

    def _step(self, text: str, pos: int) -> int:
        """Read from `pos`; return where reading goes on, or -1 - start of what to hold back."""
        state = self._state
        if state == AFTER:
            self._answer(text[pos:])
            return len(text)
        if state == BEFORE:
            start = len(text) - len(text[pos:].lstrip())
            if start > pos:  # whitespace: dropped if a block follows
                self._lead_space.append(text[pos:start])
            if start == len(text):
                return start
            opener = literal_at(text, start, self._closers)
            if opener is None:
                return -1 - start
            lead, self._lead_space = "".join(self._lead_space), []
            if opener:
                self._enter([self._closers[opener]])
                self._state = INSIDE
                return start + len(opener)
            if self._opened:  # inside the block the prompt opened
                self._state = INSIDE
                return start
            self._state = AFTER  # the model answers without reasoning
            self._answer(lead + text[start:])
            return len(text)
        scanner = self._inside if state == INSIDE else self._close_only
        assert scanner is not None
        m = scanner.search(text, pos)
        end = m.start() if m is not None else scanner.releasable(text, pos)
        room = max(0, self._bound - self._held_len)  # a marker taken whole may have passed the bound
        if state == HELD and end - pos > room:
            # Too long to be a call that ends the output: reasoning, cut where the text says.
            cut = pos + room
            self._held.append(text[pos:cut])
            self._release_held()
            self._state = INSIDE
            return cut
        self._take(text[pos:end])
        if m is None:
            return len(text) if end == len(text) else -1 - end
        if state == INSIDE and m.group() in self._openers:
            self._state = HELD
            self._probe = self._new_probe() if self._new_probe is not None else None
            self._open_calls = 0
            self._take(m.group())
            return m.end()
        if state == HELD and self._open_calls:  # the closer may be written inside a call's value
            judged = self._skipped[-1][2] if self._skipped else 0
            if judged != self._calls_opened and len(self._skipped) < _JUDGED_CLOSERS:
                self._skipped.append((self._held_len, len(m.group()), self._calls_opened))
            self._take(m.group())
            return m.end()
        if state == HELD:  # the block's closer: what was held was drafted in reasoning
            self._release_held()
        self._flush_lead()
        self._state = AFTER
        self._closed = True
        self._space = []
        return m.end()

    def _enter(self, closers: Sequence[str]) -> None:
        self._inside = MarkerScanner([*closers, *self._openers])
        self._close_only = MarkerScanner(closers)

    def _take(self, text: str) -> None:
        """Text inside the block: reasoning, or held after an opener."""
        if not text:
            return
        if self._state != HELD:
            self._reason(text)
            return
        self._held.append(text)
        self._held_len += len(text)
        if self._probe is not None:
            with logs_silenced():  # prose naming an opener is reasoning, not a broken call
                events = self._probe.feed(text)
            for event in events:
                if isinstance(event, CallStart):
                    self._open_calls += 1
                    self._calls_opened += 1
                elif isinstance(event, CallEnd):
                    self._open_calls -= 1
                elif isinstance(event, Text):
                    self._open_calls = 0  # a call that broke comes back as text

    def _settle_held(self, calls: bool | CallReading) -> None:
        """The output ended inside the block, after a call opener. Where the format reads a call in
        the held text, the answer starts there and what precedes it (prose naming the opener) is
        reasoning. A closer was let pass inside the held text because the format's machine had a
        call open there (`_skipped`, the first in each call, in order): it was written inside a
        value only if that call is read complete with it, and was not without it (the held text up
        to the closer reads fewer calls); otherwise (a draft call left unfinished, a closer between
        a call's parts) the block closed at the first such closer, as it would have without a
        probe."""
        held = "".join(self._held)

        def read(text: str) -> tuple[int, int] | None:
            if isinstance(calls, bool):
                return (0, 1) if calls else None
            return calls(text)

        found = read(held)
        at = 0
        for _ in range(_LATER_OPENERS):
            # A format may read prose that names the opener as one broken call swallowing the real
            # call after it (GLM's `<tool_call> here ... <tool_call>f<arg_key>..`): read again from
            # the next opener, a few times at most (each reading costs the held text's length).
            if found is not None or isinstance(calls, bool):
                break
            at = min((i for i in (held.find(o, at + 1) for o in self._openers) if i > 0), default=-1)
            if at < 0:
                break
            later = calls(held[at:])
            found = (at + later[0], later[1]) if later is not None else None
        before = read(held[: self._skipped[0][0]]) if self._skipped else None
        for k, (cut, length, _) in enumerate(self._skipped):
            # Read with the call around this closer: up to the next judged closer (inside a later
            # call, which is still open there), or all of the held text for the last one.
            later = self._skipped[k + 1][0] if k + 1 < len(self._skipped) else None
            complete = found if later is None else read(held[:later])
            if (
                complete is None
                or complete[0] >= cut
                or (before is not None and before[1] >= complete[1])
                or self._runs_into_a_call(held, cut + length, later, before, read)
            ):
                self._reason(held[:cut])
                self._flush_lead()
                self._answer(held[cut + length :])
                self._drop_held()
                return
            before = complete  # the held text up to the next judged closer, read once
        if found is None:
            self._release_held()
            return
        self._reason(held[: found[0]])
        self._flush_lead()
        self._answer(held[found[0] :])
        self._drop_held()

    def _runs_into_a_call(
        self, held: str, start: int, end: int | None, before: tuple[int, int] | None, read: CallReading
    ) -> bool:
        """Whether the call around a closer that ends at `start` is still open at the first call
        opener after it (before `end`) and the format reads a call from that opener: then the call
        was a draft left mid-value that the closer ended, and the opener starts the real call (a raw
        value would read on over the closer and the real call's markup, as one call). `before`: the
        reading of the held text up to the closer."""
        at = min((i for i in (held.find(o, start, end) for o in self._openers) if i >= 0), default=-1)
        if at < 0:
            return False
        upto = read(held[:at])
        if upto is not None and upto[1] > (before[1] if before is not None else 0):
            return False  # the call around the closer ended before the opener
        real = read(held[at:])
        return real is not None and real[0] == 0

    def _drop_held(self) -> None:
        self._held.clear()
        self._held_len = 0
        self._probe = None
        self._open_calls = 0
        self._calls_opened = 0
        self._skipped = []

    def _release_held(self) -> None:
        self._reason("".join(self._held))
        self._drop_held()

    def _flush_lead(self) -> None:
        """The block ended while its first characters could still have been the label: they were
        reasoning."""
        lead, self._lead, self._label = self._lead, "", ""
        self._reason(lead)

    def _reason(self, text: str) -> None:
        if not self._sent_reasoning:
            text = text if self._lead else text.lstrip()
            if self._label and text:
                lead = self._lead + text
                if len(lead) < len(self._label) and self._label.startswith(lead):
                    self._lead = lead  # wait: the label, or reasoning that starts like it
                    return
                label, self._lead, self._label = self._label, "", ""
                text = lead[len(label) :].lstrip() if lead.startswith(label) else lead
        body = text.rstrip()
        if not body:
            self._space.append(text)
            return
        self._out.append(Reasoning("".join(self._space) + body))
        self._space = [text[len(body) :]]
        self._sent_reasoning = True

    def _answer(self, text: str) -> None:
        if text:
            self._out.append(Text(text))

    def _drain(self) -> list[Piece]:
        out, self._out = self._out, []
        merged: list[Piece] = []
        run: list[str] = []
        for i, piece in enumerate(out):
            run.append(piece.text)
            if i + 1 == len(out) or type(out[i + 1]) is not type(piece):
                merged.append(type(piece)("".join(run)))
                run = []
        return merged


def generation_start(rendered: str, pairs: Sequence[tuple[str, str]]) -> str:
    """Where a chat template's generation prompt leaves reasoning, from a rendered prompt: "opened"
    (it ends with an opener: the model's output starts inside the block, as DeepSeek R1's and
    Qwen3 Thinking's templates do), "closed" (it ends with a closer: thinking was switched off, as
    Qwen3's `enable_thinking=False` renders an empty block) or "before" (the model opens the block
    itself, if it reasons at all)."""
    tail = rendered.rstrip()
    if any(tail.endswith(closer) for _, closer in pairs):
        return "closed"
    if any(tail.endswith(opener) for opener, _ in pairs):
        return "opened"
    return "before"


_RENDER_ARGUMENTS = frozenset({"add_generation_prompt", "continue_final_message", "tokenize", "chat_template"})
"""Arguments vLLM puts among a request's template arguments that say how to render, not what: the
probe renders one user message with a generation prompt whatever the request asked."""

_STARTS: dict[tuple[int, int, str, tuple[tuple[str, str], ...]], str] = {}


def template_start(
    tokenizer: object,
    template_kwargs: dict[str, object] | None,
    pairs: Sequence[tuple[str, str]],
    template: str | None = None,
) -> str:
    """`generation_start` of the chat template (`template`, else the tokenizer's own) rendered for
    one user message with the request's template arguments (`enable_thinking`, `thinking`, ...);
    "before" when it cannot be rendered. Cached per tokenizer, template and arguments: a reasoning
    parser is built per request."""
    kwargs = {k: v for k, v in (template_kwargs or {}).items() if k not in _RENDER_ARGUMENTS}
    served = template if template is not None else getattr(tokenizer, "chat_template", None)
    key = (id(tokenizer), hash(repr(served)), repr(sorted(kwargs.items(), key=lambda item: item[0])), tuple(pairs))
    start = _STARTS.get(key)
    if start is None:
        if template is not None:
            kwargs["chat_template"] = template
        try:
            rendered = tokenizer.apply_chat_template(  # type: ignore[attr-defined]
                [{"role": "user", "content": "Hi"}], tokenize=False, add_generation_prompt=True, **kwargs
            )
            start = generation_start(rendered, pairs) if isinstance(rendered, str) else "before"
        except Exception:
            start = "before"
        if len(_STARTS) > 256:
            _STARTS.clear()
        _STARTS[key] = start
    return start
