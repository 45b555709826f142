"""`minicpm5_xml`: OpenBMB MiniCPM5 tool calls: one `<function name=..>` element per call, standing
alone in the text, its parameters `<param name=..>` elements, a value optionally in CDATA.

Grammar, as this machine reads it::

    output    := (text | think | call)*
    think     := "<think>" text "</think>"                # everything inside is text, never a call
    call      := FUNCTION_OPEN ws NAME ">" ws (parameter ws)* "</function>"
    parameter := PARAM_OPEN ws NAME ">" (CDATA | VALUE) "</param>"
    CDATA     := "<![CDATA[" TEXT "]]>"                   # the value is TEXT, verbatim
    NAME      := '"' [^"]* '"' ws | "'" [^']* "'" ws | [^<>]*

with FUNCTION_OPEN = `<function name=` and PARAM_OPEN = `<param name=`, each also read as the
model's tokenizer sometimes decodes it: with `Ġ` (U+0120) for the space, or with no space at all
(`<functionname=`, `<paramname=`), as both engines read them. MiniCPM5's template writes
`<function name="f"><param name="k">v</param></function>`, a call after a line break, and a string
value holding `<`, `&` or a line break inside CDATA, so the value may hold any markup up to `]]>`.
A VALUE outside CDATA, the typing of values by the tool's schema, NAME and the error cases are
`minimax_xml`'s (the same machine, with these tags, each call its own element as in `glm_xml`): a
`</param>` ends a VALUE only before the next `<param` or `</function>`, and the text is verbatim
(XML entities are not decoded, as the template never writes them; `&xxe;` stays `&xxe;`).

Decided where the engines differ: both check each call against the request's schema and drop a
call that names an undeclared tool or parameter, misses a required one or repeats one; here a call
is read as written (an undeclared tool is logged, and is text only with
`TOOLCALL_PARSERS_UNDECLARED_TOOLS=text`; a parameter given twice: the last wins), so the client's
validation sees what the model wrote. vLLM's renaming of tools the model misnamed (a benchmark's
`get_details_by_phone` to `get_customer_by_phone`) and its unwrapping of a `properties` or
`arguments` parameter are not done. Text outside calls is content as written (vLLM decodes `Ġ` and
`Ċ` in it). MiniCPM5's template writes a value that is not a string with Python's `str()`: a number
and `True` / `False` read the same, a list or a dict in Python's spelling stays the string written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.xml_parameters import ParameterValueReader, ValueEnd
from .call_blocks import CALL, NAME, VALUE, XmlBlockTags, named_parameters, raw_value
from .constraints import Element, repeated, structural, tag, triggered
from .minimax_xml import MiniMaxXmlStream
from .spec import Call, ConstraintRequest, Format

FUNCTION_OPENS = ("<function name=", "<function\u0120name=", "<functionname=")
PARAM_OPENS = ("<param name=", "<param\u0120name=", "<paramname=")
FUNCTION_OPEN, FUNCTION_CLOSE = FUNCTION_OPENS[0], "</function>"
PARAM_OPEN, PARAM_CLOSE = PARAM_OPENS[0], "</param>"
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"
TAGS = XmlBlockTags(FUNCTION_OPEN, FUNCTION_CLOSE, FUNCTION_OPEN, FUNCTION_CLOSE, PARAM_OPEN, call_word="function")
VALUE_END = ValueEnd(PARAM_CLOSE, followers=("<param", FUNCTION_CLOSE), at_end_of_output=True)
CDATA_END = ValueEnd(CDATA_CLOSE, followers=(PARAM_CLOSE,))
"""CDATA ends at `]]>` followed (after whitespace) by the parameter's close."""

# The start of a value (CDATA or not), and after a CDATA value, before its `</param>`.
_VALUE_START, _CDATA_ENDED = "minicpm5.value_start", "minicpm5.cdata_ended"


