"""seed_xml behaviour: what is Seed-OSS's own (the rest is qwen_xml's machine, proven by the corpus,
the properties and the adapter tests every format gets): Seed's block and think tags as single
tokens, Seed-OSS's own chat template (its history read back, `detect` on it), values as Seed's
template writes them, and vLLM's `seed_oss` reasoning parser in front of ours."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import both_paths, calls_of, render_template
from toolcall_parsers import parse
from toolcall_parsers.formats import seed_xml as seed

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "metric": {"type": "boolean"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "save",
            "description": "Write a file.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    },
]
HISTORY = [
    {"role": "user", "content": "Weather in Paris, then save it"},
    {
        "role": "assistant",
        "content": "Checking.",
        "reasoning_content": "Two calls.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}},
            {"type": "function", "function": {"name": "save", "arguments": {"path": "w.txt", "content": "a\nb"}}},
        ],
    },
    {"role": "tool", "content": "sunny"},
    {"role": "tool", "content": "ok"},
]
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("save", {"path": "w.txt", "content": "a\nb"})]


@pytest.fixture(scope="module")
def seed_tokens():
    """SmolLM2's tokenizer with Seed's block and think tags added as single tokens, as they are in
    Seed-OSS's vocabulary (no Seed tokenizer ships on PyPI)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ensure_model())
    tok.add_tokens([seed.START, seed.END, *seed.FORMAT.think_markers, "<seed:bos>", "<seed:eos>"])
    return tok


def turn_of(rendered: str) -> str:
    """The assistant turn's text, as the model would have written it."""
    return rendered.split("<seed:bos>assistant")[1].split("<seed:eos>")[0]


def test_seeds_own_template_writes_what_this_parser_reads(seed_tokens, model_template):
    """Seed-OSS's template: reasoning, content, then each call's block after a line break, values
    right between their tags, numbers with Python's str()."""
    out = seed_tokens.apply_chat_template(HISTORY, chat_template=model_template("ByteDance-Seed-OSS"), tokenize=False)
    result = both_paths("seed_xml", turn_of(out), TOOLS, seed_tokens, eager=True)
    assert calls_of(result) == CALLS
    assert result.content == "<seed:think>Two calls.</seed:think>\nChecking."


def test_our_template_writes_the_same_turn_shape(seed_tokens):
    out = render_template(seed_tokens, "seed_xml", HISTORY, tools=TOOLS, add_generation_prompt=True)
    assert out.endswith("<seed:bos>assistant\n")
    assert "<seed:bos>tool\nsunny<seed:eos><seed:bos>tool\nok<seed:eos>" in out
    result = both_paths("seed_xml", turn_of(out), TOOLS, seed_tokens)
    assert calls_of(result) == CALLS
    assert result.content == "<seed:think>Two calls.</seed:think>\nChecking."


def test_detect_names_this_format_for_seeds_own_template(seed_tokens, model_template):
    from toolcall_parsers.detect import detect_template

    assert detect_template(seed_tokens, model_template("ByteDance-Seed-OSS"), "Seed-OSS").parser == "seed_xml"


@pytest.mark.parametrize(
    "value", ["\nleading break", "trailing break\n", "\r\nCRLF", "x\r", "", "a </parameter> b", "<seed:think>"]
)
def test_values_at_the_edges_of_inline_framing_read_back(value, seed_tokens):
    """The writer writes every value right between its tags, as Seed's template does."""
    calls = [("save", {"path": "p", "content": value})]
    assert f"<parameter=content>{value}</parameter>" in seed.FORMAT.write(calls)
    assert calls_of(both_paths("seed_xml", seed.FORMAT.write(calls), TOOLS, seed_tokens, eager=True)) == calls


EDIT = {"path": "a.py", "content": "def f():\n    return 1\n"}


