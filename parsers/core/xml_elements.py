"""Reading one argument written as nested elements named by their keys, typed by the tool's schema.

MiniMax-M3 writes each argument as an element named by its key, every tag behind a namespace token
NS: `NS<city>Paris NS</city>`; an object's members, and a list's items (`<item>`), are child
elements, to any depth. The grammar this reads, from an element's open tag on::

    element  := NS "<" KEY ">" content NS "</" KEY ">"
    content  := TEXT | ws (element ws)*
    KEY      := 1 to TOOLCALL_PARSERS_MAX_NAME characters, neither "<" nor ">", not starting with "/"

The value has no escaping, so which NS is markup is decided by what follows it:

- In an element whose schema makes it a string (it admits a string and neither an object nor an
  array), nothing opens a child: the text up to its close is the value, markup lookalikes included.
  Elsewhere `NS<KEY>` opens a child element.
- `NS</KEY>` of the element being read closes it only when NS follows it (after whitespace: the
  next element or the parent's close); otherwise it is part of the value. A close tag of another
  key, and an NS followed by anything else, are value text.
- The tags that end the enclosing call (`stops`: the invoke's close, the block's end) inside an
  element mean the model dropped a close: the call breaks there (NotACall at the tag).
- Text beside child elements (not whitespace) breaks the call: it is neither an object nor text.
- Elements nested deeper than TOOLCALL_PARSERS_MAX_DEPTH break the call.

Typing: a leaf's text is typed as `core.typed_values` types a raw value (an empty element under an
object or array schema is `{}` / `[]`). An element with children is an array where its schema says
array (children typed by `items` whatever their names), an object where it says object (children
typed by `properties`, then `additionalProperties`; a key given twice collects its values in a
list, as both engines read it); with no schema saying either, an array when every child is an
`item`, else an object.

Streaming: a top-level string value streams as it is written (JSON-escaped), holding back only what
may be a tag; any other value is sent once its element closes. Every step is a `str.find` for NS
and a bounded look at the tag after it; what is held back is at most one tag (a name's length); the
open elements are a stack of at most MAX_DEPTH frames, and each value is built once, so cost is
linear in the text at any depth. A size bound of the call crossed inside a value is acted on where
the value ends (a place the text fixes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from .json_lexer import json_text
from .limits import Limits
from .markers import literal_at
from .stream import ANY_SPACE, DeferredBound, NotACall
from .typed_values import SchemaFacts, ValueWriter, decoded_string, type_value

_ANGLE = re.compile("[<>]")
_CONTAINERS = frozenset({"object", "array"})


def open_tag_at(text: str, pos: int, ns: str, longest: int) -> tuple[str, int] | str | None:
    """The element open tag `NS<KEY>` at `pos`: (KEY, the position after the tag); None while the
    text may still grow into one (held back: at most a tag long); "" when it is not one."""
    head = literal_at(text, pos, (ns + "<",))
    if not head:
        return head
    start = pos + len(head)
    m = _ANGLE.search(text, start, start + longest + 1)
    if m is None:
        return "" if len(text) > start + longest else None
    name = text[start : m.start()]
    if m.group() == "<" or not name or name[0] == "/":
        return ""
    return name, m.end()


class _Frame:
    """One open element: its key as written, its schema, and what it holds so far."""

    __slots__ = ("children", "has_text", "key", "literal", "parts", "schema", "writer")

    def __init__(self, key: str, schema: Any, literal: bool, writer: ValueWriter | None) -> None:
        self.key = key
        self.schema = schema
        self.literal = literal  # a string value: no child elements, markup lookalikes are text
        self.writer = writer  # the streamed top-level string value
        self.parts: list[str] = []
        self.children: list[tuple[str, Any]] = []
        self.has_text = False


class ElementReader:
    """Reads one top-level element after another (`begin`, then `read` until it reports the end).

    `send(fragment)` passes a piece of the arguments JSON on (it may raise NotACall past the size
    bound); `keep(text)` records text read as part of the call, which comes back as text if the call
    breaks."""

    def __init__(
        self,
        ns: str,
        stops: Sequence[str],
        send: Callable[[str], None],
        keep: Callable[[str], None],
        limits: Limits,
    ) -> None:
        self._ns = ns
        self._stops = tuple(stops)
        self._send = send
        self._keep = keep
        self._limits = limits
        self._facts = SchemaFacts()
        self._stack: list[_Frame] = []
        self._closing: list[str] | None = None  # a close tag and whitespace, waiting for NS
        self._bound = DeferredBound(send)  # the arguments' size bound, acted on where the element ends
        self._value: Any = None  # the top-level element's value, once it closed

    def begin(self, key: str, schema: Any) -> None:
        """A new top-level element `key`, typed by `schema` (None: no schema)."""
        literal = self._literal(schema)
        writer = ValueWriter(schema, self._limits) if literal else None
        self._stack = [_Frame(key, schema, literal, writer)]
        self._closing = None
        self._bound.reset()

    def pending(self) -> str:
        """Text read but not kept yet: a close tag (and whitespace) still being judged."""
        return "".join(self._closing or ())

    def read(self, text: str, pos: int) -> tuple[int | None, bool, Any]:
        """Read from `pos`: (where reading goes on, or None to hold the rest; whether the top-level
        element closed; its value then). Raises NotACall (with where reading goes on)."""
        start, end, ns = pos, len(text), self._ns
        while pos < end:
            if self._closing is not None:
                ws = ANY_SPACE.match(text, pos).end()  # type: ignore[union-attr]
                if ws > pos:
                    self._closing.append(text[pos:ws])
                    pos = ws
                    continue
                follower = literal_at(text, pos, (ns,))
                if follower is None:
                    break
                if follower:
                    if self._pop(pos):
                        return pos, True, self._value
                    continue
                data, self._closing = "".join(self._closing), None
                self._data(data, pos)
                continue
            i = text.find(ns, pos)
            if i < 0:
                cut = end - _partial(text, max(pos, end - len(ns) + 1), ns)
                self._data(text[pos:cut], cut)
                pos = cut
                break
            self._data(text[pos:i], i)
            pos = i
            at = self._tag(text, i)
            if at is None:
                break
            pos = at
        return (pos if pos > start else None), False, None

    # -- tags ------------------------------------------------------------------------------------

    def _tag(self, text: str, i: int) -> int | None:
        """At an NS: read the tag it begins, or the NS as value text. None: hold the rest back."""
        ns, frame = self._ns, self._stack[-1]
        after = i + len(ns)
        if after == len(text):
            return None
        if text[after] != "<":
            self._data(ns, after)
            return after
        close = literal_at(text, i, (f"{ns}</{frame.key}>",))  # first: an element may be named `invoke`
        if close:
            self._closing = [close]
            return i + len(close)
        stop = literal_at(text, i, self._stops)
        if stop:
            raise NotACall(f"{stop!r} before the element {frame.key!r} closed", i)
        if stop is None or close is None:
            return None
        if frame.literal:
            self._data(ns, after)
            return after
        tag = open_tag_at(text, i, ns, self._limits.max_name)
        if tag is None:
            return None
        if not tag:
            self._data(ns, after)
            return after
        if frame.has_text:
            raise NotACall(f"text beside child elements in {frame.key!r}", i)
        if len(self._stack) >= self._limits.max_depth:
            raise NotACall(f"elements nested deeper than {self._limits.max_depth} (TOOLCALL_PARSERS_MAX_DEPTH)", i)
        name, at = tag
        self._keep(text[i:at])
        schema = self._child_schema(frame.schema, name)
        self._stack.append(_Frame(name, schema, self._literal(schema), None))
        return at

    def _data(self, text: str, resume: int) -> None:
        """Value text of the innermost element (whitespace between children is markup)."""
        if not text:
            return
        self._keep(text)
        frame = self._stack[-1]
        if frame.writer is not None:
            fragment = frame.writer.feed(text)
            self._bound.send(fragment)
            return
        if not frame.literal and not frame.has_text and not text.isspace():
            if frame.children:
                raise NotACall(f"text beside child elements in {frame.key!r}", resume)
            frame.has_text = True
        frame.parts.append(text)

    def _pop(self, resume: int) -> bool:
        """The innermost element closed (its close and the whitespace after it are markup): give its
        value to its parent; True when it was the top-level one (its value in `_value`)."""
        self._keep("".join(self._closing or ()))
        self._closing = None
        frame = self._stack.pop()
        if self._stack:
            self._stack[-1].children.append((decoded_string(frame.key), self._value_of(frame)))
            return False
        try:
            self._bound.check()
            if frame.writer is not None:
                fragment, self._value = frame.writer.finish()
            else:
                value = self._value_of(frame)
                fragment = json_text(value)
                self._value = json.loads(fragment) if "\\ud" in fragment else value
            self._send(fragment)
        except NotACall as err:
            raise NotACall(str(err), resume) from None
        return True

    # -- typing ----------------------------------------------------------------------------------

    def _literal(self, schema: Any) -> bool:
        types = self._facts.types(schema)
        return "string" in types and not types & _CONTAINERS

    def _is_array(self, schema: Any, keys: Sequence[str]) -> bool:
        types = self._facts.types(schema)
        if "array" in types and "object" not in types:
            return True
        if "object" in types and "array" not in types:
            return False
        return all(key == "item" for key in keys)

    def _child_schema(self, schema: Any, key: str) -> Any:
        if schema is None:
            return None
        if self._is_array(schema, [key]):
            return self._facts.items_schema(schema)
        found = self._facts.property_schema(schema, decoded_string(key))
        extra = schema.get("additionalProperties") if isinstance(schema, dict) else None
        return found if found is not None or not isinstance(extra, dict) else extra

    def _value_of(self, frame: _Frame) -> Any:
        if frame.children:
            if self._is_array(frame.schema, [key for key, _ in frame.children]):
                return [value for _, value in frame.children]
            members: dict[str, Any] = {}
            repeated: set[str] = set()
            for key, value in frame.children:
                if key in repeated:
                    members[key].append(value)
                elif key in members:
                    members[key] = [members[key], value]
                    repeated.add(key)
                else:
                    members[key] = value
            return members
        text = "".join(frame.parts)
        types = self._facts.types(frame.schema)
        if not text.strip() and types & _CONTAINERS and "string" not in types:
            return [] if "array" in types else {}
        return type_value(text, frame.schema, self._limits, self._facts)


def _partial(text: str, start: int, marker: str) -> int:
    """Length of the longest suffix of `text[start:]` that is a proper prefix of `marker`."""
    first = marker[0]
    at = text.find(first, start)
    while at >= 0:
        if marker.startswith(text[at:]):
            return len(text) - at
        at = text.find(first, at + 1)
    return 0
