"""Our vLLM reasoning parsers: `--reasoning-parser NAME --tool-call-parser NAME`, one per format.

vLLM composes a reasoning parser with a tool parser (`DelegatingParser`, vllm/parser/
abstract_parser.py): the reasoning parser reads the output first, and once it says reasoning is
over, the tool parser reads the rest. A finished response goes the same way: `extract_reasoning`
splits it, and the tool parser reads the content. Ours splits with `core.reasoning.ReasoningSplit`,
configured from the format's spec (its think markers, its call openers), the same machine for
both paths, so the composition with our tool parser of the same name is exact.

Facts of vLLM 0.32 it relies on:

- `engine_based_streaming = True`: vLLM then moves to the tool parser when
  `has_engine_confirmed_reasoning_end()` says so, handing it the `content` of that delta (the answer
  after the block), and at the end of a stream in which reasoning never ended it calls
  `finish_streaming()`, whose content, reasoning and tool calls reach the client.
- A call the model opened inside an unclosed think block is known only at the end of the output,
  and vLLM then no longer runs the tool parser; so `finish_streaming` reads the held answer with a
  tool parser of the format itself. The request it needs (the tools) arrives just before, in
  `get_streaming_fallback_content`.
- Where the prompt leaves reasoning (open, closed, or to the model): vLLM 0.33+ hands every
  reasoning parser the request's prompt token ids before it reads the output, finished or streamed
  (`set_prompt_token_ids`, forwarded by `DelegatingParser`), and the prompt's last tokens say it
  exactly (a `continue_final_message` prompt, a template whose thinking depends on the
  conversation). vLLM 0.32 gives them to a streaming parser only, and a finished response must be
  split the same way, so there it is read from the served chat template (`served_template`:
  `--chat-template`, else the tokenizer's own) rendered for one user message with the request's
  template arguments. The decoding gate below reads it as the response does: from the prompt where
  vLLM passes it, else from the template. `is_reasoning_end` of a prompt (which vLLM asks to decide
  whether reasoning runs at all, and when decoding constraints start) is True only for a prompt that
  ends with a closed block.
- Structured outputs (`required`, a named tool, strict `auto`, a JSON schema) start constraining
  where `is_reasoning_end_streaming` says reasoning ended. vLLM's engine core builds a reasoning
  parser of its own per request (`v1/structured_output`) and asks it at every decode step, with
  all the request's token ids and the step's new ones (accepted tokens, or a speculative step's
  drafts, asked again with the last ones popped). Ours runs the same split on the accepted
  tokens (decoded as they come) and says True only for a step at whose tokens the split ends
  the block: a closer that it keeps inside a held call's value, or that comes where no block
  opened, starts no constraint early, so the gate and the response agree on where the answer
  starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from vllm.entrypoints.generate.base.protocol import DeltaMessage
from vllm.reasoning import ReasoningParser

from .. import metrics
from ..core.reasoning import CallReading, Reasoning, ReasoningSplit, generation_start, template_start
from ..core.tally import Tally
from ..core.tokens import vocabulary
from ..formats import Format, get_format
from .served_template import server_chat_template

_TAIL_TOKENS = 16
"""How many of a prompt's last tokens are decoded to see whether it ends with a closed block."""

_PROMPT_GIVEN = hasattr(ReasoningParser, "set_prompt_token_ids")
"""Whether this vLLM hands reasoning parsers the prompt (0.33+): then the response and the decoding
gate both read where reasoning starts from the prompt, else both from the served template."""

_CONTEXT_TOKENS = 4
"""How many accepted tokens are decoded before new ones (a tokenizer may spell a token differently
at the start of a text), and how many a character split across tokens may take."""


def _calls(fmt: Format, request: Any) -> CallReading | bool:
    """How text held after a call opener in an unclosed think block is read (`ReasoningSplit.close`):
    never as calls for a request that may not call; else as our format reads it with the tools."""
    if not getattr(request, "tools", None) or getattr(request, "tool_choice", None) == "none":
        return False
    return fmt.call_reading(request.tools)


