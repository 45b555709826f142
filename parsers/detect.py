"""Which of our formats does a chat template teach? Found by rendering, never by reading the template.

A probe conversation (two tools, an assistant call, a tool result) is rendered through the template
with transformers' `apply_chat_template`; the assistant turn it writes is then given to every
registered format's `parse()`, and the format that reads back exactly the probe call is the answer.
Templates are picky, so the probe is tried in the shapes real clients send (arguments as an object
or a JSON string, ids of nine letters and digits as Mistral requires or OpenAI's `call_...`, with or
without `type`, content None or ""), and the shapes that fail are reported with their error.

Engine-free on purpose: `toolcall-parsers detect` and the `auto` parsers of the vLLM and SGLang
adapters share `detect_template()`; `detect_once()` caches the answer per tokenizer and template so
a server detects once per process.

A template that teaches no format of ours gets a suggestion (ours, served with our template), and
detect says how much it is worth, because an operator must not mistake a default for a finding: by
`frame` when only one of our templates frames turns as the model's does (Kimi's, Granite's turn
markers: that family's format, guessed); else a `fallback`, said to be one: the format most models
with that frame are trained on (`FRAME_DEFAULTS`: ChatML's `<|im_start|>assistant`, which many
of our templates share, gets hermes_json), and hermes_json where none of ours frames turns alike.
It is a decision, not the registry's order, so a new format sharing a frame cannot change it.

Fast, because operators run it by hand and servers at start-up: the tokenizer loads without torch
where the model ships a `tokenizer.json`, the parsers read each distinct probe turn once, and our
templates (compiling one costs more than rendering a dozen turns) are rendered only for a
suggestion, in decision order up to the first match, once per process.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from . import FORMATS, parse
from .core.logs import logs_silenced
from .core.tokens import chat_template_key, per_tokenizer
from .derive.served import CHAT_NAME, SERVED_NAME, chat_format, served_format, tokenizer_response_template

PROBE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the web",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    },
]
PROBE_CALL: tuple[str, dict[str, Any]] = ("get_weather", {"city": "Paris", "days": 3})
USER_TEXT = "What is the weather in Paris?"
PLAIN_TEXT = "Paris is sunny."
TOOL_RESULT = "sunny, 21 degrees"
THOUGHT = "The user wants the weather; I call get_weather."
NINE_CHAR_ID = "a1B2c3D4e"
OPENAI_ID = "call_9f3b2c1d0e4a5b6c7d8e9f0a"

Render = Callable[..., str]
"""`render(messages, add_generation_prompt=..., **template_kwargs) -> str`: one template bound to its
tokenizer."""

THINKING_TOGGLES: tuple[dict[str, bool], ...] = (
    {},
    {"enable_thinking": True},
    {"thinking": True},
    {"enable_thinking": False},
    {"thinking": False},
)
"""The template arguments a generation prompt is rendered with to see the think markers it opens or
closes (Qwen3's `enable_thinking`, DeepSeek V3.1's `thinking`)."""


@dataclass(frozen=True)
class ProbeShape:
    """How a client writes the assistant's call into the history."""

    arguments_as_string: bool
    call_id: str
    with_type: bool
    content: str | None

    def describe(self) -> str:
        return ", ".join(
            [
                "arguments as JSON string" if self.arguments_as_string else "arguments as object",
                f"id {self.call_id!r}",
                "with type" if self.with_type else "without type",
                f"content {self.content!r}",
            ]
        )

    def messages(self, *, with_result: bool) -> list[dict[str, Any]]:
        name, arguments = PROBE_CALL
        call: dict[str, Any] = {
            "id": self.call_id,
            "function": {"name": name, "arguments": json.dumps(arguments) if self.arguments_as_string else arguments},
        }
        if self.with_type:
            call["type"] = "function"
        messages = [
            {"role": "user", "content": USER_TEXT},
            {"role": "assistant", "content": self.content, "tool_calls": [call]},
        ]
        if with_result:
            messages.append({"role": "tool", "tool_call_id": self.call_id, "name": name, "content": TOOL_RESULT})
        return messages


