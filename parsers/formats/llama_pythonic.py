"""`llama_pythonic`: Llama 3.2 / Llama 4 style calls, a Python list of keyword-argument calls.

Grammar, as this machine reads it::

    output := (text | think | calls)*
    calls  := start ws "[" ws call (ws "," ws call)* [ws ","] ws "]" [ws "<|python_end|>"]  # end: after python_start
    start  := line-start [ \\t]* | "<|python_tag|>" | "<|python_start|>" | mid-line
    call   := NAME "(" [kwarg ("," kwarg)* [","]] ")"     # NAME may be dotted (a.b.c), Unicode as in Python
    kwarg  := IDENT "=" literal                           # see core/python_literals.py

A `[` starts a call list only when its first item is `NAME(`: `see [1]`, `[O'Reilly]` or `[1, 2, 3]`
is text. At a line start (indented or not, the output's start included) or after a python tag any
name counts; mid-line (after prose, `Sure. [get_weather(city='Tokyo')]`, or right after another list,
`[f(a=1)][g(b=2)]`) only a tool the request declared, and the text around it stays content. The line
break (`\\n` or `\\r\\n`, `core/lines.py`) and indentation before a line-start list belong to the
list. A trailing comma (`[f(), g(),]`) is accepted. Nothing is evaluated.

Literals are read by our own lexer (`core/python_literals.py`), never by `eval` or `ast`: strings
(single, double, triple quoted; escapes as Python reads them, `\\N{DEGREE SIGN}` included; adjacent
strings concatenated; a raw newline inside '...' is read as a newline, as raw control characters in
JSON strings), ints (`0x1F`, `0o17`, `0b101`, `1_000`), floats (`1e-3`, `.5`), `True` / `False` /
`None` and `true` / `false` / `null`, unary `+` / `-` on numbers, lists, tuples (as arrays), dicts
with string keys, nested up to `TOOLCALL_PARSERS_MAX_DEPTH`. A surrogate pair written as two escapes
(`'\\ud83d\\ude00'`) is one character, as in JSON; a lone surrogate stays in the value and is
written as its `\\uXXXX` escape in `arguments`.

The list itself is read by `core/python_calls.py`. These make only their call text, from its name to
its closing parenthesis, and the other calls of the list still count: a positional argument; a value
that is not a literal (a set, a call, a bare name, an expression, a string prefix such as `f"..."`);
a number Python refuses (`1e`, `007`) or JSON cannot hold (`1j`, `1e999`); an invalid escape;
nesting, a name or a number past its bound; a call the core refuses. These break the list, which is
then text from its last finished call up to the break, and scanning for lists goes on there: no `(`
after a name, no `,` or `]` after a call, an unbalanced bracket inside a call. When a string breaks
it, the break is at the string's end in every chunking, so a list written inside that string is never
read. When every call of a list is text, so are its `]` and its `<|python_end|>`. Text after the list
is content.

Streaming: the call starts at `(`, each argument is sent once its value is complete, and a string value
streams inside the string as it is written (when the core's streaming policy shows the call).

The family (`families/pythonic.py`): this format is one `PythonicFormat` value with bare lists and
Llama's python tags; `olmo3_pythonic` and `lfm2_pythonic` are values whose lists sit only in their
own tags.
"""

from __future__ import annotations

from .families.pythonic import PYTHON_END, PYTHON_START, PYTHON_TAG, PythonicFormat

FORMAT = PythonicFormat(
    "llama_pythonic",
    '[f(a=1, b="x"), g()] (after <|python_tag|> or in <|python_start|>..)',
    ((PYTHON_TAG, ""), (PYTHON_START, PYTHON_END)),
    bare_lists=True,
    vllm_names=("pythonic", "llama4_pythonic"),
    sglang_names=("pythonic",),
    models="Llama 3.2 / Llama 4, models prompted for pythonic call lists",
).format(__name__)
