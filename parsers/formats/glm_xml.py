"""`glm_xml`: GLM-4.5 / 4.6 / 4.7 / 5.x, Ling 3, Poolside Laguna and Spark 2.5 tool calls, keys and
values in tags, values typed by the tool's schema. Its machine is the key-and-value family's
(`families/key_values`); another format of the family is a `KeyValueFormat` of its `KeyValueTags`
(other spellings, a block, a separator after the name).

Grammar, as this machine reads it::

    output   := (text | think | call)*
    think    := "<think>" text "</think>"                 # everything inside is text, never a call
    call     := "<tool_call>" NAME ws (arg ws)* "</tool_call>"
    arg      := "<arg_key>" KEY "</arg_key>" ws "<arg_value>" VALUE "</arg_value>"

GLM-4.7 / 5.x and Spark 2.5 write it compact (`<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value>
</tool_call>`), GLM-4.5 / 4.6, Ling 3 and Laguna XS with a line break after the name and after each
tag (Laguna S 2.1 compact, its predecessors line-broken); `ws` is any whitespace,
so one parser reads both. A call stands alone (no block around calls); calls follow one another. A
call with no arguments is `<tool_call>f</tool_call>` (or with a line break before the close): `{}`.

NAME is the text up to a line break, `<arg_key>` or `</tool_call>`, stripped: not empty, at most
`TOOLCALL_PARSERS_MAX_NAME` characters, no whitespace, quote, brace or `<` / `>` inside (so Hermes's
`<tool_call>\\n{"name": ..}` is text here, never a call named `{"name":`). KEY is the text up to
`</arg_key>`, stripped, whatever it holds (`param<1>`, `a&b`: the keys a tool's schema names, taken
as written); a key holding another of the format's tags (`path</arg_key>` read from a model that
wrote a stray tag) breaks the call. VALUE is raw text, no escaping, typed as `qwen_xml` and
`minimax_xml` type theirs (`core.typed_values`: a string schema keeps the text verbatim, `02134`
stays a string; the template writes non-strings as JSON). `</arg_value>` ends a value only when
`<arg_key>`, `</tool_call>` or the end of the output follows it (after whitespace), so a value may
hold `</arg_value>` and `</tool_call>` as text (a file about GLM's own format); `<arg_key>` (a
special token GLM writes only as markup) ends a value wherever it stands. A key given twice:
the last wins (logged).

Decided, for each malformed shape the field reports:

- **The `<arg_value>` opener dropped** (`<arg_key>query</arg_key>how many days</arg_value>`, vLLM
  #49248): a call; the value is what the model wrote between `</arg_key>` (and whitespace) and its
  `</arg_value>`. Nothing is guessed: both ends are the model's.
- **The `<arg_key>` opener dropped** (`<tool_call>send_command_to_shellcommand</arg_key>`, vLLM PR
  #47190): a call only where the name and the key can be told apart without guessing: whitespace
  between them (`browser_action task</arg_key>`), or exactly one declared tool whose name is a proper
  prefix of the run. Otherwise the call is text: a tool name is never invented.
- **A key with no value** (`<arg_key>a</arg_key><arg_key>b..`, `</tool_call>` or a stray `</arg_key>` right
  after a key),
  **a tag in a key**, text between arguments, a name that breaks the rules above, a call refused at
  its name or past the size bound of its arguments: the call is text up to its `</tool_call>` (or up to a
  `<tool_call>` before it: the model named the tag, then called); the
  other calls still count.
- **The `</arg_value>` dropped before the next key** (`Paris<arg_key>unit</arg_key>..`, an outside
  review): the value ends at the key and the next argument is read, so the call is what the model
  wrote rather than one value swallowing the rest.
- **The `</arg_value>` dropped before the call's close** (`<arg_value>1</tool_call><tool_call>..`,
  SGLang's IQuest tests): the call's close followed by the next call's open ends the value, and the
  call is text up to there; the next call counts.
- **A call the end of the output cuts off** after its payload is complete (its last
  `</arg_value>`, then only `</tool_call>` missing or cut part-way: that part is text) is a call, as
  `hermes_json` reads its complete JSON without `</tool_call>` (vLLM's GLM-4.5 and SGLang's Poolside
  tests say text; disputed): a stop token an engine drops, or a close the model forgot, loses no call.
  Cut inside a value, a key or the name, or before any argument, it is text (max_tokens); the calls
  before it stay.
- A call inside `<think>` is text (the reasoning, not an action); with the engines' `glm45`
  reasoning parsers in front, what they hand over is read.

The call's name is known at its first `<arg_key>` (or its close, or the line break after it); a
string value streams as it is written, holding back only what could be `</arg_value>` and its
follower; other values are sent when they end; `}` at `</tool_call>` (as far as the core's streaming
policy shows a call). The machine is `call_blocks` without blocks; values are `core.xml_parameters`'.
"""

from __future__ import annotations

from .families.key_values import GLM, KeyValueFormat

FORMAT = KeyValueFormat(
    "glm_xml",
    "<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (GLM-4.5 to 5.x, Ling 3, Laguna, Spark)",
    GLM,
    special_tokens=True,  # added tokens in GLM's vocabulary
    vllm_names=("glm45", "glm47", "ling3", "poolside_v1"),
    sglang_names=("glm", "glm45", "glm47", "ling3", "poolside_v1", "spark25"),
    models="GLM-4.5 / 4.6 / 4.7 / 5.x, Ling 3, Poolside Laguna, Spark 2.5",
).format(__name__)
