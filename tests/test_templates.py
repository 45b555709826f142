"""Chat templates with transformers' real `apply_chat_template`: what the template writes for an
assistant turn with calls, the parser reads back as the same calls."""

from __future__ import annotations

import json
import unicodedata

import pytest
from helpers import render_template, result_of
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from toolcall_parsers import FORMATS, parse

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


def last_assistant_turn(rendered: str, fmt: str = "hermes_json") -> str:
    start, end = TURNS[fmt]
    turn = rendered[rendered.rindex(start) + len(start) :]
    return turn[: turn.index(end)]


def test_prompt_shows_tools_and_the_call_format(smollm2_tokenizer):
    out = render_template(
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
    out = render_template(smollm2_tokenizer, "hermes_json", messages, tools=TOOLS, add_generation_prompt=True)
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
    out = render_template(smollm2_tokenizer, fmt, [{"role": "user", "content": "go"}, message])
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
    out = render_template(smollm2_tokenizer, "minimax_xml", messages, tools=TOOLS, add_generation_prompt=True)
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
    out = render_template(smollm2_tokenizer, "minimax_xml", [{"role": "user", "content": "go"}, message], tools=tools)
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
    out = render_template(smollm2_tokenizer, "mistral_json", messages, tools=TOOLS, add_generation_prompt=True)
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
    out = render_template(smollm2_tokenizer, "mistral_json", [{"role": "user", "content": "go"}, message])
    turn = out.split("[/INST]", 1)[1].removesuffix(smollm2_tokenizer.eos_token)
    result = result_of(run_chunks("mistral_json", token_chunks(*mistral_codec, turn)))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert [c.id for c in result.calls] == ids
    assert result.content == (content or None)


def test_tagged_prompt_teaches_the_format(smollm2_tokenizer):
    out = render_template(
        smollm2_tokenizer, "tagged", [{"role": "user", "content": "Weather?"}], tools=TOOLS, add_generation_prompt=True
    )
    assert "- get_weather: Get the weather " + json.dumps(TOOLS[0]["function"]["parameters"]) in out
    example = out.split("Example:\n")[1].split("<|im_end|>")[0]
    assert [(c.name, c.arguments) for c in parse("tagged", example).calls] == [("get_weather", {"city": "Berlin"})]
    history = render_template(
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
    out = render_template(
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
    out = render_template(smollm2_tokenizer, "llama_pythonic", [{"role": "user", "content": "go"}, message])
    turn = out.split("<|start_header_id|>assistant<|end_header_id|>\n\n")[-1].removesuffix("<|eot_id|>")
    result = result_of(run_chunks("llama_pythonic", token_chunks(*llama3_codec, turn)))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content or None)


def qwen_turn(rendered: str) -> str:
    return rendered.split("<|im_start|>assistant\n")[-1].split("<|im_end|>")[0]


def test_qwen_xml_prompt_and_history(smollm2_tokenizer):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Paris?"},
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Lyon"}}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "b", "content": "rain"},
    ]
    out = render_template(smollm2_tokenizer, "qwen_xml", messages, tools=TOOLS, add_generation_prompt=True)
    assert out.startswith("<|im_start|>system\nBe brief.\n\n# Tools")
    assert "<function>\n<name>get_weather</name>\n<description>Get the weather</description>\n<parameters>" in out
    assert "<parameter>\n<name>city</name>\n<type>string</type>\n</parameter>\n<required>[" in out
    example = out.split("with nothing after it:\n\n")[1].split("\n\nRules:")[0]
    assert [(c.name, c.arguments) for c in parse("qwen_xml", example).calls] == [
        ("tool_name", {"first_parameter": "value", "second_parameter": "value"})
    ]
    turn = out.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    assert turn.startswith(
        "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    )
    result = parse("qwen_xml", turn, tools=TOOLS)
    assert result.content == "Let me check."
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Lyon"}),
    ]
    tool_turn = "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrain"
    tool_turn += "\n</tool_response><|im_end|>\n"
    assert out.endswith(tool_turn + "<|im_start|>assistant\n")


QWEN_STRINGS = st.text(max_size=20).filter(lambda v: not any(m in v for m in ("<parameter=", "</function>", "<|im_")))
"""Strings the qwen_xml grammar reads back (module docstring of formats/qwen_xml.py: a value cannot hold a
line that starts with `<parameter=`, nor `</function>` followed by a block tag)."""
QWEN_HARD_STRINGS = st.sampled_from(["", "\n", "\n\nx\n\n", "</parameter>", "a</parameter>\n<b>", "<tool_call>", " 5 "])


@st.composite
def qwen_typed_calls(draw):
    kinds = {**MINIMAX_KINDS, "string": QWEN_STRINGS | QWEN_HARD_STRINGS}
    calls, tools = [], []
    for i in range(draw(st.integers(1, 3))):
        types = draw(st.dictionaries(names, st.sampled_from(sorted(kinds)), max_size=4))
        args = {key: draw(kinds[kind]) for key, kind in types.items()}
        properties = {key: {"type": kind} for key, kind in types.items()}
        name = f"tool_{i}"
        tools.append({"type": "function", "function": {"name": name, "parameters": {"properties": properties}}})
        calls.append((name, args))
    return calls, tools


@settings(max_examples=60, deadline=None)
@given(qwen_typed_calls(), st.sampled_from(["", "Sure."]))
def test_qwen_xml_round_trip_in_real_qwen_tokens(smollm2_tokenizer, qwen_codec, calls_and_tools, content):
    """Render with the template, tokenize with Qwen's tokenizer (`<tool_call>` one token), stream the
    token deltas back through the parser: the same calls, typed by the tools' schemas."""
    from helpers import run_chunks, token_chunks

    calls, tools = calls_and_tools
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
    }
    out = render_template(smollm2_tokenizer, "qwen_xml", [{"role": "user", "content": "go"}, message], tools=tools)
    encode, decode = qwen_codec
    turn = qwen_turn(out)
    assume(decode(encode(turn)) == turn)  # the tokenizer normalises some characters (NFC): not ours to test
    result = result_of(run_chunks("qwen_xml", token_chunks(encode, decode, turn), tools))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content or None)


