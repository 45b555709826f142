"""`markdown_tools`: gptme-style tool calls as fenced code blocks whose info string is the tool name and
its positional arguments.

Grammar, as this machine reads it (line by line; a line ends at `\\n`)::

    output  := (line | think | fence)*
    think   := "<think>" text "</think>"                 # everything inside is text, never a fence
    fence   := OPEN INFO NL body [CLOSE]                  # at a line start
    OPEN    := " "{0,3} ("`"{3,64} | "~"{3,64})
    INFO    := NAME [ [ \\t]+ WORDS ]                      # for a backtick fence: no backtick in it
    CLOSE   := NL " "{0,3} RUN [ \\t\\r]* ("\\n" | end of output)
                                                          # RUN: the fence's character, at least as
                                                          # many as OPEN has, at most 64
    NL      := "\\r\\n" | "\\n"                             # one line break, CRLF or LF

A fence is a **call** when NAME (the info string's first word) is a tool the request declares, the tool's
schema maps onto WORDS and the body (`gptme_blocks`: required string parameters in declaration order, the
body fills the last one), and the fence is closed. Every other fence is content, and pairs as CommonMark
pairs fences: a line like ```` ```save x ```` inside a ```` ```python ```` block is part of that block's
content, never a call. The body is the text between the opening line and the closing fence line, without
the line break before the closing fence (`\\r\\n` or `\\n`: a `\\r\\n` is one line break wherever a line
break is framing, so the opening line's `\\r` is not part of the info string either; line breaks inside
the body stay as written; a body cannot end in a lone `\\r`: a fence has no escape), so a body may hold a
shorter fence or one of the other character. A line that only looks like a fence (a backtick in a
backtick fence's info string) is text. A `<tool-use>` block (`xml_tools`) is content.

Decisions and error cases (each block that names a declared tool but is not a call is content, with
one logged reason; a fence naming no declared tool is content, silently):

- More than 64 fence characters is not a fence here (CommonMark has no limit): the bound keeps the
  hold-back at a line start short. An info string longer than `gptme_blocks.info_bound` (4 x
  TOOLCALL_PARSERS_MAX_NAME) opens a content fence (its name is not read past the bound).
- An indented opening fence (1-3 spaces) counts; its body is taken verbatim (CommonMark would strip
  the indent from the body lines).
- Words: too many, too few, an unclosed quote; a schema that cannot be mapped; a body for a tool
  whose parameters all came from words; a refused call (too many calls, an undeclared tool the
  operator refuses); arguments past TOOLCALL_PARSERS_MAX_CALL_CHARS (acted on at the closing fence).
  The opening line's errors make the fence a content fence; a body's, the whole block content.
- A call block not closed by the end of the output is content. The default streaming policy never
  shows it (unless its arguments passed the policy's bound); `eager` shows its start and body as
  written, then its text: the finished response has no such call.

Streaming: a call starts when its opening line is complete; the body streams as the last key's JSON
string. Held back between deltas: at a line start, up to 3 spaces and a fence run (at most 67
characters); in a fence, a `\\r` that ends a delta (it may start a line break); in a call body, the
line break before a possible closing fence line. Whitespace after a closing run is never held.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.block_bodies import FencedLines, fence_at
from ..core.ids import IdFactory
from ..core.lines import before_break
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from .constraints import Element, regex, repeated, sequence, structural, triggered
from .gptme_blocks import (
    MD_WORD,
    THINK_MARKERS,
    BlockBody,
    BoundedRun,
    ToolBlockStream,
    head_and_body,
    mappable_tools,
    split_words,
    tool_tags,
)
from .spec import Call, ConstraintRequest, Format

_INFO_CHARS = re.compile(r"[^\n]*")
_WORD_GAP = re.compile(r"[ \t\r]")

# States: outside fences at a line start / mid-line; in an opening line's info string; in a call's
# body; in a content fence.
_LINE, _TEXT, _INFO, _BODY, _CODE = "line", "text", "info", "body", "code"


class MarkdownToolsStream(ToolBlockStream):
    """Incremental parser for one response in the `markdown_tools` format."""

    format_name = "markdown_tools"
    _lines: FencedLines  # the open fence's lines, once its opening line is read

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = THINK_MARKERS
    ) -> None:
        super().__init__(tools, id_factory, ["\n"], think_markers)
        self._state = _LINE
        self._run = ""  # the opening fence's run
        self._reset_block()
        self._readers = {
            _LINE: self._scan_line,
            _TEXT: self._scan_text,
            _INFO: self._scan_info,
            _BODY: self._scan_body,
            _CODE: self._scan_code,
        }

    def _reset_block(self) -> None:
        self._raw = []
        self._info = BoundedRun(self._info_bound)

    # -- outside fences -------------------------------------------------------------------------

    def _scan_line(self, text: str, pos: int) -> int | None:
        head = fence_at(text, pos)
        if head is None:
            return None
        run, end = head
        if not run:
            self._state = _TEXT
            return pos
        self._run = run
        self._raw = [text[pos:end]]
        self._state = _INFO
        return end

    def _scan_text(self, text: str, pos: int) -> int | None:
        """Text to the end of the line (reasoning blocks pass through whole)."""
        m, at = self._outside.read(text, pos)
        if m is not None:
            self._text("\n")
            self._state = _LINE
        return at

    def _scan_info(self, text: str, pos: int) -> int | None:
        """The opening line's info string, consumed (never held) up to its newline."""
        end = self._info.read(text, pos, _INFO_CHARS)
        self._raw.append(text[pos:end])
        if self._info.passed:
            self._info_too_long()
        elif end < len(text):
            self._raw.append("\n")
            self._opening_line(before_break(self._info.value))  # a `\r\n` is one line break
            return end + 1
        return end

    def _info_too_long(self) -> None:
        """An info string past the bound: a content fence (see the module docstring)."""
        name = self._declared_name(self._info.value)
        if name is not None:
            self._reject(f"the opening line of {name!r} passes {self._info_bound} characters", "".join(self._raw))
        else:
            self._text("".join(self._raw))
        self._open_code(at_line_start=False)

    def _declared_name(self, info: str) -> str | None:
        """The info string's first word, when it names a declared tool."""
        stripped = info.lstrip(" \t")
        gap = _WORD_GAP.search(stripped)
        name = stripped[: gap.start()] if gap else stripped
        return name if name in self.tools.schemas else None

    def _opening_line(self, info: str) -> None:
        """A complete opening line: a call, a content fence, or (a backtick in a backtick fence's
        info string) no fence at all."""
        if self._run[0] == "`" and "`" in info:
            self._text("".join(self._raw))
            self._reset_block()
            self._state = _LINE
            return
        name = self._declared_name(info)
        if name is None:
            self._text("".join(self._raw))
            self._open_code()
            return
        try:
            self._block = BlockBody(self, name, split_words(info.lstrip(" \t")[len(name) :]))
        except NotACall as err:
            self._reject(f"a {name!r} block that is not a call ({err})", "".join(self._raw))
            self._open_code()
            return
        self._lines = FencedLines(self._run, self._raw.append, self._block)
        self._state = _BODY

    def _open_code(self, *, at_line_start: bool = True) -> None:
        """A content fence: its lines are text."""
        self._reset_block()
        self._lines = FencedLines(self._run, self._text, at_line_start=at_line_start)
        self._state = _CODE

    # -- in fences --------------------------------------------------------------------------------

    def _scan_body(self, text: str, pos: int) -> int | None:
        """A call's body, up to its closing fence line."""
        at = self._lines.read(text, pos)
        if self._lines.closed:
            self._finish_call()
        return at

    def _finish_call(self) -> None:
        """The closing fence: the call ends, or (a body it cannot take, too long) is content."""
        try:
            self._block.finish()
        except NotACall as err:
            self._reject(f"a tool block that is not a call ({err})", "".join(self._raw))
        self._reset_block()
        self._state = _LINE

    def _scan_code(self, text: str, pos: int) -> int | None:
        """A content fence's lines, text up to its closing fence line."""
        at = self._lines.read(text, pos)
        if self._lines.closed:
            self._state = _LINE
        return at

    # -- the end ----------------------------------------------------------------------------------

    def _close(self) -> None:
        rest, self._buf = self._buf, ""
        if self._state == _BODY:
            if self._lines.read_eof(rest):
                self._finish_call()
            else:
                self._reject("the output ended inside a tool block", "".join(self._raw) + rest)
        elif self._state == _INFO and self._declared_name(self._info.value + rest) is not None:
            self._reject("the output ended in a tool block's opening line", "".join(self._raw) + rest)
        else:
            self._text("".join(self._raw) + rest)
        self._reset_block()