def probe_shapes() -> Iterator[ProbeShape]:
    """The shapes real clients send, most common first (vLLM hands templates arguments as objects)."""
    for as_string, call_id, with_type, content in product(
        (False, True), (NINE_CHAR_ID, OPENAI_ID), (True, False), (None, "")
    ):
        yield ProbeShape(as_string, call_id, with_type, content)


@dataclass
class MarkerToken:
    """A token of the tokenizer's added vocabulary that the template writes in the call turn."""

    token: str
    id: int | None
    special: bool


@dataclass
class Detection:
    """What a template teaches, and how to serve it. `parser` is our format's name or None."""

    parser: str | None
    template_source: str
    candidates: list[str] = field(default_factory=list)
    writes: str | None = None
    """The assistant turn the template writes for the probe call (its end-of-turn text cut off)."""
    probe: str | None = None
    """The probe shape that rendered (and matched, when `parser` is set)."""
    failed_probes: list[str] = field(default_factory=list)
    teaches_tools: bool = False
    renders_tool_results: bool | None = None
    renders_reasoning: bool | None = None
    reasoning_markers: list[str] | None = None
    """The (open, close) think markers the template writes around a history's reasoning or opens or
    closes in its generation prompt; None where it writes none."""
    reasoning_opened_by: list[str] = field(default_factory=list)
    """The template arguments ("enable_thinking=True", "default", ...) with which the generation
    prompt opens the block (the output then starts inside it)."""
    reasoning_parser: str | None = None
    """Our reasoning parser to serve with `parser`: the format's own, where it reads these markers."""
    marker_tokens: list[MarkerToken] = field(default_factory=list)
    skip_special_tokens_strips: bool | None = None
    """True when decoding the call turn with skip_special_tokens loses the calls."""
    taught_only: bool = False
    """The template renders no history calls; `parser` is the format its instructions teach (all
    of its markers appear in the prompt once tools are given)."""
    suggested: str | None = None
    """Our format to use with our template, when the model's own does not teach one of ours."""
    suggested_by: str | None = None
    """How much `suggested` is worth: "frame" (only our template of it frames turns as the model's
    does: its family's format, guessed) or "fallback" (nothing in the template points to a format of
    ours: the default for its frame). Never a detection."""
    suggestion_note: str | None = None
    """The plain sentence detect prints with `suggested`: what the template teaches, and that the
    suggestion is a fallback or a guess, and why."""
    derived: str | None = None
    """Where no named format of ours fits the chat template: the format the model's own response
    template describes, else the one derived from its chat template (its summary); None where
    neither gives one."""
    derived_by: str | None = None
    """The parser that serves `derived`: `from_response_template` or `from_chat_template`."""
    derived_error: str | None = None
    """Why neither template gives a format (no family of ours reads them)."""
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def renderer_for(tokenizer: Any, template: str | None = None) -> Render:
    """`tokenizer.apply_chat_template` with the probe tools, text out. `template` overrides the
    tokenizer's own; a tokenizer holding several named templates gives `tool_use` (as vLLM does
    when a request has tools), else `default`."""
    chosen = template
    if chosen is None:
        own = getattr(tokenizer, "chat_template", None)
        if isinstance(own, dict):
            own = own.get("tool_use") or own.get("default")
        chosen = own

    def render(
        messages: list[dict[str, Any]], *, add_generation_prompt: bool, tools: Any = PROBE_TOOLS, **kwargs: Any
    ) -> str:
        return tokenizer.apply_chat_template(
            messages,
            tools=tools,
            chat_template=chosen,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
            **kwargs,
        )

    return render


def template_renderer(template: str, **special_tokens: str) -> Render:
    """A template without a tokenizer (transformers' own Jinja rendering): for writing our formats'
    texts when no tokenizer is at hand. Special tokens default to ""."""
    from transformers.utils.chat_template_utils import render_jinja_template

    tokens = {"bos_token": "", "eos_token": "", **special_tokens}

    def render(
        messages: list[dict[str, Any]], *, add_generation_prompt: bool, tools: Any = PROBE_TOOLS, **kwargs: Any
    ) -> str:
        out, _ = render_jinja_template(
            [messages],
            tools=tools,
            chat_template=template,
            add_generation_prompt=add_generation_prompt,
            **{**tokens, **kwargs},
        )
        return out[0] if isinstance(out, list) else out

    return render


