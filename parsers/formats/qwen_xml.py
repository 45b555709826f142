"""`qwen_xml`: Qwen3-Coder XML tool calls (and Qwen3.5 / Qwen3.6, MiniCPM and the other models that
copied the format), values typed by the tool schema.

Grammar, as this machine reads it::

    output    := (text | think | block | bare)*
    think     := "<think>" text "</think>"               # everything inside is text, never a call
    block     := START ws (function ws)* [END]           # END may be missing after complete functions
    bare      := function (ws function)* [ws END]        # START dropped: declared tools only
    function  := "<function=" NAME ">" ws (parameter ws)* "</function>"
    parameter := "<parameter=" NAME ">" ["\\n"] VALUE ["\\n"] [PARAM_CLOSE]
    NAME      := [^<>\\n]+                                # surrounding whitespace is not part of it

with START = `<tool_call>`, END = `</tool_call>` and PARAM_CLOSE = `</parameter>` or a drifted
spelling of it: `</parameter` and up to 32 letters, digits or `_`, with or without the `>`
(`</parameter1>`, `</parameter_function>`, a cut `</parameter`: what SGLang's tests show a model
writes when its grammar drifts); `ws` is any whitespace. Several functions may share one block
(vLLM's and SGLang's Qwen3-Coder parsers read that too); Qwen3-Coder's own template writes one
block per call, a newline between. A NAME is at most `TOOLCALL_PARSERS_MAX_NAME` characters.

VALUE is raw text: the format has no escaping. One newline right after the parameter's tag and one
right before the tag that ends the value are markup (the template writes the value on its own
lines); any other whitespace is data, and `<parameter=p>x</parameter>` reads the same as the
template's form. The value ends at:

- a PARAM_CLOSE followed (after whitespace) by the next `<parameter=` or `</function>`; any
  other `</parameter>` is part of the value (a file that holds XML), as in `minimax_xml`, and so
  is a drifted spelling (a value that ends in `</parameters>` and is then closed stays whole);
- a `</function>` followed (after whitespace) by `</tool_call>`, `<tool_call>`, `<function=` or the
  end of the output: the model dropped the `</parameter>` (Qwen3.5 / 3.6 do this in long contexts,
  ollama#17914), and the function ends there too;
- a `<parameter=` at the start of a line of the value: the model dropped the `</parameter>`, and
  the next parameter begins.

So a value cannot hold a line that starts with `<parameter=`, nor `</parameter>` + whitespace +
`<parameter=` or `</function>`, nor `</function>` + whitespace + a block tag: those read as markup.
Streaming and `parse()` apply the same rules (the stream holds an end tag back until it knows, and a
value's last newline until the next character). A function without parameters is `{}`; a parameter
named twice in one function: the last wins (logged).

Values are typed by the request's tool schema (`core.typed_values`, the rules of `minimax_xml`),
in Python's spelling too: Qwen3-Coder's and Qwen3.5's templates write a non-string value with
Python's `str()`, so `None` is null where the schema admits null (a string-or-null `None` too: the
template writes a null and the string "None" alike), `True` a boolean, and an object or array may
be a Python literal (`{'k': None}`, `['a', 'b']`) or a JSON string holding one (a template that
wrote `json.dumps(str(value))`); a string keeps the text as written, and without a schema the
guess stays JSON's. Reading them is shared with `minimax_xml` (`core.xml_parameters`), and so is the block machine
around the tags (`call_blocks`). The call's name is known when its function tag closes; a string
value streams as it is written; other values are sent when their end is known; `}` at `</function>`
(all as far as the core's streaming policy shows a call).

A function written without its block (Qwen3-Coder drops `<tool_call>` now and then: `<function=f>`
at the start of the output, of a line, or after prose; vLLM's and SGLang's parsers read it too) is
a call when it names a tool the request declares, and a stray END after it is markup; a bare
`<function=NAME>` for an undeclared tool, or in a request without tools, is text, since prose and
code about the format write it too. A bare function that then breaks the grammar is text up to
where it broke, and reading goes on from there as text (not up to a `</function>`, which may belong
to a real call).

What stays text or reads otherwise than some engine tests expect, and why: a value cannot hold a
line that starts with `<parameter=` (it ends a value whose `</parameter>` was dropped, the shape
Qwen3.5 / 3.6 write; telling it from a file that quotes the format would need the rest of the
output); `</parameter>` + `<parameter=NAME>` is markup whatever NAME is (vLLM's parsers check NAME
against the schema, which a literal with a declared name defeats anyway); a call to an undeclared
name such as an unrendered `{{ tc.name }}` is kept and logged unless the operator refuses
undeclared tools.

A function that breaks the grammar (text where a parameter tag belongs, a name with `<` or a line
break, an empty or over-long name), is refused at its name (too many calls, an undeclared tool the
operator refuses, a lone surrogate) or passes the size bound of its arguments
(`TOOLCALL_PARSERS_MAX_CALL_CHARS`) is text up to its `</function>` (or up
to a `<function=` before it), and the other functions still
count; a block that never holds a function (`<tool_call></tool_call>`, Hermes-style JSON inside
`<tool_call>`) is text; a function the end of the output cuts off inside a value or a tag is text,
and one it cuts off after a closed value (only `</function>` and `</tool_call>` missing or cut
part-way) is a call, the cut part text (the rule of every format, `call_blocks`); a `</parameter>`
followed by `</tool_call>` is text (the `</function>` was dropped there, not cut off).

Reading is one pass over the text: whitespace between tags and after an end tag is consumed as it
arrives (kept as markup, or as value text once it is known to be data), so what waits for more text
is at most a partial tag, a name, or one newline.
"""

from __future__ import annotations

from .families.qwen_functions import QwenFunctions

FORMAT = QwenFunctions(
    "qwen_xml",
    "<tool_call>\\n<function=f>\\n<parameter=p>\\nv\\n</parameter>\\n</function>\\n</tool_call> (Qwen3-Coder)",
    vllm_names=("qwen3_coder", "qwen3_xml", "mimo", "step3p5", "granite_toolcall_parser"),
    sglang_names=("qwen3_coder", "mimo", "step3p5", "nanbeige"),
    models=(
        "Qwen3-Coder, Qwen3-Coder-Next, Qwen3.5 / Qwen3.6, Xiaomi MiMo-V2, StepFun Step-3.5, Nanbeige, "
        "IBM Granite 4.2, NVIDIA Nemotron 3 Super"
    ),
).format(__name__)
