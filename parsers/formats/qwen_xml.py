"""`qwen_xml`: Qwen3-Coder XML tool calls (and Qwen3.5 / Qwen3.6, MiniCPM and the other models that
copied the format), values typed by the tool schema.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (function ws)* [END]           # END may be missing after complete functions
    function  := "<function=" NAME ">" ws (parameter ws)* "</function>"
    parameter := "<parameter=" NAME ">" ["\\n"] VALUE ["\\n"] [PARAM_CLOSE]
    NAME      := [^<>\\n]+                                # surrounding whitespace is not part of it

with START = `<tool_call>`, END = `</tool_call>` and PARAM_CLOSE = `</parameter>`; `ws` is any
whitespace. Several functions may share one block (vLLM's and SGLang's Qwen3-Coder parsers read
that too); Qwen3-Coder's own template writes one block per call, a newline between. A NAME is at
most `TOOLCALL_PARSERS_MAX_NAME` characters.

VALUE is raw text: the format has no escaping. One newline right after the parameter's tag and one
right before the tag that ends the value are markup (the template writes the value on its own
lines). The value ends at:

- a `</parameter>` followed (after whitespace) by the next `<parameter=` or `</function>`; any
  other `</parameter>` is part of the value (a file that holds XML), as in `minimax_xml`;
- a `</function>` followed (after whitespace) by `</tool_call>`, `<tool_call>`, `<function=` or the
  end of the output: the model dropped the `</parameter>` (models do this in long contexts), and
  the function ends there too;
- a `<parameter=` at the start of a line of the value: the model dropped the `</parameter>`, and
  the next parameter begins.

So a value cannot hold a line that starts with `<parameter=`, nor `</parameter>` + whitespace +
`<parameter=` or `</function>`, nor `</function>` + whitespace + a block tag: those read as markup.

Values are typed by the request's tool schema (`core.typed_values`, the rules of `minimax_xml`);
reading them is shared with `minimax_xml` (`core.xml_parameters`). The call's name is known when
its function tag closes; a string value streams as it is written; other values are sent when their
end is known (all as far as the core's streaming policy shows a call). A function that breaks the
grammar, is refused at its name (too many calls, an undeclared tool the operator refuses, a lone
surrogate) or passes the size bound of its arguments is text up to its `</function>`, and the other
functions still count; a block that never holds a function, and a function cut off by the end of
the output, are text.

Reading is one pass over the text: whitespace between tags and after an end tag is consumed as it
arrives (kept as markup, or as value text once it is known to be data), so what waits for more text
is at most a partial tag, a name, or one newline.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import FormatStream, NotACall
from ..core.typed_values import decoded_string
from ..core.xml_parameters import ParameterValueReader, ValueEnd

START, END = "<tool_call>", "</tool_call>"
FUNCTION_OPEN, FUNCTION_CLOSE = "<function=", "</function>"
PARAM_OPEN, PARAM_CLOSE = "<parameter=", "</parameter>"

VALUE_ENDS = (
    ValueEnd(PARAM_CLOSE, followers=(PARAM_OPEN, FUNCTION_CLOSE)),
    ValueEnd(FUNCTION_CLOSE, followers=(END, START, FUNCTION_OPEN), at_end_of_output=True),
    ValueEnd(PARAM_OPEN, line_start=True, kept=0),
)
"""What ends a value (see the module docstring); `core.xml_parameters` applies them."""

_WS = re.compile(r"\s*")
_NAME_END = re.compile("[<>\n]")

# States: text outside blocks; in a block between functions; in a function between parameters; in
# a tag's NAME; in a VALUE; in a broken function, skipping to its `</function>`.
_TEXT, _BLOCK, _FUNCTION, _NAME, _VALUE, _SKIP = range(6)


class QwenXmlStream(FormatStream):
    """Incremental parser for one response in Qwen3-Coder's XML tool-call format."""

    format_name = "qwen_xml"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [START], think_markers)
        self._skip_scanner = MarkerScanner([FUNCTION_CLOSE, END])
        self._state = _TEXT
        self._raw: list[str] = []  # markup and values of the current block or function: text if it breaks
        self._block_calls = 0  # functions finished in the current block
        self._key = -1  # the core's number for the call being read
        self._naming_function = True  # whether the NAME being read is a function's (else a parameter's)
        self._schema: dict[str, Any] = {}  # the called tool's parameter schemas
        self._arguments: dict[str, Any] = {}
        self._param = ""
        self._value = ParameterValueReader(VALUE_ENDS, self._send_args, self._keep, self.limits, framing_newlines=True)
        self._readers = {
            _TEXT: self._scan_text,
            _BLOCK: self._scan_block,
            _FUNCTION: self._scan_function,
            _NAME: self._scan_name,
            _VALUE: self._scan_value,
            _SKIP: self._scan_skip,
        }

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._raw = [START]
            self._block_calls = 0
            self._state = _BLOCK
        return at

    # -- markup ----------------------------------------------------------------------------------

    def _markup_ws(self, text: str, pos: int) -> int:
        """Consume the whitespace at `pos` as markup; the position after it."""
        end = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if end > pos:
            self._raw.append(text[pos:end])
        return end

    @staticmethod
    def _tag_at(text: str, pos: int, tags: tuple[str, ...]) -> str | None:
        """The tag of `tags` that starts at `pos`; None while the rest of `text` may still become
        one (held back: at most a tag long). Raises NotACall otherwise."""
        partial = False
        for tag in tags:
            if text.startswith(tag, pos):
                return tag
            partial = partial or (len(text) - pos < len(tag) and tag.startswith(text[pos:]))
        if partial:
            return None
        raise NotACall(f"unexpected {text[pos : pos + 20]!r}")

    def _scan_block(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos)
        if at > pos:
            return at
        try:
            tag = self._tag_at(text, pos, (FUNCTION_OPEN, END))
        except NotACall:
            if self._block_calls == 0:
                raise
            self._text("".join(self._raw))  # the block's END is missing; the finished functions stand
            self._raw = []
            self._state = _TEXT
            return pos
        if tag is None:
            return None
        self._raw.append(tag)
        if tag == END:
            self._end_block()
        else:
            self._naming_function = True
            self._state = _NAME
        return pos + len(tag)

    def _end_block(self) -> None:
        """END: markup when the block held a call; otherwise the whole block is text."""
        if self._block_calls == 0:
            self._reject("a tool-call block without a valid function", "".join(self._raw))
        self._raw = []
        self._state = _TEXT

    def _scan_name(self, text: str, pos: int) -> int | None:
        """A tag's NAME up to its `>`. What is held back is at most a name long; past that, or at a
        `<` or a line break, the tag is not a call."""
        longest = self.limits.max_name
        m = _NAME_END.search(text, pos, pos + 1 + longest)
        if m is None:
            if len(text) >= pos + 1 + longest:
                raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
            return None
        if m.group() != ">":
            raise NotACall(f"a {m.group()!r} in a tag's name")
        name = text[pos : m.start()].strip()
        if not name:
            raise NotACall("a tag with an empty name")
        if self._naming_function:
            self._open_function(name)
        else:
            self._open_param(name)
        self._raw.append(text[pos : m.end()])
        return m.end()

    def _open_function(self, name: str) -> None:
        self._key = self._start_call(name)
        self._arguments = {}
        properties = self.tools.schemas.get(name, {}).get("properties")
        self._schema = properties if isinstance(properties, dict) else {}
        self._state = _FUNCTION

    def _scan_function(self, text: str, pos: int) -> int | None:
        at = self._markup_ws(text, pos)
        if at > pos:
            return at
        tag = self._tag_at(text, pos, (PARAM_OPEN, FUNCTION_CLOSE))
        if tag is None:
            return None
        self._raw.append(tag)
        if tag == FUNCTION_CLOSE:
            self._end_function()
        else:
            self._naming_function = False
            self._state = _NAME
        return pos + len(tag)

    def _end_function(self) -> None:
        self._call_args(self._key, "}" if self._arguments else "{}")
        self._end_call(self._key, self._arguments)
        self._block_calls += 1
        self._raw = []
        self._state = _BLOCK

    def _open_param(self, name: str) -> None:
        name = decoded_string(name)  # the key a client reads from the JSON sent
        if name in self._arguments:
            self._warn(f"parameter {name!r} given twice in one function; the last one wins")
        separator = ", " if self._arguments else "{"
        self._call_args(self._key, separator + '"' + json_string_body(name) + '": ')
        self._arguments[name] = None
        self._param = name
        self._value.begin(self._schema.get(name) if self.tools else None)
        self._state = _VALUE

    # -- values ----------------------------------------------------------------------------------

    def _scan_value(self, text: str, pos: int) -> int | None:
        """Value text up to the tag that ends it (`core.xml_parameters`, `VALUE_ENDS`)."""
        at, end, value = self._value.read(text, pos)
        if end is not None:
            self._value_ended(end, value)
        return at

    def _value_ended(self, end: ValueEnd, value: Any) -> None:
        self._arguments[self._param] = value
        if end.tag == FUNCTION_CLOSE:
            self._end_function()
        else:
            self._state = _FUNCTION

    def _send_args(self, fragment: str) -> None:
        self._call_args(self._key, fragment)

    def _keep(self, text: str) -> None:
        self._raw.append(text)

    # -- recovery --------------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The current function (or block) breaks the grammar: it becomes text, the rest goes on."""
        self._reject(f"not a valid tool call ({err})", self._pending_text())
        self._raw = []
        self._state = _TEXT if self._state == _BLOCK else _SKIP
        return pos if err.pos is None else err.pos

    def _scan_skip(self, text: str, pos: int) -> int | None:
        """Text of a broken function, up to and including its `</function>`, then the block goes on;
        or up to END, which then ends the block."""
        m = self._skip_scanner.search(text, pos)
        if m is None:
            cut = self._skip_scanner.releasable(text, pos)
            self._text(text[pos:cut])
            return cut if cut > pos else None
        self._text(text[pos : m.start()])
        if m.group() == END:
            self._raw = [END]
            self._end_block()
        else:
            self._text(m.group())
            self._state = _BLOCK
        return m.end()

    def _close(self) -> None:
        if self._state == _VALUE and not self._buf:
            self._close_value_at_end()
        if self._state in (_FUNCTION, _NAME, _VALUE) or (self._state == _BLOCK and self._block_calls == 0):
            self._reject("the output ended inside a tool call", self._pending_text() + self._buf)
        else:
            self._text(self._pending_text() + self._buf)
        self._raw = []
        self._buf = ""

    def _close_value_at_end(self) -> None:
        """The output ends right after a `</function>` that closed a value (its `</parameter>`
        dropped): the function is complete."""
        try:
            end, value = self._value.end_of_output()
            if end is not None:
                self._value_ended(end, value)
        except NotACall as err:
            self._reject(f"not a valid tool call ({err})", self._pending_text())
            self._raw = []
            self._state = _SKIP

    def _pending_text(self) -> str:
        return "".join(self._raw) + (self._value.pending() if self._state == _VALUE else "")