def test_llama_json_prompt_and_history(smollm2_tokenizer):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Paris and Tokyo?"},
        {
            "role": "assistant",
            "content": "Checking.",
            "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tōkyō"}'}},
            ],
        },
        {"role": "tool", "content": "sunny"},
    ]
    out = render_template(smollm2_tokenizer, "llama_json", messages, tools=TOOLS, add_generation_prompt=True)
    system = out.split("<|eot_id|>")[0].removeprefix(smollm2_tokenizer.bos_token)
    assert system.startswith("<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n\nBe brief.\n\n")
    assert '{"name": function name, "parameters": dictionary of argument names and values}' in system
    assert json.dumps(TOOLS[0]["function"], ensure_ascii=False) in system
    turn = out.split("<|start_header_id|>assistant<|end_header_id|>\n\n")[1].split("<|eot_id|>")[0]
    assert turn == 'Checking.\n{"name": "get_weather", "parameters": {"city": "Paris"}}; ' + (
        '{"name": "get_weather", "parameters": {"city": "Tōkyō"}}'
    )
    result = parse("llama_json", turn, TOOLS)
    assert result.content == "Checking."
    calls = [(c.name, c.arguments) for c in result.calls]
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tōkyō"})]
    assert "<|start_header_id|>ipython<|end_header_id|>\n\nsunny<|eot_id|>" in out
    assert out.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")
    in_user = render_template(
        smollm2_tokenizer,
        "llama_json",
        messages[1:2],
        tools=TOOLS,
        tools_in_user_message=True,
        add_generation_prompt=True,
    )
    user = in_user.split("<|start_header_id|>user<|end_header_id|>\n\n")[1]
    assert json.dumps(TOOLS[0]["function"]) in user and user.split("<|eot_id|>")[0].endswith("\nParis and Tokyo?")
    assert "The functions" not in in_user.split("<|start_header_id|>user")[0]


llama_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,12}", fullmatch=True)
tricky_text = st.lists(
    st.sampled_from(['"', "\\", "\n", "; {", '{"name": "x", "parameters": {}}', "<|python_tag|>", "ü", "🌧"])
    | st.text(max_size=5),
    max_size=4,
).map("".join)
llama_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(llama_names, st.dictionaries(tricky_text, llama_values, max_size=3)), min_size=1, max_size=3),
    st.sampled_from(["", "Sure.", "Let me check.\n\n"]),
)
def test_llama_json_round_trip_in_real_llama3_tokens(smollm2_tokenizer, llama3_codec, calls, content):
    """Render with the template, tokenize with Llama 3's tokenizer (llama-models), stream the token
    deltas back through the parser: the same calls and content."""
    from helpers import run_chunks, token_chunks

    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
    }
    out = render_template(smollm2_tokenizer, "llama_json", [{"role": "user", "content": "go"}, message])
    turn = out.split("<|start_header_id|>assistant<|end_header_id|>\n\n")[-1].removesuffix("<|eot_id|>")
    result = result_of(run_chunks("llama_json", token_chunks(*llama3_codec, turn)))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content.strip() or None)


# -- markdown_tools and xml_tools (issue 13) --------------------------------------------------------

