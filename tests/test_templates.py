"""Chat templates with transformers' real `apply_chat_template`: what the template writes for an
assistant turn with calls, the parser reads back as the same calls."""

from __future__ import annotations

import json

import pytest
from helpers import result_of
from hypothesis import given, settings
from hypothesis import strategies as st
from toolcall_parsers import get_format, parse

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
# How each template opens and ends an assistant turn.
TURNS = {
    "hermes_json": ("<|im_start|>assistant\n", "<|im_end|>"),
    "minimax_xml": ("]~b]ai\n", "[e~["),
    "tagged": ("<|im_start|>assistant\n", "<|im_end|>"),
}


def render(tokenizer, fmt: str, messages, **kwargs) -> str:
    template = get_format(fmt).template_path.read_text(encoding="utf-8")
    return tokenizer.apply_chat_template(messages, chat_template=template, tokenize=False, **kwargs)


def last_assistant_turn(rendered: str, fmt: str = "hermes_json") -> str:
    start, end = TURNS[fmt]
    turn = rendered[rendered.rindex(start) + len(start) :]
    return turn[: turn.index(end)]


def test_prompt_shows_tools_and_the_call_format(smollm2_tokenizer):
    out = render(
        smollm2_tokenizer,
        "hermes_json",
        [{"role": "user", "content": "Weather?"}],
        tools=TOOLS,
        add_generation_prompt=True,
    )
    assert out.startswith("<|im_start|>system\n# Tools")
    assert json.dumps(TOOLS[0]["function"]) in out.split("<tools>\n")[1]
    assert '<tool_call>\n{"name": <function-name>' in out
    assert out.endswith("<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n")


def test_history_with_calls_and_results(smollm2_tokenizer):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tōkyō"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "b", "content": "rain"},
    ]
    out = render(smollm2_tokenizer, "hermes_json", messages, tools=TOOLS, add_generation_prompt=True)
    assert out.startswith("<|im_start|>system\nBe brief.\n\n# Tools")
    assert (
        "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrain\n</tool_response><|im_end|>\n"
        in out
    )
    result = parse("hermes_json", last_assistant_turn(out.rsplit("<|im_start|>user", 1)[0]))
    assert result.content == "Checking."
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Tōkyō"}),
    ]


names = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(names, st.dictionaries(st.text(max_size=8), values, max_size=3)), min_size=1, max_size=3),
    st.sampled_from(["", "Sure."]),
)
@pytest.mark.parametrize("fmt", ["hermes_json", "tagged"])
def test_round_trip(smollm2_tokenizer, fmt, calls, content):
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ],
    }
    out = render(smollm2_tokenizer, fmt, [{"role": "user", "content": "go"}, message])
    result = parse(fmt, last_assistant_turn(out, fmt))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content or None)


def test_minimax_prompt_and_history(smollm2_tokenizer):
    messages = [
        {"role": "user", "content": "Paris?"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "reasoning_content": "Need weather.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
    ]
    out = render(smollm2_tokenizer, "minimax_xml", messages, tools=TOOLS, add_generation_prompt=True)
    assert out.startswith("]~!b[]~b]system\nYou are a helpful assistant.\n\n# Tools")
    assert "<tool>" + json.dumps(TOOLS[0]["function"]) + "</tool>" in out
    assert "]~b]tool\n<response>sunny</response>[e~[\n" in out
    assert out.endswith("]~b]ai\n<think>\n")
    turn = out.split("]~b]ai\n")[1].split("[e~[")[0]
    assert turn.startswith("<think>\nNeed weather.\n</think>\n\nLet me check.\n<minimax:tool_call>\n")
    result = parse("minimax_xml", turn, tools=TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Paris"})]


MINIMAX_KINDS = {
    "string": st.text(max_size=20).filter(lambda v: not any(m in v for m in ("</parameter>", "[e~[", "]~b]"))),
    "integer": st.integers(),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "null": st.none(),
    "object": st.dictionaries(st.text(max_size=5), values, max_size=3),
    "array": st.lists(values, max_size=3),
}


@st.composite
def typed_calls(draw):
    calls, tools = [], []
    for i in range(draw(st.integers(1, 3))):
        kinds = draw(st.dictionaries(names, st.sampled_from(sorted(MINIMAX_KINDS)), max_size=4))
        args = {key: draw(MINIMAX_KINDS[kind]) for key, kind in kinds.items()}
        properties = {key: {"type": kind} for key, kind in kinds.items()}
        name = f"tool_{i}"
        tools.append({"type": "function", "function": {"name": name, "parameters": {"properties": properties}}})
        calls.append((name, args))
    return calls, tools


@settings(max_examples=40, deadline=None)
@given(typed_calls(), st.sampled_from(["", "Sure."]))
def test_minimax_round_trip(smollm2_tokenizer, calls_and_tools, content):
    calls, tools = calls_and_tools
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ],
    }
    out = render(smollm2_tokenizer, "minimax_xml", [{"role": "user", "content": "go"}, message], tools=tools)
    result = parse("minimax_xml", last_assistant_turn(out, "minimax_xml"), tools=tools)
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content or None)


