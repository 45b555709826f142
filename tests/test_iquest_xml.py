"""iquest_xml behaviour: what is IQuest's own (the rest is glm_xml's machine, proven by its tests, this
format's corpus, the properties and the adapter tests every format gets): IQuest's call tag and
GLM's are each other's text, our template's history reads back, the constraints in GLM's style."""

from __future__ import annotations

from helpers import both_paths, calls_of, grammar_accepts, render_template, tag_grammar
from toolcall_parsers import parse
from toolcall_parsers.formats import ConstraintRequest
from toolcall_parsers.formats import iquest_xml as iq

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "run",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "count": {"type": "integer"}},
                "required": ["code"],
            },
        },
    }
]
CALLS = [("run", {"code": 'print("hi")\n', "count": 2}), ("run", {"code": "x"})]


def test_glm_tags_and_iquest_tags_are_each_others_text():
    assert (
        parse("iquest_xml", "<tool_call>run<arg_key>code</arg_key><arg_value>x</arg_value></tool_call>", TOOLS).calls
        == []
    )
    assert parse("glm_xml", iq.FORMAT.write(CALLS), TOOLS).calls == []


def test_our_template_history_reads_back(smollm2_tokenizer):
    history = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": "Running.",
            "tool_calls": [{"type": "function", "function": {"name": n, "arguments": a}} for n, a in CALLS],
        },
        {"role": "tool", "content": "hi"},
        {"role": "tool", "content": "x"},
    ]
    out = render_template(smollm2_tokenizer, "iquest_xml", history, tools=TOOLS, add_generation_prompt=True)
    assert (
        "<|im_start|>user\n<tool_response>\nhi\n</tool_response>\n<tool_response>\nx\n</tool_response><|im_end|>" in out
    )
    turn = out.split("<|im_start|>assistant\n")[1].split("<|im_end|>")[0]
    assert turn == "Running." + iq.FORMAT.write(CALLS)
    result = both_paths("iquest_xml", turn, TOOLS, smollm2_tokenizer, eager=True)
    assert calls_of(result) == CALLS and result.content == "Running."
    assert out.endswith("<|im_start|>assistant\n")


def test_required_pins_the_schema_in_glms_style():
    grammar = tag_grammar(iq.FORMAT.required_constraint(ConstraintRequest({"run": TOOLS[0]["function"]["parameters"]})))
    assert grammar_accepts(grammar, iq.FORMAT.write(CALLS))
    assert not grammar_accepts(grammar, iq.FORMAT.write([("run", {"count": 2})]))  # code is required
    assert not grammar_accepts(grammar, iq.FORMAT.write([("walk", {"code": "x"})]))
