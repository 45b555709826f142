"""What one `[TOOL_CALLS]` opens, in either of Mistral's generations, read from the text after it.

Grammar, from the marker's end on::

    calls := ws json-value                              # v2-v7: an array of call objects, or one object
           | ws NAME ws &"[" json-array                 # v2-v7 after a stray word: declared tools' calls only
           | ws head ws args                            # v11+: one call
    head  := NAME [ws "[CALL_ID]" ID] ws "[ARGS]"
           | NAME ["[CALL_ID]" ID] &"{"                 # [ARGS] dropped: the object must follow at once
    NAME  := [A-Za-z0-9_.-]{1,max_name}
    ID    := (any character but "[" and "{"){0,max_name}

`[` or `{` after the marker is v2-v7, read by `JsonCallReader`; a name character is v11+. A word
followed by a `[` that is no tag (`[TOOL_CALLS] junk [{"name": ..}]`, in vLLM's tests) has no v11+
reading; it is markup before a v2-v7 array whose calls must name declared tools (a call to another
name breaks it there, and the whole is text: with no tools declared, always). A head's
name and id are consumed as they arrive, never held back (only a partial tag is); past max_name
characters the head breaks at the first one too many, a position the text fixes, so every chunking
breaks it at the same place; a second `[CALL_ID]` breaks it too. A model-written id is offered to
the call only when, trimmed, it has the shape of Mistral's ids (nine letters and digits, what its
chat templates require) and the response has not used it yet.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.ids import ResponseIds
from ..core.json_calls import ArgumentsReader, JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.markers import literal_at
from ..core.stream import JSON_SPACE, NotACall

if TYPE_CHECKING:
    from ..core.stream import FormatStream, Reader

CALL_ID, ARGS = "[CALL_ID]", "[ARGS]"
NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")
_ID_CHARS = re.compile(r"[^\[{]*")
_MISTRAL_ID = re.compile(r"[A-Za-z0-9]{9}")

_START, _JSON, _HEAD, _ARGS = "start", "json", "head", "args"


class V11Head:
    """Reads one v11+ head, from its name's first character. What it reads is added to `raw` (the
    call's text, which comes back as text if the call breaks); once `done`, the arguments begin
    where `read` stopped."""

    def __init__(self, raw: list[str], max_name: int) -> None:
        self._raw = raw
        self._max_name = max_name
        self._name: list[str] = []
        self._id: list[str] | None = None  # what followed [CALL_ID], None before one
        self._run: list[str] | None = self._name  # the name or the id being read; None between tags
        self._run_chars = NAME_CHARS
        self._run_len = 0
        self.done = False
        self.before_array = False  # the name was a word before a v2-v7 array (see MarkerCalls)

    @property
    def name(self) -> str:
        return "".join(self._name)

    @property
    def call_id(self) -> str | None:
        """The model's `[CALL_ID]`, trimmed, when it has the shape of Mistral's ids."""
        call_id = "".join(self._id or ()).strip()
        return call_id if _MISTRAL_ID.fullmatch(call_id) else None

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`: where reading stopped, or None to hold `text[pos:]` back (a partial
        tag). Raises NotACall where the head breaks."""
        start, end = pos, len(text)
        while pos < end:
            if self._run is not None:
                pos = self._take(text, pos, self._run)
                if pos == end:
                    break
                self._run = None
                if text[pos] == "{":  # [ARGS] dropped
                    self.done = True
                    return pos
            ws = JSON_SPACE.match(text, pos).end()  # type: ignore[union-attr]
            if ws > pos:
                self._raw.append(text[pos:ws])
                pos = ws
                continue
            tag = literal_at(text, pos, (CALL_ID, ARGS))
            if tag is None:
                break  # a tag still arriving
            if not tag and text[pos] == "[" and self._id is None:  # a word, then an array
                self.done = self.before_array = True
                return pos
            if tag == ARGS:
                self._raw.append(ARGS)
                self.done = True
                return pos + len(ARGS)
            if tag != CALL_ID or self._id is not None:
                raise NotACall("the tool name is not followed by [ARGS] or arguments", pos)
            self._raw.append(CALL_ID)
            self._id = self._run = []
            self._run_chars, self._run_len = _ID_CHARS, 0
            pos += len(CALL_ID)
        return pos if pos > start else None

    def _take(self, text: str, pos: int, parts: list[str]) -> int:
        """Consume the run of the name's (or the id's) characters at `pos`; return where it ends.
        Past `max_name` characters in all, NotACall at the first one too many."""
        room = self._max_name - self._run_len
        end = self._run_chars.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        too_long = end - pos > room
        if too_long:
            end = pos + room
        parts.append(text[pos:end])
        self._raw.append(text[pos:end])
        self._run_len += end - pos
        if too_long:
            what = "the tool name" if self._id is None else "the call id"
            raise NotACall(f"{what} is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        return end


class MarkerCalls:
    """Reads the calls one marker opens, as the `owner` stream's calls (`_start_call`, `_call_args`,
    `_end_call`), until `done`. A call that breaks raises NotACall with where reading goes on, its
    text being `pending()`; `ids` are the response's, for the model-written ones."""

    def __init__(self, owner: FormatStream, ids: ResponseIds, marker: str) -> None:
        self._owner = owner
        self._ids = ids
        self._raw = [marker]  # the call's text, returned as text if it breaks
        self._phase = _START
        self._json: JsonCallReader | None = None
        self._head: V11Head | None = None
        self._args: ArgumentsReader | None = None
        self._index = -1
        self.done = False
        self._readers: dict[int, Reader] = {
            _START: self._read_start,
            _JSON: self._read_json,
            _HEAD: self._read_head,
            _ARGS: self._read_args,
        }

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`: where reading stopped (the owner reads on there once `done`), or None to
        hold `text[pos:]` back. A phase may hand over without reading (the owner's loop would take
        that for a stall), so the phases run here until one reads nothing or the calls are done."""
        start, end = pos, len(text)
        while pos < end and not self.done:
            step = self._readers[self._phase](text, pos)
            if step is None:
                break
            pos = step
        return pos if pos > start else None

    def read_eof(self, rest: str) -> None:
        """The output ended here (`rest`: the text held back): a `null` waiting for its end ends
        the call; anything else unfinished is a broken call."""
        if self._args is not None and self._args.finish(rest):
            self._owner._end_call(self._index, self._args.arguments)
        else:
            self._owner._reject("the output ended inside a tool call", self.pending() + rest)
        self.done = True

    def pending(self) -> str:
        """The text read and not reported yet."""
        return "".join(self._json.unfinished if self._json is not None else self._raw)

    def _read_start(self, text: str, pos: int) -> int | None:
        """Right after the marker: a JSON array or object (v2-v7), or a name (v11+)."""
        owner = self._owner
        if (at := owner._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] in "[{":
            self._read_json_value()
        elif NAME_CHARS.match(text, pos, pos + 1).end() == pos:  # type: ignore[union-attr]
            raise NotACall("no tool name or JSON after the marker", pos)
        else:
            self._head = V11Head(self._raw, owner.limits.max_name)
            self._phase = _HEAD
        return pos

    def _read_json_value(self, accepts: Callable[[str], bool] | None = None) -> None:
        """A v2-v7 value comes next (`accepts`: the names its calls may have, None: any)."""
        owner = self._owner
        prefix, self._raw = "".join(self._raw), []
        self._json = JsonCallReader(
            owner._start_call, owner._call_args, owner._end_call, owner.limits, prefix, accepts=accepts
        )
        self._phase = _JSON

    def _read_json(self, text: str, pos: int) -> int | None:
        assert self._json is not None
        try:
            stop, self.done = self._json.feed(text, pos)
        except JsonSyntaxError as err:
            self._raw, self._json = self._json.unfinished, None
            raise NotACall(f"not a valid call ({err})", err.pos) from None
        return stop if stop > pos or self.done else None

    def _read_head(self, text: str, pos: int) -> int | None:
        head = self._head
        assert head is not None
        at = head.read(text, pos)
        if at is not None and head.before_array:  # the word is markup; the array's calls: declared tools'
            self._read_json_value(self._owner.tools.schemas.__contains__)
        elif at is not None and head.done:
            self._announce(head, at)
        return at

    def _announce(self, head: V11Head, at: int) -> None:
        """Start the call whose arguments begin at `at`, with the model's id if it is free. A
        refused call (see `FormatStream._start_call`) is text up to there."""
        kept_id = self._ids.free(head.call_id)
        try:
            self._index = self._owner._start_call(head.name, kept_id)
        except NotACall as err:
            raise NotACall(str(err), at) from None
        if kept_id is not None:
            self._ids.keep(kept_id)
        self._args = ArgumentsReader(self._send, self._owner.limits)
        self._phase = _ARGS

    def _send(self, fragment: str) -> None:
        self._owner._call_args(self._index, fragment)

    def _read_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        stop, self.done = self._args.read(text, pos, self._raw)
        if self.done:
            self._owner._end_call(self._index, self._args.arguments)
        return stop if stop > pos or self.done else None
