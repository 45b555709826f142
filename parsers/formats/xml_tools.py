"""`xml_tools`: gptme-style tool calls as XML elements named after the tool, in a `<tool-use>` block.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                 # everything inside is text, never a call
    block   := START ws (element ws)* [END]              # END may be missing after complete elements
    element := "<" NAME (ws ARGS)? ws ">" BODY "</" NAME ">"
    ARGS    := 'args="' [^"]* '"' | "args='" [^']* "'"   # shell-quoted words, entities decoded
    NAME    := [^ \\t\\r\\n<>/="'&]{1,max_name}

with START = `<tool-use>` and END = `</tool-use>`; `ws` is any whitespace. BODY is the element's text
up to the first `</NAME>`, with XML entities decoded (`core.xml_entities`: an unknown or
broken entity and a bare `<` or `&` are kept literally, as models write code); one leading and one
trailing line break are framing, `\\n` or `\\r\\n` (a `\\r\\n` is one line break; line breaks inside the
body stay as written). Its arguments are mapped by the tool's schema as `markdown_tools` maps
them (`gptme_blocks`: the `args` words fill the required string parameters in declaration order, the
body fills the last one).

Several elements in one block are several calls. An element is a call only when NAME is a tool the
request declares. A block whose element breaks (an undeclared tool, another attribute than `args`,
a self-closing tag, words that do not fit the schema, an unclosed quote, a body the tool cannot
take, a refused call, arguments past TOOLCALL_PARSERS_MAX_CALL_CHARS) is text from that element on,
with one logged reason; elements finished before it stand. A block with no element, and an element
cut off by the end of the output, are text. Markdown fences mean nothing here (a fenced `<tool-use>`
is still a block): the format has no notion of code blocks.

Streaming: a call starts when its start tag is complete; the body streams as the last key's JSON
string. Held back between deltas: a partial marker or tag (`</NAME>` at most max_name + 3), a partial
entity (at most 10 characters), a `\\r` at the end of a delta (it may start a `\\r\\n`), and a line break
that is framing if the end tag follows (kept aside).
Names and `args` values are consumed into lists as they come, never held.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape

from ..core.block_bodies import ElementText
from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import ANY_SPACE, NotACall
from ..core.xml_entities import decode_entities
from .constraints import Element, const, repeated, sequence, structural, tag, triggered
from .gptme_blocks import (
    THINK_MARKERS,
    XML_WORD,
    BlockBody,
    BoundedRun,
    ToolBlockStream,
    head_and_body,
    mappable_tools,
    split_words,
    tool_tags,
)
from .spec import Call, ConstraintRequest, Format

START, END = "<tool-use>", "</tool-use>"
ARGS_OPENERS = ('args="', "args='")

_NAME_RUN = re.compile(r"""[^ \t\r\n<>/="'&]*""")
_ARGS_RUN = {'"': re.compile('[^"]*'), "'": re.compile("[^']*")}

# States: text outside blocks; in a block between elements; in a start tag's NAME; in a start tag
# after its NAME; in an `args` value; in an element's body.
_TEXT, _BLOCK, _NAME, _TAG, _ARGS, _BODY = "text", "block", "name", "tag", "args", "body"


