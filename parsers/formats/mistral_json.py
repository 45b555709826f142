"""`mistral_json`: Mistral's `[TOOL_CALLS]`, both generations, told apart by what follows the marker.

Grammar, as this machine reads it::

    output  := text (think | "[TOOL_CALLS]" calls text)*
    think   := "[THINK]" text "[/THINK]"                 # reasoning: text, never a call
    calls   := ws json-value                              # tokenizer v2-v7: an array of call objects,
                                                          #   or one object ({"name", "arguments"})
             | NAME ["[CALL_ID]" ID] ["[ARGS]"] ws args   # v11+: one call per marker; vLLM's Mistral
                                                          #   tokenizer mode drops [ARGS] from the text
    args    := a JSON object, or a JSON string holding one, or null
    NAME    := [A-Za-z0-9_.-]{1,256}

There is no closing token: a call ends where its JSON value ends (string-aware, so `[TOOL_CALLS]` or
`]` inside an argument changes nothing), and what follows is content.

Where the tokenizer has `[TOOL_CALLS]` as one special token, the engine can say how many of those
tokens each piece of text carried (`feed(text, marker_tokens=n)`); then only that many markers count
and a `[TOOL_CALLS]` written out in prose is text.

Ids are nine letters and digits, as Mistral's templates require; a model-written `[CALL_ID]` that fits
and is not used yet in the response is kept.
"""

from __future__ import annotations

import re
import secrets
import string
from typing import Any

from ..core.events import Event
from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader, JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.outside import OutsideCalls
from ..core.stream import FormatStream, NotACall

MARKER, CALL_ID, ARGS = "[TOOL_CALLS]", "[CALL_ID]", "[ARGS]"
MAX_NAME = 256
_NAME_END = re.compile(r"[^A-Za-z0-9_.\-]")
_ID_END = re.compile(r"[\[{]")
_VALID_ID = re.compile(r"[A-Za-z0-9]{9}")
_ALNUM = string.ascii_letters + string.digits

_TEXT, _HEAD, _NAME, _ID, _ARGS_OPEN, _ARGS, _JSON = range(7)


def mistral_call_id(name: str, index: int) -> str:
    """Nine random letters and digits: the only ids Mistral's chat templates accept."""
    return "".join(secrets.choice(_ALNUM) for _ in range(9))


