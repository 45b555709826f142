"""Our SGLang reasoning parsers: `--reasoning-parser NAME --tool-call-parser NAME`, one per format.

SGLang's chat serving layer composes a reasoning detector with a tool-call detector: the reasoning
detector splits each delta into reasoning and normal text, and the normal text goes to the tool
parser. Ours splits with `core.reasoning.ReasoningSplit`, configured from the format's spec exactly
as the vLLM one is, the same machine for a finished response and a stream, so the composition with
our tool parser of the same name is exact. Facts of SGLang 0.5.23 it relies on
(srt/parser/reasoning_parser.py, srt/entrypoints/openai/serving_chat.py):

- A finished response calls `detect_and_parse` once (never `finish()`); its normal text goes to the
  tool parser. A stream calls `parse_streaming_increment` per delta and, on the terminal delta
  (not an abort), `finish()`, whose normal text is appended to that delta's and handed to the tool
  parser's `parse_stream_chunk` before the tool parser's own `finish()`. So a call the model opened
  inside an unclosed think block, known only at the end of the output, reaches our tool parser
  through `finish()`'s normal text.
- The detector never sees the request or its tools. It is told `tool_call_parser_active` (passed
  only when the signature names it, and only when true): tools declared and `tool_choice` not
  "none". So held text after a call opener in an unclosed block calls when tool parsing is active
  and our format reads a call in it (without the tools), in both paths alike.
- Where reasoning starts, SGLang says with one bool, `force_reasoning` (the template's detected
  toggle, else the detector's `reasoning_default`, applied to the request's `chat_template_kwargs`):
  "the output may be inside a think block". Its own detectors then still drop a think opener the
  model writes itself (Qwen3's template leaves `<think>` to the model while SGLang reads its
  `enable_thinking` as forcing), and so does ours: forced is our split's "opened" start, which
  reads an output that starts with an opener (after whitespace) as the model's own block.
- `reasoning_default` is read from the instance the serving layer builds at startup, with the
  tokenizer whose chat template is the served one; it is derived from that template rendered with
  and without the thinking toggles, so that a request is forced exactly when the template opens
  the block for it (as `core.reasoning.template_start` reads it for vLLM).
- A request's `stream_reasoning=False` holds reasoning until the block ends; `force_nonempty_content`
  makes the reasoning the content when the answer is empty (it is held until that is known, so the
  stream and the finished response agree); `continue_final_message` continues an assistant message
  whose markers say where reasoning is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from sglang.srt.parser.reasoning_parser import BaseReasoningFormatDetector, StreamingParseResult

from .. import metrics
from ..core.reasoning import CallReading, Piece, Reasoning, template_start
from ..derive.served import CHAT_NAME, SERVED_NAME, chat_format, served_format
from ..formats import Format, get_format, reasoning_classes

_TOGGLES = ("enable_thinking", "thinking")
"""The chat-template arguments SGLang knows as thinking toggles (its `reasoning_default` modes)."""


def reasoning_default(tokenizer: Any, pairs: Sequence[tuple[str, str]]) -> str:
    """SGLang's `reasoning_default` mode that forces reasoning exactly when the tokenizer's chat
    template opens a think block: "always" for a template that always does, a toggle's name when it
    does unless the request switches that toggle off, "explicit_" + the toggle when it does only when
    the request switches it on; else "explicit_enable_thinking", so that a client may still say the
    block is open (the model writes its own opener otherwise, which a forced split reads too)."""
    if tokenizer is None:
        return "explicit_enable_thinking"
    opened = template_start(tokenizer, None, pairs) == "opened"
    for toggle in _TOGGLES:
        if opened and template_start(tokenizer, {toggle: False}, pairs) != "opened":
            return toggle
        if not opened and template_start(tokenizer, {toggle: True}, pairs) == "opened":
            return "explicit_" + toggle
    return "always" if opened else "explicit_enable_thinking"


def continued_start(previous: Any, fmt: Format, start: str) -> str:
    """Where a continued assistant message leaves reasoning, read by our split as if it were the
    output's start (`start`: where the prompt left it): "opened" inside a block it opened (or the
    prompt's) and did not close, "closed" after a block it closed or an answer it began (an opener
    written later in the answer opens nothing), else `start` (no text yet)."""
    if not isinstance(previous, str):
        return start
    split = fmt.reasoning_split(start)
    split.feed(previous)
    if split.ended:
        return "closed"
    return "opened" if split.reasoning else start


def _texts(pieces: Sequence[Piece]) -> tuple[str, str]:
    """(reasoning, answer) of a run of pieces."""
    reasoning = "".join(p.text for p in pieces if isinstance(p, Reasoning))
    return reasoning, "".join(p.text for p in pieces if not isinstance(p, Reasoning))


class FormatReasoningDetector(BaseReasoningFormatDetector):
    """Splits reasoning from the answer for the format named by `format_name` (a subclass per format,
    made below). The keyword arguments are those SGLang's `ReasoningParser` passes a detector."""

    format_name: ClassVar[str]

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: bool = False,
        continue_final_message: bool = False,
        previous_content: str = "",
        force_nonempty_content: bool = False,
        tokenizer: Any = None,
        tool_call_parser_active: bool = False,
    ) -> None:
        fmt = self._served_format(tokenizer)
        pairs = fmt.think_pairs
        super().__init__(
            pairs[0][0],
            pairs[0][1],
            force_reasoning=force_reasoning,
            stream_reasoning=stream_reasoning,
            continue_final_message=continue_final_message,
            previous_content=previous_content,
            reasoning_default=reasoning_default(tokenizer, pairs),
            force_nonempty_content=force_nonempty_content,
        )
        self._format = fmt
        start = "opened" if force_reasoning else "before"
        self._start = continued_start(self.previous_content, fmt, start) if continue_final_message else start
        self._calls: CallReading | bool = fmt.call_reading() if tool_call_parser_active else False
        self._split = fmt.reasoning_split(self._start)
        self._counted = False  # the streamed response's block is in the metrics
        self._hold = not stream_reasoning or force_nonempty_content
        self._unsent: list[str] = []  # reasoning held back (`_hold`)
        self._answered = False  # the stream has sent answer text that is not whitespace

    def _served_format(self, tokenizer: Any) -> Format:
        """The format whose think pairs and call openers split the output: the one named by
        `format_name` (a detector of a model's own templates derives it from the tokenizer)."""
        return get_format(self.format_name)

    # -- finished responses -------------------------------------------------------------------

    def detect_and_parse(self, text: str) -> StreamingParseResult:
        split = self._format.reasoning_split(self._start)
        reasoning, answer = _texts(split.feed(text) + split.close(calls=self._calls))
        metrics.record_reasoning("sglang", self._format.name, "finished", split.block)
        if self._force_nonempty_content and not answer.strip():
            return StreamingParseResult(normal_text=reasoning + answer)
        return StreamingParseResult(normal_text=answer, reasoning_text=reasoning)

    # -- streaming ----------------------------------------------------------------------------

    def parse_streaming_increment(self, new_text: str) -> StreamingParseResult:
        pieces = self._split.feed(new_text)
        if self._split.ended:
            self._count()
        return self._result(pieces, end=False)

    def finish(self) -> StreamingParseResult:
        """End of the stream: settle the split. Its answer (a call opened inside an unclosed block,
        or held text) is normal text, which the serving layer hands to the tool parser."""
        pieces = self._split.close(calls=self._calls)
        self._count()
        return self._result(pieces, end=True)

    def _count(self) -> None:
        """The streamed response's reasoning block in the metrics, once (where the split ended)."""
        if not self._counted:
            self._counted = True
            metrics.record_reasoning("sglang", self._format.name, "streamed", self._split.block)

    def _result(self, pieces: Sequence[Piece], *, end: bool) -> StreamingParseResult:
        reasoning, answer = _texts(pieces)
        self._answered = self._answered or bool(answer.strip())
        if not self._hold:
            return StreamingParseResult(normal_text=answer, reasoning_text=reasoning)
        self._unsent.append(reasoning)
        if self._force_nonempty_content:
            if not self._answered and not end:
                return StreamingParseResult(normal_text=answer)
        elif not end and not self._split.ended:
            return StreamingParseResult(normal_text=answer)
        held, self._unsent = "".join(self._unsent), []
        if self._force_nonempty_content and not self._answered:
            return StreamingParseResult(normal_text=held + answer)
        return StreamingParseResult(normal_text=answer, reasoning_text=held)


