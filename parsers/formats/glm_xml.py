"""`glm_xml`: GLM-4.5 / 4.6 / 4.7 / 5.x and Ling 3 tool calls, keys and values in tags, values typed
by the tool's schema.

Grammar, as this machine reads it::

    output   := (text | think | call)*
    think    := "<think>" text "</think>"                 # everything inside is text, never a call
    call     := "<tool_call>" NAME ws (arg ws)* "</tool_call>"
    arg      := "<arg_key>" KEY "</arg_key>" ws "<arg_value>" VALUE "</arg_value>"

GLM-4.7 / 5.x write it compact (`<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`),
GLM-4.5 / 4.6 and Ling 3 with a line break after the name and after each tag; `ws` is any whitespace,
so one parser reads both. A call stands alone (no block around calls); calls follow one another. A
call with no arguments is `<tool_call>f</tool_call>` (or with a line break before the close): `{}`.

NAME is the text up to a line break, `<arg_key>` or `</tool_call>`, stripped: not empty, at most
`TOOLCALL_PARSERS_MAX_NAME` characters, no whitespace, quote, brace or `<` / `>` inside (so Hermes's
`<tool_call>\\n{"name": ..}` is text here, never a call named `{"name":`). KEY is the text up to
`</arg_key>`, stripped; a key holding a tag (`path</arg_key>` read from a model that wrote a stray
tag) breaks the call. VALUE is raw text, no escaping, typed as `qwen_xml` and `minimax_xml` type
theirs (`core.typed_values`: a string schema keeps the text verbatim, `02134` stays a string; the
template writes non-strings as JSON). `</arg_value>` ends a value only when `<arg_key>` or
`</tool_call>` follows it (after whitespace), so a value may hold `</arg_value>` and `</tool_call>`
as text (a file about GLM's own format). A key given twice: the last wins (logged).

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
  its name or past the size bound of its arguments: the call is text up to its `</tool_call>`; the
  other calls still count.
- A call the end of the output cuts off (max_tokens) is text; the calls before it stay.
- A call inside `<think>` is text (the reasoning, not an action); with the engines' `glm45`
  reasoning parsers in front, what they hand over is read.

The call's name is known at its first `<arg_key>` (or its close, or the line break after it); a
string value streams as it is written, holding back only what could be `</arg_value>` and its
follower; other values are sent when they end; `}` at `</tool_call>` (as far as the core's streaming
policy shows a call). The machine is `xml_blocks` without blocks; values are `core.xml_parameters`'.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from ..core.xml_parameters import ValueEnd
from .grammar import Element, repeated, structural, tag, triggered
from .schema_styles import styled_arguments
from .spec import Call, ConstraintRequest, Format
from .xml_blocks import FIRST_FORMAT_STATE, VALUE, XmlBlockStream, XmlBlockTags, raw_value


@dataclass(frozen=True)
class KeyValueTags:
    """The tags of the key-and-value family: GLM's, and Hunyuan's (the same tags with a suffix in
    each, inside a block, a separator after the name in v3)."""

    call_open: str = "<tool_call>"
    call_close: str = "</tool_call>"
    key_open: str = "<arg_key>"
    key_close: str = "</arg_key>"
    value_open: str = "<arg_value>"
    value_close: str = "</arg_value>"
    block: tuple[str, str] | None = None
    """The tags around a turn's calls (Hunyuan's `<tool_calls>`); None: each call stands alone."""
    name_separator: str | None = None
    """A tag between the name and the first key (Hunyuan v3's `<tool_sep>`), read as markup."""

    @functools.cached_property
    def machine(self) -> XmlBlockTags:
        start, end = self.block or (self.call_open, self.call_close)
        return XmlBlockTags(start, end, self.call_open, self.call_close, self.key_open, call_word="call")

    @functools.cached_property
    def value_ends(self) -> tuple[ValueEnd, ...]:
        """The value's close ends it only before the next key or the call's close."""
        return (ValueEnd(self.value_close, followers=(self.key_open, self.call_close)),)

    @functools.cached_property
    def name_ends(self) -> tuple[str, ...]:
        separator = (self.name_separator,) if self.name_separator else ()
        return (self.key_open, self.call_close, self.key_close, *separator)

    @functools.cached_property
    def after_key(self) -> tuple[str, ...]:
        """After a key, the value's open; any other tag of the format there means the call is broken."""
        return (self.value_open, self.key_open, self.key_close, self.value_close, self.call_open, self.call_close)

    @functools.cached_property
    def markers(self) -> tuple[str, ...]:
        extra = [*(self.block or ()), *((self.name_separator,) if self.name_separator else ())]
        return (*extra[:1], self.call_open, self.call_close, self.key_open, self.key_close, self.value_open,
                self.value_close, *extra[1:])  # fmt: skip


GLM = KeyValueTags()
START, END = GLM.call_open, GLM.call_close
KEY_OPEN, KEY_CLOSE, VALUE_OPEN, VALUE_CLOSE = GLM.key_open, GLM.key_close, GLM.value_open, GLM.value_close

_KEY_DONE = FIRST_FORMAT_STATE  # after a key's close: whitespace, then the value's open (or the value itself)
_NOT_A_NAME = re.compile(r"""[\s"'{}<>]""")


class GlmXmlStream(XmlBlockStream):
    """Incremental parser for one response in GLM's tool-call format (the machine is `xml_blocks`
    without blocks; this reads NAME and KEY and the tag between a key and its value)."""

    format_name = "glm_xml"
    kv = GLM
    tags = GLM.machine
    blockless = True

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory, think_markers, self.kv.value_ends)
        self._readers[_KEY_DONE] = self._scan_key_done

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
        if _NOT_A_NAME.search(run):
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
                raise NotACall(
                    f"`{KEY_CLOSE}` with no `{KEY_OPEN}`: the tool and the key in {run[:40]!r} are ambiguous"
                )
            name, key = prefixes[0], run[len(prefixes[0]) :]
        if _NOT_A_NAME.search(name) or _NOT_A_NAME.search(key.strip()):
            raise NotACall(f"{run[:40]!r} is not a tool name and a key")
        return name, key.strip()

    def _scan_key(self, text: str, pos: int) -> int | None:
        """KEY up to `</arg_key>`; any other tag in it breaks the call."""
        end = self._run_end(text, pos, "<")
        if end is None:
            return None
        tag = self._literal_at(text, end, (self.kv.key_close,))
        if tag is None:
            return None
        if not tag:
            raise NotACall(f"a {text[end : end + 12]!r} in an argument's key")
        self._open_key(text[pos:end].strip())  # before the key is kept: a refusal reads it again as text
        self._raw.append(text[pos : end + len(tag)])
        return end + len(tag)

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
        self._state = _KEY_DONE

    def _scan_key_done(self, text: str, pos: int) -> int | None:
        """After a key: whitespace, then `<arg_value>`; a value written without it starts right
        there, but another of the format's tags there (the next key, the call's close, a stray
        `</arg_key>`) means the key has no value: the call breaks."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        tag = self._literal_at(text, pos, self.kv.after_key)
        if tag is None:
            return None
        if tag and tag != self.kv.value_open:
            raise NotACall(f"{tag!r} where the key {self._param!r} wants its value")
        if tag:
            self._raw.append(tag)
        self._state = VALUE
        return pos + len(tag)


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """The calls back to back, compact, as GLM-4.7's template writes them (strings verbatim, other
    values as JSON)."""
    return "".join(
        START
        + name
        + "".join(f"{KEY_OPEN}{k}{KEY_CLOSE}{VALUE_OPEN}{raw_value(v)}{VALUE_CLOSE}" for k, v in args.items())
        + END
        for name, args in calls
    )


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    """One tag per tool, its arguments in xgrammar's `glm_xml` style (`<arg_key>k</arg_key>
    <arg_value>v</arg_value>` pairs) where it renders the schema (`schema_styles`)."""
    return [tag(START + name, styled_arguments(request, name, "glm_xml"), END) for name in names]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One or more calls back to back that end the output; at most one if `single`."""
    return structural(repeated(request, _call_tags(request, request.names)))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Free text, where each `<tool_call>` opens a call that follows its tool's schema."""
    return triggered(request, [START], _call_tags(request, list(request.schemas)))


def _may_need_declared_tools(text: str) -> bool:
    """A call whose first `<arg_key>` was dropped is read only by its declared tool's name."""
    return KEY_CLOSE in text and START in text


def _writes_name(name: str) -> bool:
    return _NOT_A_NAME.search(name) is None


FORMAT = Format(
    "glm_xml",
    "<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (GLM-4.5 to 5.x, Ling 3)",
    GlmXmlStream,
    write,
    markers=GLM.markers,
    special_tokens=GLM.markers,  # added tokens in GLM's vocabulary
    required=required_constraint,
    auto=auto_constraint,
    writes_name=_writes_name,
    needs_declared_tools=_may_need_declared_tools,
    typed_values=True,
    vllm_names=("glm45", "glm47", "ling3"),
    sglang_names=("glm", "glm45", "glm47", "ling3"),
    models="GLM-4.5 / 4.6 / 4.7 / 5.x, Ling 3",
)
