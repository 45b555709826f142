"""The key-and-value family's tags and what follows from them besides the machine: the writer, the
constraints, which names a format of it can write. `glm_xml` is the family's machine and its first
format; a format of the family is a `KeyValueTags` (its spellings, a block around a turn's calls, a
separator after the name, its reasoning tags) given to these and to a `GlmXmlStream` subclass.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.xml_parameters import ValueEnd
from .grammar import Element, const, declared_arguments, regex, repeated, sequence, structural, tag, triggered
from .spec import Call, Constraint, ConstraintRequest, Writer
from .xml_blocks import XmlBlockTags, raw_value

NOT_A_NAME = re.compile(r"""[\s"'{}<>]""")
"""What a NAME never holds (so Hermes's `<tool_call>\\n{"name": ..}` is no call)."""


@dataclass(frozen=True)
class KeyValueTags:
    """The tags of one format of the family (GLM's by default)."""

    call_open: str = "<tool_call>"
    call_close: str = "</tool_call>"
    key_open: str = "<arg_key>"
    key_close: str = "</arg_key>"
    value_open: str = "<arg_value>"
    value_close: str = "</arg_value>"
    block: tuple[str, str] | None = None
    """The tags around a turn's calls (Hunyuan's `<tool_calls>`); None: each call stands alone."""
    name_separator: str | None = None
    """A tag the model may write between the name and the first key (Hunyuan's `<tool_sep>`): markup
    (a call without it reads the same); the writer and the constraints write it."""
    type_tags: tuple[str, str] | None = None
    """Tags the model may write between a key and its value, naming the value's type (K2 Horizon's
    typed XML): markup, typing the value where the tool's schema does not."""
    think: tuple[str, str] = ("<think>", "</think>")

    @functools.cached_property
    def machine(self) -> XmlBlockTags:
        start, end = self.block or (self.call_open, self.call_close)
        return XmlBlockTags(start, end, self.call_open, self.call_close, self.key_open, call_word="call")

    @functools.cached_property
    def value_ends(self) -> tuple[ValueEnd, ...]:
        """The value's close ends it only before the next key, the call's close or the end of the
        output; the next key's open ends it wherever it stands (the value's close was dropped, and
        the next argument is read); the call's close right before the next call (or the block's
        close) ends it too: the value's close was dropped, and the stream breaks the call there
        (`unclosed_value_ends_call` is False)."""
        after_call = (self.call_open, *self.block[1:]) if self.block else (self.call_open,)
        return (
            ValueEnd(self.value_close, followers=(self.key_open, self.call_close), at_end_of_output=True),
            ValueEnd(self.key_open, kept=0),
            ValueEnd(self.call_close, followers=after_call),
        )

    @functools.cached_property
    def name_ends(self) -> tuple[str, ...]:
        separator = (self.name_separator,) if self.name_separator else ()
        return (self.key_open, self.call_close, self.key_close, *separator)

    @functools.cached_property
    def after_key(self) -> tuple[str, ...]:
        """After a key, the value's open; any other tag of the format there means the call is broken."""
        return (self.value_open, self.key_open, self.key_close, self.value_close, self.call_open, self.call_close,
                *(self.type_tags or ()))  # fmt: skip

    @functools.cached_property
    def key_breakers(self) -> tuple[str, ...]:
        """The tags that break a key they stand in (any other `<` is the key's, as in `param<1>`)."""
        return (self.key_close, *(tag for tag in self.markers if tag != self.key_close))

    @functools.cached_property
    def markers(self) -> tuple[str, ...]:
        extra = [*(self.block or ()), *((self.name_separator,) if self.name_separator else ())]
        return (*extra[:1], self.call_open, self.call_close, self.key_open, self.key_close, self.value_open,
                self.value_close, *extra[1:], *(self.type_tags or ()))  # fmt: skip


GLM = KeyValueTags()


def key_value_writer(kv: KeyValueTags, line: str = "") -> Writer:
    """Calls -> `kv`'s text, strings verbatim and other values as JSON; `line` after the name (and
    its separator), each key, each value, each call inside a block, and the block's open."""

    def write(calls: Sequence[Call]) -> str:
        text = "".join(
            kv.call_open + name + (kv.name_separator or "") + line
            + "".join(f"{kv.key_open}{k}{kv.key_close}{line}{kv.value_open}{raw_value(v)}{kv.value_close}{line}"
                      for k, v in args.items())
            + kv.call_close + (line if kv.block else "")
            for name, args in calls
        )  # fmt: skip
        return f"{kv.block[0]}{line}{text}{kv.block[1]}" if kv.block else text

    return write