def _after_common_prefix(prefix: str, text: str) -> str:
    """`text` after the longest prefix it shares with `prefix` (compared in blocks, then by character).
    Where `text` leaves `prefix` inside a tag both begin (a generation prompt ending `<think>\n`, a
    turn writing `<tool_call>`: they share `<t`), the cut moves back to the tag's start."""
    shared, step = 0, 256
    limit = min(len(prefix), len(text))
    while step:
        while shared + step <= limit and prefix[shared : shared + step] == text[shared : shared + step]:
            shared += step
        step //= 2
    if shared < len(prefix):
        line = text.rfind("\n", 0, shared) + 1
        opener = max(text.rfind("<", line, shared), text.rfind("[", line, shared))
        if opener >= 0 and not any(close in text[opener:shared] for close in (">", "]")):
            shared = opener
    return text[shared:]


def turn_closing(render: Render) -> str:
    """The text a template writes after an assistant turn's content (`<|im_end|>\\n`, `</s>`, ...)."""
    prompt = render([{"role": "user", "content": USER_TEXT}], add_generation_prompt=True)
    plain = render(
        [{"role": "user", "content": USER_TEXT}, {"role": "assistant", "content": PLAIN_TEXT}],
        add_generation_prompt=False,
    )
    turn = _after_common_prefix(prompt, plain)
    at = turn.find(PLAIN_TEXT)
    return turn[at + len(PLAIN_TEXT) :] if at >= 0 else ""


def assistant_turn(render: Render, messages: list[dict[str, Any]], closing: str) -> str:
    """What the template writes for the last (assistant) message of `messages`, as the model would
    generate it: the text after the generation prompt, without the turn's closing text."""
    prompt = render(messages[:-1], add_generation_prompt=True)
    turn = _after_common_prefix(prompt, render(messages, add_generation_prompt=False))
    stripped = turn.rstrip()
    if closing.strip() and stripped.endswith(closing.strip()):
        return stripped[: -len(closing.strip())]
    return turn


def _reads_back(calls: list[tuple[str, dict[str, Any]]], expected: list[tuple[str, dict[str, Any]]]) -> int | None:
    """0: exactly the expected calls; 1: the same calls with a non-empty part of their arguments
    (formats that write only some arguments, e.g. one string argument per call); 2: the same calls
    with every value written as a string (a template that quotes them all, as vLLM's Llama 4
    pythonic example does); None: not them."""
    if calls == expected:
        return 0
    if len(calls) != len(expected):
        return None
    fit = 1
    for (name, arguments), (want_name, want) in zip(calls, expected, strict=True):
        if name != want_name or not arguments:
            return None
        for key, value in arguments.items():
            if key not in want:
                return None
            if want[key] != value:
                if value != (want[key] if isinstance(want[key], str) else json.dumps(want[key])):
                    return None
                fit = 2
    return fit


_EMPTIED_ELEMENT = re.compile(r"<([A-Za-z_][\w:.-]*)>\s*</\1>")


def _emptied_wrapper(content: str | None) -> bool:
    """Does the text a format left outside its calls hold an element emptied by taking them out
    (`<tool_calls>\n\n</tool_calls>`)? Then the calls sat inside markup that format does not know
    (MiniMax-M1's lines look like Llama's JSON), and another format, or none, is the template's. An
    emptied think element is no such wrapper (templates write `<think></think>` before a call)."""
    thinks = {fmt.think_markers[0] for fmt in FORMATS.values()}
    return any(f"<{m.group(1)}>" not in thinks for m in _EMPTIED_ELEMENT.finditer(content or ""))


