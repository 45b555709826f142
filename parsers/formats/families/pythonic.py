"""The family of Python call lists: `[f(a=1, b="x"), g()]`, keyword arguments as Python literals,
read by our own lexer (`core.python_calls`, `core.python_literals`), never evaluated. `llama_pythonic`'s
docstring states the grammar and every decided case. A format of the family is data: one
`PythonicFormat` (the tags a list follows, whether a bare `[` opens one, calls one per line, how
values are spelled) gives its stream class (`PythonicStream` with those class attributes), writer,
`required` and strict `auto` constraints and `Format`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ...core.ids import IdFactory
from ...core.line_start_stream import LineStartStream
from ...core.outside import OutsideCalls
from ...core.python_calls import PythonCallReader
from ...core.python_literals import Spelling, is_name
from ...core.python_schema import PythonSchemaGrammar, ebnf_text, python_literal
from ..constraints import one_call_in_text, structural, tag, triggered
from ..spec import Call, Constraint, ConstraintRequest, Format, Writer
from . import format_stream

PYTHON_TAG, PYTHON_START, PYTHON_END = "<|python_tag|>", "<|python_start|>", "<|python_end|>"

_TEXT, _TAG, _HEAD, _LIST, _AFTER_LIST = "text", "tag", "head", "list", "after_list"

_NAME_RUN = re.compile(r"[\w.]*")
_BRACKETS = re.compile(r"\[+")


class PythonicStream(LineStartStream[PythonCallReader]):
    """Incremental parser for one response of a format of the family (`llama_pythonic`'s grammar;
    `PythonicFormat.stream_class` makes each format's subclass with its class attributes)."""

    format_name = "?"
    bare_lists: ClassVar[bool] = True
    """A `[` outside the tags may open a list: any name at a line start, a declared tool's mid-line."""
    tags: ClassVar[dict[str, str]] = {PYTHON_TAG: "", PYTHON_START: PYTHON_END}
    """The tags that open a list, each with the tag that may close it ("": none)."""
    one_per_line: ClassVar[bool] = False
    """After a tag, calls one per line up to the closing tag (Olmo 3's), not a bracketed list."""

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        openers = ["["] * self.bare_lists + list(self.tags)
        self._outside = OutsideCalls(self._text, openers, think_markers)
        self._state = _TEXT
        self._marker = ""  # what opened the list: "[" or a python tag
        self._any_name = False  # the list may call any name (at a line start, after a tag): not only declared tools
        self._readers = {
            _TEXT: self._scan_text,
            _TAG: self._scan_tag,
            _HEAD: self._scan_head,
            _LIST: self._scan_list,
            _AFTER_LIST: self._scan_after_list,
        }

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is None:
            return at
        self._marker = m.group()
        if self._marker == "[":
            self._any_name = self._lines.at_line_start
            self._raw = [self._lines.take(), "["]
            self._state = _HEAD
        else:
            self._lines.release()
            self._raw = [self._marker]
            self._any_name = True
            self._state = _HEAD if self.one_per_line else _TAG
        return at

    def _scan_tag(self, text: str, pos: int) -> int | None:
        """After a tag: whitespace, then the list's `[`."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] != "[":
            return self._not_a_list(pos)
        self._raw.append("[")
        self._state = _HEAD
        return pos + 1

    def _scan_head(self, text: str, pos: int) -> int | None:
        """After a `[`: commit to a call list only on `NAME(` (a declared tool's name, mid-line)."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        if text[pos] == "[" and self._raw[-1] == "[":  # `[[[`: only the last may start a list, mid-line
            run = _BRACKETS.match(text, pos).end()  # type: ignore[union-attr]
            self._text("".join(self._raw) + text[pos : run - 1])
            self._raw = ["["]
            self._any_name = False
            return run
        end = _NAME_RUN.match(text, pos, pos + self.limits.max_name + 1).end()  # type: ignore[union-attr]
        name = text[pos:end]
        if end == len(text) and len(name) <= self.limits.max_name:
            return None  # the name may go on
        if (
            len(name) > self.limits.max_name
            or text[end] != "("
            or not is_name(name)
            or not (self._any_name or name in self.tools.schemas)
        ):
            return self._not_a_list(pos)
        read = PythonCallReader.lines_of_calls if self.one_per_line else PythonCallReader.list_of_calls
        self._call_reader = read(self, "".join(self._raw))
        self._raw = []
        self._state = _LIST
        return pos

    def _not_a_list(self, pos: int) -> int:
        """What was read since the marker is text; scanning goes on at `pos`."""
        self._text("".join(self._raw))
        self._raw = []
        self._state = _TEXT
        return pos

    def _scan_list(self, text: str, pos: int) -> int | None:
        assert self._call_reader is not None
        at = self._call_reader.read(text, pos)
        if self._call_reader.done:
            closed = not self._call_reader.broken and self._call_reader.calls > 0
            self._state = _AFTER_LIST if closed and self.tags.get(self._marker) else _TEXT
            self._call_reader = None
        return at

    def _scan_after_list(self, text: str, pos: int) -> int | None:
        """After a list opened by a tag that has a closing tag: whitespace, then that optional tag."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        closer = self.tags[self._marker]
        end = self._literal_at(text, pos, (closer,))
        if end is None:
            return None
        if not end:
            return self._not_a_list(pos)
        self._raw = []
        self._state = _TEXT
        return pos + len(closer)


# -- the spec --------------------------------------------------------------------------------------


def call_writer(
    opener: str = "", closer: str = "", *, one_per_line: bool = False, literal: Callable[[Any], str] = python_literal
) -> Writer:
    """The family's writer: the calls between `opener` and `closer`, as one list or one per line,
    each keyword argument's value spelled by `literal`."""

    def write(calls: Sequence[Call]) -> str:
        written = [f"{name}({', '.join(f'{k}={literal(v)}' for k, v in args.items())})" for name, args in calls]
        return opener + ("\n".join(written) if one_per_line else "[" + ", ".join(written) + "]") + closer

    return write


_NAME_CHARS = "A-Za-z0-9_.\\u0080-\\U0010FFFF"
_NOT_A_LIST = f"""
other ::= ws "]" | ws namerun ws "]" | ws decisive rest | ws namerun after rest
namerun ::= [{_NAME_CHARS}]+
decisive ::= [^{_NAME_CHARS} \\t\\n\\[\\]<] | "<" [^|\\n\\[\\]]
after ::= [^{_NAME_CHARS}(\\n\\[\\]<] | "<" [^|\\n\\[\\]]
rest ::= ( [^\\]\\n\\[<] | "<" [^|\\]\\n\\[] | "[" other )* "<"? ( "]" | "\\n" )
"""
"""After a `[`: what the parser keeps as text (the first item is no `NAME(`), to the `]` or the line's
end; a `[` inside is held the same way (mid-line the parser reads `[f(` as a call too), and no `<|`
(a python tag) comes before the list ends."""


def _calls_grammar(
    request: ConstraintRequest, root: str, names: list[str], *, one_per_line: bool = False, json_literals: bool = False
) -> str:
    """`root` over `calls` (the list's calls and its `]`; or the calls one per line), each call a
    declared tool's, its keyword arguments held to the schema where pinned (`core/python_schema.py`)."""
    grammar = PythonSchemaGrammar(json_literals=json_literals)
    calls = [f'{ebnf_text(name)} "(" ws {grammar.kwargs(request.parameters(name))} ws ")"' for name in names]
    between, close = ('[ \\t]* "\\n" ws', " ws") if one_per_line else ("sep", ' ( ws "," )? ws "]"')
    more = "" if request.single else f" ( {between} call )*"
    rules = [f"calls ::= ws call{more}{close}", "call ::= " + " | ".join(calls)]
    return grammar.text(root) + "\n" + "\n".join(rules) + _NOT_A_LIST


def _grammar(request: ConstraintRequest, root: str, names: list[str] | None = None, **shape: bool) -> dict[str, Any]:
    return {"type": "grammar", "grammar": _calls_grammar(request, root, names or list(request.schemas), **shape)}


def bare_required(request: ConstraintRequest) -> dict[str, Any]:
    """`required` where lists stand without tags (`bare_lists`): one list of calls (one call if
    `single`), the output's whole."""
    return structural(_grammar(request, '"[" calls', request.names))


def bare_auto(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto` where lists stand without tags (`bare_lists`, Llama's, with its python tags). The
    parser reads a list at any `[` whose first item is `NAME(` (any name at a line start, a declared
    one mid-line) and after a python tag, so every `[` is held here: to calls of declared tools, or
    to text the parser keeps as text; after a tag, to calls. With `single`, the one call may come
    anywhere among such text."""
    tag_lists = {PYTHON_TAG: '"[" calls', PYTHON_START: f'"[" calls ( ws {ebnf_text(PYTHON_END)} )?'}
    if not request.single:
        tags = [tag("[", _grammar(request, "calls | other"), "")]
        tags += [tag(t, _grammar(request, f"ws {r}"), "") for t, r in tag_lists.items()]
        return triggered(request, ["[", *tag_lists], tags)
    one = _grammar(request, '"[" calls | ' + " | ".join(f"{ebnf_text(t)} ws {r}" for t, r in tag_lists.items()))
    return one_call_in_text("[", _grammar(request, "other"), list(tag_lists), one)


def tagged_constraints(
    opener: str, closer: str, *, one_per_line: bool = False, json_literals: bool = False
) -> tuple[Constraint, Constraint]:
    """`required` (the tag, the calls, one if `single`, and the closing tag: the whole output) and
    strict `auto` (free text; at `opener`, calls of declared tools up to `closer`) for a format whose
    calls sit only between its tags, in a `[..]` list or one per line."""
    calls = "calls" if one_per_line else 'ws "[" calls'
    shape = {"one_per_line": one_per_line, "json_literals": json_literals}

    def required(request: ConstraintRequest) -> dict[str, Any]:
        root = f"{ebnf_text(opener)} {calls} {ebnf_text(closer)}"
        return structural(_grammar(request, root, request.names, **shape))

    def auto(request: ConstraintRequest) -> dict[str, Any]:
        return triggered(request, [opener], [tag(opener, _grammar(request, calls, **shape), closer)])

    return required, auto


def writes_name(name: str) -> bool:
    """A name the parser reads back: a Python name, or names joined by dots."""
    return is_name(name)


def may_call(text: str) -> bool:
    """Mid-line (after prose), a bare list calls only declared tools: a superset of `[NAME(`."""
    return _LIST_HEAD.search(text) is not None


_LIST_HEAD = re.compile(r"\[\s*[^\s\[\]()]+\(")


# -- a format of the family, as data ---------------------------------------------------------------


@dataclass(frozen=True)
class PythonicFormat:
    """One format of the family: `tags` the (open, close) pairs a list may follow (close "" where
    none closes it; the first pair is what the writer and constraints write where lists need a
    tag), `bare_lists` whether a `[` outside them opens a list too (Llama's: any name at a line
    start, a declared tool's mid-line), `one_per_line` calls one per line between the tags (Olmo
    3's), `json_literals` values written as JSON (Olmo 3's template's `tojson`), `spelling` what its
    models write that Python refuses (`core.python_literals.Spelling`, LFM2's), `special_tokens`
    whether the tags are added tokens of its models' vocabulary, `think` the think pair read as
    text; the rest is the `Format`'s own."""

    name: str
    summary: str
    tags: tuple[tuple[str, str], ...]
    bare_lists: bool = False
    one_per_line: bool = False
    json_literals: bool = False
    spelling: Spelling | None = None
    special_tokens: bool = True
    think: tuple[str, str] = ("<think>", "</think>")
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""

    def stream_class(self, module: str) -> type[PythonicStream]:
        """The format's stream class, declared in `module` (where its docs are read)."""
        spelling = {"python_spelling": self.spelling} if self.spelling else {}
        return format_stream(
            PythonicStream,
            self.name,
            module,
            "Python call lists",
            self.think,
            bare_lists=self.bare_lists,
            tags=dict(self.tags),
            one_per_line=self.one_per_line,
            **spelling,
        )

    def format(self, module: str) -> Format:
        """The format: its stream (declared in `module`), writer, constraints and facts, all from
        this value."""
        markers = tuple(tag for pair in self.tags for tag in pair if tag)
        if self.bare_lists:
            write, (required, auto) = call_writer(), (bare_required, bare_auto)
        else:
            opener, closer = self.tags[0]
            literal = _json_literal if self.json_literals else python_literal
            write = call_writer(opener, closer, one_per_line=self.one_per_line, literal=literal)
            required, auto = tagged_constraints(
                opener, closer, one_per_line=self.one_per_line, json_literals=self.json_literals
            )
        return Format(
            self.name,
            self.summary,
            self.stream_class(module),
            write,
            markers=markers,
            special_tokens=markers if self.special_tokens else (),
            needs_declared_tools=may_call if self.bare_lists else None,
            required_constraint=required,
            auto_constraint=auto,
            writes_name=writes_name,
            vllm_names=self.vllm_names,
            sglang_names=self.sglang_names,
            models=self.models,
            spec=self,
        )


def _json_literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
