"""`mistral_json`: Mistral's `[TOOL_CALLS]`, both generations, told apart by what follows the marker.

Grammar, as this machine reads it::

    output  := text (think | "[TOOL_CALLS]" calls text)*
    think   := "[THINK]" text "[/THINK]"                 # reasoning: text, never a call
             | "<think>" text "</think>"                 # Magistral-Small-2506 writes it as plain text
    calls   := ws json-value                              # tokenizer v2-v7: an array of call objects,
                                                          #   or one object ({"name", "arguments"})
             | ws NAME [ws "[CALL_ID]" ID] ws "[ARGS]" ws args   # v11+: one call per marker
             | ws NAME ["[CALL_ID]" ID] object            # v11+ as vLLM's Mistral tokenizer mode shows
                                                          #   it: [ARGS] dropped, the object right after
    args    := a JSON object, or a JSON string holding one, or null
    NAME    := [A-Za-z0-9_.-]{1,max_name}                 # TOOLCALL_PARSERS_MAX_NAME, 1024 by default
    ID      := (any character but "[" and "{"){0,max_name}

One machine serves every Mistral model: the generation is read from the text after each marker (`[`
or `{` is v2-v7, a name is v11+), not from the tokenizer. Without `[ARGS]` the object must follow the
name at once, so prose like `[TOOL_CALLS] then {..}` stays text.

There is no closing token: a call ends where its JSON value ends (string-aware, so `[TOOL_CALLS]` or
`]` inside an argument changes nothing), and what follows is content, as is text before the first
marker. Arguments are the model's JSON as written (a string where the schema says integer stays a
string). An empty list (`[TOOL_CALLS][]`) is text. A call that breaks is text up
to where it broke (a name or id: up to its first character past max_name; a call the core refuses,
past TOOLCALL_PARSERS_MAX_CALLS or to an undeclared tool: up to its arguments), and reading goes on
right there, so a later call still counts. Where it broke just after a `[`, that `[` is read again
as text, since it may begin the next marker (`[TOOL_CALLS][TOOL_CALLS]f[ARGS]{}` is the text
`[TOOL_CALLS]`, then a call).

Where the tokenizer has `[TOOL_CALLS]` as one special token, the engine can say where in each piece of
text such a token was generated (`feed(text, marker_offsets=[..])`); then only a marker at one of those
positions counts, and a `[TOOL_CALLS]` written out in prose is text, in the same piece or not.

Ids are nine letters and digits, as Mistral's templates require; a model-written `[CALL_ID]` that fits
(trimmed) and is not used yet in the response is kept; ids inside v2-v7 JSON objects are not kept.
Ids stay unique in the response: an id factory whose ids are taken is asked at most three times,
then random ids of our own are used (bounded: it never hangs).
"""

from __future__ import annotations

import json
import re
import secrets
import string
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.events import Event
from ..core.ids import IdFactory, ResponseIds
from ..core.json_calls import ArgumentsReader, JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import FormatStream, NotACall
from ..core.tokens import Vocabulary
from .grammar import Element, const, json_value, repeated, sequence, structural, tag, triggered
from .spec import Call, CallTag, ConstraintRequest, Format

MARKER, CALL_ID, ARGS = "[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"
THINK_MARKERS = (("[THINK]", "[/THINK]"), ("<think>", "</think>"))
"""Reasoning blocks: Mistral's tokens, and Magistral-Small-2506's plain-text tags."""
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]*")
_ID_CHARS = re.compile(r"[^\[{]*")
_VALID_ID = re.compile(r"[A-Za-z0-9]{9}")
_ALNUM = string.ascii_letters + string.digits
_FACTORY_ASKS = 3  # asks of the id factory for a free id before numbered ids of our own are used

_TEXT, _BRACKET, _HEAD, _NAME, _TAGS, _ID, _ARGS, _JSON = range(8)


def mistral_call_id(name: str, index: int) -> str:
    """Nine random letters and digits: the only ids Mistral's chat templates accept."""
    return "".join(secrets.choice(_ALNUM) for _ in range(9))


