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

from dataclasses import replace

from .muse_atem import FORMAT as GLIMMER
from .muse_atem import NOT_TOOLS, MuseAtemStream, auto_constraints

SPARK_NOT_TOOLS = NOT_TOOLS | {"developer"}


class MuseSparkStream(MuseAtemStream):
    """Incremental parser for one response of Muse Spark (`muse_atem`'s machine, Spark's channels)."""

    format_name = "muse_spark"
    not_tools = SPARK_NOT_TOOLS
    content_recipients = frozenset({"user", "commentary"})
    reasoning_recipients = frozenset({None, "self"})


auto_constraint, writes_name = auto_constraints(SPARK_NOT_TOOLS, MuseSparkStream.reasoning_recipients)

FORMAT = replace(
    GLIMMER,
    name="muse_spark",
    summary=GLIMMER.summary.replace("(Muse Glimmer)", "(Muse Spark)"),
    stream_class=MuseSparkStream,
    auto_constraint=auto_constraint,
    writes_name=writes_name,
    vllm_names=("muse", "musespark"),
    sglang_names=(),
    models="Muse Spark",
)
"""Glimmer's spec with Spark's stream, its strict `auto` and the names its channels leave to tools."""