ArgumentsElement = Callable[[ConstraintRequest, str], Element]
"""Tool `name`'s arguments as a constraint element (between the call's name and its close)."""


def tagged_pairs(kv: KeyValueTags, line: str = "") -> ArgumentsElement:
    """Arguments as `kv`'s key and value tags, as `key_value_writer(kv, line)` writes them, for
    spellings xgrammar has no style for: a pinned tool's declared keys in their order (the required
    ones present), each value any text without the value's close where its schema admits a string
    (the raw value is that text), else JSON of its schema; then, unless the schema closes the
    object, any other keys (a declared one too) with any text. An unpinned tool: any keys, any text."""

    def pair(key: str, content: Element) -> Element:
        return tag(kv.key_open + key + kv.key_close + line + kv.value_open, content, kv.value_close + line)

    # a value never runs into the next pair: its close, or (a close the model dropped) the next key
    # nor the call's own tags, which the parser reads as the call's end or a new call
    calls = [kv.call_open, kv.call_close, *(kv.block or ())]
    text = {"type": "any_text", "excludes": [kv.value_close, kv.key_open, *calls]}

    free = tag(kv.key_close + line + kv.value_open, text, kv.value_close + line)
    other = sequence(const(kv.key_open), regex(r"[^<>\s]+"), free)

    def arguments(request: ConstraintRequest, name: str) -> Element:
        return declared_arguments(request.parameters(name), request.pins(name), pair, other, text)

    return arguments


def key_value_constraints(
    kv: KeyValueTags, arguments: ArgumentsElement | None = None, line: str = ""
) -> tuple[Constraint, Constraint]:
    """`required`: one or more calls (in one block where `kv` has one) that end the output, at most
    one if `single`. Strict `auto`: free text, where what opens calls (the block's open, or each
    call's) opens calls that follow their tools' schemas. One tag per tool, its name (and the
    separator) in the tag's begin, its arguments as `arguments` renders them; the markup as
    `key_value_writer(kv, line)` writes it; `arguments` defaults to `tagged_pairs(kv, line)` (not
    xgrammar's `glm_xml` style, whose value runs into a next key the parser ends it at)."""
    arguments = arguments or tagged_pairs(kv, line)
    after_call = line if kv.block else ""

    def call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
        begin = kv.call_open + "{}" + (kv.name_separator or "") + line
        return [tag(begin.format(name), arguments(request, name), kv.call_close + after_call) for name in names]

    def calls(request: ConstraintRequest, names: list[str]) -> Element:
        repeat = repeated(request, call_tags(request, names))
        return tag(kv.block[0] + line, repeat, kv.block[1]) if kv.block else repeat

    def required(request: ConstraintRequest) -> dict[str, Any]:
        return structural(calls(request, request.names))

    def auto(request: ConstraintRequest) -> dict[str, Any]:
        if kv.block:
            return triggered(request, [kv.block[0]], [calls(request, list(request.schemas))])
        return triggered(request, [kv.call_open], call_tags(request, list(request.schemas)))

    return required, auto


def needs_declared_tools(kv: KeyValueTags) -> Callable[[str], bool]:
    """A call whose first key opener was dropped is read only by its declared tool's name."""
    return lambda text: kv.key_close in text and kv.call_open in text


def writes_name(name: str) -> bool:
    return NOT_A_NAME.search(name) is None


def writes_value(kv: KeyValueTags) -> Callable[[Any], bool]:
    """The values the writer writes so that they read back: none whose text (a string, or the JSON of
    any other value) holds an end of a value (`kv.value_ends`: a tag without followers, or a tag,
    whitespace and its follower)."""

    def readable(value: Any) -> bool:
        text = raw_value(value)
        for end in kv.value_ends:
            at = text.find(end.tag)
            while at >= 0:
                rest = text[at + len(end.tag) :].lstrip()
                if not end.followers or rest.startswith(end.followers):
                    return False
                at = text.find(end.tag, at + 1)
        return True

    return readable