class XmlToolsStream(ToolBlockStream):
    """Incremental parser for one response in the `xml_tools` format."""

    format_name = "xml_tools"
    markup_space = ANY_SPACE
    _body: ElementText  # the element's text, once its start tag is read

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory, [START], think_markers)
        self._state = _TEXT
        self._block_calls = 0
        self._reset_element()
        self._readers = {
            _TEXT: self._scan_text,
            _BLOCK: self._scan_block,
            _NAME: self._scan_name,
            _TAG: self._scan_tag,
            _ARGS: self._scan_args,
            _BODY: self._scan_body,
        }

    def _reset_element(self) -> None:
        self._raw = []
        self._name = BoundedRun(self.limits.max_name)
        self._args: BoundedRun | None = None  # the `args` value, once the attribute opened
        self._quote = ""

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._raw = [START]
            self._block_calls = 0
            self._state = _BLOCK
        return at

    # -- the block ----------------------------------------------------------------------------------

    def _scan_block(self, text: str, pos: int) -> int | None:
        """Between elements: whitespace (markup), then an element, END, or, after a call, text (END
        is missing; the finished elements stand)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        end = self._literal_at(text, pos, (END,))
        if end is None:
            return None
        if end:
            if self._block_calls == 0:
                self._reject("a <tool-use> block without a tool element", "".join(self._raw) + END)
            self._raw = []
            self._state = _TEXT
            return pos + len(END)
        if text[pos] == "<":
            self._raw.append("<")
            self._state = _NAME
            return pos + 1
        if self._block_calls == 0:
            raise NotACall("a <tool-use> block without a tool element")
        self._text("".join(self._raw))
        self._raw = []
        self._state = _TEXT
        return pos

    def _scan_name(self, text: str, pos: int) -> int | None:
        """The element's NAME, consumed as it comes; it is a call's only if the tool is declared."""
        end = self._name.read(text, pos, _NAME_RUN)
        self._raw.append(text[pos:end])
        if self._name.passed:
            raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        if end == len(text):
            return end
        name = self._name.value
        if not name:
            raise NotACall(f"{text[pos : pos + 20]!r} after '<' in a <tool-use> block", end)
        if name not in self.tools.schemas:
            raise NotACall(f"<{name}> is not a tool the request declares", end)
        self._state = _TAG
        return end

    def _scan_tag(self, text: str, pos: int) -> int | None:
        """After the NAME: whitespace, one `args` attribute, then `>`."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] == ">":
            self._raw.append(">")
            try:
                self._open_element()
            except NotACall as err:  # the start tag is read: reading goes on after it
                raise NotACall(str(err), pos + 1) from None
            return pos + 1
        if self._args is None and text[pos] == "a":
            opener = self._literal_at(text, pos, ARGS_OPENERS)
            if opener is None:
                return None
            if opener:
                self._raw.append(opener)
                self._args, self._quote = BoundedRun(self._info_bound), opener[-1]
                self._state = _ARGS
                return pos + len(opener)
        raise NotACall(f"unexpected {text[pos : pos + 20]!r} in the start tag", pos)

    def _scan_args(self, text: str, pos: int) -> int | None:
        """The `args` value, consumed as it comes, up to its closing quote."""
        assert self._args is not None
        end = self._args.read(text, pos, _ARGS_RUN[self._quote])
        self._raw.append(text[pos:end])
        if self._args.passed:
            raise NotACall(f"the args attribute passes {self._info_bound} characters", end)
        if end == len(text):
            return end
        self._raw.append(self._quote)
        self._state = _TAG
        return end + 1

    def _open_element(self) -> None:
        """A complete start tag: the call starts (or the element is not a call: NotACall)."""
        name = self._name.value
        self._block = BlockBody(self, name, split_words(decode_entities(self._args.value if self._args else "")))
        self._body = ElementText(f"</{name}>", self._raw.append, self._block)
        self._state = _BODY

    # -- the body -----------------------------------------------------------------------------------

    def _scan_body(self, text: str, pos: int) -> int | None:
        """The element's text, up to its end tag."""
        at = self._body.read(text, pos)
        if self._body.closed:
            try:
                self._finish_element()
            except NotACall as err:  # the element is read: reading goes on after it
                raise NotACall(str(err), at) from None
        return at

    def _finish_element(self) -> None:
        """The end tag: the call ends (or, a body it cannot take or too long, NotACall)."""
        self._block.finish()
        self._block_calls += 1
        self._reset_element()
        self._state = _BLOCK

    # -- recovery -----------------------------------------------------------------------------------

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The element (or a block without elements) is not a call: its text is text, and so is
        what follows, up to the next START."""
        self._reject(f"not a tool call ({err})", "".join(self._raw))
        self._reset_element()
        self._state = _TEXT
        return pos if err.pos is None else err.pos

    def _close(self) -> None:
        rest, self._buf = self._buf, ""
        if self._state == _TEXT or (self._state == _BLOCK and self._block_calls > 0):
            self._text("".join(self._raw) + rest)
        else:
            self._reject("the output ended inside a tool call", "".join(self._raw) + rest)
        self._reset_element()


def write(calls: Sequence[Call]) -> str:
    """One `<tool-use>` block, an element per call: the arguments in the order of the tool's
    positional parameters, all but the last as `args` words, the last the body; escaped as XML, a
    carriage return in the body as `&#13;` (a literal one next to the body's framing line break
    would read as part of that break)."""
    elements = []
    for name, arguments in calls:
        words, body = head_and_body(arguments)
        args = ' args="' + escape(" ".join(words), {'"': "&quot;"}) + '"' if words else ""
        inner = f"\n{escape(body, {chr(13): '&#13;'})}\n" if arguments else "\n"
        elements.append(f"<{name}{args}>{inner}</{name}>")
    return START + "\n" + "\n".join(elements) + "\n" + END


def _elements(request: ConstraintRequest, tools: list[tuple[str, list[str]]]) -> Element:
    return repeated(request, tool_tags(tools, "<{name}", (' args="', XML_WORD, '"'), (">\n", "\n", "</{name}>\n")))


def required_constraint(request: ConstraintRequest) -> dict[str, Any] | None:
    """The decoding constraint for `tool_choice="required"` (or one named tool, `only`): one
    `<tool-use>` block of elements, one per call, each `<NAME args="word..">\\nbody\\n</NAME>` with
    the words the tool's schema takes (no `args` when it takes none, no body when it takes no
    parameter). None when no requested tool can be written in this format."""
    tools = mappable_tools(request.schemas, request.only)
    return structural(sequence(const(START + "\n"), _elements(request, tools), const(END))) if tools else None


def auto_constraint(request: ConstraintRequest) -> dict[str, Any] | None:
    """Strict `auto`: free text, where each `<tool-use>` opens a block of the declared tools'
    elements (their words as the schema takes them; bodies stay free)."""
    tools = mappable_tools(request.schemas, None)
    return triggered(request, [START], [tag(START + "\n", _elements(request, tools), END)]) if tools else None


def may_call(text: str) -> bool:
    """Whether `text` may hold a block (a call needs its tool declared)."""
    return START in text


def _writes_name(name: str) -> bool:
    return _NAME_RUN.fullmatch(name) is not None


FORMAT = Format(
    "xml_tools",
    '<tool-use><tool args="word..">body</tool></tool-use> (gptme)',
    XmlToolsStream,
    write,
    markers=(START, END),
    required_constraint=required_constraint,
    needs_declared_tools=may_call,
    writes_name=_writes_name,
    auto_constraint=auto_constraint,
    pins_arguments=False,
    models="agents that prompt gptme-style, as XML (any model with our template)",
)
