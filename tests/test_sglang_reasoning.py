"""Our SGLang reasoning parsers composed with our detectors through SGLang's real serving layer.

`--reasoning-parser F --tool-call-parser F` for every format F whose models reason in think blocks:
the reasoning documents of `fuzzing.reasoning` (think then call, a call inside a closed and an
unclosed block, the closer inside a call's string, truncation, no tools, ...) go through
`OpenAIServingChat.handle_request` (the harness of test_e2e_sglang_serving.py, the model scripted),
finished and streamed in SmolLM2's token deltas, and both answers must equal what the document
expects. Where the prompt opened the block (`start="opened"`) the request turns thinking on, and
SGLang forces reasoning (its `force_reasoning`, from the detector's `reasoning_default` or the
template's toggle); otherwise thinking is off and the model opens its own block.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fuzzing.reasoning import Doc, reasoning_formats, scenarios
from helpers import leaves_no_trace, needs, token_chunks
from reasoning_scores_sglang import miswritten
from test_e2e_sglang_serving import stack  # noqa: F401  (the serving-layer fixture)
from toolcall_parsers import FORMATS, parse
from toolcall_parsers.core.reasoning import Reasoning

pytestmark = [needs("sglang"), pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")]

THINKING_ON = {"enable_thinking": True, "thinking": True}
THINKING_OFF = {"enable_thinking": False, "thinking": False}
"""The request's template arguments: SGLang reads one or the other toggle, depending on the
template's detected config or the detector's `reasoning_default`."""


def _held_answer(doc: Doc) -> bool:
    """The document's answer is text held after a call opener inside a block that never closes: our
    reasoning detector judges it at the end without the request's tools (SGLang hands it none)."""
    split = FORMATS[doc.fmt].reasoning_split(doc.start)
    pieces = split.feed(doc.text) + split.close(calls=False)
    return bool(doc.answer.strip()) and all(isinstance(p, Reasoning) for p in pieces)


def _expect(doc: Doc, request: pytest.FixtureRequest) -> None:
    """Skips a document whose expectation contradicts its text; a call held in an unclosed block that
    the format reads only with its tool declared (xml_tools) stays reasoning under SGLang: expected
    to fail. Decided as the test runs, not when the documents are collected: reading all of them
    took half a second of every collection."""
    if miswritten(doc):
        pytest.skip("the scenario's expectation contradicts its text")
    if _held_answer(doc) and doc.expected()[2] and not parse(doc.fmt, doc.answer).calls:
        reason = "SGLang gives a reasoning detector no tools; this format reads no call without them"
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))


DOCS = [
    pytest.param(doc, id=f"{doc.fmt}:{doc.name}")
    for fmt in reasoning_formats()
    for doc in scenarios(fmt)
    if doc.start != "closed"
]


def _answer(got: dict[str, Any]) -> tuple[str | None, str | None, list[tuple[str, Any]]]:
    content = (got["content"] or "").strip() or None
    return got["reasoning"] or None, content, [(name, json.loads(arguments)) for _, name, arguments in got["calls"]]


