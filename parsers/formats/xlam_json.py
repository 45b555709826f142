"""`xlam_json`: Salesforce xLAM tool calls, a bare JSON list of calls opening the turn (or a line),
or one after the markers vLLM's `xlam` reads (a ```json fence, `[TOOL_CALLS]`, `<tool_call>`).

Grammar, as this machine reads it::

    output  := [ws list] (text | quoted | OPENER [ws list] | marked)*   # a bare list where a line or the turn opens
    quoted  := "<think>" text "</think>" | "```" text "```" | "~~~" text "~~~"   # text, never a call
    OPENER  := "\n" | "\r\n" | "</think>" | "```" | "~~~"
    marked  := "```json" ws list ws ["```"] | "[TOOL_CALLS]" ws list | "<tool_call>" ws list ws ["</tool_call>"]
    list    := "[" call ("," call)* "]" (ws [","] ws list)*   # what follows the lists is text
    call    := {"name", "arguments"} | {"name", "parameters"} | {"function": {"name", "arguments"}}

xLAM's chat templates (vLLM's `tool_chat_template_xlam_llama.jinja` and `_qwen.jinja`, as the model
cards give them) teach "make calls in a single JSON array" and render a turn's calls as that array
alone: `[{"name": "f", "arguments": {..}}, ..]`. So a list opens a block where the turn opens: at the
output's start (after whitespace), right after `</think>` (the end of reasoning; the `</think>` and
the reasoning before it are content, as vLLM's `xlam` returns them), and, so that a turn's content
can come first (the template shipped here writes it so), where a line opens (after a line break and
indentation, which are then markup). A list after other text on its line is text, and so are a
line that opens with `[` but is not a list of call objects (a markdown link; logged) and a list in
`<think>..</think>` or in markdown code (a ``` or ~~~ fence). The rest is the `marked_json` family's
(`hermes_json`'s machine): the list ends where its JSON ends, string-aware; a list that breaks is
text up to the break and scanning goes on there; a list the output cuts off is text (the calls it
completed stand); an empty list (`[]`, which xLAM's template writes for a turn with neither calls
nor content) is text; arguments as a JSON string holding an object (the Qwen template's
`function | tojson` of an OpenAI history) are decoded; none or `null` is `{}`. Text after the list
is content (vLLM's `xlam` returns no call at all there).

xLAM models also wrap the list, with prose before it on the same line: in a ```json fence, after
`[TOOL_CALLS]`, or in `<tool_call>..</tool_call>`; vLLM's `xlam` reads all three (its own tests),
and so does this machine, anywhere outside reasoning and code, the marker being markup: a list so
marked is the model's call whatever precedes it, so dropping it would lose a call. Only what holds
a list of call objects is a call: a fence named otherwise (```python, ```jsonc, a bare ```) is code
as before, a ```json fence that holds anything else is code up to its closing fence (and so is the
rest of a fence whose list broke, or that goes on after its list: the calls before stand), and
`<tool_call>` with one object (Hermes' own call, which `hermes_json` reads) or `[TOOL_CALLS]`
without a list is text. The closing fence and `</tool_call>` may be missing after a complete list.

The template shipped here is xLAM's Llama 3.1 one (its teaching, tools as indented JSON, results as
`ipython` turns), with one difference: a turn's content is kept, on the line before its list
(xLAM's drops it), so the history reads back whole. Strict `auto`: every call, in each spelling,
sits in a list whose first item is an object, so every `[` is held, to calls of declared tools or
to what the parser keeps as text (no object first; `[[` is not written); see `auto_constraint`.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import CallShape
from ..core.outside import ThinkMarkers
from .constraints import const, one_call_in_text, optional, regex, repeated, sequence, structural, tag, triggered
from .families.marked_json import MarkedJsonStream, array_writer, headed_calls, name_arguments_begin
from .spec import ConstraintRequest, Format

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
FENCE, JSON_INFO = "```", "json"
TOOL_CALLS = "[TOOL_CALLS]"
TOOL_CALL, TOOL_CALL_END = "<tool_call>", "</tool_call>"
_JSON_SPACE = " \t\r\n"
_FENCE_INFO = 4  # after `hermes_json`'s four states: an opening fence was read, its info string follows


class XlamJsonStream(MarkedJsonStream):
    """Incremental parser for one response in xLAM's tool-call format (`marked_json`'s machine: a
    list with no marker at the output's start, a line's or after `</think>`; or after one of the
    markers vLLM's `xlam` reads: a ```json fence, `[TOOL_CALLS]`, `<tool_call>`)."""

    format_name = "xlam_json"
    start_markers = (THINK_OPEN, THINK_CLOSE, FENCE, "~~~", TOOL_CALLS, TOOL_CALL, "\r\n", "\n")
    list_quoted = ((THINK_OPEN, THINK_CLOSE), ("~~~", "~~~"))  # a ``` fence is read here: code, or calls
    list_at_start = True
    shape = CallShape(array_only=True)

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = None
    ) -> None:
        """No reasoning pair for the text scanner: the reasoning's markers are among the STARTs
        (`marked_json`'s `list_quoted`), as `</think>` is where a list may follow."""
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._fenced = False  # the block being read opened with a ```json fence
        self._readers[_FENCE_INFO] = self._scan_fence_info

    def _scan_text(self, text: str, pos: int) -> int | None:
        """`marked_json`'s text reader, and where a list may open: `[TOOL_CALLS]` there is the
        marker, not a list; a ```json fence whose next text is not a list is code."""
        if self._list_next and text[pos] not in _JSON_SPACE:
            if self._fenced and text[pos] != "[":
                self._fence_is_code()
            elif not self._fenced:
                marker = self._literal_at(text, pos, (TOOL_CALLS,))
                if marker is None:
                    return None
                if marker:  # the line break before it is markup, as before a bare list
                    self._raw.append(marker)
                    self._ends = ()
                    return pos + len(marker)
        at = super()._scan_text(text, pos)
        if self._list_next and not self._fenced:  # a START was read where a list may follow
            marker = self._raw[0] if self._raw else ""
            if marker == FENCE:
                self._list_next = False
                self._state = _FENCE_INFO
            else:
                self._ends = (TOOL_CALL_END,) if marker == TOOL_CALL else ()
        return at

    def _scan_fence_info(self, text: str, pos: int) -> int | None:
        """After an opening fence: `json`, then whitespace or the list's `[`, opens a block that
        the closing fence ends; any other fence (```python, ```jsonc, a bare ```) is code."""
        info = self._literal_at(text, pos, (JSON_INFO,))
        if info is None or (info and pos + len(info) == len(text)):
            return None
        self._state = self._text_state
        if info and text[pos + len(info)] in _JSON_SPACE + "[":
            self._raw.append(info)
            self._fenced, self._list_next, self._ends = True, True, (FENCE,)
            return pos + len(info)
        self._text("".join(self._raw))
        self._raw = []
        self._quoted_close = FENCE
        return pos

    def _fence_is_code(self) -> None:
        """The ```json fence read holds no list (or no longer one): what is left of it is text up
        to its closing fence."""
        self._text("".join(self._raw))
        self._raw = []
        self._list_next = self._fenced = False
        self._quoted_close = FENCE

    def _scan_after(self, text: str, pos: int) -> int | None:
        at = super()._scan_after(text, pos)
        if self._fenced and self._state == self._text_state:
            self._fenced = False
            if at == pos:  # text, not the closing fence, after the list: the calls stand, the rest is code
                self._quoted_close = FENCE
        return at

    def _reject_block(self, reason: str) -> None:
        super()._reject_block(reason)
        if self._fenced:  # the fence's JSON broke: the rest of the fence is code
            self._fenced = False
            self._quoted_close = FENCE

    def _close(self) -> None:
        if self._state == _FENCE_INFO:
            self._text("".join(self._raw))
            self._raw = []
            self._state = self._text_state
        super()._close()


