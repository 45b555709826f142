"""`seed_xml`: ByteDance Seed-OSS tool calls: `qwen_xml`'s grammar inside Seed's own block tags,
reasoning in Seed's own think tags.

Grammar, as this machine reads it::

    output    := (text | think | block)*
    think     := "<seed:think>" text "</seed:think>"     # everything inside is text, never a call
    block     := START ws (function ws)* [END]           # END may be missing after complete functions
    function  := "<function=" NAME ">" ws (parameter ws)* "</function>"
    parameter := "<parameter=" NAME ">" VALUE [PARAM_CLOSE]

with START = `<seed:tool_call>`, END = `</seed:tool_call>` (single tokens of Seed-OSS's tokenizer,
added but not special, so decoding keeps them either way) and PARAM_CLOSE = `</parameter>`.
Everything between START and END is `qwen_xml`'s: the same machine (`QwenXmlStream` with these
tags), so NAME, what ends a value, a dropped `</parameter>` or `</function>`, the typing of
values by the tool's schema and every error case are as that format's section says, word for word.
The one difference: Seed's template puts a value right between its tags
(`<parameter=city>Paris</parameter>`), where Qwen's puts it on its own lines, so here no line break
around a value is markup and VALUE is every character between the tags: a code edit whose
`newString` ends with a newline keeps it (a user's file is data; taking Qwen's framing off would
cut it). The one line break taken off is the one before an end that stands for a dropped
`</parameter>` (`x\\n<parameter=` at a line start, `x\\n</function>`): the break Seed's template
writes after that tag. So a value cannot hold what `qwen_xml`'s cannot (a line that starts with
`<parameter=`, `</parameter>` + whitespace + `<parameter=` or `</function>`, `</function>` +
whitespace + a block tag); `writes_value` refuses those.

Reasoning: `<seed:think>..</seed:think>` (with the `<seed:cot_budget_reflect>` notes Seed writes
inside it) is text to this parser, so a block the model writes while thinking (Seed often quotes
the call it is about to make) is never a call; a reasoning parser in front takes it out of the
content. `<think>` means nothing to Seed and is plain text here.

Values that are not strings: our template and writer give them as JSON. Seed's own template writes
them with Python's `str()` (`True`, `None`, `['a', 'b']`, `{'k': 1}`), and they read as `qwen_xml`
reads Python's spelling: typed by the schema (`None` null where it admits null, a dict or list
where it wants an object or array). One rule of `qwen_xml` Seed does not take: a `<function=`
outside Seed's block is text (a model that drops `<seed:tool_call>` has not been seen).
"""

from __future__ import annotations

from .families.qwen_functions import QwenFunctions

START, END = "<seed:tool_call>", "</seed:tool_call>"

FORMAT = QwenFunctions(
    "seed_xml",
    "<seed:tool_call>\\n<function=f>\\n<parameter=p>v</parameter>\\n</function>\\n</seed:tool_call> (Seed-OSS)",
    start=START,
    end=END,
    inline=True,  # Seed's template writes a value right between its tags: all of it is data
    bare_calls=False,  # Seed's block is `<seed:tool_call>`: a `<function=` outside it stays text
    think=("<seed:think>", "</seed:think>"),
    special_tokens=(START, END),
    vllm_names=("seed_oss",),
    models="ByteDance Seed-OSS",
).format(__name__)