class MiniCpm5XmlStream(MiniMaxXmlStream):
    """Incremental parser for one response in MiniCPM5's tool-call format (`minimax_xml`'s machine,
    each call standing alone; this reads the spellings of the tags and CDATA values)."""

    format_name = "minicpm5_xml"
    tags = TAGS
    blockless = True
    parameter_ends = (VALUE_END,)

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._outside = OutsideCalls(self._text, list(FUNCTION_OPENS), think_markers)
        self._plain = self._value
        self._cdata = ParameterValueReader([CDATA_END], self._send_args, self._keep, self.limits)
        self._readers[_VALUE_START] = self._scan_value_start
        self._readers[_CDATA_ENDED] = self._scan_cdata_ended

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Between parameters: the next one (any spelling of its tag), or the function's close."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._tag_at(text, pos, (*PARAM_OPENS, FUNCTION_CLOSE))
        if found is None:
            return None
        if found == FUNCTION_CLOSE:  # not kept: if the call breaks here, SKIP reads the tag as text
            self._end_call_element()
        else:
            self._raw.append(found)
            self._on_name = self._open_param
            self._state = NAME
        return pos + len(found)

    def _open_param(self, name: str, schema: Any = None) -> None:
        self._value = self._plain
        super()._open_param(name, schema)
        self._state = _VALUE_START

    def _scan_value_start(self, text: str, pos: int) -> int | None:
        """A value opening with `<![CDATA[` is read up to its `]]>`; any other as `minimax_xml`'s."""
        found = self._literal_at(text, pos, (CDATA_OPEN,))
        if found is None:
            return None
        if found:
            self._raw.append(found)
            self._value = self._cdata
            self._value.begin(self._param_schema)
        self._state = VALUE
        return pos + len(found)

    def _value_ended(self, end: ValueEnd, value: Any) -> None:
        if end is not CDATA_END:
            super()._value_ended(end, value)
            return
        self._arguments[self._param] = value
        self._value = self._plain
        self._state = _CDATA_ENDED

    def _scan_cdata_ended(self, text: str, pos: int) -> int | None:
        found = self._tag_at(text, pos, (PARAM_CLOSE,))
        if found is None:
            return None
        self._raw.append(found)
        self._state = CALL
        return pos + len(found)


# -- the spec --------------------------------------------------------------------------------------


def _value(value: Any) -> str:
    """A value as MiniCPM5's template writes a string (CDATA where it holds `<`, `&` or a line
    break); anything else as JSON, which reads back the same by the schema."""
    if isinstance(value, str) and any(c in value for c in "<&\n"):
        return f"{CDATA_OPEN}{value}{CDATA_CLOSE}"
    return raw_value(value)


def write(calls: Sequence[Call]) -> str:
    """One `<function>` element per call, a line break between them, as MiniCPM5's template does."""
    return "\n".join(
        f'{FUNCTION_OPEN}"{name}">'
        + "".join(f'{PARAM_OPEN}"{k}">{_value(v)}{PARAM_CLOSE}' for k, v in arguments.items())
        + FUNCTION_CLOSE
        for name, arguments in calls
    )


def _calls(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One `<function name="f">` element per tool, its parameters pinned to its schema."""
    return [
        tag(
            f'{FUNCTION_OPEN}"{name}">',
            named_parameters(request.parameters(name), request.pins(name), PARAM_OPEN, PARAM_CLOSE, (FUNCTION_CLOSE,)),
            FUNCTION_CLOSE,
        )
        for name in names
    ]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One or more calls (at most one if `single`), a line break between them."""
    return structural(repeated(request, _calls(request, request.names), "\n"))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Free text, where each `<function name=` opens a call to a declared tool."""
    return triggered(request, [FUNCTION_OPEN], _calls(request, list(request.schemas)))


def _writes_name(name: str) -> bool:
    # `<function name="NAME">` as the writer, the template and the constraint write it
    return '"' not in name


def _writes_value(value: Any) -> bool:
    """A string CDATA must hold cannot hold `]]>`."""
    return not (isinstance(value, str) and CDATA_CLOSE in value) and (
        not isinstance(value, (dict, list)) or CDATA_CLOSE not in raw_value(value)
    )


FORMAT = Format(
    "minicpm5_xml",
    '<function name="f"><param name="p">v</param></function>, values in CDATA where needed (MiniCPM5)',
    MiniCpm5XmlStream,
    write,
    markers=(*FUNCTION_OPENS, FUNCTION_CLOSE, *PARAM_OPENS, PARAM_CLOSE, CDATA_OPEN, CDATA_CLOSE),
    required_constraint=required_constraint,
    other_openers=tuple((spelling, None) for spelling in FUNCTION_OPENS[1:]),  # byte-level spellings
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    writes_value=_writes_value,
    typed_values=True,
    vllm_names=("minicpm5",),
    sglang_names=("minicpm5",),
    models="OpenBMB MiniCPM5",
)
