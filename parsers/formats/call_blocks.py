"""What the XML formats that name a call and its parameters in tags (`qwen_xml`, `minimax_xml`) share:
the block machine around the tags, with each format's tags and NAME grammar filled in.

Both read the same shape::

    block     := START ws (call ws)* [END]             # END may be missing after complete calls
    call      := CALL_OPEN NAME ">" ws (parameter ws)* CALL_CLOSE
    parameter := PARAM_OPEN NAME ">" VALUE             # VALUE and what ends it: `core.xml_parameters`

Only NAME (how a tag's name is written and where it ends) and the tags themselves differ, so a
format gives its `XmlBlockTags`, its value ends, and a reader for the NAME state (`_scan_name`) that
passes each complete name to `_named`. The rules both follow, written once here: a call that breaks
the grammar, is refused at its name or passes the size bound of its arguments is text up to its
CALL_CLOSE (the `SKIP` state), or up to a CALL_OPEN written before that (the model opened the call
again: prose naming the tag, then the real call), and the other calls still count; a block that never holds a call,
and a call cut off by the end of the output inside its payload, are text; whitespace between tags is consumed as
markup as it arrives, so what waits for more text is at most a partial tag or a name.

A call the end of the output cuts off after its payload is complete is a call, as `hermes_json`'s
complete JSON without its `</tool_call>` is: where the format's value close accepts the end of the
output (`ValueEnd.at_end_of_output`), the output ending after an argument's close (and whitespace)
ends the call, and so does the output ending after a JSON body and the tags that close it before
CALL_CLOSE; CALL_CLOSE (and END) may be missing or cut part-way, the cut part being text. A call cut
inside a value, inside a tag, before its name is complete or before any argument is text: nothing
says the model wrote what it meant to (a max_tokens stop cuts anywhere; a stop token the engine
drops, or a model that forgets its close, only after a complete payload).

A format may also read a call written without its block (`bare_calls`: Qwen3-Coder sometimes drops
`<tool_call>`): CALL_OPEN in the text outside blocks opens a block that had no START, whose calls
must name a declared tool (a bare tag is otherwise too common in prose to be a call); END may still
close it. Such a block that breaks is text up to where it broke, and reading goes on from there as
text (never skipping to a CALL_CLOSE, which may belong to a real call further on).

A call's arguments may instead come as one JSON object (Kimi K3's `json` element, DSML's inline
body): a format opens it with `_open_json`, and only whitespace, `json_close` (if the format has
one) and CALL_CLOSE may follow it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import ArgumentsReader
from ..core.json_lexer import json_string_body
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import ANY_SPACE, FormatStream, NotACall
from ..core.typed_values import decoded_string
from ..core.xml_attributes import tag_attributes as tag_attributes  # re-exported for deepseek_dsml
from ..core.xml_parameters import ParameterValueReader, ValueEnd
from .constraints import Element, const, declared_arguments, regex, sequence, tag

# States: text outside blocks; in a block between calls; in a call between parameters; in a tag's
# NAME; in a VALUE; in a broken call, skipping to its CALL_CLOSE; in a JSON body, and after it. States
# are names: a format adds its own under its own prefix, with nothing to coordinate.
TEXT, BLOCK, CALL, NAME, VALUE, SKIP, JSON_BODY, JSON_END = (
    "text",
    "block",
    "call",
    "name",
    "value",
    "skip",
    "json_body",
    "json_end",
)


def raw_value(value: Any) -> str:
    """A value as the XML formats write it, with no escaping: a string verbatim, anything else as
    JSON (typed back by the tool's schema)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def named_parameters(
    parameters: dict[str, Any], pinned: bool, param_open: str, close: str, ends: Sequence[str] = ()
) -> Element:
    """A call's parameters as `param_open + '"KEY">' VALUE close` tags, for formats whose parameters
    xgrammar has no style for (Step-3's, MiniCPM5's). A pinned tool's declared keys in their order
    (the required ones present), each value any text where its schema admits a string (the raw value
    is that text) and else JSON of its schema; then, unless the schema closes the object, any other
    keys with any text. An unpinned tool: any keys with any text. A value holds none of `ends` (what
    the parser ends a value or a call at: the value's close, the call's), nor `close`."""
    text: Element = {"type": "any_text", "excludes": list(dict.fromkeys([close.strip(), *ends]))}
    other = sequence(const(f'{param_open}"'), regex(r'[^"<>]+'), tag('">', text, close))
    return declared_arguments(
        parameters, pinned, lambda key, value: tag(f'{param_open}"{key}">', value, close), other, text
    )


