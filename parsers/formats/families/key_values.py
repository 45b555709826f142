"""The key-and-value family: `NAME<arg_key>K</arg_key><arg_value>V</arg_value>` calls in a call
tag (GLM's), values raw and typed by the tool's schema. `glm_xml`'s docstring states the grammar
and every decided case. A format of the family is data: its `KeyValueTags` (its spellings, a block
around a turn's calls, a separator after the name, type tags, its reasoning tags) inside a
`KeyValueFormat`, from which its stream class (`KeyValueStream` with those tags), writer,
`required` and strict `auto` constraints and `Format` come. A format whose grammar truly differs
subclasses `KeyValueStream` (Hunyuan's two spellings).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...core.ids import IdFactory
from ...core.outside import ThinkMarkers
from ...core.stream import NotACall
from ...core.xml_parameters import ValueEnd
from ..call_blocks import VALUE, XmlBlockStream, XmlBlockTags, raw_value
from ..constraints import Element, const, declared_arguments, regex, repeated, sequence, structural, tag, triggered
from ..spec import Call, Constraint, ConstraintRequest, Format, Writer
from . import format_stream

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
    """Empty where the key's close opens the value too (Solar Open2's `<|tool_arg:value|>`): the
    value then starts right after it, its leading whitespace data, not markup."""
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
    next_call_ends_call: bool = False
    """A call's open after a value, or inside one, ends the call (and the value): the model dropped
    the call's close (and the value's). For formats whose tags are special tokens that a value
    cannot hold as data (Solar Open2); elsewhere the open is the value's text."""

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
        closes = (self.key_open, self.call_close, *((self.call_open,) if self.next_call_ends_call else ()))
        return (
            ValueEnd(self.value_close, followers=closes, at_end_of_output=True),
            ValueEnd(self.key_open, kept=0),
            ValueEnd(self.call_close, followers=after_call),
            *((ValueEnd(self.call_open, kept=0),) if self.next_call_ends_call else ()),
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
        tags = (*extra[:1], self.call_open, self.call_close, self.key_open, self.key_close, self.value_open,
                self.value_close, *extra[1:], *(self.type_tags or ()))  # fmt: skip
        return tuple(tag for tag in tags if tag)  # an empty value's open is no marker


GLM = KeyValueTags()


def key_value_writer(kv: KeyValueTags, line: str = "", key_line: str | None = None) -> Writer:
    """Calls -> `kv`'s text, strings verbatim and other values as JSON; `line` after the name (and
    its separator), each key (`key_line` there, if given), each value, each call inside a block, and
    the block's open."""
    after_key = line if key_line is None else key_line

    def write(calls: Sequence[Call]) -> str:
        text = "".join(
            kv.call_open + name + (kv.name_separator or "") + line
            + "".join(f"{kv.key_open}{k}{kv.key_close}{after_key}{kv.value_open}{raw_value(v)}{kv.value_close}{line}"
                      for k, v in args.items())
            + kv.call_close + (line if kv.block else "")
            for name, args in calls
        )  # fmt: skip
        return f"{kv.block[0]}{line}{text}{kv.block[1]}" if kv.block else text

    return write


ArgumentsElement = Callable[[ConstraintRequest, str], Element]
"""Tool `name`'s arguments as a constraint element (between the call's name and its close)."""


def tagged_pairs(kv: KeyValueTags, line: str = "", key_line: str | None = None) -> ArgumentsElement:
    """Arguments as `kv`'s key and value tags, as `key_value_writer(kv, line, key_line)` writes them, for
    spellings xgrammar has no style for: a pinned tool's declared keys in their order (the required
    ones present), each value any text without the value's close where its schema admits a string
    (the raw value is that text), else JSON of its schema; then, unless the schema closes the
    object, any other keys (a declared one too) with any text. An unpinned tool: any keys, any text."""

    after_key = line if key_line is None else key_line

    def pair(key: str, content: Element) -> Element:
        return tag(kv.key_open + key + kv.key_close + after_key + kv.value_open, content, kv.value_close + line)

    # a value never runs into the next pair: its close, or (a close the model dropped) the next key
    # nor the call's own tags, which the parser reads as the call's end or a new call
    calls = [kv.call_open, kv.call_close, *(kv.block or ())]
    text = {"type": "any_text", "excludes": [kv.value_close, kv.key_open, *calls]}

    free = tag(kv.key_close + after_key + kv.value_open, text, kv.value_close + line)
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


# -- the machine -------------------------------------------------------------------------------------

_KEY_DONE = "key_values.key_done"  # after a key's close: whitespace, then the value's open (or the value itself)
_TYPE = "key_values.type"  # in a type tag's text (formats with `type_tags`)


class KeyValueStream(XmlBlockStream):
    """Incremental parser for one response of a format of the family (the machine is `call_blocks`
    without blocks, or with the block a format's `kv` names; this reads NAME and KEY and the tags
    between a key and its value). A format of the family subclasses it with its `kv`
    (`KeyValueFormat.stream_class`)."""

    format_name = "?"
    kv: KeyValueTags = GLM
    tags = GLM.machine
    blockless = True
    unclosed_value_ends_call = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A format of the family names its `kv`; the block machine's tags follow from it."""
        super().__init_subclass__(**kwargs)
        cls.tags = cls.kv.machine
        cls.blockless = cls.kv.block is None

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = GLM.think,
    ) -> None:
        super().__init__(tools, id_factory, think_markers, self.kv.value_ends)
        self._readers[_KEY_DONE] = self._scan_key_done
        self._readers[_TYPE] = self._scan_type
        self._typed = False  # the current key's type tag was read
        self._key_read = 0  # how much of the key being read was read already (held back with it)

    def _scan_name(self, text: str, pos: int) -> int | None:
        """The call's NAME or an argument's KEY (which one `_on_name` says)."""
        if self._on_name == self._open_call:
            return self._scan_call_name(text, pos)
        return self._scan_key(text, pos)

    def _scan_call_name(self, text: str, pos: int) -> int | None:
        """NAME up to a line break or a tag; a `</arg_key>` there means the key's opener was dropped."""
        end = self._run_end(text, pos, "\n<")
        if end is None:
            return None
        tag = "" if text[end] == "\n" else self._literal_at(text, end, self.kv.name_ends)
        if tag is None:
            return None
        if text[end] == "<" and not tag:
            raise NotACall(f"a {text[end : end + 12]!r} in the tool's name")
        run = text[pos:end].strip()
        if tag == self.kv.key_close:  # kept only once opened: a refusal reads the run again as text
            name, key = self._split_name_and_key(run)
            self._named(name)
            self._open_key(key)
            self._raw.append(text[pos : end + len(tag)])
            return end + len(tag)
        if NOT_A_NAME.search(run):
            raise NotACall(f"{run[:40]!r} is not a tool name")
        self._named(run)
        at = end + len(tag) if tag == self.kv.name_separator else end
        self._raw.append(text[pos:at])
        return at

    def _split_name_and_key(self, run: str) -> tuple[str, str]:
        """A call whose first `<arg_key>` was dropped: NAME and KEY, where they can be told apart."""
        parts = run.split(None, 1)
        if len(parts) == 2:
            name, key = parts
        else:
            prefixes = [tool for tool in self.tools.schemas if run.startswith(tool) and len(run) > len(tool)]
            if len(prefixes) != 1:
                raise NotACall(f"a key's close with no open: the tool and the key in {run[:40]!r} are ambiguous")
            name, key = prefixes[0], run[len(prefixes[0]) :]
        if NOT_A_NAME.search(name) or NOT_A_NAME.search(key.strip()):
            raise NotACall(f"{run[:40]!r} is not a tool name and a key")
        return name, key.strip()

    def _scan_key(self, text: str, pos: int) -> int | None:
        """KEY up to `</arg_key>`; another of the format's tags in it breaks the call, and any other
        `<` is the key's (`param<1>`: a key is any text the tool's schema names). What is held back
        is read on from where the last feed stopped, not from the key's start."""
        bound = min(len(text), pos + self.limits.max_name + 1)
        end = text.find("<", pos + self._key_read, bound)
        while end >= 0:
            tag = self._literal_at(text, end, self.kv.key_breakers)
            if tag is None:
                self._key_read = end - pos
                return None
            self._key_read = 0
            if tag == self.kv.key_close:
                self._open_key(text[pos:end].strip())  # before the key is kept: a refusal reads it again as text
                self._raw.append(text[pos : end + len(tag)])
                return end + len(tag)
            if tag:
                raise NotACall(f"a {tag!r} in an argument's key")
            end = text.find("<", end + 1, bound)
        if len(text) > pos + self.limits.max_name:
            self._key_read = 0
            raise NotACall(f"a name longer than {self.limits.max_name} characters (TOOLCALL_PARSERS_MAX_NAME)")
        self._key_read = len(text) - pos
        return None

    def _run_end(self, text: str, pos: int, stops: str) -> int | None:
        """Where a name or a key ends (the first of `stops`); None while it may still end within
        the name bound; NotACall past it."""
        longest = self.limits.max_name
        limit = min(len(text), pos + longest + 1)
        end = min((at for at in (text.find(stop, pos, limit) for stop in stops) if at >= 0), default=-1)
        if end >= 0:
            return end
        if len(text) > pos + longest:
            raise NotACall(f"a name longer than {longest} characters (TOOLCALL_PARSERS_MAX_NAME)")
        return None

    def _open_key(self, key: str) -> None:
        self._on_name = self._open_param
        self._named(key)
        self._typed = False
        self._state = _KEY_DONE

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Between a call's arguments: `call_blocks`' reading; where `kv.next_call_ends_call`, a
        call's open there ends this call (its close dropped), and the open is read again as the next."""
        if self.kv.next_call_ends_call:
            if (at := self._markup_ws(text, pos, self._raw)) > pos:
                return at
            tag = self._literal_at(text, pos, (self.kv.call_open,))
            if tag is None:
                return None
            if tag:
                self._end_call_element()
                return pos
        return super()._scan_call(text, pos)

    def _value_ended(self, end: ValueEnd, value: Any) -> None:
        """A call's open that ended a value (`kv.next_call_ends_call`) ends the call too."""
        if end.tag == self.kv.call_open:
            self._arguments[self._param] = value
            self._end_call_element()
        else:
            super()._value_ended(end, value)

    def _scan_key_done(self, text: str, pos: int) -> int | None:
        """After a key: whitespace, then `<arg_value>`; a value written without it starts right
        there, but another of the format's tags there (the next key, the call's close, a stray
        `</arg_key>`) means the key has no value: the call breaks. A format without a value's open
        (`kv.value_open` empty) starts the value at once: its whitespace is data."""
        if not self.kv.value_open:
            self._state = VALUE
            return pos
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        tag = self._literal_at(text, pos, self.kv.after_key)
        if tag is None:
            return None
        if self.kv.type_tags and tag == self.kv.type_tags[0] and not self._typed:
            self._raw.append(tag)
            self._state = _TYPE
            return pos + len(tag)
        if tag and tag != self.kv.value_open:
            raise NotACall(f"{tag!r} where the key {self._param!r} wants its value")
        if tag:
            self._raw.append(tag)
        self._state = VALUE
        return pos + len(tag)

    def _scan_type(self, text: str, pos: int) -> int | None:
        """A type tag's text (K2 Horizon's `<ifm|arg_type>integer</ifm|arg_type>`), up to its close:
        it types the value where the tool's schema says nothing of the key (the schema wins)."""
        assert self.kv.type_tags is not None
        end = self._run_end(text, pos, "<")
        if end is None:
            return None
        tag = self._literal_at(text, end, self.kv.type_tags[1:])
        if tag is None:
            return None
        if not tag:
            raise NotACall(f"a {text[end : end + 12]!r} in an argument's type")
        named = text[pos:end].strip().split("[", 1)[0].strip().lower()
        if self._schema.get(self._param) is None and named in _TYPE_NAMES:
            self._value.begin({"type": _TYPE_NAMES[named]})  # nothing of the value is read yet
        self._raw.append(text[pos : end + len(tag)])
        self._typed = True
        self._state = _KEY_DONE
        return end + len(tag)


