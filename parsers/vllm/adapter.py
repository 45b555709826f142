"""The vLLM adapter: one `ToolParser` subclass that runs any of our format machines.

It is a thin translation. vLLM gives text; the format machine gives events; this class turns events
into `DeltaMessage`s and `ExtractedToolCallInformation`. Everything format-specific comes from the
format's spec (`formats/spec.py`): `parsers.py` makes one subclass per format from it. Facts it relies
on (vLLM 0.32):

- `engine_based_streaming = True` is the only way a tool parser hears that the stream ended
  (`finish_streaming()`); a parser holding back a partial marker needs that. In exchange vLLM also
  calls the parser when `tool_choice="none"` and when the request has no tools, so those requests
  pass through untouched.
- Depending on the reasoning parser, vLLM passes either accumulated text or only the delta; the new
  text is `current_text[len(previous_text):]` in both cases.
- A request may choose its own streaming policy with `vllm_xargs` (vLLM 0.32 passes the request's
  `vllm_xargs` dict through to the parser): `{"tool_call_streaming": "eager"}` (or `complete`, or a
  number of characters); an invalid value is logged and the server's policy used.
- At the end of a stream vLLM appends `get_remaining_unstreamed_args()` to the last tool-call delta.
  `prev_tool_call_arr` and `streamed_args_for_tool` always agree with each other (both hold the whole
  arguments of a finished call, both "" before), so that flush adds nothing.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from vllm import envs
from vllm.entrypoints.generate.base.protocol import (
    DeltaMessage,
    ExtractedToolCallInformation,
    FunctionCall,
    ToolCall,
)
from vllm.renderers.chat_utils import make_tool_call_id
from vllm.sampling_params import StructuredOutputsParams
from vllm.tool_parsers import ToolParser
from vllm.tool_parsers.tool_strict_level import ToolStrictLevel
from xgrammar import StructuralTag

from .. import metrics
from ..core.events import Event, build_result
from ..core.fold import CallRecords, Folded, finished_records
from ..core.stream import FormatStream
from ..core.tokens import check_special_tokens, vocabulary
from ..core.tools import ToolIndex
from ..formats import ConstraintRequest, Format, get_format

logger = logging.getLogger("toolcall_parsers")
STREAMING_XARG = "tool_call_streaming"
"""The `vllm_xargs` key through which one request chooses its streaming policy."""


def _vllm_call_id(name: str, index: int) -> str:
    return make_tool_call_id()


def _named_tool(choice: Any) -> str | None:
    """The tool a request's `tool_choice` names (Chat Completions' or Responses' shape), else None."""
    return getattr(getattr(choice, "function", None), "name", None) or getattr(choice, "name", None)


def _function(tool: Any) -> dict[str, Any]:
    """A request tool's function part as a dict (Chat Completions nests it, Responses does not)."""
    spec = tool if isinstance(tool, dict) else tool.model_dump()
    function = spec.get("function")
    return function if isinstance(function, dict) else spec


def _strict_tools(request: Any) -> frozenset[str]:
    """The names of the request's tools marked `"strict": true`."""
    return frozenset(_function(t).get("name") for t in request.tools if _function(t).get("strict") is True)


def _passes_through(request: Any) -> bool:
    """Requests whose text must reach the client untouched: no tools, or tool_choice "none"."""
    return not getattr(request, "tools", None) or getattr(request, "tool_choice", None) == "none"