class FormatReasoningParser(ReasoningParser):
    """Splits reasoning from the answer for the format named by `format_name` (a subclass per
    format, made in `parsers.py`)."""

    format_name: ClassVar[str]
    engine_based_streaming = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._format: Format = self._served_format(tokenizer)
        self._pairs = self._format.think_pairs
        served, _ = server_chat_template()
        self._start = template_start(tokenizer, kwargs.get("chat_template_kwargs"), self._pairs, served)
        vocab = vocabulary(tokenizer)
        closers = [vocab.token_id(closer) if vocab is not None else None for _, closer in self._pairs]
        self._closer_ids = frozenset(i for i in closers if i is not None)
        self._split: ReasoningSplit | None = None
        self._counted = False  # the streamed response's block is in the metrics
        self._request: Any = None
        # The decoding constraint's gate (`is_reasoning_end_streaming`), on the engine core's own
        # instance: the split of the accepted tokens, where they end, the last few of them (and
        # their text) as context, and accepted tokens not read yet (a character not whole yet).
        self._gate: ReasoningSplit | None = None
        self._gate_at = 0
        self._gate_tail: list[int] = []
        self._gate_tail_text = ""
        self._gate_pending: list[int] = []
        self._gate_asked: tuple[list[int], str] = ([], "")  # the last step's tokens and their text
        # A fast tokenizer's own decoder: the same text without transformers' per-call overhead
        # (the gate decodes at every step of every constrained request).
        self._decoder = getattr(tokenizer, "backend_tokenizer", None)

    def _served_format(self, tokenizer: Any) -> Format:
        """The format whose think pairs and call openers split the output: the one named by
        `format_name` (a parser of a model's own templates derives it, `parsers.py`)."""
        return get_format(self.format_name)

    def _new_split(self) -> ReasoningSplit:
        return self._format.reasoning_split(self._start)

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        """vLLM 0.33+, before the output is read: where the request's own prompt leaves reasoning
        (its last tokens), in place of the served template's reading."""
        if prompt_token_ids and self._split is None:
            self._start = self._prompt_start(prompt_token_ids)

    def _prompt_start(self, prompt_token_ids: Sequence[int]) -> str:
        return generation_start(self._decode(list(prompt_token_ids[-_TAIL_TOKENS:])), self._pairs)

    @property
    def reasoning_start_str(self) -> str | None:
        return self._pairs[0][0]

    @property
    def reasoning_end_str(self) -> str | None:
        return self._pairs[0][1]

    # -- token ids: when reasoning has ended (vLLM's decoding constraints ask) -----------------

    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        """A prompt that ends with a closed block (thinking switched off); vLLM asks this of the
        prompt, to decide whether the output reasons at all."""
        return bool(input_ids) and self._prompt_start(input_ids) == "closed"

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Any) -> bool:
        """Whether the block ends at the step's tokens (`delta_ids`, the last of `input_ids`), as
        our split reads the output: the tokens before them are accepted, and read for good (the
        output starts where the first step asked begins); the step's own may be drafts, so they
        are judged without being read (`ReasoningSplit.would_close`)."""
        delta = list(delta_ids)
        if not delta:
            return False
        base = len(input_ids) - len(delta)
        if self._gate is None:
            if _PROMPT_GIVEN and base > 0:  # the first step asked: what comes before it is the prompt
                self._start = self._prompt_start(input_ids[:base])
            self._gate, self._gate_at = self._new_split(), base
        elif self._gate.ended:  # the output had no block (else the engine stopped asking at its end)
            return False
        elif base > self._gate_at:
            self._accept(list(input_ids[self._gate_at : base]))
        if self._gate.ended or base != self._gate_at:
            return False
        ids = self._gate_pending + delta
        self._gate_asked = (ids, self._text_after_tail(ids))  # most likely accepted next
        return self._gate.would_close(self._gate_asked[1])

    def _accept(self, ids: list[int]) -> None:
        """Accepted tokens: the gate's split reads their text (once its last character is whole)."""
        assert self._gate is not None
        self._gate_at += len(ids)
        pending = self._gate_pending + ids
        asked, text = self._gate_asked
        if asked != pending:
            text = self._text_after_tail(pending)
        if text.endswith("\ufffd") and len(pending) < _CONTEXT_TOKENS:
            self._gate_pending = pending
            return
        self._gate.feed(text)
        self._gate_pending = []
        self._gate_tail = (self._gate_tail + pending)[-_CONTEXT_TOKENS:]
        self._gate_tail_text = self._decode(self._gate_tail)

    def _text_after_tail(self, ids: list[int]) -> str:
        """The text of `ids`, decoded after the last accepted tokens read."""
        return self._decode(self._gate_tail + ids)[len(self._gate_tail_text) :]

    def _decode(self, ids: list[int]) -> str:
        if self._decoder is not None:
            return self._decoder.decode(ids, skip_special_tokens=False)
        return self.model_tokenizer.decode(ids)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        for i in range(len(input_ids) - 1, -1, -1):
            if input_ids[i] in self._closer_ids:
                return input_ids[i + 1 :]
        return input_ids

    # -- finished responses -------------------------------------------------------------------

    def extract_reasoning(self, model_output: str, request: Any) -> tuple[str | None, str | None]:
        split = self._new_split()
        pieces = split.feed(model_output) + split.close(calls=_calls(self._format, request))
        metrics.record_reasoning("vllm", self._format.name, "finished", split.block)
        reasoning = "".join(p.text for p in pieces if isinstance(p, Reasoning))
        content = "".join(p.text for p in pieces if not isinstance(p, Reasoning))
        return reasoning or None, content or None

    # -- streaming ----------------------------------------------------------------------------

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> DeltaMessage | None:
        if self._split is None:
            self._split = self._new_split()
        delta = _delta(self._split.feed(current_text[len(previous_text) :]))
        if self._split.ended:
            self._count(self._split)
        return delta

    def _count(self, split: ReasoningSplit) -> None:
        """The streamed response's reasoning block in the metrics, once (where the split ended)."""
        if not self._counted:
            self._counted = True
            metrics.record_reasoning("vllm", self._format.name, "streamed", split.block)

    def has_engine_confirmed_reasoning_end(self) -> bool:
        return self._split is not None and self._split.ended

    def get_streaming_fallback_content(self, text: str, request: Any) -> str | None:
        """Called at the end of a stream whose reasoning never ended: keeps the request, whose
        tools `finish_streaming` needs; promotes nothing (the split decides)."""
        self._request = request
        return None

    def finish_streaming(self) -> DeltaMessage | None:
        """vLLM calls this when reasoning ends (nothing is held then) and at the end of a stream
        whose reasoning never ended: settle the split, and read an answer that a call opened inside
        the block with our tool parser of the format."""
        split = self._split
        if split is None or split.ended:
            return None
        request = self._request
        calls = _calls(self._format, request)
        pieces = split.close(calls=calls)
        self._count(split)
        delta = _delta([p for p in pieces if isinstance(p, Reasoning)])
        answer = "".join(p.text for p in pieces if not isinstance(p, Reasoning))
        if not answer:
            if calls is not False:  # vLLM never ran the tool parser: the response is counted here
                metrics.record_response("vllm", self._format.name, "streamed", Tally())
            return delta
        from .parsers import tool_parser_class

        tool_parser = tool_parser_class(self.format_name)(self.model_tokenizer, getattr(request, "tools", None))
        # The answer's token ids: a format whose marker is a special token (Mistral's [TOOL_CALLS])
        # tells the marker from the same text written as prose by them.
        ids = self.model_tokenizer.encode(answer, add_special_tokens=False)
        read = [
            tool_parser.extract_tool_calls_streaming("", answer, answer, [], ids, ids, request),
            tool_parser.finish_streaming(),
        ]
        for part in read:
            if part is None:
                continue
            if delta is None:
                delta = DeltaMessage()
            if part.content:
                delta.content = (delta.content or "") + part.content
            if part.tool_calls:
                delta.tool_calls = [*delta.tool_calls, *part.tool_calls]
        return delta


def _delta(pieces: Sequence[Any]) -> DeltaMessage | None:
    reasoning = "".join(p.text for p in pieces if isinstance(p, Reasoning))
    content = "".join(p.text for p in pieces if not isinstance(p, Reasoning))
    if not reasoning and not content:
        return None
    return DeltaMessage(reasoning=reasoning or None, content=content or None)