@dataclass(frozen=True, slots=True)
class XmlBlockTags:
    """A format's tags (see the module docstring) and the word its docs use for a call."""

    start: str
    end: str
    call_open: str
    call_close: str
    param_open: str
    call_word: str
    """What the format calls a call element ("function", "invoke"), for log lines."""
    param_close: str = ""
    """A parameter's close, where the family reads it from its tags (Qwen3-Coder's); the others
    name it in their value ends."""


class XmlBlockStream(FormatStream):
    """The block machine of an XML tool-call format; a subclass reads its NAME (`_scan_name`)."""

    tags: XmlBlockTags
    markup_space = ANY_SPACE
    blockless = False
    """Each call stands alone (GLM): START opens the call's NAME at once and CALL_CLOSE (which is
    END) ends it, with no block around calls."""
    unclosed_value_ends_call = True
    """A CALL_CLOSE that ends a value (the model dropped the value's close) completes the call (qwen);
    False: the call breaks there (DSML), as a model that drops a close may have lost more."""
    json_close: str | None = None
    """The tag that closes a JSON body before CALL_CLOSE (Kimi K3's `json` element), if any."""
    bare_calls = False
    """CALL_OPEN outside a block opens a block without START whose calls name declared tools (see
    the module docstring)."""

    def __init__(
        self,
        tools: Any,
        id_factory: IdFactory | None,
        think_markers: ThinkMarkers,
        value_ends: Sequence[ValueEnd],
        *,
        framing_newlines: bool = False,
        python_values: bool = False,
    ) -> None:
        super().__init__(tools, id_factory)
        tags = self.tags
        starts = [tags.start, *([tags.call_open] if self.bare_calls else [])]
        self._outside = OutsideCalls(self._text, starts, think_markers)
        self._skip_scanner = MarkerScanner([tags.call_close, tags.end, tags.call_open])
        self._state = TEXT
        self._raw: list[str] = []  # markup and values of the current block or call: text if it breaks
        self._block_calls = 0  # calls finished in the current block
        self._rejections_at_block = 0  # spans given back before the current block (`tally`)
        self._bare = False  # the current block had no START (`bare_calls`)
        self._key = -1  # the core's number for the call being read
        self._on_name: Callable[[str], None] = self._open_call  # what the NAME being read opens
        self._schema: dict[str, Any] = {}  # the called tool's parameter schemas
        self._arguments: dict[str, Any] = {}
        self._param = ""
        self._param_schema: Any = None  # the schema typing the value being read
        self._json: ArgumentsReader | None = None  # the call's JSON body, being read
        self._json_closes: list[str] = []  # the tags still to come after it
        self._value = ParameterValueReader(
            value_ends,
            self._send_args,
            self._keep,
            self.limits,
            framing_newlines=framing_newlines,
            python_values=python_values,
        )
        self._readers = {
            TEXT: self._scan_text,
            BLOCK: self._scan_block,
            CALL: self._scan_call,
            NAME: self._scan_name,
            VALUE: self._scan_value,
            SKIP: self._scan_skip,
            JSON_BODY: self._scan_json,
            JSON_END: self._scan_json_end,
        }

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._open_block(m.group())  # START, or the spelling of it the format also reads
            if self.blockless:
                self._on_name = self._open_call
                self._state = NAME
            elif self.bare_calls and m.group() == self.tags.call_open:
                self._bare = True
                self._on_name = self._open_bare_call
                self._state = NAME
        return at

    def _open_block(self, tag: str) -> None:
        self._raw = [tag]
        self._block_calls = 0
        self._rejections_at_block = self.tally.rejections  # spans given back before this block
        self._bare = False
        self._state = BLOCK

    def _open_bare_call(self, name: str) -> None:
        """A call in a block without START: only a declared tool's."""
        if name not in self.tools.schemas:
            raise NotACall(f"a bare {self.tags.call_word} for {name!r}, which the request did not declare")
        self._open_call(name)

    # -- markup ----------------------------------------------------------------------------------

    def _tag_at(self, text: str, pos: int, tags: tuple[str, ...]) -> str | None:
        """The tag of `tags` that starts at `pos`; None while the rest of `text` may still become
        one (held back: at most a tag long). Raises NotACall otherwise."""
        tag = self._literal_at(text, pos, tags)
        if tag == "":
            raise NotACall(f"unexpected {text[pos : pos + 20]!r}")
        return tag

    def _scan_block(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        try:
            tag = self._tag_at(text, pos, (self.tags.call_open, self.tags.end))
        except NotACall:
            if self._block_calls == 0:
                raise
            self._text("".join(self._raw))  # the block's END is missing; the finished calls stand
            self._raw = []
            self._state = TEXT
            return pos
        if tag is None:
            return None
        self._raw.append(tag)
        if tag == self.tags.end:
            self._end_block()
        else:
            self._on_name = self._open_bare_call if self._bare else self._open_call
            self._state = NAME
        return pos + len(tag)

    def _end_block(self) -> None:
        """END: markup when the block held a call; otherwise the whole block is text."""
        if self._block_calls == 0:
            refused = self.tally.rejections > self._rejections_at_block  # a call of the block was
            self._reject(
                f"a tool-call block without a valid {self.tags.call_word}", "".join(self._raw), rest_of_last=refused
            )
        self._raw = []
        self._state = TEXT

    def _scan_name(self, text: str, pos: int) -> int | None:
        """A tag's NAME, in the format's own grammar: pass it to `_named`, consume it and its `>`."""
        raise NotImplementedError

    def _named(self, name: str) -> None:
        """A tag's NAME is complete: open what the tag opens (may raise NotACall)."""
        if not name:
            raise NotACall("a tag with an empty name")
        self._on_name(name)

    def _open_call(self, name: str) -> None:
        self._key = self._start_call(name)
        self._arguments = {}
        properties = self.tools.schemas.get(name, {}).get("properties")
        self._schema = properties if isinstance(properties, dict) else {}
        self._state = CALL

    def _scan_call(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        tag = self._tag_at(text, pos, (self.tags.param_open, self.tags.call_close))
        if tag is None:
            return None
        if tag == self.tags.call_close:  # not kept: if the call breaks here, SKIP reads the tag as text
            self._end_call_element()
        else:
            self._raw.append(tag)
            self._on_name = self._open_param
            self._state = NAME
        return pos + len(tag)

    def _end_call_element(self) -> None:
        self._call_args(self._key, "}" if self._arguments else "{}")
        self._call_ended(self._arguments)

    def _call_ended(self, arguments: dict[str, Any]) -> None:
        """The call is complete (its parameters, or its JSON body): the block goes on."""
        self._end_call(self._key, arguments)
        self._block_calls += 1
        self._raw = []
        self._state = TEXT if self.blockless else BLOCK

    def _open_param(self, name: str, schema: Any = None) -> None:
        """A parameter's value begins, typed by `schema` where the tag says what the value is
        (DSML's `string="true"`), else by the tool's schema for it."""
        name = decoded_string(name)  # the key a client reads from the JSON sent
        if name in self._arguments:
            self._warn(f"parameter {name!r} given twice in one {self.tags.call_word}; the last one wins")
        separator = ", " if self._arguments else "{"
        self._call_args(self._key, separator + '"' + json_string_body(name) + '": ')
        self._arguments[name] = None
        self._param = name
        if schema is None:
            schema = self._schema.get(name) if self.tools else None
        self._param_schema = schema
        self._value.begin(schema)
        self._state = VALUE

    # -- values ----------------------------------------------------------------------------------

    def _scan_value(self, text: str, pos: int) -> int | None:
        """Value text up to the tag that ends it (`core.xml_parameters`, the format's value ends)."""
        at, end, value = self._value.read(text, pos)
        if end is not None and end.tag == self.tags.call_close and not self.unclosed_value_ends_call:
            raise NotACall(f"a parameter without its close before {end.tag}", at, ended=True)
        if end is not None:
            self._value_ended(end, value)
        return at

    def _value_ended(self, end: ValueEnd, value: Any) -> None:
        """A value is complete; a CALL_CLOSE that ended it (its close tag dropped) ends the call too."""
        self._arguments[self._param] = value
        if end.tag == self.tags.call_close:
            self._end_call_element()
        else:
            self._state = CALL

    def _send_args(self, fragment: str) -> None:
        self._call_args(self._key, fragment)

    def _keep(self, text: str) -> None:
        self._raw.append(text)

    # -- a call's arguments as one JSON object ---------------------------------------------------

    def _open_json(self) -> None:
        """The call's arguments follow as one JSON object; only its closing tags may come after it."""
        self._json = ArgumentsReader(self._send_args, self.limits)
        self._json_closes = [self.tags.call_close, *([self.json_close] if self.json_close else [])]
        self._state = JSON_BODY

    def _scan_json(self, text: str, pos: int) -> int | None:
        assert self._json is not None
        stop, done = self._json.read(text, pos, self._raw)
        if done:
            self._state = JSON_END
        return stop if stop > pos or done else None

    def _scan_json_end(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        want = self._json_closes[-1]
        found = self._literal_at(text, pos, (want,))
        if found is None:
            return None
        if not found:
            raise NotACall(f"no {want} after the JSON arguments")
        self._json_closes.pop()
        if self._json_closes:
            self._raw.append(found)
            return pos + len(found)
        assert self._json is not None
        arguments, self._json = self._json.arguments, None
        self._call_ended(arguments)
        return pos + len(found)

    # -- recovery --------------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The current call (or block) breaks the grammar: it becomes text, the rest goes on."""
        self._json = None
        self._reject(f"not a valid tool call ({err})", self._pending_text())
        self._raw = []
        if self._state == BLOCK or self._bare:  # a bare block's text goes on from where it broke
            self._state = TEXT
        elif err.ended:  # nothing of the broken call is left to skip
            self._state = TEXT if self.blockless else BLOCK
        else:
            self._state = SKIP
        return pos if err.pos is None else err.pos

    def _scan_skip(self, text: str, pos: int) -> int | None:
        """Text of a broken call, up to and including its CALL_CLOSE, then the block goes on; or up
        to END, which then ends the block."""
        m = self._skip_scanner.search(text, pos)
        if m is None:
            cut = self._skip_scanner.releasable(text, pos)
            self._text(text[pos:cut])
            return cut if cut > pos else None
        self._text(text[pos : m.start()])
        if m.group() == self.tags.call_open:  # a call the model opened again: read it
            self._state = TEXT if self.blockless else BLOCK
            return m.start()
        if m.group() == self.tags.end and not self.blockless:
            self._raw = [self.tags.end]
            self._end_block()
        else:
            self._text(m.group())
            self._state = TEXT if self.blockless else BLOCK
        return m.end()

    def _close(self) -> None:
        if self._only_close_missing(self._buf):
            self._complete_at_end()
        if self._state in (TEXT, SKIP) or (self._state == BLOCK and self._block_calls > 0):
            self._text(self._pending_text() + self._buf)
        else:  # inside a call (any of its states), or a block without one
            self._reject("the output ended inside a tool call", self._pending_text() + self._buf)
        self._raw = []
        self._buf = ""

    def _only_close_missing(self, held: str) -> bool:
        """Whether what the output ends with, unread, is nothing or a cut CALL_CLOSE (or END)."""
        return not held or self.tags.call_close.startswith(held) or self.tags.end.startswith(held)

    def _complete_at_end(self) -> None:
        """The output ends where the call's payload is complete (see the module docstring): after a
        tag whose value end accepts the end of the output (an argument's close; qwen's `</function>`
        with its `</parameter>` dropped), after a complete argument, or after a JSON body and its
        tags before CALL_CLOSE. The call is complete."""
        try:
            if self._state == VALUE:
                end, value = self._value.end_of_output()
                if end is not None:
                    self._value_ended(end, value)
            if self._state == CALL and self._arguments:
                self._end_call_element()
            elif self._state == JSON_END and self._json_closes == [self.tags.call_close]:
                assert self._json is not None
                arguments, self._json = self._json.arguments, None
                self._call_ended(arguments)
        except NotACall as err:  # the arguments' size bound
            self._reject(f"not a valid tool call ({err})", self._pending_text())
            self._raw = []
            self._state = SKIP

    def _pending_text(self) -> str:
        return "".join(self._raw) + (self._value.pending() if self._state == VALUE else "")