_TYPE_NAMES = {name: name for name in ("string", "integer", "number", "boolean", "array", "object", "null")}
_TYPE_NAMES["any"] = "string"  # the text as written


# -- a format of the family, as data ---------------------------------------------------------------


@dataclass(frozen=True)
class KeyValueFormat:
    """One format of the family: its `kv` tags; `think` the think pairs its stream reads as text
    (default: `kv.think`); `line` what the writer and constraints put after the name, each key, value
    and call (Hy3 writes a line break), `key_line` what they put after a key instead, if given
    (Solar Open2 writes a line after the name and each value, none after a key); `special_tokens`
    whether its tags are added tokens of its models' vocabulary; the rest is the `Format`'s own."""

    name: str
    summary: str
    kv: KeyValueTags
    think: tuple[tuple[str, str], ...] = ()
    line: str = ""
    key_line: str | None = None
    special_tokens: bool = False
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    def stream_class(self, module: str) -> type[KeyValueStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        think = self.think or (self.kv.think,)
        default: ThinkMarkers = think[0] if len(think) == 1 else think  # type: ignore[assignment]
        return format_stream(KeyValueStream, self.name, module, "the key-and-value family", default, kv=self.kv)

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        kv = self.kv
        required, auto = key_value_constraints(kv, tagged_pairs(kv, self.line, self.key_line), self.line)
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            key_value_writer(kv, self.line, self.key_line),
            markers=kv.markers,
            special_tokens=kv.markers if self.special_tokens else (),
            required_constraint=required,
            auto_constraint=auto,
            writes_name=writes_name,
            writes_value=writes_value(kv),
            needs_declared_tools=needs_declared_tools(kv),
            typed_values=True,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )
