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

from .families.key_values import KeyValueFormat, KeyValueTags

IQUEST = KeyValueTags(call_open="<iquest_tool_call>", call_close="</iquest_tool_call>")

FORMAT = KeyValueFormat(
    "iquest_xml",
    "<iquest_tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></iquest_tool_call> (IQuest Q1)",
    IQUEST,
    sglang_names=("iquest_q1",),
    models="IQuest Q1",
).format(__name__)