REASONING_DETECTORS: dict[str, type[FormatReasoningDetector]] = reasoning_classes(
    FormatReasoningDetector, "ReasoningDetector", __name__
)
"""`--reasoning-parser` name -> our SGLang reasoning detector class: one per format whose models
reason in think blocks, named as the format, to be paired with its tool parser."""
globals().update({cls.__name__: cls for cls in REASONING_DETECTORS.values()})


class FromResponseTemplateReasoningDetector(FormatReasoningDetector):
    """`--reasoning-parser from_response_template`: the split of the format the served model's
    response template describes (`derive.served`), to pair with the tool parser of that name."""

    format_name = SERVED_NAME

    def _served_format(self, tokenizer: Any) -> Format:
        return served_format(tokenizer)


class FromChatTemplateReasoningDetector(FormatReasoningDetector):
    """`--reasoning-parser from_chat_template`: the split of the format the served chat template
    teaches (its think tags as it renders them), to pair with the tool parser of that name."""

    format_name = CHAT_NAME

    def _served_format(self, tokenizer: Any) -> Format:
        return chat_format(tokenizer)


REASONING_DETECTORS[SERVED_NAME] = FromResponseTemplateReasoningDetector
REASONING_DETECTORS[CHAT_NAME] = FromChatTemplateReasoningDetector
