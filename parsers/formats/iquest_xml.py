"""`iquest_xml`: IQuest Q1 tool calls: GLM's keys and values in tags, in IQuest's own call tag.

Grammar, as this machine reads it::

    output := (text | think | call)*
    think  := "<think>" text "</think>"                    # everything inside is text, never a call
    call   := "<iquest_tool_call>" NAME ws (arg ws)* "</iquest_tool_call>"
    arg    := "<arg_key>" KEY "</arg_key>" ws "<arg_value>" VALUE "</arg_value>"

Only the call's tags differ from `glm_xml`'s; everything else is that format's, word for word (its
machine, with this call tag): a call stands alone, NAME, KEY, VALUE typed by the tool's schema (a
string schema keeps the text verbatim, `  "123"\\n` included), the value's close that ends it only
before the next key or the call's close, the dropped key or value openers, and every malformed
shape (a key with no value, text between arguments, a call cut off by the end of the output inside
its payload: text; one cut after its last value's close, only its own close missing: a call).
IQuest writes a line break after the name, or none; `ws` is any whitespace. GLM's `<tool_call>` is
text here, and IQuest's call is text to `glm_xml`.

The model's tokenizer and template are not public as of SGLang 0.5.23 (its `iquest_q1` detector
and tests are the facts read): no marker is declared a special token, and our template writes the
calls compact, as GLM-4.7's does. `<|iquest_end|>`, a stop marker the detector's tests keep as
text when the engine hands it over, is text here too.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from .glm_xml import GlmXmlStream
from .key_values import (
    KeyValueTags,
    key_value_constraints,
    key_value_writer,
    needs_declared_tools,
    writes_name,
    writes_value,
)
from .spec import Format

IQUEST = KeyValueTags(call_open="<iquest_tool_call>", call_close="</iquest_tool_call>")


class IquestXmlStream(GlmXmlStream):
    """Incremental parser for one response in IQuest Q1's tool-call format (`glm_xml`'s machine with
    IQuest's call tag)."""

    format_name = "iquest_xml"
    kv = IQUEST

    def __init__(
        self, tools: Any = None, id_factory: IdFactory | None = None, *, think_markers: ThinkMarkers = IQUEST.think
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)


write = key_value_writer(IQUEST)
"""The calls back to back, compact."""

required_constraint, auto_constraint = key_value_constraints(IQUEST)
"""GLM's key and value tags: xgrammar's `glm_xml` style renders a pinned tool's arguments."""

FORMAT = Format(
    "iquest_xml",
    "<iquest_tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></iquest_tool_call> (IQuest Q1)",
    IquestXmlStream,
    write,
    markers=IQUEST.markers,
    required=required_constraint,
    auto=auto_constraint,
    writes_name=writes_name,
    writes_value=writes_value(IQUEST),
    needs_declared_tools=needs_declared_tools(IQUEST),
    typed_values=True,
    sglang_names=("iquest_q1",),
    models="IQuest Q1",
)