def test_mistral_prompt_and_history(smollm2_tokenizer):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "chatcmpl-tool-0123456789abcdef",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "chatcmpl-tool-0123456789abcdef", "content": "sunny"},
        {"role": "user", "content": "And Rome?"},
    ]
    out = render(smollm2_tokenizer, "mistral_json", messages, tools=TOOLS, add_generation_prompt=True)
    assert "[SYSTEM_PROMPT]Be brief.[/SYSTEM_PROMPT][INST]Weather?[/INST]" in out
    assert '[TOOL_CALLS]get_weather[CALL_ID]789abcdef[ARGS]{"city": "Paris"}' in out  # a valid Mistral id
    assert (
        "[TOOL_RESULTS]789abcdef[TOOL_CONTENT]sunny[/TOOL_RESULTS][AVAILABLE_TOOLS]" in out
    )  # tools before the last [INST]
    assert out.endswith("[/AVAILABLE_TOOLS][INST]And Rome?[/INST]")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(names, st.dictionaries(st.text(max_size=8), values, max_size=3)), min_size=1, max_size=3),
    st.sampled_from(["", "Sure."]),
)
def test_mistral_round_trip_in_real_mistral_tokens(smollm2_tokenizer, mistral_codec, calls, content):
    """Render with the template, tokenize with Mistral's Tekken tokenizer ([TOOL_CALLS] as its control
    token), stream the token deltas back through the parser: the same calls, with the ids kept."""
    from helpers import run_chunks, token_chunks

    ids = [f"c{i}d{i}e{i}f{i}g" for i in range(len(calls))]
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": ids[i], "type": "function", "function": {"name": n, "arguments": a}}
            for i, (n, a) in enumerate(calls)
        ],
    }
    out = render(smollm2_tokenizer, "mistral_json", [{"role": "user", "content": "go"}, message])
    turn = out.split("[/INST]", 1)[1].removesuffix(smollm2_tokenizer.eos_token)
    result = result_of(run_chunks("mistral_json", token_chunks(*mistral_codec, turn)))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert [c.id for c in result.calls] == ids
    assert result.content == (content or None)


def test_tagged_prompt_teaches_the_format(smollm2_tokenizer):
    out = render(
        smollm2_tokenizer, "tagged", [{"role": "user", "content": "Weather?"}], tools=TOOLS, add_generation_prompt=True
    )
    assert "- get_weather: Get the weather " + json.dumps(TOOLS[0]["function"]["parameters"]) in out
    example = out.split("Example:\n")[1].split("<|im_end|>")[0]
    assert [(c.name, c.arguments) for c in parse("tagged", example).calls] == [("get_weather", {"city": "Berlin"})]
    history = render(
        smollm2_tokenizer,
        "tagged",
        [
            {
                "role": "assistant",
                "content": "Ok.",
                "tool_calls": [{"function": {"name": "f", "arguments": {"a": [1, 2]}}}],
            }
        ],
    )
    assert history == '<|im_start|>assistant\nOk.\n<TOOL_CALLS>\nf {"a":[1,2]}<|im_end|>\n'  # compact, no end marker


def test_llama_pythonic_history_uses_python_literals(smollm2_tokenizer):
    call = {"name": "f", "arguments": {"s": 'say "hi"', "n": 3, "ok": True, "no": None, "l": [1, False, {"k": "v"}]}}
    out = render(
        smollm2_tokenizer,
        "llama_pythonic",
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": call}]},
            {"role": "tool", "content": "done"},
        ],
        tools=TOOLS,
        add_generation_prompt=True,
    )
    assert '[f(s="say \\"hi\\"", n=3, ok=True, no=None, l=[1, False, {"k": "v"}])]<|eot_id|>' in out
    assert "<|start_header_id|>ipython<|end_header_id|>\n\ndone<|eot_id|>" in out
    assert out.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")


pythonic_names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}(\.[a-z_][a-z0-9_]{0,8}){0,2}", fullmatch=True)
keywords = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True).filter(lambda k: k not in ("true", "false", "null"))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(pythonic_names, st.dictionaries(keywords, values, max_size=3)), min_size=1, max_size=3),
    st.sampled_from(["", "Sure."]),
)
def test_llama_pythonic_round_trip_in_real_llama3_tokens(smollm2_tokenizer, llama3_codec, calls, content):
    """Render with the template, tokenize with Llama 3's tokenizer (llama-models), stream the token
    deltas back through the parser: the same calls."""
    from helpers import run_chunks, token_chunks

    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
    }
    out = render(smollm2_tokenizer, "llama_pythonic", [{"role": "user", "content": "go"}, message])
    turn = out.split("<|start_header_id|>assistant<|end_header_id|>\n\n")[-1].removesuffix("<|eot_id|>")
    result = result_of(run_chunks("llama_pythonic", token_chunks(*llama3_codec, turn)))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content or None)