TRAILER = r"\n{0,2}"
"""What the `required` constraint lets follow the last block: the end of the closing fence's line
and one blank line (bounded). Without it a model that ends that line must start another block (`\\n`
separates blocks): SmolLM2-135M, greedy, wrote the same block eighteen times to max_tokens."""


def write(calls: Sequence[Call]) -> str:
    """One fenced block per call, a newline between: the arguments in the order of the tool's
    positional parameters, the last one the body; a fence longer than any run of its character in
    the body, of tildes when a word holds a backtick."""
    blocks = []
    for name, arguments in calls:
        words, body = head_and_body(arguments)
        fence = "~~~" if any("`" in w for w in words) else "```"
        while fence in body:
            fence += fence[0]
        head = " ".join([fence + name, *words])
        blocks.append(f"{head}\n{body}\n{fence}" if body else f"{head}\n{fence}")
    return "\n".join(blocks)


def _blocks(tools: list[tuple[str, list[str]]]) -> list[Element]:
    return tool_tags(tools, "```{name}", (" ", MD_WORD, ""), ("\n", "\n", "```"))


def required_constraint(request: ConstraintRequest) -> dict[str, Any] | None:
    """The decoding constraint for `tool_choice="required"` (or one named tool, `only`): fenced
    blocks only, one per call, newline-separated, each ```` ```NAME word..\\nbody\\n``` ```` with
    the words the tool's schema takes (a body never holds a line starting with ```` ``` ````),
    then at most a line break and a blank line (`TRAILER`). None when no requested tool can be
    written in this format."""
    tools = mappable_tools(request.schemas, request.only)
    return structural(sequence(repeated(request, _blocks(tools), "\n"), regex(TRAILER))) if tools else None