def matching_formats(turn: str, expected: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Every registered format whose parse() of `turn` reads back `expected` (and takes them from
    no element it does not know): exact readings first, then those that leave the least text
    outside the calls, then registry order. Rejected spans are not logged."""
    with logs_silenced():
        found = []
        for order, fmt in enumerate(FORMATS.values()):
            result = parse(fmt.name, turn, tools=PROBE_TOOLS)
            fit = _reads_back([(c.name, c.arguments) for c in result.calls], expected)
            if fit is not None and not _emptied_wrapper(result.content):
                found.append((fit, len(result.content or ""), order, fmt.name))
    return [name for *_, name in sorted(found)]


def _writes_calls(turn: str | None) -> bool:
    """Does the template write the probe call into the history at all (in any format)?"""
    return turn is not None and PROBE_CALL[0] in turn


def taught_formats(render: Render) -> list[str]:
    """The formats a template teaches only in its instructions (it renders no history calls, as
    some do): every marker of the format appears in the prompt with tools more often than in the
    prompt without, most marker text first. Formats without markers are never taught this way."""
    user = [{"role": "user", "content": USER_TEXT}]
    try:
        with_tools = render(user, add_generation_prompt=True)
    except Exception:
        return []
    try:
        without = render(user, add_generation_prompt=True, tools=None)
    except Exception:
        without = ""
    found = []
    for order, fmt in enumerate(FORMATS.values()):
        if fmt.markers and all(with_tools.count(m) > without.count(m) for m in fmt.markers):
            found.append((-sum(map(len, fmt.markers)), order, fmt.name))
    return [name for *_, name in sorted(found)]


def _short_error(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0][:160] if str(err) else ''}"


def _marker_tokens(tokenizer: Any, turn: str) -> list[MarkerToken]:
    """Added-vocabulary tokens (markers, control tokens) that occur in the call turn."""
    try:
        added = tokenizer.get_added_vocab()
    except Exception:
        return []
    special = set(getattr(tokenizer, "all_special_tokens", []) or [])
    for token_id, token in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).items():
        if getattr(token, "special", False):
            special.add(str(token))
        added.setdefault(str(token), token_id)
    return [MarkerToken(t, added.get(t), t in special) for t in sorted(added, key=turn.find) if t and t in turn]


def _strips(tokenizer: Any, parser: str, turn: str) -> bool | None:
    """Does decoding the turn's tokens with skip_special_tokens lose the calls?"""
    try:
        ids = tokenizer.encode(turn, add_special_tokens=False)
        decoded = tokenizer.decode(ids, skip_special_tokens=True)
    except Exception:
        return None
    return parser not in matching_formats(decoded, [PROBE_CALL])


def _renders(render: Render, messages: list[dict[str, Any]], needle: str) -> bool | None:
    try:
        return needle in render(messages, add_generation_prompt=False)
    except Exception:
        return None


FALLBACK_SUGGESTION = "hermes_json"
"""The format suggested when no template of ours frames turns as the model's does: the JSON-in-tags
calls most open models are trained on (the registry's first, alphabetical, would be arbitrary)."""

FRAME_DEFAULTS: dict[str, str] = {
    "hermes_json": "the format most ChatML models are trained on",
    "llama_json": "Llama 3.1's own, the format most models with Llama 3's turns are trained on",
    "deepseek_json": "the format of DeepSeek V3, R1 and V3.1 (V3.2 and later templates teach DSML)",
    "gigachat_json": "the format of the open GigaChat 3 and 3.1 models",
    "harmony_json": "gpt-oss's, the models whose turns these are",
    "muse_atem": "Muse Glimmer's, the first released model whose turns these are (Muse Spark's are alike)",
}
"""Where several of our templates frame turns alike, the one a template that teaches no format of
ours gets, and why (the format most models with those turns are trained on). `test_detect` holds
every frame that several of ours share to exactly one of these."""


def generation_header(render: Render) -> str | None:
    """The text a template writes between the user's message and the assistant's reply (its turn
    frame: `<|im_end|>\n<|im_start|>assistant\n` for ChatML), rendered without tools; None where it
    does not render."""
    user = [{"role": "user", "content": USER_TEXT}]
    try:
        prompt = render(user, add_generation_prompt=True, tools=None)
    except Exception:
        return None
    return prompt[prompt.rfind(USER_TEXT) + len(USER_TEXT) :] if USER_TEXT in prompt else None


@functools.cache
def our_frame(name: str) -> str | None:
    """`generation_header` of our template for format `name`, once per process (compiling a template
    is most of what a detection costs)."""
    return generation_header(template_renderer(FORMATS[name].template_path.read_text(encoding="utf-8")))


def suggest_format(render: Render) -> tuple[str, str, str]:
    """(format, "frame" or "fallback", why) for a template that teaches no format of ours. Our
    templates are compared with the model's turn frame in decision order, the frame defaults first,
    up to the first match: a default matching means a frame several of ours share (a fallback); any
    other format matching is then the only one of ours with that frame (its family, guessed)."""
    own = generation_header(render)
    shipped = [name for name, fmt in FORMATS.items() if fmt.template_path.is_file()]
    order = [name for name in FRAME_DEFAULTS if name in shipped] + [n for n in shipped if n not in FRAME_DEFAULTS]
    for name in order if own is not None else ():
        if our_frame(name) != own:
            continue
        if name in FRAME_DEFAULTS:
            return (
                name,
                "fallback",
                f"its turns are framed as several of ours are ({own!r}); {name} is {FRAME_DEFAULTS[name]}",
            )
        return name, "frame", f"only our {name} template frames turns as this one does ({own!r})"
    most = "the format most open models are trained on"
    return (
        FALLBACK_SUGGESTION,
        "fallback",
        f"no template of ours frames turns as this one does; {FALLBACK_SUGGESTION} is {most}",
    )


def _teaches(detection: Detection) -> str:
    """What a template that no format of ours fits teaches, said plainly."""
    if detection.writes is None:
        return "the template renders the probe call in none of the shapes clients send (each one's error is listed)"
    if _writes_calls(detection.writes):
        return f"the template writes tool calls in a format none of ours reads ({detection.writes[:80]!r})"
    tools = "lists the tools but renders no calls" if detection.teaches_tools else "renders neither tools nor calls"
    return f"the template teaches no tool-call format: it {tools}, and names no format's markers"


def detect_template(tokenizer: Any, template: str | None = None, source: str = "the tokenizer") -> Detection:
    """Render the probe through `template` (default: the tokenizer's own) and name our format."""
    detection = Detection(parser=None, template_source=source)
    render = renderer_for(tokenizer, template)
    user = [{"role": "user", "content": USER_TEXT}]
    try:
        prompt = render(user, add_generation_prompt=True)
        closing = turn_closing(render)
    except Exception as err:
        detection.error = f"the template does not render a plain conversation: {_short_error(err)}"
        _derive(detection, tokenizer, template)
        return detection
    detection.teaches_tools = PROBE_CALL[0] in prompt
    first_turn: tuple[ProbeShape, str] | None = None
    read: set[str] = set()
    for shape in probe_shapes():
        try:
            turn = assistant_turn(render, shape.messages(with_result=False), closing)
        except Exception as err:
            detection.failed_probes.append(f"{shape.describe()}: {_short_error(err)}")
            continue
        first_turn = first_turn or (shape, turn)
        if turn in read:  # shapes often render the same turn: read each once
            continue
        read.add(turn)
        found = matching_formats(turn, [PROBE_CALL])
        if found:
            detection.parser, detection.candidates = found[0], found
            detection.writes, detection.probe = turn, shape.describe()
            break
    if detection.parser is not None and not any(
        m in (detection.writes or "") for m in FORMATS[detection.parser].markers
    ):
        # A history read with none of the format's markers (bare JSON, a bare list), in a prompt
        # that teaches another format's markers: the model writes those (Phi-4-mini's
        # `functools[..]`, whose template drops it from the history): the format whose markers match.
        taught = [name for name in taught_formats(render) if name not in detection.candidates]
        if taught:
            detection.parser, detection.candidates = taught[0], [*taught, *detection.candidates]
            detection.taught_only = True
    if detection.parser is None and first_turn is not None:
        detection.probe, detection.writes = first_turn[0].describe(), first_turn[1]
    if detection.parser is None and not _writes_calls(detection.writes):
        taught = taught_formats(render)
        if taught:
            detection.parser, detection.candidates, detection.taught_only = taught[0], taught, True
    shape = next((s for s in probe_shapes() if s.describe() == detection.probe), None)
    if shape is not None:
        detection.renders_tool_results = _renders(render, shape.messages(with_result=True), TOOL_RESULT)
    reasoning = {"role": "assistant", "content": PLAIN_TEXT, "reasoning_content": THOUGHT, "reasoning": THOUGHT}
    detection.renders_reasoning = _renders(render, [*user, reasoning], THOUGHT)
    _detect_reasoning(detection, render, [*user, reasoning])
    if detection.writes:
        detection.marker_tokens = _marker_tokens(tokenizer, detection.writes)
        if detection.parser and any(t.special for t in detection.marker_tokens):
            detection.skip_special_tokens_strips = _strips(tokenizer, detection.parser, detection.writes)
        elif detection.parser:
            detection.skip_special_tokens_strips = False
    if detection.parser is None:
        _derive(detection, tokenizer, template)
        detection.suggested, detection.suggested_by, why = suggest_format(render)
        worth = "a fallback" if detection.suggested_by == "fallback" else "a guess from the turn framing"
        detection.suggestion_note = f"{_teaches(detection)}. {detection.suggested} is {worth}, not a detection: {why}"
    return detection


def _derive(detection: Detection, tokenizer: Any, template: str | None) -> None:
    """The format to serve where no named one fits: the model's own response template, where it
    ships one, else the format its chat template teaches, derived by rendering it."""
    errors = []
    if tokenizer_response_template(tokenizer) is not None:
        try:
            detection.derived, detection.derived_by = served_format(tokenizer).summary, SERVED_NAME
            return
        except ValueError as err:
            errors.append(str(err))
    try:
        detection.derived, detection.derived_by = chat_format(tokenizer, template).summary, CHAT_NAME
    except ValueError as err:
        errors.append(str(err))
        detection.derived_error = "; ".join(errors)


def reasoning_pairs() -> list[tuple[str, str]]:
    """Every pair of think markers a reasoning parser of ours splits on, longest opener first."""
    pairs = {pair for fmt in FORMATS.values() if fmt.think_blocks for pair in fmt.think_pairs}
    return sorted(pairs, key=lambda pair: (-len(pair[0]), pair))


def _history_markers(render: Render, messages: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The pair of think markers closest around the probe's reasoning in a rendered history."""
    try:
        text = render(messages, add_generation_prompt=False)
    except Exception:
        return None
    at = text.find(THOUGHT)
    if at < 0:
        return None
    found = [
        (at - text.rfind(opener, 0, at), pair)
        for pair in reasoning_pairs()
        for opener, closer in [pair]
        if text.rfind(opener, 0, at) >= 0 and closer in text[at + len(THOUGHT) :]
    ]
    return min(found)[1] if found else None


def _detect_reasoning(detection: Detection, render: Render, messages: list[dict[str, Any]]) -> None:
    """`reasoning_markers`, `reasoning_opened_by` and `reasoning_parser`: the markers the template
    writes around a history's reasoning, else those its generation prompt opens or closes with the
    thinking toggles; our reasoning parser is the detected format's where that format reads them."""
    from .core.reasoning import generation_start

    pairs = reasoning_pairs()
    markers = _history_markers(render, messages)
    if markers is None:  # reasoning as a content block (Mistral's `thinking` chunks)
        blocks = [{"type": "thinking", "thinking": THOUGHT}, {"type": "text", "text": PLAIN_TEXT}]
        markers = _history_markers(render, [*messages[:1], {"role": "assistant", "content": blocks}])
    for kwargs in THINKING_TOGGLES:
        try:
            prompt = render(messages[:1], add_generation_prompt=True, **kwargs).rstrip()
        except Exception:
            continue
        start = generation_start(prompt, pairs)
        if start == "before":
            continue
        marker = next(m for pair in pairs for m in pair if prompt.endswith(m))
        markers = markers or next(pair for pair in pairs if marker in pair)
        if start == "opened":
            detection.reasoning_opened_by.append(", ".join(f"{k}={v}" for k, v in kwargs.items()) or "default")
    if markers is None:
        return
    detection.reasoning_markers = list(markers)
    fmt = FORMATS.get(detection.parser or "")
    if fmt is not None and fmt.think_blocks and markers in fmt.think_pairs:
        detection.reasoning_parser = fmt.name


# -- models on disk ----------------------------------------------------------------------------------


def load_tokenizer(model: str) -> Any:
    """The tokenizer of a local model folder or of a Hugging Face id already in the local cache
    (nothing is downloaded). A `tokenizer.json` loads into transformers' generic fast tokenizer (the
    class transformers maps many models to), which needs no torch: `AutoTokenizer` imports it, 2.5 s
    of the 5 s detect took on SmolLM2. Without one (SentencePiece or tiktoken files), or with
    Mistral's `tekken.json` (which `AutoTokenizer` gives to mistral-common), as `AutoTokenizer` loads it."""
    if _has_file(model, "tokenizer.json") and not _has_file(model, "tekken.json"):
        from transformers import PreTrainedTokenizerFast

        return PreTrainedTokenizerFast.from_pretrained(model, local_files_only=True)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model, local_files_only=True)


def _has_file(model: str, name: str) -> bool:
    """Does the model folder, or the Hugging Face cache of the id, hold file `name`?"""
    if Path(model).is_dir():
        return (Path(model) / name).is_file()
    from huggingface_hub import try_to_load_from_cache

    return isinstance(try_to_load_from_cache(model, name), str)


def template_source(model: str) -> str:
    folder = Path(model)
    if (folder / "chat_template.jinja").is_file():
        return f"{folder / 'chat_template.jinja'}"
    if (folder / "tokenizer_config.json").is_file():
        return f"{folder / 'tokenizer_config.json'}"
    return f"the tokenizer of {model} (Hugging Face cache)"


def detect_model(model: str, chat_template: str | Path | None = None) -> Detection:
    """`toolcall-parsers detect MODEL [--chat-template FILE]`. Raises OSError/ValueError when the
    model or template cannot be read."""
    tokenizer = load_tokenizer(model)
    if chat_template is not None:
        return detect_template(tokenizer, Path(chat_template).read_text(encoding="utf-8"), str(chat_template))
    return detect_template(tokenizer, None, template_source(model))


# -- what to run -------------------------------------------------------------------------------------


def serve_commands(model: str, detection: Detection, chat_template: str | Path | None = None) -> dict[str, str]:
    """The `vllm serve` and SGLang command lines for this model: the detected parser (with our
    reasoning parser of its format where the template writes think markers it reads, and the
    template given to detect, if any); or, when none of ours fits, our suggested format with our
    template."""
    template: str | None = str(chat_template) if chat_template is not None else None
    parser = detection.parser
    if parser is None:
        parser = detection.suggested or next(iter(FORMATS))
        template = str(FORMATS[parser].template_path)
    tail = f" --chat-template {shlex.quote(template)}" if template else ""
    if detection.reasoning_parser and detection.parser:
        tail = f" --reasoning-parser {detection.reasoning_parser}{tail}"
    quoted = shlex.quote(model)
    return {
        "vllm": f"vllm serve {quoted} --enable-auto-tool-choice --tool-call-parser {parser}{tail}",
        "sglang": f"python -m sglang.launch_server --model-path {quoted} --tool-call-parser {parser}{tail}",
    }


# -- once per process (the `auto` parsers) -------------------------------------------------------------


def detect_once(tokenizer: Any, template: str | None = None, source: str = "the tokenizer") -> tuple[Detection, bool]:
    """`detect_template`, cached per tokenizer object and template text: (detection, first time)."""
    key = ("detection", chat_template_key(tokenizer, template))
    return per_tokenizer(tokenizer, key, lambda: detect_template(tokenizer, template, source))


def describe(detection: Detection) -> str:
    """One log line for the `auto` parsers."""
    if detection.parser:
        how = "teaches only in its instructions" if detection.taught_only else "writes"
        return (
            f"the chat template ({detection.template_source}) {how} {detection.parser}; parsing as {detection.parser}"
        )
    if detection.derived:
        which = "response template" if detection.derived_by == SERVED_NAME else "chat template, rendered,"
        return (
            f"no named format of ours fits the chat template ({detection.template_source}); the model's {which} "
            f"reads as {detection.derived}: parsing with {detection.derived_by}"
        )
    if detection.error or not detection.suggested:
        where = f"no format of ours fits the chat template ({detection.template_source})"
        return f"{where}: {detection.error}. Tool calls are NOT parsed; the text passes through"
    return (
        f"no format of ours fits the chat template ({detection.template_source}): {detection.suggestion_note}. "
        "Tool calls are NOT parsed; the text passes through. Serve with --tool-call-parser "
        f"{detection.suggested} --chat-template {FORMATS[detection.suggested].template_path} if the model writes "
        "that format, or name the engine's parser for the format it does write"
    )