# -- decoding constraints ------------------------------------------------------------------------


def _function_tags(schemas: dict[str, dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """One tag per tool: its block as the template writes it, the parameters as xgrammar's `qwen_xml`
    style renders a JSON schema (`<parameter=p>\\nvalue\\n</parameter>` lines)."""
    return [
        {
            "type": "tag",
            "begin": f"{START}\n{FUNCTION_OPEN}{name}>\n",
            "content": {
                "type": "json_schema",
                "json_schema": schemas.get(name) or {"type": "object"},
                "style": "qwen_xml",
            },
            "end": f"\n{FUNCTION_CLOSE}\n{END}",
        }
        for name in names
    ]


def required_constraint(schemas: dict[str, dict[str, Any]], only: str | None, single: bool) -> dict[str, Any]:
    """The decoding constraint for `tool_choice="required"` (or one named tool, `only`): a structural
    tag in xgrammar's JSON form for one or more blocks (one call each, a newline between) that end
    the output; at most one if `single`."""
    names = [only] if only is not None else list(schemas)
    blocks = {"type": "tags_with_separator", "tags": _function_tags(schemas, names), "separator": "\n"}
    return {"type": "structural_tag", "format": {**blocks, "at_least_one": True, "stop_after_first": single}}


def auto_constraint(schemas: dict[str, dict[str, Any]], single: bool) -> dict[str, Any]:
    """Strict `tool_choice="auto"`: free text, where each `<tool_call>\\n<function=` opens a call that
    follows its tool's schema."""
    tags = _function_tags(schemas, list(schemas))
    triggered = {"type": "triggered_tags", "triggers": [f"{START}\n{FUNCTION_OPEN}"], "tags": tags}
    return {"type": "structural_tag", "format": {**triggered, "stop_after_first": single}}
