"""`xlam_json`: Salesforce xLAM tool calls, a bare JSON list of calls opening the turn (or a line).

Grammar, as this machine reads it::

    output  := [ws list] (text | quoted | OPENER [ws list])*   # a list only where a line or the turn opens
    quoted  := "<think>" text "</think>" | "```" text "```" | "~~~" text "~~~"   # text, never a call
    OPENER  := "\n" | "\r\n" | "</think>" | "```" | "~~~"
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

Spellings vLLM's `xlam` also reads, and that stay text here: a ```json fence (a model that shows JSON
in markdown is answering, not calling), `[TOOL_CALLS][..]` (Mistral's token, not in xLAM's Llama or
Qwen vocabularies; `mistral_json` reads it) and `<tool_call>[..]</tool_call>` (Hermes' tags;
`hermes_json` reads them). None of them is what xLAM's templates teach.

The template shipped here is xLAM's Llama 3.1 one (its teaching, tools as indented JSON, results as
`ipython` turns), with one difference: a turn's content is kept, on the line before its list
(xLAM's drops it), so the history reads back whole. A call needs no marker, so strict `auto` has no
trigger to constrain at: only `required` and named calls are constrained (the list is the output).
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import CallShape
from ..core.outside import ThinkMarkers
from .grammar import const, optional, repeated, sequence, structural
from .marked_json import MarkedJsonStream, array_writer, headed_calls, name_arguments_begin
from .spec import ConstraintRequest, Format

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


class XlamJsonStream(MarkedJsonStream):
    """Incremental parser for one response in xLAM's tool-call format (`marked_json`'s machine: a
    list with no marker at the output's start or after `</think>`)."""

    format_name = "xlam_json"
    start_markers = (THINK_OPEN, THINK_CLOSE, "```", "~~~", "\r\n", "\n")
    list_quoted = ((THINK_OPEN, THINK_CLOSE), ("```", "```"), ("~~~", "~~~"))
    list_at_start = True
    shape = CallShape(array_only=True)

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = None
    ) -> None:
        """No reasoning pair for the text scanner: the reasoning's markers are among the STARTs
        (`marked_json`'s `list_quoted`), as `</think>` is where a list may follow."""
        super().__init__(tools, id_factory, think_markers=think_markers)


def _call_object(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


write = array_writer("\n", "", _call_object)
"""`[{"name": .., "arguments": ..}, ..]` on a line of its own, as the template shipped here renders a
turn's calls after its content."""

_CALLS = headed_calls(name_arguments_begin)


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """The output is one list of at least one call (at most one if `single`), after the line break
    the writer puts before it, or none."""
    calls = repeated(request, _CALLS(request, request.names), ", ")
    return structural(sequence(optional(const("\n")), const("["), calls, const("]")))


FORMAT = Format(
    "xlam_json",
    '[{"name": .., "arguments": {..}}, ..] opening the turn (Salesforce xLAM)',
    XlamJsonStream,
    write,
    markers=(THINK_CLOSE,),  # not a call's marker: where a list may follow
    required=required_constraint,
    vllm_names=("xlam",),
    models="Salesforce xLAM-2 (Llama-xLAM-2-8b / 70b-fc-r, xLAM-2-1b / 3b / 32b-fc-r), xLAM-7b-fc-r",
    reasoning_openers=(),
)
