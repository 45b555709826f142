"""`dots_xml`: rednote-hilab dots tool calls: `minimax_xml`'s invokes inside dots' own block tags, or
one JSON call object in the block.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (invoke ws)* [END]             # END may be missing after complete invokes
               | START ws JSON ws [END]                  # the JSON fallback: a call object
    invoke    := "<invoke name=" ws NAME ">" ws (parameter ws)* "</invoke>"
    parameter := "<parameter name=" ws NAME ">" VALUE "</parameter>"
    JSON      := '{"name": NAME, "arguments": {..}}' | '{"name": NAME, "parameters": {..}}'

with START = `<dots_function_call>` and END = `</dots_function_call>`. Between them, invokes are
`minimax_xml`'s: the same machine (`MiniMaxXmlStream` with these tags), so NAME, VALUE, what ends a
value, the typing of values by the tool's schema and every error case are as that format's section
says. Several invokes in a block, and several blocks, are parallel calls.

The JSON fallback (both engines accept it, and dots models do write it): a block whose first
character after whitespace is `{` holds one call object, read as `hermes_json` reads one
(`core.json_calls`: `name` or `tool` for the name, `arguments` or `parameters` for the arguments,
`{"function": {..}}` unwrapped, keys in any order); a JSON array is not a call, as in both engines.
The call streams as its JSON does. After it only whitespace and END belong to the block; anything else
ends the block there (the call stands, the rest is text), as after complete invokes. A JSON body
that is not a call object (broken JSON, no name, `garbage`) makes the whole block text, as a block
without a valid invoke is.

Decided where the engines differ from the family: both engines strip a value's surrounding
whitespace and read `null` as null whatever the schema; here a string value is verbatim and
`null` is null only where the schema admits it (as in `minimax_xml`), so an edit tool's text keeps
its indentation. Both engines drop a call to a tool the request did not declare; here it is a call
(logged), unless the operator sets `TOOLCALL_PARSERS_UNDECLARED_TOOLS=text`.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import JsonCallReader
from ..core.json_lexer import JsonSyntaxError
from ..core.outside import ThinkMarkers
from .call_blocks import BLOCK, TEXT, XmlBlockTags
from .minimax_xml import (
    INVOKE_CLOSE,
    INVOKE_OPEN,
    PARAM_CLOSE,
    PARAM_OPEN,
    MiniMaxXmlStream,
    invoke_constraints,
    invoke_writer,
    writable_values,
    writes_name,
)
from .spec import Format

START, END = "<dots_function_call>", "</dots_function_call>"
TAGS = XmlBlockTags(START, END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, call_word="invoke")

# The JSON body, and after it.
_JSON_CALL, _JSON_AFTER = "dots.json_call", "dots.json_after"


class DotsXmlStream(MiniMaxXmlStream):
    """Incremental parser for one response in dots' tool-call format (`minimax_xml`'s machine with
    dots' block tags, and a block's JSON call object)."""

    format_name = "dots_xml"
    tags = TAGS

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._call_object: JsonCallReader | None = None
        self._readers[_JSON_CALL] = self._scan_call_object
        self._readers[_JSON_AFTER] = self._scan_after_object

    def _scan_block(self, text: str, pos: int) -> int | None:
        """A block's first non-space character `{` opens its JSON call object; else invokes."""
        if self._block_calls == 0:
            if (at := self._markup_ws(text, pos, self._raw)) > pos:
                return at
            if text[pos] == "{":
                self._call_object = JsonCallReader(
                    self._start_call, self._call_args, self._object_ended, self.limits, "".join(self._raw)
                )
                self._raw = []
                self._state = _JSON_CALL
                return pos
        return super()._scan_block(text, pos)

    def _object_ended(self, key: int, arguments: dict[str, Any]) -> None:
        self._end_call(key, arguments)
        self._block_calls += 1

    def _scan_call_object(self, text: str, pos: int) -> int | None:
        reader = self._call_object
        assert reader is not None
        try:
            stop, done = reader.feed(text, pos)
        except JsonSyntaxError as err:  # not a call: the block is text up to here, reading goes on
            self._call_object = None
            self._reject(f"not a valid JSON call ({err})", "".join(reader.unfinished))
            self._state = BLOCK if self._block_calls else TEXT
            return err.pos
        if not done:
            return stop if stop > pos else None
        self._call_object = None
        self._state = _JSON_AFTER
        return stop

    def _scan_after_object(self, text: str, pos: int) -> int | None:
        """After the call object: whitespace, then END; anything else ends the block there."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        end = self._literal_at(text, pos, (END,))
        if end is None:
            return None
        if not end:  # END is missing: the call stands, what follows is text
            self._text("".join(self._raw))
        self._raw = []
        self._state = TEXT
        return pos + len(end)

    def _close(self) -> None:
        if self._state in (_JSON_CALL, _JSON_AFTER):
            pending = self._pending_text() + self._buf
            if self._state == _JSON_CALL:
                self._reject("the output ended inside a tool call", pending)
            else:
                self._text(pending)
            self._call_object, self._raw, self._buf = None, [], ""
            return
        super()._close()

    def _pending_text(self) -> str:
        if self._call_object is not None:
            return "".join(self._call_object.unfinished)
        return super()._pending_text()


# -- the spec --------------------------------------------------------------------------------------

write = invoke_writer(START, END)
"""One block of invokes, as `minimax_xml` writes them; values verbatim, non-strings as JSON."""

required_constraint, auto_constraint = invoke_constraints(START, END)

FORMAT = Format(
    "dots_xml",
    '<dots_function_call><invoke name="f"><parameter name="p">v</parameter></invoke></dots_function_call> (dots)',
    DotsXmlStream,
    write,
    markers=(START, END, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=writes_name,
    writes_value=writable_values(DotsXmlStream.parameter_ends, PARAM_CLOSE),
    typed_values=True,
    vllm_names=("dots",),
    sglang_names=("dots",),
    models="rednote-hilab dots",
)