def _numbered_id(name: str, number: int) -> str:
    """Nine digits: a Mistral id, for when the factory's ids are taken."""
    return f"{number:09d}"


class MistralJsonStream(FormatStream):
    """Incremental parser for one response in Mistral's tool-call format."""

    format_name = "mistral_json"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = THINK_MARKERS,
        marker_is_token: bool = False,
    ) -> None:
        super().__init__(tools, id_factory or mistral_call_id)
        self._outside = OutsideCalls(self._text, [MARKER], think_markers)
        pairs = [] if not think_markers else [think_markers] if isinstance(think_markers[0], str) else think_markers
        self._longest_marker = max(len(m) for m in (MARKER, *(m for pair in pairs for m in pair)))
        self._marker_is_token = marker_is_token
        self._marker_tokens: deque[int] = deque()  # response offsets of generated [TOOL_CALLS] tokens
        self._fed = 0  # characters fed so far
        self._text_start = 0  # response offset of the text being read (what was held, then the new piece)
        self._state = _TEXT
        self._raw: list[str] = []  # the current call's text, returned as text if it breaks
        self._name: list[str] = []
        self._model_id: list[str] | None = None  # what followed [CALL_ID], None before one
        self._run_len = 0  # characters of the name, or of the id, read so far
        self._ids = ResponseIds(self._id_factory, _numbered_id, _FACTORY_ASKS)
        self._reader: JsonCallReader | None = None
        self._args: ArgumentsReader | None = None
        self._index = -1
        self._readers = {
            _TEXT: self._scan_text,
            _BRACKET: self._scan_bracket,
            _HEAD: self._scan_head,
            _NAME: self._scan_name,
            _TAGS: self._scan_tags,
            _ID: self._scan_id,
            _ARGS: self._scan_args,
            _JSON: self._scan_json,
        }

    def feed(self, text: str, marker_offsets: Iterable[int] = ()) -> list[Event]:
        """As `FormatStream.feed`; `marker_offsets` are where in `text` the `[TOOL_CALLS]` special
        tokens that produced it begin (used when the stream was made with `marker_is_token=True`)."""
        if isinstance(text, str):  # anything else: the base class raises the TypeError
            if self._marker_is_token:
                self._marker_tokens.extend(sorted(self._fed + offset for offset in marker_offsets))
            self._text_start = self._fed - len(self._buf)
            self._fed += len(text)
        return super().feed(text)

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The call broke: its text up to the break is text, and reading goes on there. A `[` the
        break came right after is read again, as it may begin a marker."""
        span = "".join(self._raw)
        bracket = span.endswith("[")
        self._reject(str(err), span[:-1] if bracket else span)
        self._reset(_BRACKET if bracket else _TEXT)
        return pos if err.pos is None else err.pos

    # -- outside calls ---------------------------------------------------------------------------

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._open(m.start())
        return at

    def _scan_bracket(self, text: str, pos: int) -> int | None:
        """Text again from the `[` just before `pos`, which a broken call had consumed: read a
        window as long as the longest marker, so that one starting at that `[` is found."""
        window = "[" + text[pos : pos + self._longest_marker - 1]
        m, at = self._outside.read(window, 0)
        if at is None:
            return None  # the window is a partial marker that the text's end cut short
        self._state = _TEXT
        if m is not None:
            self._open(pos - 1 + m.start())
        return pos - 1 + at

    def _open(self, start: int) -> None:
        """A `[TOOL_CALLS]` at `start` in the text being read starts a call, unless the engine
        says which markers were generated tokens and this one was not (then it is text)."""
        if self._marker_is_token and not self._generated_at(self._text_start + start):
            self._text(MARKER)
            return
        self._raw = [MARKER]
        self._state = _HEAD

    def _generated_at(self, offset: int) -> bool:
        """Whether a [TOOL_CALLS] token was generated at this response offset."""
        tokens = self._marker_tokens
        while tokens and tokens[0] < offset:
            tokens.popleft()  # a token inside a call's JSON, or in reasoning: not a marker here
        if tokens and tokens[0] == offset:
            tokens.popleft()
            return True
        return False

    def _scan_head(self, text: str, pos: int) -> int | None:
        """Right after the marker: a JSON array or object (v2-v7), or a name (v11+)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] in "[{":
            prefix = "".join(self._raw)
            self._raw = []
            self._reader = JsonCallReader(self._start_call, self._call_args, self._end_call, self.limits, prefix)
            self._state = _JSON
            return pos
        if _NAME_CHARS.match(text, pos, pos + 1).end() == pos:  # type: ignore[union-attr]
            raise NotACall("no tool name or JSON after the marker", pos)
        self._name, self._model_id, self._run_len = [], None, 0
        self._state = _NAME
        return pos

    # -- v2-v7: JSON ------------------------------------------------------------------------------

    def _scan_json(self, text: str, pos: int) -> int | None:
        assert self._reader is not None
        try:
            stop, done = self._reader.feed(text, pos)
        except JsonSyntaxError as err:
            self._raw = self._reader.unfinished
            self._reader = None
            raise NotACall(f"not a valid call ({err})", err.pos) from None
        if not done:
            return stop if stop > pos else None
        self._reset(_TEXT)
        return stop

    # -- v11+: name [CALL_ID] id [ARGS] args ------------------------------------------------------

    def _scan_name(self, text: str, pos: int) -> int | None:
        end = self._take(_NAME_CHARS, text, pos, self._name, "the tool name")
        if end == len(text):
            return end
        if text[end] == "{":  # [ARGS] dropped
            self._announce(end)
        else:
            self._state = _TAGS
        return end

    def _scan_tags(self, text: str, pos: int) -> int | None:
        """After the name (or the id): whitespace, then `[CALL_ID]` (once) or `[ARGS]`."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        tag = self._literal_at(text, pos, (CALL_ID, ARGS))
        if tag == CALL_ID and self._model_id is None:
            self._raw.append(CALL_ID)
            self._model_id, self._run_len = [], 0
            self._state = _ID
            return pos + len(CALL_ID)
        if tag == ARGS:
            self._raw.append(ARGS)
            self._announce(pos + len(ARGS))
            return pos + len(ARGS)
        if tag is None:
            return None  # a tag still arriving
        raise NotACall("the tool name is not followed by [ARGS] or arguments", pos)

    def _scan_id(self, text: str, pos: int) -> int | None:
        assert self._model_id is not None
        end = self._take(_ID_CHARS, text, pos, self._model_id, "the call id")
        if end == len(text):
            return end
        if text[end] == "{":  # [ARGS] dropped
            self._announce(end)
        else:
            self._state = _TAGS
        return end

    def _take(self, chars: re.Pattern[str], text: str, pos: int, parts: list[str], what: str) -> int:
        """Consume the run of `chars` at `pos` into `parts` (and the call's text); return where it
        ends. Past `max_name` characters in all, NotACall at the first one too many: a position
        that does not depend on how the text was split."""
        room = self.limits.max_name - self._run_len
        end = chars.match(text, pos, pos + room + 1).end()  # type: ignore[union-attr]
        too_long = end - pos > room
        if too_long:
            end = pos + room
        parts.append(text[pos:end])
        self._raw.append(text[pos:end])
        self._run_len += end - pos
        if too_long:
            raise NotACall(f"{what} is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        return end

    def _announce(self, at: int) -> None:
        """Start the call whose arguments begin at `at`. A refused call (see `_start_call`) is text
        up to there."""
        kept_id = self._kept_id()
        try:
            self._index = self._start_call("".join(self._name), kept_id)
        except NotACall as err:
            raise NotACall(str(err), at) from None
        if kept_id is not None:
            self._ids.keep(kept_id)
        self._args = ArgumentsReader(self._send, self.limits)
        self._state = _ARGS

    def _kept_id(self) -> str | None:
        """The model's `[CALL_ID]`, trimmed, when it fits Mistral's ids and is not used yet."""
        model_id = "".join(self._model_id or ()).strip()
        return self._ids.free(model_id) if _VALID_ID.fullmatch(model_id) else None

    def _send(self, fragment: str) -> None:
        self._call_args(self._index, fragment)

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        stop, done = self._args.read(text, pos, self._raw)
        if not done:
            return stop if stop > pos else None
        self._end_call(self._index, self._args.arguments)
        self._reset(_TEXT)
        return stop

    def _reset(self, state: int) -> None:
        self._raw = []
        self._reader = None
        self._args = None
        self._state = state

    # -- ids and the end --------------------------------------------------------------------------

    def _make_id(self, name: str, index: int) -> str:
        return self._ids.make(name, index)

    def _close(self) -> None:
        if self._state == _ARGS and self._args is not None and self._args.finish(self._buf):
            self._end_call(self._index, self._args.arguments)  # `null` at the very end
            self._reset(_TEXT)
        elif self._state in (_TEXT, _BRACKET):
            self._text(self._pending_text() + self._buf)
        else:
            self._reject("the output ended inside a tool call", self._pending_text() + self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        if self._state == _BRACKET:
            return "["
        return "".join(self._reader.unfinished if self._reader is not None else self._raw)


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """The v11+ spelling, `[TOOL_CALLS]name[ARGS]{..}` per call (the parser reads every generation)."""
    return "".join(f"{MARKER}{name}{ARGS}{json.dumps(arguments, ensure_ascii=False)}" for name, arguments in calls)


def is_v11(vocabulary: Vocabulary | None) -> bool:
    """Whether the served tokenizer writes v11+ calls (it has the `[ARGS]` token). Without a
    tokenizer to ask, the current generation (v11) is assumed, by both engines."""
    return vocabulary is None or vocabulary.has(ARGS)


def _v11_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    return [tag(f"{MARKER}{name}{ARGS}", json_value(request.parameters(name)), "") for name in names]


def _legacy_list(request: ConstraintRequest, names: list[str]) -> Element:
    """`[{"name": .., "arguments": ..}, ..]` after the marker (at least one, at most one if `single`)."""
    item = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": name}, "arguments": request.parameters(name)},
                "required": ["name", "arguments"],
            }
            for name in names
        ]
    }
    return json_value({"type": "array", "items": item, "minItems": 1, **({"maxItems": 1} if request.single else {})})


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """At least one call (at most one if `single`), as `[TOOL_CALLS]name[ARGS]{..}` per call where
    the tokenizer has `[ARGS]` (v11+), else `[TOOL_CALLS][{"name": .., "arguments": ..}]`."""
    if is_v11(request.vocabulary):
        return structural(repeated(request, _v11_tags(request, request.names)))
    return structural(sequence(const(MARKER), _legacy_list(request, request.names)))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where each `[TOOL_CALLS]` opens a call to a declared tool in the
    tokenizer's generation."""
    names = list(request.schemas)
    v11 = is_v11(request.vocabulary)
    return triggered(
        request, [MARKER], _v11_tags(request, names) if v11 else [tag(MARKER, _legacy_list(request, names), "")]
    )


def call_tag(vocabulary: Vocabulary | None) -> CallTag:
    """SGLang's per-call tag in the tokenizer's generation."""
    if is_v11(vocabulary):
        return CallTag(MARKER + "{name}" + ARGS, "", MARKER)
    return CallTag(MARKER + '[{{"name": "{name}", "arguments": ', "}]", MARKER)


def _writes_name(name: str) -> bool:
    # v11's `[TOOL_CALLS]name[ARGS]`: the name's own characters (the older JSON list could hold any)
    return _NAME_CHARS.fullmatch(name) is not None


FORMAT = Format(
    "mistral_json",
    "[TOOL_CALLS][{..}] (v2-v7) or [TOOL_CALLS]name[ARGS]{..} (v11+)",
    MistralJsonStream,
    write,
    markers=(MARKER, CALL_ID, ARGS),
    special_tokens=(MARKER, CALL_ID, ARGS),
    required=required_constraint,
    call_tag=call_tag,
    own_ids=True,
    writes_name=_writes_name,
    auto=auto_constraint,
    vllm_names=("mistral",),
    sglang_names=("mistral",),
)
