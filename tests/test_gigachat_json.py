"""gigachat_json behaviour: what is GigaChat's own (the rest is hermes_json's machine, proven by the
corpus, the properties and the adapter tests every format gets): GigaChat 3's and 3.1's own chat
templates (their history read back, `detect` on them) and the two headers."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse
from toolcall_parsers.formats import gigachat_json as gigachat

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
CALL = ("get_weather", {"city": "Москва", "days": 2})
HISTORY = [
    {"role": "user", "content": "Погода в Москве?"},
    {
        "role": "assistant",
        "content": "Сейчас проверю.",
        "tool_calls": [{"id": "c0", "type": "function", "function": {"name": CALL[0], "arguments": CALL[1]}}],
    },
    {"role": "tool", "tool_call_id": "c0", "content": '{"t": 3}'},
]
TEMPLATES = ["GigaChat3-10B-A1.8B", "GigaChat3.1-10B-A1.8B"]


@pytest.fixture(scope="module")
def gigachat_tokens(smollm2_dir):
    """SmolLM2's tokenizer with GigaChat's separators added as special tokens, as they are in
    GigaChat's vocabulary (no GigaChat tokenizer ships on PyPI)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    tok.add_special_tokens({"additional_special_tokens": [gigachat.TOKEN, gigachat.MESSAGE_END, "<|role_sep|>"]})
    return tok


@pytest.mark.parametrize("name", TEMPLATES)
def test_gigachat_own_template_writes_what_this_parser_reads(gigachat_tokens, model_template, name):
    """GigaChat's templates: the content, then the call (3: a `function call` message after the
    content's message end; 3.1: `<|function_call|>` right after the content)."""
    out = gigachat_tokens.apply_chat_template(HISTORY, chat_template=model_template(name), tools=TOOLS, tokenize=False)
    turn = out.split("assistant<|role_sep|>\n")[1].split("function result<|role_sep|>")[0]
    result = both_paths("gigachat_json", turn, TOOLS, gigachat_tokens, eager=True)
    assert calls_of(result) == [CALL]
    assert result.content == "Сейчас проверю."


@pytest.mark.parametrize("name", TEMPLATES)
def test_detect_names_this_format_for_gigachat_own_templates(gigachat_tokens, model_template, name):
    from toolcall_parsers.detect import detect_template

    assert detect_template(gigachat_tokens, model_template(name), name).parser == "gigachat_json"


def test_a_message_end_without_the_header_is_text():
    """`<|message_sep|>` ends a call or belongs to GigaChat 3's header; alone it is text."""
    text = "Done.<|message_sep|>\n\nfunction result"
    assert parse("gigachat_json", text, TOOLS).content == text