def test_a_code_edits_final_newline_is_the_files(seed_tokens, model_template):
    """Seed-OSS's template writes `<parameter=content>def f():\\n    return 1\\n</parameter>`: no
    line break around a value is markup, so the file's last newline stays (it was taken off as
    Qwen's framing), and so do line breaks that open a value."""
    history = [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "save", "arguments": EDIT}}],
        },
    ]
    out = seed_tokens.apply_chat_template(history, chat_template=model_template("ByteDance-Seed-OSS"), tokenize=False)
    assert "<parameter=content>def f():\n    return 1\n</parameter>" in turn_of(out)
    assert calls_of(both_paths("seed_xml", turn_of(out), TOOLS, seed_tokens, eager=True)) == [("save", EDIT)]
    text = "<seed:tool_call>\n<function=save>\n<parameter=content>\n\nx\n\n</parameter>\n</function>\n</seed:tool_call>"
    assert calls_of(both_paths("seed_xml", text, TOOLS, eager=True)) == [("save", {"content": "\n\nx\n\n"})]


@pytest.mark.parametrize(
    ("body", "arguments"),
    [
        ("<parameter=path>a.py\n<parameter=content>x\n</parameter>\n</function>", {"path": "a.py", "content": "x\n"}),
        ("<parameter=path>a.py\n</function>", {"path": "a.py"}),
        ("<parameter=path>a.py\n\n</function>", {"path": "a.py\n"}),
    ],
)
def test_a_dropped_parameter_close_takes_only_the_templates_line_break(body, arguments):
    """Where the model dropped `</parameter>`, the line break Seed's template writes after that tag
    goes with it, and any other is the value's."""
    text = f"<seed:tool_call>\n<function=save>\n{body}\n</seed:tool_call>"
    assert calls_of(both_paths("seed_xml", text, TOOLS, eager=True)) == [("save", arguments)]


def test_qwen_tags_and_seed_tags_are_each_others_text():
    qwen_call = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    assert parse("seed_xml", qwen_call, TOOLS).calls == []
    # qwen_xml reads a declared tool's function without its block (Qwen3-Coder drops <tool_call>):
    # Seed's block tags around it stay text
    result = parse("qwen_xml", seed.FORMAT.write([("get_weather", {"city": "Paris"})]), TOOLS)
    assert result.content == "<seed:tool_call>\n\n</seed:tool_call>" and len(result.calls) == 1


def stripped(reasoning: str | None) -> str | None:
    return reasoning.strip() if reasoning else None


CALL = seed.FORMAT.write([("get_weather", {"city": "Oslo"})])
REASONING_CASES = [
    ("<seed:think>The user wants Oslo.</seed:think>Let me look.\n" + CALL, ("The user wants Oslo.", "Let me look.")),
    ("<seed:think>Budget 512.</seed:cot_budget_reflect>\nOslo.</seed:think>\n" + CALL,
     ("Budget 512.</seed:cot_budget_reflect>\nOslo.", None)),
    ("<seed:think></seed:think>" + CALL, (None, None)),
]  # fmt: skip
"""vLLM 0.32's `seed_oss` reasoning parser ends the reasoning at a `<seed:tool_call>` written inside it,
so a call Seed quotes while thinking becomes a call (and the finished and streamed contents differ
on the `</seed:think>` left after it): the reasoning issue's to fix, not a case here."""


@pytest.mark.parametrize(("text", "expected"), REASONING_CASES, ids=["closed", "budget note", "empty"])
def test_with_vllms_seed_oss_reasoning_parser(seed_tokens, text, expected):
    """`--reasoning-parser seed_oss --tool-call-parser seed_xml`: the same reasoning, content and calls
    finished and streamed a token per delta."""
    pytest.importorskip("vllm")
    from test_vllm_adapter import complete_through, make_request, stream_through
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    request = make_request(tools=TOOLS)
    reasoning, content, calls = complete_through(seed_tokens, text, request, "seed_oss", fmt="seed_xml")
    streamed = stream_through(seed_tokens, text, request, "seed_oss", fmt="seed_xml")
    want = [("get_weather", '{"city": "Oslo"}')]
    assert (stripped(reasoning), content, [(c.name, c.arguments) for c in calls]) == (*expected, want)
    assert (stripped(streamed["reasoning"]), streamed["content"]) == expected
    assert [(c["name"], c["arguments"]) for c in streamed["calls"]] == want
