"""`internlm_json`: InternLM2 / InternLM2.5 / InternLM3 and Intern-S1 tool calls, a call object
between InternLM's action tokens.

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think>" text "</think>"                # everything inside is text, never a call
    block   := START ws value (ws [","] ws value)* ws [END]   # END may be missing once a value completed
    START   := "<|action_start|><|plugin|>" | "<|action_start|> <|plugin|>"
    value   := call-object | "[" call-object ("," call-object)* "]"
    call-object := {"name", "parameters"} | {"name", "arguments"} | {"tool", "parameters"}
                 | {"function": {"name", "arguments"}}

with END = `<|action_end|>`. `<|action_start|>`, `<|plugin|>` and `<|action_end|>` are special
tokens of InternLM's tokenizer: decoding must keep them, and a detokenizer that puts a space between
two special tokens writes the opener `<|action_start|> <|plugin|>` (SGLang's detector expects that
spelling, vLLM's `internlm` the other); both open a block here. `<|action_start|>` before another
plugin (`<|interpreter|>`, InternLM's code interpreter) is not a tool call and stays text.

Everything after START is `hermes_json`'s: the same machine, so the block ends where its JSON value
ends (`<|action_end|>` inside a string is data), a block whose JSON breaks is text up to the break
and scanning goes on there, a block the output cuts off is text, arguments as a JSON string holding
an object are decoded, a call to a tool the request did not declare is kept (and logged), and every
other case is as that format's section says. Several blocks are parallel calls: vLLM's `internlm`
parser reads only the first, SGLang's `interns1` each.

InternLM writes the arguments under `parameters` (vLLM's example template writes `arguments`; both
are read); the writer and the constraints write `parameters`, a newline after the opener, as
InternLM's own chat format does.
"""

from __future__ import annotations

from .families.json_blocks import JsonBlockFormat, JsonBlockTags

ACTION_START, PLUGIN, ACTION_END = "<|action_start|>", "<|plugin|>", "<|action_end|>"
START, SPACED_START = ACTION_START + PLUGIN, f"{ACTION_START} {PLUGIN}"

FORMAT = JsonBlockFormat(
    "internlm_json",
    '<|action_start|><|plugin|>\\n{"name": .., "parameters": {..}}<|action_end|> (InternLM, Intern-S1)',
    # one block per call: the opener, a newline, the call object, `<|action_end|>`; a newline between
    JsonBlockTags(START, ACTION_END, before_end="", arguments_key="parameters"),
    spellings=(SPACED_START,),
    markers=(ACTION_START, PLUGIN, ACTION_END),
    special_tokens=(ACTION_START, PLUGIN, ACTION_END),
    other_openers=((SPACED_START, START),),
    vllm_names=("internlm",),
    sglang_names=("interns1",),
    models="InternLM2 / 2.5 / 3 chat, Intern-S1",
).format(__name__)
