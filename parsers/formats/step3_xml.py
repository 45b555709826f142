# ruff: noqa: RUF001, RUF002  (Step-3's call tokens are spelled with U+FF5C, the fullwidth bar)
"""`step3_xml`: StepFun Step-3 tool calls: DeepSeek-style call tokens around a `steptml` invoke, values
typed by the tool's schema.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (call ws [SEP ws])* [END]      # END may be missing after complete calls
    call      := CALL_BEGIN ws [TYPE ws SEP LABEL] ws INVOKE ">" ws (parameter ws)* INVOKE_CLOSE ws CALL_END
    INVOKE    := '<steptml:invoke name=' ws NAME
    parameter := '<steptml:parameter name=' ws NAME ">" VALUE "</steptml:parameter>"

with START = `<｜tool_calls_begin｜>`, END = `<｜tool_calls_end｜>`, CALL_BEGIN = `<｜tool_call_begin｜>`,
CALL_END = `<｜tool_call_end｜>` (special tokens of Step-3's tokenizer, spelled with the fullwidth bar
U+FF5C and underscores: serve with `skip_special_tokens` off, as vLLM's `step3` parser asks) and
SEP = `<｜tool_sep｜>`, INVOKE_CLOSE = `</steptml:invoke>`. TYPE is `function`, the only type either
engine reads; a call of another type is text. LABEL is optional text without `<` or `>` (a model
may repeat the tool's name there, as in vLLM's whitespace test); a call written without
`function<｜tool_sep｜>` is read too. NAME, VALUE, what ends a value (`</steptml:parameter>` only
before the next parameter, `</steptml:invoke>` or CALL_END), the typing of values by the tool's
schema and the error cases are `minimax_xml`'s (the same machine with these tags): a value may hold
`<`, code and markup, which both engines' `[^<]*` value patterns lose. A string value is verbatim (vLLM
keeps it so since its whitespace fix; SGLang strips it). `<｜tool_sep｜>` between two calls (as in
vLLM's parallel-call test) is markup.

Decided where the engines differ: a call that breaks the grammar (another TYPE, a dropped
`</steptml:invoke>`) is text up to its CALL_END, and the other calls count; the engines drop it
silently. A call cut off by the end of the output is text, the calls before it stand. Text after
END is content (vLLM's streaming path drops nothing either).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from ..core.xml_parameters import ValueEnd
from .call_blocks import NAME, XmlBlockTags, named_parameters, raw_value
from .constraints import Element, const, repeated, sequence, structural, tag, triggered
from .minimax_xml import MiniMaxXmlStream, writable_values, writes_name
from .spec import Call, ConstraintRequest, Format

START, END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"
INVOKE_OPEN, INVOKE_CLOSE = "<steptml:invoke name=", "</steptml:invoke>"
PARAM_OPEN, PARAM_CLOSE = "<steptml:parameter name=", "</steptml:parameter>"
TYPE = "function"
TAGS = XmlBlockTags(START, END, CALL_BEGIN, CALL_END, PARAM_OPEN, call_word="call")
VALUE_END = ValueEnd(PARAM_CLOSE, followers=("<steptml:parameter", INVOKE_CLOSE, CALL_END), at_end_of_output=True)
"""A `</steptml:parameter>` ends a value before the next parameter or the invoke's close; before
CALL_END too, where the model dropped `</steptml:invoke>` (the call then breaks there)."""

_LABEL = re.compile("[^<>]*")
# A call's head (before its NAME), and after its INVOKE_CLOSE.
_HEAD, _INVOKE_ENDED = "step3.head", "step3.invoke_ended"


class Step3XmlStream(MiniMaxXmlStream):
    """Incremental parser for one response in Step-3's tool-call format (`minimax_xml`'s machine with
    Step-3's tokens; this reads a call's head and its two closes)."""

    format_name = "step3_xml"
    tags = TAGS
    parameter_ends = (VALUE_END,)

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._head_step = 0  # 0: before TYPE; 1: after TYPE, before SEP; 2: in LABEL
        self._label = 0  # LABEL characters read
        self._readers[_HEAD] = self._scan_head
        self._readers[_INVOKE_ENDED] = self._scan_invoke_ended

    def _scan_block(self, text: str, pos: int) -> int | None:
        """Between calls: a CALL_BEGIN opens the head; a SEP between calls is markup."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if self._block_calls:
            sep = self._literal_at(text, pos, (SEP, CALL_BEGIN, END))
            if sep is None:
                return None
            if sep == SEP:
                self._raw.append(sep)
                return pos + len(sep)
        at = super()._scan_block(text, pos)
        if self._state == NAME:  # CALL_BEGIN was read: its head comes before the NAME
            self._state, self._head_step, self._label = _HEAD, 0, 0
        return at

    def _scan_head(self, text: str, pos: int) -> int | None:
        """`ws [TYPE ws SEP LABEL] ws INVOKE_OPEN`, then the NAME (`minimax_xml`'s)."""
        if self._head_step != 2 and (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if self._head_step == 2:
            longest = self.limits.max_name
            m = _LABEL.match(text, pos, pos + longest - self._label + 1)
            assert m is not None
            if m.end() > pos:
                self._label += m.end() - pos
                if self._label > longest:
                    raise NotACall("the text before the invoke is too long (TOOLCALL_PARSERS_MAX_NAME)")
                self._raw.append(m.group())
                return m.end()
        wanted = {0: (TYPE, INVOKE_OPEN), 1: (SEP,), 2: (INVOKE_OPEN,)}[self._head_step]
        found = self._tag_at(text, pos, wanted)
        if found is None:
            return None
        self._raw.append(found)
        if found == INVOKE_OPEN:
            self._on_name = self._open_call
            self._state = NAME
        else:
            self._head_step += 1
        return pos + len(found)

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Between parameters: the next one, or INVOKE_CLOSE (then only CALL_END may follow)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._tag_at(text, pos, (PARAM_OPEN, INVOKE_CLOSE))
        if found is None:
            return None
        self._raw.append(found)
        if found == INVOKE_CLOSE:
            self._state = _INVOKE_ENDED
        else:
            self._on_name = self._open_param
            self._state = NAME
        return pos + len(found)

    def _scan_invoke_ended(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._tag_at(text, pos, (CALL_END,))  # not kept: if the call breaks here, SKIP reads it
        if found is None:
            return None
        self._end_call_element()
        return pos + len(found)


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """One block, a call a line, each parameter on its own line, as Step-3's detectors show it;
    values verbatim (the format has no escaping), non-strings as JSON."""
    lines = []
    for name, arguments in calls:
        params = "".join(f'{PARAM_OPEN}"{k}">{raw_value(v)}{PARAM_CLOSE}\n' for k, v in arguments.items())
        lines.append(f'{CALL_BEGIN}{TYPE}{SEP}{INVOKE_OPEN}"{name}">\n{params}{INVOKE_CLOSE}{CALL_END}\n')
    return f"{START}\n{''.join(lines)}{END}"


def _calls(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One call per tool, its parameters pinned to its schema (`call_blocks.named_parameters`)."""
    return [
        tag(
            f'{CALL_BEGIN}{TYPE}{SEP}{INVOKE_OPEN}"{name}">\n',
            named_parameters(
                request.parameters(name),
                request.pins(name),
                PARAM_OPEN,
                PARAM_CLOSE + "\n",
                (PARAM_CLOSE, INVOKE_CLOSE),
            ),
            f"{INVOKE_CLOSE}{CALL_END}\n",
        )
        for name in names
    ]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One block holding at least one call (at most one if `single`)."""
    return structural(sequence(const(START + "\n"), repeated(request, _calls(request, request.names)), const(END)))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Free text, where each START opens a block of calls that follow the tools' schemas."""
    block = tag(START + "\n", repeated(request, _calls(request, list(request.schemas))), END)
    return triggered(request, [START], [block])


FORMAT = Format(
    "step3_xml",
    f'{START}{CALL_BEGIN}function{SEP}<steptml:invoke name="f"><steptml:parameter name="p">v{PARAM_CLOSE}'
    f"{INVOKE_CLOSE}{CALL_END}{END} (Step-3)",
    Step3XmlStream,
    write,
    markers=(START, END, CALL_BEGIN, CALL_END, SEP, INVOKE_OPEN, INVOKE_CLOSE, PARAM_OPEN, PARAM_CLOSE),
    special_tokens=(START, END, CALL_BEGIN, CALL_END),  # vLLM step3 parser's SPECIAL_TOKENS
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=writes_name,
    writes_value=writable_values((VALUE_END,), PARAM_CLOSE),
    typed_values=True,
    vllm_names=("step3",),
    sglang_names=("step3",),
    models="StepFun Step-3",
)