def _forced(harness: Any, fmt: str, kwargs: dict[str, Any]) -> bool:
    """Whether SGLang's serving layer forces reasoning for a request with these template arguments
    (what it passes our detector as `force_reasoning`)."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    serving, _ = harness.serving(fmt, fmt)
    messages = [{"role": "user", "content": "Go."}]
    request = ChatCompletionRequest(model="m", messages=messages, chat_template_kwargs=kwargs)
    return bool(serving.template_manager.force_reasoning or serving._get_reasoning_from_request(request))


@pytest.mark.parametrize("doc", DOCS)
def test_reasoning_and_calls_through_the_serving_layer(stack, doc, request):  # noqa: F811
    _expect(doc, request)
    kwargs = THINKING_ON if doc.start == "opened" else THINKING_OFF
    forced = _forced(stack, doc.fmt, kwargs)
    if doc.start == "opened":
        assert forced, "the request cannot say that the prompt opened the block"
    elif forced and not doc.text.lstrip().startswith(tuple(o for o, _ in FORMATS[doc.fmt].think_pairs)):
        pytest.skip("this template opens the block on every request: a reply without one is not its output")
    tokenizer = stack.tokenizer
    chunks = token_chunks(lambda t: tokenizer.encode(t, add_special_tokens=False), tokenizer.decode, doc.text)
    request = {"tools": doc.tools, "tool_choice": doc.tool_choice, "chat_template_kwargs": kwargs}
    finished = stack.run(doc.fmt, [doc.text], stream=False, reasoning=doc.fmt, **request)
    streamed = stack.run(doc.fmt, chunks, stream=True, reasoning=doc.fmt, **request)
    reasoning, content, calls = doc.expected()
    expected = (reasoning, (content or "").strip() or None, calls)  # as `_answer` reads the content
    assert _answer(finished) == expected, "finished"
    assert _answer(streamed) == expected, "streamed"


@pytest.mark.parametrize("fmt", ["hermes_json", "kimi_json"])
@pytest.mark.parametrize("option", ["stream_reasoning", "force_nonempty_content"])
def test_held_reasoning_options(stack, fmt, option):  # noqa: F811
    """`stream_reasoning=False` (reasoning sent when the block ends) and `force_nonempty_content`
    (with no answer, the reasoning is the content): the stream still tells the finished story."""
    docs = {d.name: d for d in scenarios(fmt)}
    for doc in (docs["think_then_call"], docs["truncated_reasoning"], docs["call_in_unclosed_think"]):
        kwargs: dict[str, Any] = dict(THINKING_OFF)
        request: dict[str, Any] = {"tools": doc.tools}
        if option == "stream_reasoning":
            request["stream_reasoning"] = False
        else:
            kwargs["force_nonempty_content"] = True
        results = [
            stack.run(fmt, list(doc.text), stream=s, reasoning=fmt, chat_template_kwargs=kwargs, **request)
            for s in (False, True)
        ]
        reasoning, content, calls = doc.expected()
        if option == "force_nonempty_content" and content is None and not calls:
            reasoning, content = None, reasoning
        assert [_answer(r) for r in results] == [(reasoning, content, calls)] * 2, doc.name


def test_sglang_argument_parsing_accepts_our_reasoning_parsers(stack, smollm2_dir):  # noqa: F811
    """After `register()` (the `stack` fixture ran SGLang's `load_plugins()`), SGLang's argument
    parser accepts `--reasoning-parser` with each of our names, and still refuses an unknown one."""
    from sglang.srt.server_args import prepare_server_args

    base = ["--model-path", str(smollm2_dir), "--device", "cpu", "--tool-call-parser", "hermes_json"]
    with leaves_no_trace():
        for name in ("hermes_json", *reasoning_formats()):
            assert prepare_server_args([*base, "--reasoning-parser", name]).reasoning_parser == name
        with pytest.raises(SystemExit):
            prepare_server_args([*base, "--reasoning-parser", "no_such_parser"])


@pytest.mark.parametrize(
    ("previous", "output", "expected"),
    [
        ("<think>I weigh", " Oslo.</think>\nIt is sunny.", ("Oslo.", "\nIt is sunny.")),
        ("<think>I weighed.</think>\nIt is", " sunny.", ("", " sunny.")),
        ("Sure", ", it is sunny.", ("", ", it is sunny.")),
        # An answer that names the opener has not opened a block: the rest is answer too.
        ("Sure, models write <think> first", " and then answer.", ("", " and then answer.")),
        ("\n<think>I weigh <tool_call> as prose", " more.</think>Done.", ("more.", "Done.")),
    ],
)
def test_a_continued_message_keeps_its_place(previous, output, expected):
    """`continue_final_message`: the assistant message being continued says whether its output is
    inside the block (opened, not closed) or after it; SGLang builds the detector from the request."""
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": previous}]
    request = ChatCompletionRequest(model="m", messages=messages, continue_final_message=True)
    finished = ReasoningParser("hermes_json", stream_reasoning=False, force_reasoning=False, request=request)
    assert finished.parse_non_stream(output) == expected
    streaming = ReasoningParser("hermes_json", stream_reasoning=True, force_reasoning=False, request=request)
    pieces = [streaming.parse_stream_chunk(c) for c in output] + [streaming.parse_stream_end()]
    assert ("".join(r for r, _ in pieces), "".join(n for _, n in pieces)) == expected


def test_kimi_k3s_think_channel(smollm2_dir):
    """Kimi K3 reasons in its `think` channel, which its generation prompt opens unless `thinking`
    is off: our detector's `reasoning_default` says so (SGLang forces reasoning exactly then), and
    the channel, opened by the prompt or by the model, is reasoning, finished and streamed."""
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.plugins import load_plugins
    from toolcall_parsers.formats.kimi_xtml import MESSAGE_CLOSE, RESPONSE_CLOSE, RESPONSE_OPEN, THINK_CLOSE, THINK_OPEN
    from toolcall_parsers.formats.kimi_xtml import write as k3_write
    from toolcall_parsers.sglang.reasoning import reasoning_default
    from transformers import AutoTokenizer

    with leaves_no_trace():
        load_plugins()
    fmt = FORMATS["kimi_xtml"]
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"]})
    tokenizer.chat_template = fmt.template_path.read_text(encoding="utf-8")
    assert reasoning_default(tokenizer, fmt.think_pairs) == "thinking"
    calls = k3_write([("get_weather", {"city": "Oslo"})])
    reply = f"{RESPONSE_OPEN}Checking.{RESPONSE_CLOSE}{calls}{MESSAGE_CLOSE}"
    for forced, text, expected in [
        (True, f"The user wants Oslo.{THINK_CLOSE}{reply}", ("The user wants Oslo.", reply)),
        (False, f"{THINK_OPEN}The user wants Oslo.{THINK_CLOSE}{reply}", ("The user wants Oslo.", reply)),
        (True, f"Oslo, then.{calls}", ("Oslo, then.", calls)),  # calls before the channel closed
    ]:
        options = {"force_reasoning": forced, "tokenizer": tokenizer, "tool_call_parser_active": True}
        assert ReasoningParser("kimi_xtml", stream_reasoning=False, **options).parse_non_stream(text) == expected
        streaming = ReasoningParser("kimi_xtml", stream_reasoning=True, **options)
        pieces = [streaming.parse_stream_chunk(c) for c in text] + [streaming.parse_stream_end()]
        assert ("".join(r or "" for r, _ in pieces), "".join(n or "" for _, n in pieces)) == expected
