"""`olmo3_pythonic`: Ai2 Olmo 3 tool calls: `llama_pythonic`'s calls, one per line inside Olmo's
`<function_calls>` tags, values often spelled as JSON.

Grammar, as this machine reads it::

    output := (text | think | block)*
    think  := "<think>" text "</think>"                 # everything inside is text, never a call
    block  := START ws call (BREAK call)* ws [END]      # BREAK: whitespace holding a line break
    call   := NAME "(" [kwarg ("," kwarg)* [","]] ")"   # as in llama_pythonic: NAME may be dotted
    kwarg  := IDENT "=" literal                         # see core/python_literals.py

with START = `<function_calls>` and END = `</function_calls>`, special tokens of Olmo 3's tokenizer
(the adapters turn `skip_special_tokens` off so they reach the parser). Calls are read only after
START, whose first call commits the block (`NAME(`, any name, declared or not); a bare
`get_weather(city="Paris")` in the text is text (vLLM's finished path reads a whole output of bare
calls; its streaming path does not, nor does the model write one: START is one token). The calls,
their literals and every error case are `llama_pythonic`'s (`families/pythonic.py`'s `PythonicStream` with these tags,
its reader in lines mode, `core/python_calls.py`), with a line break where a list has its comma and
END's `<` where it has its `]`: a call that is text while the others count (a positional argument,
a set, `b'..'`, `1e999`, ...), a block that breaks (a `,`, a `]` or a second call on the same line
after a call, a name without `(`) being text from its last finished call up to the break, and the
end of the output inside a block. JSON's `true` / `false` / `null` read as Python's `True` /
`False` / `None`, as Olmo 3 writes them.

END is optional: the calls read so far count whether END follows or not; when every call of a block
is text, so are START and END. Text before and after the block is content.

Values: Olmo 3's template writes each value with Jinja's `tojson` (JSON strings, `true`, `null`,
objects), calls joined by a line break, right after START; our writer and template do the same.
"""

from __future__ import annotations

from .families.pythonic import PythonicFormat

START, END = "<function_calls>", "</function_calls>"

FORMAT = PythonicFormat(
    "olmo3_pythonic",
    '<function_calls>f(a=1, b="x")\\ng()</function_calls> (Olmo 3)',
    ((START, END),),
    one_per_line=True,
    json_literals=True,
    vllm_names=("olmo3",),
    models="Ai2 Olmo 3 / Olmo 3.1 Instruct",
).format(__name__)
