"""What a wire format declares about itself, once: the `Format` spec.

Each format module ends with `FORMAT = Format(...)`. Everything else is derived from it: the
registry (`formats/__init__.py` finds the modules), the vLLM tool-parser and SGLang detector classes
and both plugins' name lists, the decoding constraints both engines apply, and every tool and test
(fuzzing, the load test, the benchmark, hostile inputs, the corpus and adapter tests), which write a
format's text with its one `write`.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..core.events import CallStart, Text
from ..core.ids import IdFactory
from ..core.limits import Limits
from ..core.logs import logs_silenced
from ..core.reasoning import CallReading, ReasoningSplit
from ..core.stream import FormatStream, shorten
from ..core.tokens import Vocabulary
from ..core.tools import resolve_refs
from .constraints import ended, held_free_text

logger = logging.getLogger("toolcall_parsers")

Call = tuple[str, dict[str, Any]]
"""A call as the writers take it: the tool's name and its arguments."""

Schemas = dict[str, dict[str, Any]]
"""Tool name -> its parameters schema (`ToolIndex.schemas`)."""


@dataclass(frozen=True)
class ConstraintRequest:
    """What a request asks of a decoding constraint, engine-neutral.

    `only` is the tool a request names (`tool_choice` of one function); `single` says at most one
    call (a named tool, or `parallel_tool_calls=false`); `vocabulary` is the served tokenizer's, where
    a format's spelling depends on its tokens (Mistral v11's `[ARGS]`), else None. `strict` names the
    tools whose arguments are pinned to their schema (`"strict": true`, or every tool under
    `--tool-strict-level parameter`); None pins every tool (`required` and named calls always are):
    the others' arguments are any object, only the call's envelope and name are constrained."""

    schemas: Schemas
    only: str | None = None
    single: bool = False
    vocabulary: Vocabulary | None = None
    strict: frozenset[str] | None = None

    def __post_init__(self) -> None:
        # Formats that write each value's grammar apart compile a parameter's schema without the
        # root's `$defs`: local `$ref`s are resolved first (a no-op for `ToolIndex` schemas).
        object.__setattr__(self, "schemas", {name: resolve_refs(s) for name, s in self.schemas.items()})

    @property
    def names(self) -> list[str]:
        """The tools a call may name."""
        return [self.only] if self.only is not None else list(self.schemas)

    def parameters(self, name: str) -> dict[str, Any]:
        """The schema `name`'s arguments are held to: its parameters where pinned (any object where
        none was declared), else any object."""
        if self.strict is not None and name not in self.strict:
            return {"type": "object"}
        return self.schemas.get(name) or {"type": "object"}

    def pins(self, name: str) -> bool:
        """Whether `name`'s arguments are held to its schema."""
        return self.strict is None or name in self.strict


Constraint = Callable[[ConstraintRequest], "dict[str, Any] | None"]
"""Builds a structural tag in xgrammar's JSON form (plain dicts); None: nothing to constrain to."""


@dataclass(frozen=True)
class CallTag:
    """SGLang's legacy per-call structural tag (used for strict `tool_choice="auto"`): a fixed prefix
    naming the tool (`{name}`), the arguments as JSON, a fixed suffix, and the trigger that opens it."""

    begin: str
    end: str
    trigger: str


Strictness = bool | frozenset[str]
"""Which tools a request's constraint pins to their schema: True every tool (`required`, a named
tool, `--tool-strict-level parameter`), a set those tools (`"strict": true` under `auto`), False none."""

Writer = Callable[[Sequence[Call]], str]
"""Calls -> the format's text, as its chat template writes them (what `parse()` reads back)."""


