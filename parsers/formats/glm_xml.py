"""`glm_xml`: GLM-4.5 / 4.6 / 4.7 / 5.x, Ling 3, Poolside Laguna and Spark 2.5 tool calls, keys and
values in tags, values typed by the tool's schema. The machine of the key-and-value family: another
format of it is a `key_values.KeyValueTags` (other spellings, a block, a separator after the name).

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
policy shows a call). The machine is `xml_blocks` without blocks; values are `core.xml_parameters`'.
"""

from __future__ import annotations

from typing import Any

from ..core.ids import IdFactory
from ..core.outside import ThinkMarkers
from ..core.stream import NotACall
from .key_values import (
    GLM,
    NOT_A_NAME,
    KeyValueTags,
    key_value_constraints,
    key_value_writer,
    needs_declared_tools,
    writes_name,
    writes_value,
)
from .spec import Format
from .xml_blocks import FIRST_FORMAT_STATE, VALUE, XmlBlockStream

_KEY_DONE = FIRST_FORMAT_STATE  # after a key's close: whitespace, then the value's open (or the value itself)
_TYPE = FIRST_FORMAT_STATE + 1  # in a type tag's text (formats with `type_tags`)


class GlmXmlStream(XmlBlockStream):
    """Incremental parser for one response in GLM's tool-call format (the machine is `xml_blocks`
    without blocks, or with the block a format's `kv` names; this reads NAME and KEY and the tags
    between a key and its value). A format of the family subclasses it with its `kv`."""

    format_name = "glm_xml"
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

    def _scan_key_done(self, text: str, pos: int) -> int | None:
        """After a key: whitespace, then `<arg_value>`; a value written without it starts right
        there, but another of the format's tags there (the next key, the call's close, a stray
        `</arg_key>`) means the key has no value: the call breaks."""
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


# -- the spec --------------------------------------------------------------------------------------

write = key_value_writer(GLM)
"""The calls back to back, compact, as GLM-4.7's template writes them."""

required_constraint, auto_constraint = key_value_constraints(GLM)

FORMAT = Format(
    "glm_xml",
    "<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call> (GLM-4.5 to 5.x, Ling 3, Laguna, Spark)",
    GlmXmlStream,
    write,
    markers=GLM.markers,
    special_tokens=GLM.markers,  # added tokens in GLM's vocabulary
    required=required_constraint,
    auto=auto_constraint,
    writes_name=writes_name,
    writes_value=writes_value(GLM),
    needs_declared_tools=needs_declared_tools(GLM),
    typed_values=True,
    vllm_names=("glm45", "glm47", "ling3", "poolside_v1"),
    sglang_names=("glm", "glm45", "glm47", "ling3", "poolside_v1", "spark25"),
    models="GLM-4.5 / 4.6 / 4.7 / 5.x, Ling 3, Poolside Laguna, Spark 2.5",
)