def _call_object(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


write = array_writer("\n", "", _call_object)
"""`[{"name": .., "arguments": ..}, ..]` on a line of its own, as the template shipped here renders a
turn's calls after its content."""

_CALLS = headed_calls(name_arguments_begin)
_NOT_CALLS = regex(r"[ \t\r\n]*[^{\[ \t\r\n]")
"""After a `[`: what the parser never reads as a call list (its first item is no object)."""


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """The output is one list of at least one call (at most one if `single`), after the line break
    the writer puts before it, or none."""
    calls = repeated(request, _CALLS(request, request.names), ", ")
    return structural(sequence(optional(const("\n")), const("["), calls, const("]")))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`. Every call the parser reads, in every spelling (a bare list, or one after
    ```json, `[TOOL_CALLS]` or `<tool_call>`), is in a list whose first item is an object, so every
    `[` is held here: to a list of calls to declared tools (at most one call if `single`), or to
    what the parser keeps as text (no object first; `[[` is not written)."""
    calls = tag("[", repeated(request, _CALLS(request, list(request.schemas)), ", "), "]")
    if not request.single:
        return triggered(request, ["["], [calls, tag("[", _NOT_CALLS, "")])
    return one_call_in_text("[", _NOT_CALLS, [], calls)


FORMAT = Format(
    "xlam_json",
    '[{"name": .., "arguments": {..}}, ..] opening the turn (Salesforce xLAM)',
    XlamJsonStream,
    write,
    markers=(THINK_CLOSE, TOOL_CALLS, TOOL_CALL, TOOL_CALL_END),  # none is needed for a call
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    vllm_names=("xlam",),
    models="Salesforce xLAM-2 (Llama-xLAM-2-8b / 70b-fc-r, xLAM-2-1b / 3b / 32b-fc-r), xLAM-7b-fc-r",
    reasoning_openers=(),
)
