"""The SGLang adapter: one `BaseFormatDetector` subclass that runs any of our format machines.

A thin translation, shaped like the vLLM adapter: SGLang gives text, the format machine gives
events, the one fold (`core.fold`) keeps the call records, and this class spells the folded deltas
as `StreamingParseResult`s. Everything format-specific comes from the format's spec
(`formats/spec.py`): `detectors.py` makes one subclass per format from it. Facts it relies on
(SGLang 0.5.23):

- `FunctionCallParser` builds a detector per request and per choice (passing `tokenizer=` because
  `__init__` names it), and never hands it the request: only the text and the request's tools.
  So a fresh format machine is made on the first increment, with those tools, and a per-request
  streaming policy (vLLM's `vllm_xargs`) has no way in; the server-wide
  `TOOLCALL_PARSERS_STREAMING` applies.
- Streaming: `parse_streaming_increment` per delta, then `finish()` once on the terminal delta
  (`parse_stream_end`). Every complete event of an increment is returned; a call's first item
  carries its name (SGLang mints an id for every item with a name, so the name goes out exactly
  once), later items `name=None` and argument fragments. `tool_index` is the call's ordinal.
- Finished responses: SGLang returns the text untouched unless `has_tool_call` says otherwise, so
  `has_tool_call` answers "does our reading of this text differ from the text itself" (a call,
  trimmed whitespace, a broken block): streamed and finished content then agree exactly.
- At the end of a stream the serving layer sends `json.dumps(prev_tool_call_arr[-1]["arguments"])`
  past `streamed_args_for_tool[-1]`. Both hold the same string (the arguments sent, once the call
  ends; "" before), so that adds nothing. `incomplete_tool_call_indices` names calls shown but not
  finished (a call streamed past the policy's bound that then broke), so the serving layer keeps
  `finish_reason` "stop" for them, as the finished response (which has no such call) does.
- Requests without tools, or with `tool_choice="none"`, never reach a detector (the serving layer
  and `FunctionCallParser` gate them); the detector passes text through itself too when `tools` is
  empty, so a direct caller gets the same.
- Undeclared tools: SGLang's own detectors drop them unless `SGLANG_FORWARD_UNKNOWN_TOOLS` is true.
  Ours keep them and log (or make them text, `TOOLCALL_PARSERS_UNDECLARED_TOOLS=text`); when the
  operator set `SGLANG_FORWARD_UNKNOWN_TOOLS`, it decides: true keeps, false makes them text
  (nothing is dropped silently).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, ClassVar

from sglang.srt.entrypoints.openai.protocol import Tool, ToolChoice
from sglang.srt.environ import ToolStrictLevel, envs
from sglang.srt.function_call.base_format_detector import BaseFormatDetector
from sglang.srt.function_call.core_types import StreamingParseResult, StructureInfo

from .. import metrics
from ..core.events import ParseResult, build_result
from ..core.fold import CallRecords, Folded, finished_records
from ..core.stream import FormatStream
from ..core.tally import Tally
from ..core.tokens import vocabulary
from ..core.tools import ToolIndex
from ..formats import ConstraintRequest, Format, get_format

logger = logging.getLogger("toolcall_parsers")

try:
    from xgrammar import StructuralTag
except ImportError:  # SGLang then has no structural-tag backend either
    StructuralTag = None  # type: ignore[assignment,misc]


def _sglang_mints_ids(name: str, index: int) -> str:
    """SGLang gives every call its own id (`_process_tool_call_id`); one made here would be dropped."""
    return ""


def _item(index: int, name: str | None, parameters: str) -> dict[str, Any]:
    """A `ToolCallItem` as a dict: pydantic validates a result's items in one pass when the result
    is built, which costs less than building each item (or `model_construct`, slower still)."""
    return {"tool_index": index, "name": name, "parameters": parameters}


def _result(text: str = "", calls: list[dict[str, Any]] | None = None) -> StreamingParseResult:
    return StreamingParseResult(normal_text=text, calls=calls) if calls else StreamingParseResult(normal_text=text)


def _named_tool(tool_choice: Any) -> str | None:
    """The tool a request names in `tool_choice` (SGLang's `ToolChoice`, or its dict), else None."""
    if isinstance(tool_choice, ToolChoice):
        return tool_choice.function.name
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        return (function or {}).get("name") if isinstance(function, dict) else tool_choice.get("name")
    return None


class FormatDetector(BaseFormatDetector):
    """Runs the format named by `format_name` (a subclass per format sets only that); what SGLang
    may constrain decoding to comes from the format's spec."""

    format_name: ClassVar[str]

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__()
        self.tokenizer = tokenizer
        self._format: Format = self._served_format(tokenizer)
        self._stream: FormatStream | None = None
        self._passthrough = False
        self._records = CallRecords(self)
        self._checked: tuple[str, ParseResult, Tally] | None = None  # has_tool_call's reading of a text
        self._counted: object = None  # the text (or stream) whose response is in the metrics
        self.incomplete_tool_call_indices: set[int] = set()
        self._forced = False  # the request's tool_choice is "required" or names a tool

    def _served_format(self, tokenizer: Any) -> Format:
        """The format this parser runs: the one named by `format_name` (a parser of a model's own
        response template derives it from the tokenizer)."""
        return get_format(self.format_name)

    def get_required_tool_parser(self, tool_choice: Any) -> None:
        """SGLang's `FunctionCallParser` hands the request's `tool_choice` here (the one way it
        reaches a detector): a forced choice pins every tool's arguments. Returns None: this
        detector reads forced calls itself."""
        self._forced = tool_choice == "required" or _named_tool(tool_choice) is not None
        return None

    def _pinned(self, tools: list[Tool] | None) -> bool | frozenset[str]:
        """The tools whose arguments the request's constraint pinned, as SGLang applies it: every
        tool for a forced choice or under `SGLANG_TOOL_STRICT_LEVEL` parameter, else those marked
        `strict: true`."""
        if self._forced or envs.SGLANG_TOOL_STRICT_LEVEL.get() >= ToolStrictLevel.PARAMETER:
            return True
        return frozenset(t.function.name for t in tools or () if getattr(t.function, "strict", None) is True) or False

    def _new_stream(self, tools: list[Tool] | None, *, checked: bool = True) -> FormatStream:
        """A stream for the request; strict calls are `checked` against their schemas (not when
        `has_tool_call` reads without the tools)."""
        strict = self._pinned(tools) if checked else False
        stream = self._format.stream(tools, _sglang_mints_ids, strict=strict)
        if tools is not None and metrics.enabled():
            stream.audit_schemas()
        if envs.SGLANG_FORWARD_UNKNOWN_TOOLS.is_set():
            undeclared_as_text = not envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get()
            stream.limits = replace(stream.limits, undeclared_as_text=undeclared_as_text)
        return stream

    def _parse(self, text: str, tools: list[Tool] | None) -> tuple[ParseResult, Tally]:
        stream = self._new_stream(tools, checked=tools is not None)
        return build_result(stream.feed(text) + stream.close()), stream.tally

    def _count(self, text: object, mode: str, tally: Tally) -> None:
        """The response in the metrics, once: SGLang asks `has_tool_call` and may then parse the
        same text again (`detect_and_parse`)."""
        if self._counted is not text:
            self._counted = text
            metrics.record_response("sglang", self._format.name, mode, tally)

    # -- finished responses -------------------------------------------------------------------

    def has_tool_call(self, text: str) -> bool:
        """Whether our reading of `text` differs from the text itself. SGLang passes the text
        through untouched when this is False, so it must be True whenever the content we would
        return differs (a call, a broken block, whitespace we trim), or streamed and finished
        responses would disagree. It is not given the tools, so it reads with none declared (where
        any name is a call), and asks the spec's `needs_declared_tools` about calls that need a
        declared name (a superset is fine: the text is then parsed with the request's tools)."""
        self._checked = None
        needs_declared = self._format.needs_declared_tools
        if needs_declared is not None and needs_declared(text):
            return True
        result, tally = self._parse(text, None)
        self._checked = (text, result, tally)
        found = bool(result.calls) or (result.content or "") != text
        if not found:  # SGLang passes the text through: the response ends here
            self._count(text, "finished", tally)
        return found

    def detect_and_parse(self, text: str, tools: list[Tool]) -> StreamingParseResult:
        if not tools:
            return _result(text)
        checked = self._checked
        if checked is not None and checked[0] is text and not checked[1].calls:
            result, tally = checked[1], checked[2]  # no call with any tool declared: none with the request's either
        else:
            result, tally = self._parse(text, tools)
        self._count(text, "finished", tally)
        self.prev_tool_call_arr = finished_records(result.calls)
        # tool_index is the call's ordinal, as in streaming (SGLang's serving layer numbers the
        # calls of a finished response itself; its own detectors put the tool's position here).
        calls = [_item(c.index, c.name, c.arguments_json) for c in result.calls]
        return _result(result.content or "", calls)

    # -- streaming ----------------------------------------------------------------------------

    def parse_streaming_increment(self, new_text: str, tools: list[Tool]) -> StreamingParseResult:
        stream = self._stream
        if stream is None:
            if self._passthrough or not tools:
                self._passthrough = True
                return _result(new_text)
            stream = self._stream = self._new_stream(tools)
        return self._to_result(self._records.fold(stream.feed(new_text)))

    def finish(self, tools: list[Tool]) -> StreamingParseResult:
        """End of the stream: release what the format machine held back (a partial marker,
        trailing text, a call the streaming policy was holding that never completed)."""
        if self._stream is None:
            return _result()
        events = self._stream.close()
        self._count(self._stream, "streamed", self._stream.tally)
        return self._to_result(self._records.fold(events))

    def _to_result(self, folded: Folded) -> StreamingParseResult:
        calls = [_item(d.index, d.name, d.arguments) for d in folded.calls]
        if folded.started:
            self.current_tool_id = folded.started[-1]
            self.current_tool_name_sent = True
            self.incomplete_tool_call_indices.update(folded.started)
        self.incomplete_tool_call_indices.difference_update(folded.ended)
        return _result(folded.content, calls)

    # -- constrained decoding -------------------------------------------------------------------

    def supports_structural_tag(self) -> bool:
        """True where the format has a constraint of its own: SGLang then lets this detector read
        `tool_choice="required"` / named output (`owns_tool_format`), which `get_structural_tag`
        constrains to the format's own syntax. Otherwise SGLang's JSON-array constraint and reader
        apply instead."""
        return self._format.required_constraint is not None

    def structure_info(self) -> Any:
        """SGLang's legacy per-call tag, used only for strict `tool_choice="auto"` (a tool with
        `strict: true`, or `SGLANG_TOOL_STRICT_LEVEL`), when `get_structural_tag` returns None."""
        tag = self._format.strict_call_tag(vocabulary(self.tokenizer))
        if tag is None:
            raise NotImplementedError(f"{self.format_name}: no per-call structural tag")

        def info(name: str) -> StructureInfo:
            return StructureInfo(begin=tag.begin.format(name=name), end=tag.end, trigger=tag.trigger)

        return info

    def get_structural_tag(
        self,
        tools: list[Tool] | None = None,
        tool_choice: Any = "auto",
        thinking_mode: bool = False,
        parallel_tool_calls: bool = True,
    ) -> Any:
        """The format's own constraint for `tool_choice="required"` or a named tool (one call;
        also one call for `parallel_tool_calls=false`), as an xgrammar `StructuralTag`; for strict
        `auto` where the format has one (else None, and SGLang uses `structure_info` if the request
        is strict). `thinking_mode` is not used: with a reasoning model, run SGLang with
        `--reasoning-parser`, whose grammar backend lets the model think before the constraint
        starts."""
        named = _named_tool(tool_choice)
        if StructuralTag is None or not tools:
            return None
        single = named is not None or parallel_tool_calls is False
        request = ConstraintRequest(ToolIndex(tools).schemas, named, single, vocabulary(self.tokenizer))
        if tool_choice == "required" or named is not None:
            tag = self._format.constraint(request)
        elif tool_choice == "auto":
            # SGLang marks every tool strict under `--tool-strict-level parameter`; the others' arguments stay free
            strict = frozenset(t.function.name for t in tools if getattr(t.function, "strict", None) is True)
            tag = self._format.constraint(replace(request, strict=strict), auto=True)
        else:
            tag = None
        return None if tag is None else StructuralTag.model_validate(tag)