def auto_constraint(request: ConstraintRequest) -> dict[str, Any] | None:
    """Strict `auto`: free text, where a fence opened with a declared tool's name is that tool's
    block (its words as the schema takes them; the body stays free: the format cannot say what it
    holds). Other fences (```` ```python ````) stay free text. Where one tool's name begins
    another's (`get`, `get_weather`), the shorter fence is the trigger of both: xgrammar refuses a
    tag that two triggers begin."""
    tags = _blocks(mappable_tools(request.schemas, None))
    begins = sorted({t["begin"] for t in tags})
    triggers = [b for b in begins if not any(b != other and b.startswith(other) for other in begins)]
    return triggered(request, triggers, tags) if tags else None


def may_call(text: str) -> bool:
    """Whether `text` may hold a block (a call needs its tool declared)."""
    return "```" in text or "~~~" in text


_INFO_NAME = re.compile(r"[^\s`]+")


def _writes_name(name: str) -> bool:  # the info string's first word: no whitespace, no backtick
    return _INFO_NAME.fullmatch(name) is not None


def _writes_value(value: Any) -> bool:  # a fence cannot escape a body's final `\r` (docstring)
    return not (isinstance(value, str) and value.endswith("\r"))


FORMAT = Format(
    "markdown_tools",
    "```tool word..\\nbody\\n``` (gptme's fenced tool blocks)",
    MarkdownToolsStream,
    write,
    markers=("```", "~~~"),
    required_constraint=required_constraint,
    needs_declared_tools=may_call,
    writes_name=_writes_name,
    writes_value=_writes_value,
    auto_constraint=auto_constraint,
    pins_arguments=False,
    models="agents that prompt gptme-style (any model with our template)",
    reasoning_openers=(),
)
