"""`lfm2_pythonic`: LiquidAI LFM2 / LFM2.5 tool calls: `llama_pythonic`'s call list inside LFM2's
own tool-call tokens.

Grammar, as this machine reads it::

    output := (text | think | block)*
    think  := "<think>" text "</think>"                 # everything inside is text, never a call
    block  := START ws "[" ws call (ws "," ws call)* [ws ","] ws "]" [ws END]
    call   := NAME "(" [kwarg ("," kwarg)* [","]] ")"   # as in llama_pythonic: NAME may be dotted
    kwarg  := IDENT "=" literal                         # see core/python_literals.py

with START = `<|tool_call_start|>` and END = `<|tool_call_end|>`, special tokens of LFM2's tokenizer
(the adapters turn `skip_special_tokens` off so they reach the parser). A list is read only after
START: a bare `[f(x=1)]` in the text, at a line start or not, is text here (LFM2 always opens its
calls with the token). After START any name counts, declared or not. Everything from the `[` to its
`]` is `llama_pythonic`'s machine (`LlamaPythonicStream` with these tags), so the literals, a call
that is text while the others count (a positional argument, a set, `b'..'`, a number Python refuses
such as `07`, an invalid escape), a list that breaks, and the end of the output inside a list are as
that format's section says, word for word; JSON's `true` / `false` / `null` read as Python's.

END is optional: a list closed by its `]` is read whether END follows or not (the model may stop
there). What is not a list after START (`[]`, `[1, 2]`, JSON objects, a call without its `[`) is
text, START and END included, and scanning goes on after START. Text before and after the block is
content, so is a second END (LFM2 sometimes echoes the list after the block, capped by another END:
both engines drop that echo; here it is text, nothing being lost).

Values: our writer and template spell them as `llama_pythonic`'s do (strings in JSON's spelling,
`True` / `False` / `None`); LFM2.5's own template writes strings in single quotes without escaping
and other values with Jinja's `string`: both read the same for the values a model writes.
"""

from __future__ import annotations

from typing import ClassVar

from .llama_pythonic import LlamaPythonicStream, call_writer, tagged_constraints, writes_name
from .spec import Format

START, END = "<|tool_call_start|>", "<|tool_call_end|>"


class Lfm2PythonicStream(LlamaPythonicStream):
    """Incremental parser for one response in LFM2's tool-call format (`llama_pythonic`'s machine,
    lists only inside LFM2's tool-call tokens)."""

    format_name = "lfm2_pythonic"
    bare_lists = False
    tags: ClassVar[dict[str, str]] = {START: END}


write = call_writer(START, END)
"""One list between LFM2's tokens, keyword arguments as Python literals."""

required_constraint, auto_constraint = tagged_constraints(START, END)

FORMAT = Format(
    "lfm2_pythonic",
    '<|tool_call_start|>[f(a=1, b="x"), g()]<|tool_call_end|> (LFM2)',
    Lfm2PythonicStream,
    write,
    markers=(START, END),
    special_tokens=(START, END),
    required=required_constraint,
    auto=auto_constraint,
    writes_name=writes_name,
    vllm_names=("lfm2",),
    sglang_names=("lfm2",),
    models="LiquidAI LFM2 / LFM2.5",
)
