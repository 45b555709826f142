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
`]` is `llama_pythonic`'s machine (`families/pythonic.py`'s `PythonicStream` with these tags), so the literals, a call
that is text while the others count (a positional argument, `b'..'`, an expression, an invalid
escape), a list that breaks, and the end of the output inside a list are as that format's section
says, word for word; JSON's `true` / `false` / `null` read as Python's.

Three things LFM2 writes that Python refuses are read here (vLLM's `lfm2` reads them too, in its own
tests), where the reading is unambiguous, so the call a model meant is not lost:

- A set, `tags={'urgent', 'bug'}`: a JSON array of its items in the order written (JSON has no
  set); `{}` stays the empty dict, and braces that mix a set's items with a dict's pairs are no
  literal (that call is text).
- A decimal integer with leading zeros, `month=07`: the integer 7, as a model that writes a number
  unquoted means a number; where the tool's schema for the argument admits a string and no number,
  the digits as written (`code=007` is "007"), as the schema says text was meant. Inside a list or a
  dict such a number is the integer (no schema is looked up there).
- A quote inside a single-quoted string, unescaped, as LFM2.5's template writes strings:
  `command='sed -n '360,450p' f.py'`. A `'` ends the string only where what follows it (after
  whitespace) may follow a value: `,` `)` `]` `}` `:` or a quote; elsewhere it is the string's own
  character. Where it may follow a value the quote ends the string, as Python reads it; and a call
  whose string took a quote as its own stands only once the list goes on after it (`,` or `]`), so
  a misread never gives a call with a cut value: in vLLM's nested `python -c` case
  (`mul_symbol='\\,'))"'`) the quote before `))` ends the string, the list cannot go on at the
  second `)`, and the call is text (which quote the model meant is a guess there; vLLM requotes).
  Double-quoted strings are Python's (the templates escape them).

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

from ..core.python_literals import Spelling
from .families.pythonic import PythonicFormat

START, END = "<|tool_call_start|>", "<|tool_call_end|>"

FORMAT = PythonicFormat(
    "lfm2_pythonic",
    '<|tool_call_start|>[f(a=1, b="x"), g()]<|tool_call_end|> (LFM2)',
    ((START, END),),
    spelling=Spelling(sets=True, leading_zeros=True, loose_quotes=True),  # what LFM2 writes (see above)
    vllm_names=("lfm2",),
    sglang_names=("lfm2",),
    models="LiquidAI LFM2 / LFM2.5",
).format(__name__)