class MistralJsonStream(FormatStream):
    """Incremental parser for one response in Mistral's tool-call format."""

    format_name = "mistral_json"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = ("[THINK]", "[/THINK]"),
        marker_is_token: bool = False,
    ) -> None:
        super().__init__(tools, id_factory or mistral_call_id)
        self._outside = OutsideCalls(self._text, [MARKER], think_markers)
        self._marker_is_token = marker_is_token
        self._marker_credits = 0  # [TOOL_CALLS] tokens seen but not matched to a marker yet
        self._state = _TEXT
        self._raw: list[str] = []  # the current call's text, returned as text if it breaks
        self._name = ""
        self._model_id = ""
        self._ids_used: set[str] = set()
        self._reader: JsonCallReader | None = None
        self._args: ArgumentsReader | None = None
        self._index = -1
        self._readers = {
            _TEXT: self._scan_text,
            _HEAD: self._scan_head,
            _NAME: self._scan_name,
            _ID: self._scan_id,
            _ARGS_OPEN: self._scan_args_open,
            _ARGS: self._scan_args,
            _JSON: self._scan_json,
        }

    def feed(self, text: str, marker_tokens: int = 0) -> list[Event]:
        """As `FormatStream.feed`; `marker_tokens` is how many `[TOOL_CALLS]` special tokens
        produced this text (used when the stream was made with `marker_is_token=True`)."""
        self._marker_credits += marker_tokens
        return super().feed(text)

    def _recover(self, err: NotACall, text: str) -> str:
        self._reject(str(err), "".join(self._raw))
        return self._after_calls(err.rest if err.rest is not None else "")

    # -- outside calls ---------------------------------------------------------------------------

    def _scan_text(self, text: str) -> str:
        m, rest = self._outside.scan(text)
        if m is None:
            return ""
        if self._marker_is_token:
            if self._marker_credits == 0:
                self._text(m.group())  # typed out in prose, not the special token
                return rest
            self._marker_credits -= 1
        self._raw = [m.group()]
        self._state = _HEAD
        return rest

    def _scan_head(self, text: str) -> str:
        """Right after the marker: a JSON array or object (v2-v7), or a name (v11+)."""
        body = text.lstrip()
        self._raw.append(text[: len(text) - len(body)])
        if not body:
            return ""
        if body[0] in "[{":
            self._reader = JsonCallReader(self._start_call, self._call_args, self._end_call, "".join(self._raw))
            self._raw = []
            self._state = _JSON
        else:
            self._name = ""
            self._model_id = ""
            self._state = _NAME
        return body

    # -- v2-v7: JSON ------------------------------------------------------------------------------

    def _scan_json(self, text: str) -> str:
        assert self._reader is not None
        try:
            end = self._reader.feed(text)
        except JsonSyntaxError as err:
            self._raw = self._reader.unfinished
            raise NotACall(f"not a valid call ({err})", text[err.pos :]) from None
        return "" if end < 0 else self._after_calls(text[end:])

    # -- v11+: name [CALL_ID] id [ARGS] args ------------------------------------------------------

    def _scan_name(self, text: str) -> str:
        m = _NAME_END.search(text)
        if m is None:
            self._take_name(text)
            return ""
        self._take_name(text[: m.start()])
        rest = text[m.start() :]
        if not self._name:
            raise NotACall("no tool name after the marker", rest)
        if rest.startswith(CALL_ID):
            self._raw.append(CALL_ID)
            self._state = _ID
            return rest[len(CALL_ID) :]
        if rest.startswith(ARGS) or rest[0] in "{":
            self._state = _ARGS_OPEN
            return rest
        if CALL_ID.startswith(rest) or ARGS.startswith(rest):
            self._buf = rest
            return ""
        raise NotACall("the tool name is not followed by [ARGS] or arguments", rest)

    def _take_name(self, part: str) -> None:
        self._raw.append(part)
        self._name += part
        if len(self._name) > MAX_NAME:
            raise NotACall("the tool name is too long")

    def _scan_id(self, text: str) -> str:
        m = _ID_END.search(text)
        part = text if m is None else text[: m.start()]
        self._model_id += part
        self._raw.append(part)
        if len(self._model_id) > MAX_NAME:
            raise NotACall("the call id is too long")
        if m is None:
            return ""
        self._state = _ARGS_OPEN
        return text[m.start() :]

    def _scan_args_open(self, text: str) -> str:
        """Start the call: [ARGS] (or the JSON itself, when the tokenizer dropped [ARGS])."""
        if text.startswith(ARGS):
            self._raw.append(ARGS)
            text = text[len(ARGS) :]
        elif text[0] != "{":
            if ARGS.startswith(text):
                self._buf = text
                return ""
            raise NotACall("no [ARGS] after the call id", text)
        self._index = self._start_call(self._name, self._pick_id())
        self._args = ArgumentsReader(self._send)
        self._state = _ARGS
        return text

    def _pick_id(self) -> str | None:
        model_id = self._model_id.strip()
        if _VALID_ID.fullmatch(model_id) and model_id not in self._ids_used:
            self._ids_used.add(model_id)
            return model_id
        return None

    def _send(self, fragment: str) -> None:
        self._call_args(self._index, fragment)

    def _scan_args(self, text: str) -> str:
        assert self._args is not None
        end = self._args.read(text, self._raw)
        if end < 0:
            return ""
        self._end_call(self._index, self._args.arguments)
        return self._after_calls(text[end:])

    def _after_calls(self, rest: str) -> str:
        self._raw = []
        self._reader = None
        self._args = None
        self._state = _TEXT
        return rest

    # -- ids and the end --------------------------------------------------------------------------

    def _make_id(self, name: str, index: int) -> str:
        while (call_id := self._id_factory(name, index)) in self._ids_used:
            pass
        self._ids_used.add(call_id)
        return call_id

    def _close(self) -> None:
        if self._state == _ARGS and not self._buf and self._args is not None and self._args.finish():
            self._end_call(self._index, self._args.arguments)  # `null` at the very end
            self._after_calls("")
        if self._state == _TEXT:
            self._text(self._outside.release() + self._buf)
        else:
            self._reject("the output ended inside a tool call", self._unfinished() + self._buf)
        self._buf = ""

    def _unfinished(self) -> str:
        return "".join(self._reader.unfinished if self._reader is not None else self._raw)

    def _pending_text(self) -> str:
        return self._outside.release() + self._unfinished() + self._buf


def required_constraint(
    schemas: dict[str, dict[str, Any]], only: str | None, single: bool, v11: bool
) -> dict[str, Any]:
    """The decoding constraint for `tool_choice="required"` (or one named tool, `only`): a structural
    tag in xgrammar's JSON form that makes the model write at least one call in this format, as
    `[TOOL_CALLS]name[ARGS]{..}` per call (`v11`) or `[TOOL_CALLS][{"name": .., "arguments": ..}]`."""
    names = [only] if only is not None else list(schemas)

    def parameters(name: str) -> dict[str, Any]:
        return schemas.get(name) or {"type": "object"}

    if v11:
        tags = [
            {
                "type": "tag",
                "begin": f"{MARKER}{name}{ARGS}",
                "content": {"type": "json_schema", "json_schema": parameters(name)},
                "end": "",
            }
            for name in names
        ]
        body: dict[str, Any] = {
            "type": "tags_with_separator",
            "tags": tags,
            "separator": "",
            "at_least_one": True,
            "stop_after_first": single,
        }
    else:
        item = {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"name": {"const": name}, "arguments": parameters(name)},
                    "required": ["name", "arguments"],
                }
                for name in names
            ]
        }
        array: dict[str, Any] = {"type": "array", "items": item, "minItems": 1}
        if single:
            array["maxItems"] = 1
        body = {
            "type": "sequence",
            "elements": [{"type": "const_string", "value": MARKER}, {"type": "json_schema", "json_schema": array}],
        }
    return {"type": "structural_tag", "format": body}
