"""`hunyuan_xml`: Tencent Hy3 (and Hy4) tool calls: GLM's keys and values in tags, inside a block,
every tag with the tokenizer's suffix (`:opensource` in the released models) or with none
(Hy3-preview's bare tags).

Grammar, as this machine reads it::

    output  := (text | think | block)*
    think   := "<think:opensource>" text "</think:opensource>"   # text, never a call
    block   := "<tool_calls:opensource>" ws (call ws)* ["</tool_calls:opensource>"]
    call    := "<tool_call:opensource>" NAME ["<tool_sep:opensource>"] ws (arg ws)* "</tool_call:opensource>"
    arg     := "<arg_key:opensource>" KEY "</arg_key:opensource>" ws
               "<arg_value:opensource>" VALUE "</arg_value:opensource>"

    # the same with every tag bare (`<tool_calls>`, `<think>`, ..): a block's open fixes its spelling

Hy3's template writes the block's open and a line break, then each call as
`<tool_call:opensource>NAME<tool_sep:opensource>` and a line break, each key and each value on its
own line, the call's close and a line break, and the block's close. Hy4 drops `<tool_sep>` (its
name ends at the first key or the call's close); both read the same. Every marker is one special
token of the vocabulary, the suffix included: vLLM's `hy_v3` takes the suffix from the tokenizer's
`token_suffix` setting, `hy_v4` and SGLang's `hunyuan` from the vocabulary. This format reads both
spellings the engines' own tests write, the `:opensource` one and Hy3-preview's bare tags
(`<tool_calls><tool_call>NAME<tool_sep><arg_key>..`, with `<think>..</think>` for reasoning), so one
parser serves either tokenizer; the block's tag fixes the spelling of everything in it (a suffixed
tag in a bare block, or the other way round, breaks the block as any foreign tag does), because a
model writes the one spelling its vocabulary has. Other per-checkpoint suffixes are not read.

Everything inside a call is `glm_xml`'s, word for word (its machine, with these tags): NAME, KEY,
VALUE typed by the tool's schema (a string schema keeps the text verbatim, other values are JSON
as the template writes them), a value's close that ends it only before the next key or the call's
close, the dropped key or value openers, and every malformed shape. What the block adds is the
block machine's rule (`call_blocks`): a block that holds no call is text; the block's close may be
missing after complete calls (the calls stand); text in the block after a call ends the block; a
call outside a block is text, as both engines read it.

Reasoning: `<think:opensource>..</think:opensource>` (or the bare `<think>..</think>`) is text to
this parser, so a block the model writes while thinking is never a call.

Strict `auto` holds both spellings: each block's open (suffixed or bare) is a trigger that opens
calls of declared tools, written in that block's spelling; `required` takes one block in either
spelling, so a Hy3-preview tokenizer is not forced to spell out tags it does not have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.ids import IdFactory
from ..core.markers import MarkerScanner
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.xml_parameters import ParameterValueReader
from .constraints import one_of, structural
from .families.key_values import (
    KeyValueStream,
    KeyValueTags,
    key_value_constraints,
    key_value_writer,
    needs_declared_tools,
    tagged_pairs,
    writes_name,
    writes_value,
)
from .spec import Constraint, Format

SUFFIX = ":opensource"


def spelling(suffix: str) -> KeyValueTags:
    """Hunyuan's tags, each with `suffix` ("" for Hy3-preview's bare tags)."""

    def pair(name: str) -> tuple[str, str]:
        return f"<{name}{suffix}>", f"</{name}{suffix}>"

    (call_open, call_close), (key_open, key_close), (value_open, value_close) = map(
        pair, ("tool_call", "arg_key", "arg_value")
    )
    return KeyValueTags(
        call_open,
        call_close,
        key_open,
        key_close,
        value_open,
        value_close,
        block=pair("tool_calls"),
        name_separator=f"<tool_sep{suffix}>",
        think=pair("think"),
    )


HY = spelling(SUFFIX)
"""The released models' spelling, the one the writer and the template write."""
BARE = spelling("")
"""Hy3-preview's spelling, as the engines' own tests write it."""
SPELLINGS = (HY, BARE)


class HunyuanXmlStream(KeyValueStream):
    """Incremental parser for one response in Hunyuan's tool-call format (`glm_xml`'s machine with
    Hunyuan's tags and block; the block's open picks the spelling of its tags)."""

    format_name = "hunyuan_xml"
    kv = HY

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = (HY.think, BARE.think),
    ) -> None:
        super().__init__(tools, id_factory, think_markers=think_markers)
        self._outside = OutsideCalls(self._text, [kv.machine.start for kv in SPELLINGS], think_markers)
        self._spellings = {
            kv.machine.start: (
                kv,
                MarkerScanner([kv.machine.call_close, kv.machine.end, kv.machine.call_open]),
                ParameterValueReader(kv.value_ends, self._send_args, self._keep, self.limits),
            )
            for kv in SPELLINGS
        }

    def _open_block(self, tag: str) -> None:
        """The block's open fixes the spelling of every tag in the block."""
        kv, self._skip_scanner, self._value = self._spellings[tag]
        self.kv, self.tags = kv, kv.machine
        super()._open_block(tag)


write = key_value_writer(HY, "\n")
"""As Hy3's template writes calls: the block's open, each call, key and value on its own line."""


def _each_spelling() -> tuple[Constraint, Constraint]:
    """`required`: one block in either spelling. Strict `auto`: each spelling's block open is a
    trigger of its own calls (the two constraints of `key_value_constraints`, joined)."""
    pairs = [key_value_constraints(kv, tagged_pairs(kv, "\n"), "\n") for kv in SPELLINGS]

    def joined(pick: int, join: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> Constraint:
        return lambda request: structural(join([pair[pick](request)["format"] for pair in pairs]))

    def triggers(bodies: list[dict[str, Any]]) -> dict[str, Any]:
        body = dict(bodies[0])
        body["triggers"] = [t for b in bodies for t in b["triggers"]]
        body["tags"] = [t for b in bodies for t in b["tags"]]
        return body

    return joined(0, one_of), joined(1, triggers)


required_constraint, auto_constraint = _each_spelling()

FORMAT = Format(
    "hunyuan_xml",
    "<tool_calls:opensource><tool_call:opensource>f<tool_sep:opensource><arg_key:opensource>k"
    "</arg_key:opensource><arg_value:opensource>v</arg_value:opensource>..</tool_calls:opensource> (Tencent Hy3)",
    HunyuanXmlStream,
    write,
    markers=HY.markers,  # the released spelling; a tokenizer has one (the bare tags are Hy3-preview's)
    special_tokens=HY.markers,
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=writes_name,
    writes_value=writes_value(HY),
    needs_declared_tools=lambda text: any(needs_declared_tools(kv)(text) for kv in SPELLINGS),
    typed_values=True,
    vllm_names=("hy_v3", "hy_v4"),
    sglang_names=("hunyuan",),
    models="Tencent Hy3, Hy4",
    reasoning_openers=(HY.machine.start, BARE.machine.start),
)
