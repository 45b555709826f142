"""`mistral_json`: Mistral's `[TOOL_CALLS]`, both generations, told apart by what follows the marker.

Grammar, as this machine reads it::

    output  := text (think | "[TOOL_CALLS]" calls text)*
    think   := "[THINK]" text "[/THINK]"                 # reasoning: text, never a call
             | "<think>" text "</think>"                 # Magistral-Small-2506 writes it as plain text
    calls   := ws json-value                              # tokenizer v2-v7: an array of call objects,
                                                          #   or one object ({"name", "arguments"})
             | ws NAME ws json-array                      # v2-v7 after a stray word: declared tools only
             | ws NAME [ws "[CALL_ID]" ID] ws "[ARGS]" ws args   # v11+: one call per marker
             | ws NAME ["[CALL_ID]" ID] object            # v11+ as vLLM's Mistral tokenizer mode shows
                                                          #   it: [ARGS] dropped, the object right after
    args    := a JSON object, or a JSON string holding one, or null
    NAME    := [A-Za-z0-9_.-]{1,max_name}                 # TOOLCALL_PARSERS_MAX_NAME, 1024 by default
    ID      := (any character but "[" and "{"){0,max_name}

One machine serves every Mistral model: the generation is read from the text after each marker (`[`
or `{` is v2-v7, a name is v11+), not from the tokenizer. Without `[ARGS]` the object must follow the
name at once, so prose like `[TOOL_CALLS] then {..}` stays text. A single word between the marker
and a v2-v7 array (`[TOOL_CALLS]  junk [{"name": "add", ..}]`, vLLM's tests) is no v11+ head (no
`[ARGS]`, no object); it is read as markup, dropped with the marker, when the array's calls name
declared tools, and otherwise the whole is text (no tools declared: always). More than one word, or a
word before an object, stays text: the reading would no longer be unambiguous.

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
then numbered ids of our own, nine digits, are used (bounded: it never hangs).
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.events import Event
from ..core.ids import IdFactory, ResponseIds
from ..core.marker_tokens import GeneratedMarkers
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import FormatStream, NotACall
from ..core.tokens import Vocabulary
from .constraints import Element, const, json_value, repeated, sequence, structural, tag, triggered
from .mistral_calls import ARGS, CALL_ID, NAME_CHARS, MarkerCalls
from .spec import Call, CallTag, ConstraintRequest, Format

MARKER = "[TOOL_CALLS]"
THINK_MARKERS = (("[THINK]", "[/THINK]"), ("<think>", "</think>"))
"""Reasoning blocks: Mistral's tokens, and Magistral-Small-2506's plain-text tags."""
_ALNUM = string.ascii_letters + string.digits
_FACTORY_ASKS = 3  # asks of the id factory for a free id before numbered ids of our own are used

_TEXT, _BRACKET, _CALLS = "text", "bracket", "calls"


def mistral_call_id(name: str, index: int) -> str:
    """Nine random letters and digits: the only ids Mistral's chat templates accept."""
    return "".join(secrets.choice(_ALNUM) for _ in range(9))


def _numbered_id(name: str, number: int) -> str:
    """Nine digits: a Mistral id, for when the factory's ids are taken."""
    return f"{number:09d}"


class MistralJsonStream(FormatStream):
    """Incremental parser for one response in Mistral's tool-call format: the text between markers
    here, what each marker opens in `MarkerCalls`."""

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
        self._generated = GeneratedMarkers() if marker_is_token else None
        self._ids = ResponseIds(self._id_factory, _numbered_id, _FACTORY_ASKS)
        self._state = _TEXT
        self._calls: MarkerCalls | None = None
        self._readers = {_TEXT: self._scan_text, _BRACKET: self._scan_bracket, _CALLS: self._scan_calls}

    def feed(self, text: str, marker_offsets: Iterable[int] = ()) -> list[Event]:
        """As `FormatStream.feed`; `marker_offsets` are where in `text` the `[TOOL_CALLS]` special
        tokens that produced it begin (used when the stream was made with `marker_is_token=True`)."""
        if isinstance(text, str) and self._generated is not None:  # else the base class raises
            self._generated.piece(text, len(self._buf), marker_offsets)
        return super().feed(text)

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
        """A `[TOOL_CALLS]` at `start` in the text being read opens calls, unless the engine says
        which markers were generated tokens and this one was not (then it is text)."""
        if self._generated is not None and not self._generated.generated_at(start):
            self._text(MARKER)
            return
        self._calls = MarkerCalls(self, self._ids, MARKER)
        self._state = _CALLS

    def _scan_calls(self, text: str, pos: int) -> int | None:
        calls = self._calls
        assert calls is not None
        at = calls.read(text, pos)
        if calls.done:
            self._calls, self._state = None, _TEXT
        return at

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The call broke: its text up to the break is text, and reading goes on there. A `[` the
        break came right after is read again, as it may begin a marker."""
        assert self._calls is not None
        span = self._calls.pending()
        bracket = span.endswith("[")
        self._reject(str(err), span[:-1] if bracket else span)
        self._calls, self._state = None, _BRACKET if bracket else _TEXT
        return pos if err.pos is None else err.pos

    def _make_id(self, name: str, index: int) -> str:
        return self._ids.make(name, index)

    def _close(self) -> None:
        if self._calls is not None:
            self._calls.read_eof(self._buf)
        else:
            self._text(self._pending_text() + self._buf)
        self._buf = ""

    def _pending_text(self) -> str:
        if self._calls is not None:
            return self._calls.pending()
        return "[" if self._state == _BRACKET else ""


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


def _may_call(text: str) -> bool:
    # A word between the marker and a v2-v7 array is read only before calls of declared tools.
    return MARKER in text


def _writes_name(name: str) -> bool:
    # v11's `[TOOL_CALLS]name[ARGS]`: the name's own characters (the older JSON list could hold any)
    return NAME_CHARS.fullmatch(name) is not None


FORMAT = Format(
    "mistral_json",
    "[TOOL_CALLS][{..}] (v2-v7) or [TOOL_CALLS]name[ARGS]{..} (v11+)",
    MistralJsonStream,
    write,
    markers=(MARKER, CALL_ID, ARGS),
    special_tokens=(MARKER, CALL_ID, ARGS),
    required_constraint=required_constraint,
    call_tag=call_tag,
    own_ids=True,
    writes_name=_writes_name,
    needs_declared_tools=_may_call,
    auto_constraint=auto_constraint,
    vllm_names=("mistral",),
    sglang_names=("mistral",),
    models="Mistral / Mixtral / Nemo / Small / Large / Magistral / Devstral",
)
