"""`muse_spark`: Muse Spark's ATEM calls: `muse_atem`'s messages and blocks, with Spark's channels.

Grammar, as this machine reads it: `muse_atem`'s, word for word (its machine: headers, blocks,
invokes, values typed by the tool's schema, the doubled `NAME.NAME` spelling, every error case).
Muse Spark shares Glimmer's tool-call contract; what differs is which channels carry what, as vLLM
0.34's `muse` parser reads them (`vllm/tool_parsers/muse_tool_parser.py`; `muse_glimmer` there is a
subclass with Glimmer's channels):

- a message to `commentary` (an update between calls) is content like the answer to `user`: its
  body without header and closer;
- a message to `developer` is no call; vLLM drops it, here it is text with its markup, like the
  reasoning to `self` (nothing the model wrote is lost; a client that should not see it filters
  the channel, as it does reasoning);
- a message without a recipient (` <|message|>..`) is reasoning, so a `to=TOOL<|message|>` at its
  end opens that tool's message, as after reasoning to `self`.

A Spark template renders a call turn exactly as Glimmer's does, so `detect` and the `auto` parsers
name `muse_atem` for it (which reads the same calls; commentary stays text with its markup there):
serve Muse Spark with `--tool-call-parser muse_spark`.
"""

from __future__ import annotations

from .families.atem import NOT_TOOLS, AtemFormat

FORMAT = AtemFormat(
    "muse_spark",
    '<|start|>assistant to=f<|message|><atem:function_calls><atem:invoke name="f"><atem:parameter name="p">v'
    "</atem:parameter></atem:invoke></atem:function_calls><|eom|> (Muse Spark)",
    not_tools=NOT_TOOLS | {"developer"},
    content_recipients=frozenset({"user", "commentary"}),
    reasoning_recipients=frozenset({None, "self"}),
    vllm_names=("muse", "musespark"),
    models="Muse Spark",
).format(__name__)