@dataclass(frozen=True)
class Format:
    """One wire format: how to parse it, write it, teach it and constrain decoding to it.

    - `markers`: the literals that frame a call, opener first; `special_tokens`: those of them that
      the models of this format have as single special tokens (decoding must keep them).
    - `required_constraint` / `auto_constraint`: the format's own decoding constraints for
      `tool_choice="required"` or a named tool, and for strict `auto`; None where the format has
      none (then an engine's own applies: `vllm_tag_model`, or the engine's JSON fallback).
    - `call_tag`: SGLang's per-call tag for strict `auto`, or a function of the tokenizer's
      vocabulary giving it; None where a call is not a prefix + JSON + suffix.
    - `own_ids`: the format has its own id rule (the stream's default factory makes them), so the
      engine's ids are not used.
    - `needs_declared_tools`: for formats that read some calls only when their tool is declared, a
      cheap superset test of "may this text hold such a call" (SGLang asks without the tools).
    - `pins_arguments`: its constraints hold a strict tool's arguments to the schema; False where the
      format cannot say in its grammar what a value holds (the gptme blocks: only the envelope, the
      name and the positional words are constrained).
    - `typed_values`: argument values are raw text that the tool's schema types (`core.typed_values`),
      so a request's schema shapes the parser's work.
    - `writes_name`: which tool names the format can write so that its parser reads them back (None:
      any name, e.g. a JSON string). A constraint never offers a tool whose name the format cannot
      write, nor one longer than `TOOLCALL_PARSERS_MAX_NAME`: a client that required a call would
      get text back.
    - `writes_value`: which argument values the writer writes so that the parser reads them back
      equal, given a schema naming only the top-level type (None: any JSON value); tools that write
      calls (the fuzzer) keep to them.
    - `vllm_names` / `sglang_names`: the engines' built-in parser names (`--tool-call-parser`) whose
      models this format serves, so an operator knows what it replaces; the benchmark and the
      built-ins' corpus scores measure against them.
    - `models`: the models that write this format, for people (the README's format table and
      `toolcall-parsers formats` show it).
    - `reasoning_openers`: the markers whose appearance inside an unclosed think block opens a
      call (`core.reasoning`); None: the first of `markers`. Empty where the format has no marker
      that prose would not write (a code fence, a bare word) or reasons in its own messages.
    - `think_blocks`: the format's models reason in think blocks (its `think_pairs`), so it has a
      reasoning parser of ours; False where they reason in messages of their own (Harmony's
      `analysis` channel), which the format machine reads as text with its markup.
    - `think_label`: a label the models write at the start of a think block, which is markup, not
      reasoning (Gemma 4's `<|channel>thought\n`); our reasoning parsers drop it.
    - `other_openers`: spellings the parser also reads as the start of a call, besides the triggers
      of its strict `auto` constraint: `(spelling, trigger)` where the models write it for that
      trigger (strict `auto` offers the trigger's calls in that spelling too), `(spelling, None)`
      where they do not aim to (a byte-level or spaced variant; strict `auto` keeps it out of free
      text). Every spelling is held, so a strict request never reads a call its grammar left free
      (`constraints.held_free_text`, checked by walking the compiled grammar in the tests).
    - `spec`: the family spec value the format was made from, where it is one (a `JsonBlockFormat`,
      a `QwenFunctions`, ...): what `derive.to_response_template` writes out.
    """

    name: str
    summary: str
    stream_class: type[FormatStream]
    write: Writer
    markers: tuple[str, ...] = ()
    special_tokens: tuple[str, ...] = ()
    required_constraint: Constraint | None = None
    auto_constraint: Constraint | None = None
    call_tag: CallTag | Callable[[Vocabulary | None], CallTag] | None = None
    vllm_tag_model: str | None = None
    own_ids: bool = False
    needs_declared_tools: Callable[[str], bool] | None = None
    writes_name: Callable[[str], bool] | None = None
    writes_value: Callable[[Any], bool] | None = None
    typed_values: bool = False
    pins_arguments: bool = True
    vllm_names: tuple[str, ...] = ()
    sglang_names: tuple[str, ...] = ()
    models: str = ""
    reasoning_openers: tuple[str, ...] | None = None
    think_blocks: bool = True
    think_label: str = ""
    other_openers: tuple[tuple[str, str | None], ...] = ()
    spec: Any = None

    def stream(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        streaming: Any = None,
        strict: Strictness | set[str] = False,
        **options: Any,
    ) -> FormatStream:
        """A fresh incremental parser for one response. `streaming` overrides the server's streaming
        policy (`complete`, `eager` or a number of characters; ValueError otherwise); `strict` says
        which tools' arguments the request's constraint pinned (`strictness`): their calls are
        checked against the schema before they are shown (`FormatStream.pin_arguments`), where
        the format's constraints pin arguments at all; `options` are the format's own (markers)."""
        stream = self.stream_class(tools, id_factory, **options)
        if streaming is not None:
            stream.set_streaming(streaming)
        self.check_strict(stream, strict)
        return stream

    def check_strict(self, stream: FormatStream, strict: Strictness | set[str]) -> None:
        """Have `stream` check the calls to the tools `strict` names against their schemas, where
        this format's constraints pin arguments (elsewhere strict constrains only the envelope)."""
        if isinstance(strict, str) or not isinstance(strict, (bool, set, frozenset, list, tuple)):
            raise TypeError(f"{self.name}: strict takes True, False or a set of tool names, not {strict!r}")
        if strict is not False and self.pins_arguments:
            stream.pin_arguments(None if strict is True else frozenset(strict), self._refused_text)

    def _refused_text(self, name: str, arguments: dict[str, Any]) -> str:
        """A strict call its schema refused, as text: as this format writes it (as JSON if the
        writer cannot write it)."""
        try:
            return self.write([(name, arguments)])
        except Exception:
            return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)

    @property
    def template_path(self) -> Path:
        """The chat template shipped for this format."""
        return Path(str(resources.files("toolcall_parsers.chat_templates") / f"{self.name}.jinja"))

    @property
    def think_markers(self) -> tuple[str, str]:
        """The reasoning markers the format's stream reads by default (its first pair; `<think>` where
        it reads none), for tools and tests that write reasoning around the format's markup."""
        return self.think_pairs[0]

    @property
    def think_pairs(self) -> tuple[tuple[str, str], ...]:
        """Every (open, close) pair of reasoning markers the format's stream reads by default;
        `<think>` where it reads none. Our reasoning parser of the format splits on them."""
        return self.text_think_pairs or (("<think>", "</think>"),)

    @property
    def text_think_pairs(self) -> tuple[tuple[str, str], ...]:
        """The think pairs the format's stream reads as text wherever they stand (its `think_markers`
        default; none where it reads no think blocks)."""
        default = inspect.signature(self.stream_class).parameters.get("think_markers")
        markers = default.default if default is not None else None
        if not markers:
            return ()
        return (markers,) if isinstance(markers[0], str) else tuple(markers)

    @property
    def call_openers(self) -> tuple[str, ...]:
        """The markers that open a call inside an unclosed think block (`core.reasoning`): the
        format's first marker, unless `reasoning_openers` says otherwise."""
        return self.markers[:1] if self.reasoning_openers is None else self.reasoning_openers

    def reasoning_split(self, start: str = "before") -> ReasoningSplit:
        """A fresh split of one output into reasoning and answer, as our reasoning parsers of this
        format make it (`core.reasoning`): its think pairs and label, its call openers, the call
        bound, and its own machine (eager) to tell a closer inside a held call's value."""
        return ReasoningSplit(
            self.think_pairs,
            self.call_openers,
            start=start,
            label=self.think_label,
            bound=Limits.from_env().max_call_chars,
            probe=lambda: self.stream(streaming="eager"),
        )

    def call_reading(self, tools: Any = None) -> CallReading:
        """How our reasoning parsers read text held after a call opener in an unclosed think block
        (`ReasoningSplit.close`): where the first call the format reads in it starts and how many
        it reads (complete calls only), by the format's own machine with the request's tools. Its
        log lines are dropped: prose that names a marker is reasoning, not a broken call."""

        def read(text: str) -> tuple[int, int] | None:
            with logs_silenced():
                stream = self.stream(tools, streaming="complete")
                events = stream.feed(text) + stream.close()
            starts = [i for i, event in enumerate(events) if isinstance(event, CallStart)]
            if not starts:
                return None
            before = "".join(event.text for event in events[: starts[0]] if isinstance(event, Text))
            return (len(before) if text.startswith(before) else 0), len(starts)

        return read

    @property
    def class_stem(self) -> str:
        """The name's words capitalised (`hermes_json` -> `HermesJson`), for generated class names."""
        return "".join(word.capitalize() for word in self.name.split("_"))

    def constraint(self, request: ConstraintRequest, *, auto: bool = False) -> dict[str, Any] | None:
        """The format's own constraint for the request (strict `auto` if `auto`), or None: also when
        none of the tools it may call has a name the format can write (logged once)."""
        build = self.auto_constraint if auto else self.required_constraint
        if build is None:
            return None
        writable = self.writable(request)
        if writable is None:
            return None
        constraint = build(writable)
        if constraint is None:
            return None
        return held_free_text(constraint, self.text_think_pairs, self.other_openers) if auto else ended(constraint)

    def writable(self, request: ConstraintRequest) -> ConstraintRequest | None:
        """`request` without the tools whose names this format cannot write; None if that leaves no
        tool to call."""
        longest = Limits.from_env().max_name
        rule = self.writes_name

        def writable(name: str) -> bool:
            return 0 < len(name) <= longest and (rule is None or rule(name))

        refused = [name for name in request.names if not writable(name)]
        if not refused:
            return request
        schemas = {name: schema for name, schema in request.schemas.items() if writable(name)}
        left = [name for name in request.names if name in schemas]
        logger.warning(
            "%s: the format cannot write the tool name%s %s; %s",
            self.name,
            "s" if len(refused) > 1 else "",
            ", ".join(shorten(name) for name in refused[:3]) + (f" and {len(refused) - 3} more" * (len(refused) > 3)),
            "decoding is constrained to the other tools" if left else "decoding is not constrained",
        )
        return replace(request, schemas=schemas) if left else None

    def strict_call_tag(self, vocabulary: Vocabulary | None) -> CallTag | None:
        """SGLang's per-call tag for this tokenizer, or None."""
        tag = self.call_tag
        return tag(vocabulary) if callable(tag) else tag