block_identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
block_text = (
    st.lists(
        st.sampled_from(
            ["```", "````", "~~~", "\n", "'", '"', "\\", " ", "\t", "&amp;", "<", ">", "&", "</f>", "ü", "`"]
        )
        | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=5),
        max_size=6,
    )
    .map("".join)
    .filter(lambda t: unicodedata.normalize("NFC", t) == t)
)  # what a BPE round-trips
block_word = block_text.map(lambda w: w.replace("\n", "").replace("\r", ""))  # a word never spans lines


@st.composite
def block_calls(draw) -> tuple[list[tuple[str, dict]], list[dict]]:
    """Calls of tools whose required string parameters are words and a body, with their tools."""
    calls, tools = [], []
    for i in range(draw(st.integers(1, 3))):
        name = f"{draw(block_identifiers)}_{i}"
        params = draw(st.lists(block_identifiers, max_size=3, unique=True))
        args = {p: draw(block_word) for p in params[:-1]} | ({params[-1]: draw(block_text)} if params else {})
        properties = {p: {"type": "string"} for p in params}
        tools.append({"type": "function", "function": {"name": name, "parameters": {
            "type": "object", "properties": properties, "required": params}}})  # fmt: skip
        calls.append((name, args))
    return calls, tools


@settings(max_examples=60, deadline=None)
@given(block_calls(), st.sampled_from(["", "Sure.", "Here:\n```python\nx = 1\n```"]))
@pytest.mark.parametrize("fmt", ["markdown_tools", "xml_tools"])
def test_tool_block_round_trip(smollm2_tokenizer, qwen_codec, fmt, calls_and_tools, content):
    """History calls rendered as blocks (words shell-quoted, fences longer than the body's, XML
    escaped) parse back to themselves, in Qwen's real token deltas; a fenced answer stays content."""
    from helpers import run_chunks, token_chunks

    calls, tools = calls_and_tools
    if fmt == "markdown_tools":  # a fence has no escape: a body's final `\r` joins the closing line break
        assume(not any(v.endswith("\r") for _, args in calls for v in args.values()))
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in calls],
    }
    out = render_template(smollm2_tokenizer, fmt, [{"role": "user", "content": "go"}, message], tools=tools)
    turn = out.split("<|im_start|>assistant\n")[-1].removesuffix("<|im_end|>\n")
    result = result_of(run_chunks(fmt, token_chunks(*qwen_codec, turn), tools))
    assert [(c.name, c.arguments) for c in result.calls] == calls
    assert result.content == (content or None)


@pytest.mark.parametrize("fmt", ["markdown_tools", "xml_tools"])
def test_tool_block_prompt_shows_each_tool_as_its_block(smollm2_tokenizer, fmt):
    parameters = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}
    save = {
        "name": "save",
        "description": "Write a file",
        "parameters": {**parameters, "required": ["path", "content"]},
    }
    messages = [{"role": "user", "content": "go"}]
    prompt = render_template(
        smollm2_tokenizer, fmt, messages, tools=[{"type": "function", "function": save}], add_generation_prompt=True
    )
    shown = "```save <path>\n<content>\n```" if fmt == "markdown_tools" else '<save args="<path>">\n<content>\n</save>'
    assert shown in prompt and "Write a file" in prompt
    assert prompt.endswith("<|im_start|>assistant\n")


# -- every registered format ------------------------------------------------------------------------

WRITTEN_CALLS = [("get_weather", {"city": "Paris"}), ("search", {"query": "café in Zürich"})]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_template_writes_what_its_writer_writes(fmt):
    """The assistant turn a format's template renders for calls (the toolbox's `write_calls`) and its
    spec's `write` hold the same calls, and parse() reads both back; the prompt shows every tool."""
    from toolcall_parsers.detect import PROBE_TOOLS, template_renderer
    from toolcall_parsers.toolbox.forced import write_calls

    templated = write_calls(fmt, WRITTEN_CALLS, content="Sure.", tools=PROBE_TOOLS)
    written = FORMATS[fmt].write(WRITTEN_CALLS)
    for text in (templated, written):
        result = parse(fmt, text, PROBE_TOOLS)
        assert [(c.name, c.arguments) for c in result.calls] == WRITTEN_CALLS, text
    # a template may open a turn with the reasoning's closer (MiniMax-M3's does): content without a
    # reasoning parser in front, as every reasoning marker is
    content = parse(fmt, templated, PROBE_TOOLS).content.removeprefix(FORMATS[fmt].think_markers[1])
    assert content == "Sure." or (FORMATS[fmt].stream_class.keeps_whitespace and content.rstrip() == "Sure.")
    render = template_renderer(FORMATS[fmt].template_path.read_text(encoding="utf-8"))
    prompt = render([{"role": "user", "content": "go"}], add_generation_prompt=True, tools=PROBE_TOOLS)
    assert all(tool["function"]["name"] in prompt for tool in PROBE_TOOLS)
