# ruff: noqa: RUF001, RUF002  (GigaChat's marker is spelled with U+FF5C, the fullwidth bar)
"""`gigachat_gcml`: Sber GigaChat 3.5 GCML tool calls, values typed by their `string` attribute and
the tool's schema.

Grammar, as this machine reads it (`G` is `｜GCML｜`)::

    output    := (text | think | block)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := "<" G "tool_calls>" ws (invoke ws)* ["</" G "tool_calls>"]   # the end may be missing after invokes
    invoke    := "<" G "invoke" ATTRS ">" ws body ws "</" G "invoke>"
               | "<" G "invoke" ATTRS "/>"               # a call without arguments
    body      := (parameter ws)* | OBJECT                # parameters, or all arguments as one JSON object
    parameter := "<" G "parameter" ATTRS ">" VALUE "</" G "parameter>"
    ATTRS     := (\\s+ NAME '="' [^"]* '"')* \\s*          # at most 2 * max_name + 64 characters

GCML is DeepSeek's DSML (V4's dialect) with GigaChat's prefix `｜GCML｜` in place of `｜DSML｜`:
the same machine (`deepseek_dsml`'s stream with this one dialect; this format is one value of the
flagged-invoke family, `families/flagged_invokes.py`), so ATTRS, VALUE, what ends a
value, the JSON body and every error case are as that format's section says. An invoke names its
tool in `name`; a parameter its key in `name` and what VALUE is in `string`: `"true"` is the raw
text verbatim (`02134` and `line 1\\n"quoted"` stay as written); `"false"` says JSON, typed by the
tool's schema (`core.typed_values`; text that is not JSON of an admitted type is kept as written,
as both engines keep it); any other `string` breaks the invoke. Several invokes in a block, and
several blocks, are parallel calls; a block with no invoke (`<｜GCML｜tool_calls></｜GCML｜tool_calls>`),
a parameter outside an invoke, and an invoke the output cuts off (unless only its closing tags are
missing after a complete parameter, as in `deepseek_dsml`) are text. Markdown code and
`<think>..</think>` are text, as in `deepseek_dsml`.

Decided where the engines differ: a parameter without `string` is typed by the schema here (vLLM's
`gigachat35` reads it as a string, SGLang's drops the parameter); with a string schema both agree.
An invoke without a name is text (vLLM drops it). SGLang's `gigachat35` drops a call to a tool the
request did not declare; here it is a call (logged), unless the operator sets
`TOOLCALL_PARSERS_UNDECLARED_TOOLS=text`. A trailing `</s>` or `<|message_sep|>` (end-of-turn
tokens a server does not show) is text, as in `gigachat_json`.

GigaChat 3 and 3.1 (`gigachat_json`) write one JSON call object after a role header or the
`<|function_call|>` token: another grammar, not a header of this one.
"""

from __future__ import annotations

from .deepseek_dsml import dialect
from .families.flagged_invokes import FlaggedInvokes

GCML = "｜GCML｜"
DIALECT = dialect("tool_calls", "", "", prefix=GCML)

FORMAT = FlaggedInvokes(
    "gigachat_gcml",
    '<｜GCML｜tool_calls><｜GCML｜invoke name="f"><｜GCML｜parameter name="p" string="true">v</｜GCML｜parameter>'
    "</｜GCML｜invoke></｜GCML｜tool_calls> (GigaChat 3.5)",
    DIALECT,
    sglang_names=("gigachat35",),
    models="Sber GigaChat 3.5 (432B-A28B, Reasoning)",
).format(__name__)