class FormatToolParser(ToolParser):
    """Runs the format named by `format_name` (a subclass per format sets that, and the two vLLM
    attributes its spec implies: `structural_tag_model` and `supports_required_and_named`); a
    format whose engine side needs more (Mistral's token ids) overrides `_new_stream` / `_feed`."""

    format_name: ClassVar[str]
    engine_based_streaming = True
    supports_required_and_named = False
    server_strict_level: ClassVar[int] = ToolStrictLevel.AUTO
    """The server's `--tool-strict-level` floor as vLLM last passed it to `get_structural_tag`: one
    per server, kept per class, since vLLM parses a response with another instance than the one
    that shaped its request."""

    def __init__(self, tokenizer: Any, tools: list[Any] | None = None) -> None:
        super().__init__(tokenizer, tools)
        self._format: Format = self._served_format(tokenizer)
        check_special_tokens(tokenizer, self.format_name, self._format.special_tokens)
        self._stream: FormatStream | None = None
        self._passthrough = False
        self._counted = False  # the stream's response is in the metrics
        self._records = CallRecords(self)

    def _served_format(self, tokenizer: Any) -> Format:
        """The format this parser runs: the one named by `format_name` (a parser of a model's own
        response template derives it from the tokenizer)."""
        return get_format(self.format_name)

    def _new_stream(self, streaming: bool) -> FormatStream:
        return self._format.stream(self.tools, None if self._format.own_ids else _vllm_call_id)

    def _stream_for(self, request: Any, streaming: bool) -> FormatStream:
        """A stream for the request: strict calls checked where its constraint pinned them."""
        stream = self._new_stream(streaming)
        self._format.check_strict(stream, self._pinned(request))
        if metrics.enabled():
            stream.audit_schemas()
        return stream

    def _pinned(self, request: Any) -> bool | frozenset[str]:
        """The tools whose arguments the request's constraint pinned, as vLLM applies it: every tool
        under `--tool-strict-level parameter` or for `required` / named with our own constraint
        (vLLM's tag models pin only strict tools there); else the tools marked `strict: true`;
        none for `auto` when `VLLM_ENFORCE_STRICT_TOOL_CALLING` is off."""
        choice = getattr(request, "tool_choice", None)
        forced = choice == "required" or _named_tool(choice) is not None
        if not forced and (choice != "auto" or not envs.VLLM_ENFORCE_STRICT_TOOL_CALLING):
            return False
        if self.server_strict_level >= ToolStrictLevel.PARAMETER or (forced and self._own_tag):
            return True
        return _strict_tools(request) or False

    def _feed(self, stream: FormatStream, text: str, delta_token_ids: Sequence[int]) -> list[Event]:
        return stream.feed(text)

    # -- request shaping ----------------------------------------------------------------------

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if request.tools and request.tool_choice != "none":
            # Markers may be special tokens; decoding must keep them for the parser to see.
            request.skip_special_tokens = False
            if self._format.special_tokens:
                # vLLM's slow-tokenizer detokenizer puts a space between adjacent special tokens
                # unless told not to: `<|open|>tools<|sep|>` would reach the parser as
                # `<|open|> tools <|sep|>`, `<|tool_call_begin|>` runs likewise.
                request.spaces_between_special_tokens = False
        named = _named_tool(request.tool_choice)
        already = getattr(request.structured_outputs, "structural_tag", None) is not None
        if request.tools and (request.tool_choice == "required" or named) and not already and self._own_tag:
            # vLLM's request path applies `get_structural_tag` first; this is the same constraint
            # where that path did not run (a caller that adjusts the tool parser's request alone).
            tag = self._format.constraint(self._constraint_request(request, auto=False, strict_level=None))
            if tag is not None:
                request.structured_outputs = StructuredOutputsParams(structural_tag=json.dumps(tag))
                request.response_format = None
        return request

    @property
    def _own_tag(self) -> bool:
        return (
            self._format.vllm_tag_model is None
            and (self._format.required_constraint or self._format.auto_constraint) is not None
        )

    def get_structural_tag(self, request: Any, *, reasoning: bool = False, strict_level: Any = None) -> Any:
        """The constraint vLLM's request path applies (`--tool-strict-level`, strict tools,
        `parallel_tool_calls=false`, `required` / named), from the format's spec; vLLM's own where
        the format reuses one of its tag models. `tool_choice="auto"` follows vLLM's switch
        `VLLM_ENFORCE_STRICT_TOOL_CALLING`; `required` and named calls are always constrained."""
        if strict_level is not None:
            type(self).server_strict_level = strict_level  # `_pinned` reads it when parsing
        if not self._own_tag:
            return super().get_structural_tag(request, reasoning=reasoning, strict_level=strict_level)
        auto = request.tool_choice == "auto"
        if auto and not envs.VLLM_ENFORCE_STRICT_TOOL_CALLING:
            return None
        tag = self._format.constraint(self._constraint_request(request, auto, strict_level), auto=auto)
        return StructuralTag.model_validate(tag) if tag is not None else None

    def _constraint_request(self, request: Any, auto: bool, strict_level: Any) -> ConstraintRequest:
        named = _named_tool(request.tool_choice)
        single = named is not None or request.parallel_tool_calls is False
        strict = None
        if auto and not (strict_level is not None and strict_level >= ToolStrictLevel.PARAMETER):
            strict = _strict_tools(request)
        schemas = ToolIndex(request.tools).schemas
        return ConstraintRequest(schemas, named, single, vocabulary(self.model_tokenizer), strict)

    # -- finished responses -------------------------------------------------------------------

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        if _passes_through(request):
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        stream = self._stream_for(request, streaming=False)
        result = build_result(stream.feed(model_output) + stream.close())
        metrics.record_response("vllm", self._format.name, "finished", stream.tally)
        calls = [
            ToolCall(id=c.id, type="function", function=FunctionCall(name=c.name, arguments=c.arguments_json))
            for c in result.calls
        ]
        self.prev_tool_call_arr = finished_records(result.calls)
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=result.content)

    # -- streaming ----------------------------------------------------------------------------

    def extract_tool_calls_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
        request: Any,
    ) -> DeltaMessage | None:
        new_text = current_text[len(previous_text) :]
        if self._stream is None and not self._passthrough:
            self._passthrough = _passes_through(request)
            if not self._passthrough:
                self._stream = self._stream_for(request, streaming=True)
                self._use_request_policy(self._stream, request)
        if self._stream is None:
            return DeltaMessage(content=new_text) if new_text else None
        return self._to_delta(self._records.fold(self._feed(self._stream, new_text, delta_token_ids)))

    def _use_request_policy(self, stream: FormatStream, request: Any) -> None:
        policy = (getattr(request, "vllm_xargs", None) or {}).get(STREAMING_XARG)
        if policy is None:
            return
        try:
            stream.set_streaming(policy)
        except ValueError as err:
            logger.warning("%s: vllm_xargs %s ignored: %s", self.format_name, STREAMING_XARG, err)

    def finish_streaming(self) -> DeltaMessage | None:
        """End of the stream (called by vLLM for engine-based parsers): release what was held."""
        if self._stream is None:
            return None
        events = self._stream.close()
        if not self._counted:  # once, should vLLM end a stream twice
            self._counted = True
            metrics.record_response("vllm", self._format.name, "streamed", self._stream.tally)
        return self._to_delta(self._records.fold(events))

    @staticmethod
    def _to_delta(folded: Folded) -> DeltaMessage | None:
        # Tool calls are built as dicts: pydantic validates them in one pass, which is cheaper here
        # than constructing DeltaToolCall/DeltaFunctionCall objects (or model_construct) one by one.
        calls: list[dict[str, Any]] = []
        for delta in folded.calls:
            if delta.name is None:
                calls.append({"index": delta.index, "function": {"arguments": delta.arguments}})
                continue
            function = {"name": delta.name, "arguments": delta.arguments} if delta.arguments else {"name": delta.name}
            calls.append({"index": delta.index, "id": delta.id, "type": "function", "function": function})
        if calls:
            return DeltaMessage(content=folded.content or None, tool_calls=calls)
        return DeltaMessage(content=folded.content) if folded.content else None
