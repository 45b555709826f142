"""internlm_json behaviour that is InternLM's own (the rest is hermes_json's machine, proven by the
corpus, the properties and the adapter tests every format gets): the opener's two spellings, as
vLLM and SGLang detokenize InternLM's special tokens, and the interpreter plugin being text."""

from __future__ import annotations

import pytest
from helpers import both_paths, calls_of
from toolcall_parsers import parse
from toolcall_parsers.formats import internlm_json as internlm

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
BODY = '\n{"name": "get_weather", "parameters": {"city": "Tokyo"}}'


@pytest.fixture(scope="module")
def internlm_tokens(smollm2_dir):
    """SmolLM2's tokenizer with InternLM's action tokens added as special tokens."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2_dir)
    tok.add_tokens([internlm.ACTION_START, internlm.PLUGIN, internlm.ACTION_END], special_tokens=True)
    return tok


@pytest.mark.parametrize("opener", [internlm.START, internlm.SPACED_START], ids=["joined", "spaced"])
def test_both_spellings_of_the_opener_open_a_call(internlm_tokens, opener):
    """vLLM decodes `<|action_start|><|plugin|>` (our adapter turns spaces between special tokens
    off); SGLang's detokenizer puts a space between them, which its detector expects."""
    text = f"Checking. {opener}{BODY}{internlm.ACTION_END}"
    result = both_paths("internlm_json", text, TOOLS, internlm_tokens, eager=True)
    assert calls_of(result) == [("get_weather", {"city": "Tokyo"})]
    assert result.content == "Checking."


@pytest.mark.parametrize("plugin", ["<|interpreter|>", " <|interpreter|>", "\n"])
def test_an_action_for_another_plugin_is_text(plugin):
    text = f"<|action_start|>{plugin}{BODY}<|action_end|>"
    result = parse("internlm_json", text, TOOLS)
    assert result.calls == [] and result.content == text


def test_the_writer_writes_internlms_parameters_key():
    assert internlm.FORMAT.write([("get_weather", {"city": "Tokyo"})]) == f"{internlm.START}{BODY}{internlm.ACTION_END}"
