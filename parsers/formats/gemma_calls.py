"""`gemma_calls`: Gemma 4's and FunctionGemma's calls, `call:NAME{key:value,...}` between tokens.

Grammar, as this machine reads it::

    output  := (text | channel | call)*
    channel := "<|channel>" text ["<channel|>"]              # reasoning: text, never a call
    call    := OPEN "call:" NAME ("{" args "}" | "(" args ")") CLOSE
    args    := [key ":" value ("," key ":" value)* [","]]      # see core/gemma_literals.py
    value   := D text D | bare | "{" args "}" | "[" [value ("," value)* [","]] "]"

with OPEN / CLOSE / D = `<|tool_call>` / `<tool_call|>` / `<|"|>` (Gemma 4) or
`<start_function_call>` / `<end_function_call>` / `<escape>` (FunctionGemma): one machine, two
marker sets, because the two write the same call syntax and differ only in their tokens; the
opener picks the set and its closer and delimiter must match. NAME is anything up to `{` or `(`
without whitespace, brackets or quotes, so `mcp:server:tool` and `a.b-c` are names. Calls follow
each other with no separator. `<|tool_response>`, which the template writes to end a turn with
calls (after its text) and the model may end its turn with, is dropped wherever it stands outside
a call and the reasoning channel: a special token, never prose. Whitespace between tokens is
markup.

Values, as Gemma 4's template prints them: strings between two delimiters with no escaping, numbers
and booleans bare, None for null, objects with bare keys (or keys between delimiters), lists. The
template writes every key of a call bare, whatever it holds, so words with spaces between them
(`{my key:1}`) are one key: that is how the model writes a declared key with a space, and how the
strict constraint writes it. A bare value is typed by the tool's schema where it declares one
(`3` stays `"3"` for a string), else as written (JSON numbers and Python's `108.`, `true` /
`false`, `null` / `None`; anything else a string); a bare `None` is null unless the schema says
only string. A number past a float's range (`1e400`) is no number a client can read (JSON has no
infinity): it is bare text like any other, the string `"1e400"` as written, in every schema, so
the client's own validation reports it rather than receiving a guessed infinity or losing the
call. A Gemma 4 delimited value is a string as written; FunctionGemma delimits every value
(`n:<escape>42<escape>`), so its delimited values are typed like bare ones, as vLLM's
`functiongemma` reads them. What the field reports, and what this reads:

- a delimiter inside a string (`<|"|>` is how Gemma 4 writes a `"` in a value, so code with
  `\"\"\"` is three of them): it closes the string only where a `,` or the closing bracket of the
  string's container follows; elsewhere it is a `"` in the value;
- quotes kept inside a value (`said "hi"`): verbatim;
- a missing opening delimiter (`{query:weather in Tokyo<|"|>}`): the bare value ends at the stray
  delimiter before `,` / `}` / `]`, and is the string `weather in Tokyo` (a recovered call: the
  model wrote the call, only a token is missing); in an object a `, ` that no `key:` follows is
  part of a bare value (`Paris, France<|"|>,limit:5`), as prose writes a comma;
- a missing closing delimiter, whose string runs into `,next:<|"|>` and a value's text: the
  string ends at that `,` and `next` is read (as vLLM now does); a delimiter followed by `key:`
  is a forgotten `,` (`command:<|"|>look<|"|>angle:90`);
- the call's closer inside a string (code that names `<tool_call|>`): data, since a string is
  data until its close; where that string, still open, then holds the next call's opener, the
  model ended its call at the closer without closing the string and began its next call: the
  first call is text up to that opener, and the next call counts (so a model's broken call
  never swallows the real one after it);
- values written as JSON or Python strings (`["a"]`, `['a']`, `{"mode": "fast"}`): strings
  without their quotes, since no bare value starts with a quote;
- a parenthesized call (`call:terminal(command:<|"|>ls<|"|>)`): read like braces (a recovered
  call: `(`..`)` holds the same arguments, only the bracket differs);
- the call begun again where a key or a value belongs (`call:f{<|tool_call>call:f{a:1}..`): the
  broken first attempt is text up to the new opener, and the call is read again from there, so
  the call the model meant counts;
- `key=value` (`save_as='x'`), a bare `:NAME{`, no `call:`, text where the closer belongs, an
  empty value, nesting past `TOOLCALL_PARSERS_MAX_DEPTH`, a bare value past
  `TOOLCALL_PARSERS_MAX_SCALAR`: the call is text, from its opener to where it broke, and scanning
  goes on there; the other calls still count.

The end of the output: a final call whose arguments are complete (their closing bracket written)
and only its closer missing, or cut part-way (that part is text), is a call, as in `hermes_json`:
the model wrote the whole call, and an output stopped at the closer (a stop sequence, a length
limit one token short) should not lose it; a call cut inside its arguments is text, since what it
would have held is unknown. Streaming: the call starts at its `{`, keys and values are sent as
they complete, strings stream inside the string.
"""

from __future__ import annotations

from ..core.gemma_literals import Dialect
from .families.literal_calls import LiteralCalls

TOOL_CALL, TOOL_CALL_END, DELIM = "<|tool_call>", "<tool_call|>", '<|"|>'
FG_CALL, FG_CALL_END, FG_ESCAPE = "<start_function_call>", "<end_function_call>", "<escape>"
CHANNEL, CHANNEL_END, TOOL_RESPONSE = "<|channel>", "<channel|>", "<|tool_response>"
GEMMA4 = Dialect(DELIM, TOOL_CALL_END, opener=TOOL_CALL)
FUNCTION_GEMMA = Dialect(FG_ESCAPE, FG_CALL_END, typed_strings=True, opener=FG_CALL)

FORMAT = LiteralCalls(
    "gemma_calls",
    '<|tool_call>call:f{a:<|"|>x<|"|>,n:3}<tool_call|> (FunctionGemma: <start_function_call>..<escape>)',
    (GEMMA4, FUNCTION_GEMMA),
    dropped=(TOOL_RESPONSE,),
    think=(CHANNEL, CHANNEL_END),
    think_label="thought\n",
    special_tokens=(TOOL_CALL, TOOL_CALL_END, DELIM),
    vllm_names=("gemma4", "functiongemma"),
    sglang_names=("gemma4",),
    models="Gemma 4, FunctionGemma",
).format(__name__)

GemmaCallsStream = FORMAT.stream_class
write = FORMAT.write
required_constraint, auto_constraint = FORMAT.required_constraint, FORMAT.auto_constraint
__all__ = ["DELIM", "FORMAT", "GemmaCallsStream", "auto_constraint", "required_constraint", "write"]
