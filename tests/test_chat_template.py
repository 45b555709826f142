# ruff: noqa: RUF001, RUF002  (DeepSeek's and GigaChat's markers are spelled with U+FF5C, the fullwidth bar)
"""Formats derived from a chat template alone (`from_chat_template`): on every template we have whose
calls one of our data families reads, the derived format reads the named format's corpus exactly as
the named format does, whole, char by char and in random chunks; the same with every marker the
template writes renamed (so the reading comes from rendering, never from a lookup); templates that
teach no call or no family of ours are refused with the reason; a format none of ours names
(Nemotron Nano v2's `<TOOLCALL>[..]</TOOLCALL>`) is served by `auto`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from derive_scores import renamed, renames, score
from helpers import needs
from toolcall_parsers import FORMATS, from_chat_template, from_response_template, parse
from toolcall_parsers.core.logs import logs_silenced

pytestmark = needs("transformers")

OURS_EXACT = [
    "hermes_json",
    "granite_fc_json",
    "jamba_json",
    "longcat_json",
    "qwen_xml",
    "zyphra_xml",
    "iquest_xml",
    "telechat4_xml",
    "minimax_xml",
    "olmo3_pythonic",
]
"""Our templates whose derived format equals the named one on its whole corpus. The others of the
families differ where the template does not show what the named format reads: `seed_xml`'s
bare functions are text (1 of 73), `step5_xml` keeps content whitespace (47 of 63 equal),
`internlm_json`'s spaced header and `gigachat_json`'s role header are other openers, `phi4_json`'s
list has no closing tag, `dots_xml`'s JSON bodies are a fallback its template never writes (32 of
39); `python scripts/derive_scores.py` gives every score."""

MODELS_EXACT = {
    "Qwen-Qwen2.5-7B-Instruct": "hermes_json",
    "Qwen-Qwen3-0.6B": "hermes_json",
    "NousResearch-Hermes-3-Llama-3.1-8B-tool_use": "hermes_json",
    "ibm-granite-granite-4.1": "hermes_json",
    "Bielik-11B-v3.0-Instruct": "hermes_json",
    "MiMo-VL": "hermes_json",
    "MiniMax-M1": "jamba_json",
    "Apriel-1.6-15b-Thinker-fixed": "jamba_json",
    "Qwen3-Coder": "qwen_xml",
    "Qwen3.5-4B": "qwen_xml",
    "StepFun3.5-Flash": "qwen_xml",
    "MiniMax-M2": "minimax_xml",
}
"""Real templates (llama.cpp's collection) whose derived format equals the named one, renamed too."""


KEYS_AND_VALUES = [
    "GLM-4.6",
    "GLM-4.7-Flash",
    "inclusionai-ling-3.0-flash",
    "poolside-Laguna-XS.2",
    "poolside-Laguna-S-2.1",
    "poolside-Laguna-XS-2.1",
    "Spark2.5",
]
"""GLM's family: the derived format reads `glm_xml`'s corpus exactly. Renamed, one case is a cut
close (`</tool_`) that a renaming of whole markers cannot spell, so the renamed reading is scored
(`scripts/derive_scores.py`: 81 of 82), not asserted here."""


@pytest.mark.parametrize("model", KEYS_AND_VALUES)
def test_glms_family_is_derived_from_its_models_templates(model_template, model):
    with logs_silenced():
        derived = from_chat_template(model_template(model))
        assert type(derived.spec).__name__ == "KeyValueFormat"
        assert score(derived, "glm_xml") == (82, 82)


def _check(template: str, named: str) -> None:
    with logs_silenced():
        derived = from_chat_template(template)
        if FORMATS[named].spec is not None and named != "jamba_json":  # jamba_json: JSON after a marker,
            # whose blocks these read as JSON in markers
            assert type(derived.spec) is type(FORMATS[named].spec)
        equal, total = score(derived, named)
        assert (equal, total) == (total, total) and total > 30
        table = renames(derived, template)
        again = from_chat_template(renamed(template, table))
        assert not set(again.markers) & set(derived.markers)
        assert score(again, named, table) == (total, total)


@pytest.mark.parametrize("name", OURS_EXACT)
def test_our_templates_derive_the_named_reading_also_renamed(name):
    _check(FORMATS[name].template_path.read_text(encoding="utf-8"), name)


@pytest.mark.parametrize(("model", "named"), sorted(MODELS_EXACT.items()))
def test_the_models_own_templates_derive_the_named_reading_also_renamed(model_template, model, named):
    _check(model_template(model), named)


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("LFM2.5-Instruct", "renders no call"),  # lists the tools, renders no history calls
        ("openai-gpt-oss-120b", "no family of ours reads the call"),  # channel messages
        ("Kimi-K2-Instruct", "does not render an assistant call"),  # transformers' sandbox refuses it
    ],
)
def test_a_template_no_family_reads_is_refused_with_the_reason(model_template, model, says):
    with pytest.raises(ValueError, match=says):
        from_chat_template(model_template(model))


NEMOTRON_CALL = '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]</TOOLCALL>'


def test_a_format_none_of_ours_names_is_derived_and_read(model_template):
    """Nemotron Nano v2 writes `<TOOLCALL>[..]</TOOLCALL>`, which no named format of ours reads; the
    derived format reads it, string-aware and in any chunking."""
    fmt = from_chat_template(model_template("NVIDIA-Nemotron-Nano-v2"))
    assert (fmt.spec.tags.start, fmt.spec.tags.end) == ("<TOOLCALL>", "</TOOLCALL>")
    text = "Let me check.\n" + NEMOTRON_CALL.replace("Paris", "Paris ]</TOOLCALL>")
    result = parse(fmt, text)
    assert [(c.name, c.arguments) for c in result.calls] == [("get_weather", {"city": "Paris ]</TOOLCALL>", "days": 3})]
    assert result.content == "Let me check."
    assert not any(parse(name, NEMOTRON_CALL).calls for name in ("hermes_json", "jamba_json", "llama_json"))


@needs("vllm")
def test_auto_serves_a_derived_format_where_no_named_one_fits(smollm2_dir, model_template, tmp_path):
    from toolcall_parsers.detect import PROBE_TOOLS
    from toolcall_parsers.vllm.auto import AutoToolParser
    from transformers import AutoTokenizer
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    tokenizer.chat_template = model_template("NVIDIA-Nemotron-Nano-v2")
    parser = AutoToolParser(tokenizer, PROBE_TOOLS)
    assert type(parser).__name__ == "FromChatTemplateToolParser"
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=PROBE_TOOLS)
    result = parser.extract_tool_calls("Sure.\n" + NEMOTRON_CALL, request)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3})
    ]


PROBE_TEMPLATE = (
    "{% for m in messages %}{% if m.role == 'assistant' %}<|assistant|>{% if m.reasoning_content %}<think>"
    "{{ m.reasoning_content }}</think>{% endif %}{{ m.content or '' }}{% for tc in m.tool_calls or [] %}CALLS"
    "{% endfor %}<|end|>{% else %}<|user|>{{ m.content }}<|end|>{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
"""A small template of invented markers; CALLS is how it writes each call."""


def test_invented_markers_and_a_think_tag_right_after_a_tag_are_read_whole():
    """The think close is read whole where the turn's own tag ends in the same `>` (an outside
    review found `</think` cut), and invented call markers are derived and read."""
    fmt = from_chat_template(PROBE_TEMPLATE.replace("CALLS", "<<CALL>>{{ tc.function | tojson }}<</CALL>>"))
    assert fmt.think_pairs == (("<think>", "</think>"),)
    assert (fmt.spec.tags.start, fmt.spec.tags.end) == ("<<CALL>>", "<</CALL>>")
    text = '<think>plan</think>Sure.<<CALL>>{"name": "f", "arguments": {"a": "<</CALL>>"}}<</CALL>>'
    assert [(c.name, c.arguments) for c in parse(fmt, text).calls] == [("f", {"a": "<</CALL>>"})]


INVOKES = (
    '<<ACT>>\n<do name="{{ tc.function.name }}">\n{% for k, v in tc.function.arguments.items() %}'
    '<arg name="{{ k }}">{{ v }}</arg>\n{% endfor %}</do>\n<</ACT>>'
)


@pytest.mark.parametrize(
    ("calls", "says"),
    [
        ("<tc>{{ {'type': 'function', 'function': tc.function} | tojson }}</tc>", "sits inside other JSON"),
        ("{{ raise_exception('no calls here') }}", "does not render.*TemplateError: no calls here\\)"),
        ("{{ undefined_name.attribute }}", "does not render.*UndefinedError"),
        # an outside review: invokes whose arguments are no tags (an IndexError once), and a block
        # start that is the start of the think tag (read one way whole, another char by char)
        (INVOKES.replace('<arg name="{{ k }}">{{ v }}</arg>', "{{ k }}={{ v }}"), "invokes: a parameter is not"),
        (INVOKES.replace("<<ACT>>", "<think").replace("<</ACT>>", "</think"), "'<think' and the think tag"),
    ],
)
def test_what_cannot_be_derived_is_a_value_error_that_says_why(calls, says):
    with pytest.raises(ValueError, match=says):
        from_chat_template(PROBE_TEMPLATE.replace("CALLS", calls))


def test_indented_invokes_are_read():
    fmt = from_chat_template(PROBE_TEMPLATE.replace("CALLS", INVOKES.replace("\n<do", "\n  <do")))
    assert fmt.markers[2] == "<do name="


def test_invokes_of_invented_markers_are_derived_and_read():
    """A template that writes invokes in tags no format of ours uses: the invoke family, read with
    `minimax_xml`'s rules (a close tag inside a value is data unless the next tag follows it)."""
    fmt = from_chat_template(PROBE_TEMPLATE.replace("CALLS", INVOKES))
    assert fmt.markers == ("<<ACT>>", "<</ACT>>", "<do name=", "</do>", "<arg name=", "</arg>")
    text = 'Sure.<<ACT>>\n<do name="f">\n<arg name="a">x</arg> y</arg>\n<arg name="n">3</arg>\n</do>\n<</ACT>>'
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"n": {"type": "integer"}}}}}]
    assert [(c.name, c.arguments) for c in parse(fmt, text, tools).calls] == [("f", {"a": "x</arg> y", "n": 3})]
    assert fmt.write([("f", {"a": "x", "n": 3})]) in text.replace("x</arg> y", "x")


MUSING = PROBE_TEMPLATE.replace("<think>", "<muse>").replace("</think>", "</muse>")
MUSING = MUSING.replace("CALLS", "<<CALL>>{{ tc.function | tojson }}<</CALL>>")
MUSED = (
    '<muse>Paris, so <<CALL>> the tool.</muse>Sure.<<CALL>>{"name": "get_weather", "arguments": {"city": "Paris"}}'
    "<</CALL>>"
)


@needs("vllm")
def test_vllms_reasoning_parser_of_a_chat_template_splits_at_its_own_think_tags(smollm2_dir):
    """`--reasoning-parser from_chat_template`: the think tags the template renders (invented ones
    here) split the reasoning off, and the tool parser of the same name reads the answer."""
    from toolcall_parsers.detect import PROBE_TOOLS
    from transformers import AutoTokenizer
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.plugins import load_general_plugins
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    load_general_plugins()
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    tokenizer.chat_template = MUSING
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=PROBE_TOOLS)
    reasoning = ReasoningParserManager.get_reasoning_parser("from_chat_template")(tokenizer)
    thought, answer = reasoning.extract_reasoning(MUSED, request)
    assert (thought, answer) == ("Paris, so <<CALL>> the tool.", MUSED.split("</muse>")[1])
    tools = ToolParserManager.get_tool_parser("from_chat_template")(tokenizer, PROBE_TOOLS)
    result = tools.extract_tool_calls(answer, request)
    assert result.content == "Sure." and [c.function.name for c in result.tool_calls] == ["get_weather"]


@needs("sglang")
def test_sglangs_reasoning_detector_of_a_chat_template_splits_alike_streamed_or_not(smollm2_dir):
    from helpers import leaves_no_trace
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.plugins import load_plugins
    from transformers import AutoTokenizer

    with leaves_no_trace():
        load_plugins()
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    tokenizer.chat_template = MUSING
    options = {"force_reasoning": False, "tokenizer": tokenizer, "tool_call_parser_active": True}
    expected = ("Paris, so <<CALL>> the tool.", MUSED.split("</muse>")[1])
    assert ReasoningParser("from_chat_template", stream_reasoning=False, **options).parse_non_stream(MUSED) == expected
    streaming = ReasoningParser("from_chat_template", stream_reasoning=True, **options)
    pieces = [streaming.parse_stream_chunk(c) for c in MUSED] + [streaming.parse_stream_end()]
    assert ("".join(r or "" for r, _ in pieces), "".join(n or "" for _, n in pieces)) == expected


def test_the_cli_derives_from_a_chat_template_file_or_a_model_folder(model_template, tmp_path, capsys):
    """`toolcall-parsers derive` of a Jinja file, and of a folder with no response template (its
    `chat_template.jinja`, else its config's `chat_template`): the spec, and the response template
    it exports as where its family has one."""
    from toolcall_parsers.cli import main

    (tmp_path / "MiniMax-M2.jinja").write_text(model_template("MiniMax-M2"))
    assert main(["derive", str(tmp_path / "MiniMax-M2.jinja"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["derived_by"], report["family"]) == ("chat template", "Invokes")
    assert report["spec"]["start"] == "<minimax:tool_call>" and report["response_template"].startswith(
        "not expressible"
    )
    folder = tmp_path / "model"
    folder.mkdir()
    config = {"chat_template": model_template("Qwen3-Coder"), "eos_token": "<|im_end|>"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    assert main(["derive", str(folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["derived_by"], report["family"]) == ("chat template", "QwenFunctions")
    exported = report["response_template"]
    assert from_response_template(exported).markers == FORMATS["qwen_xml"].markers


FLAGGED = {
    "deepseek-ai-DeepSeek-V3.2": "<｜DSML｜function_calls>",
    "deepseek-ai-DeepSeek-V4": "<｜DSML｜tool_calls>",
    "deepseek-ai-DeepSeek-V4-Flash-0731": "<｜DSML｜tool_calls>",
}
"""DeepSeek's own templates and the block tag each writes: `deepseek_dsml` reads three generations'
spellings, a template shows its own."""


@pytest.mark.parametrize(("model", "block"), sorted(FLAGGED.items()))
def test_deepseeks_templates_derive_flagged_invokes_reading_their_generation_exactly(model_template, model, block):
    """The derived format reads every `deepseek_dsml` corpus case written in its generation's
    spelling (the block tag it writes, no other generation's) as the named format does, in every
    chunking; the other generations' are what the template cannot show."""
    from derive_scores import chunkings, events
    from helpers import load_corpus

    with logs_silenced():
        derived = from_chat_template(model_template(model))
        assert type(derived.spec).__name__ == "FlaggedInvokes" and derived.markers[0] == block
        others = {"<｜DSML｜function_calls>", "<｜DSML｜tool_calls>", "<｜DSML｜ calls>"} - {block}
        cases = [c for c in load_corpus("deepseek_dsml") if not c.get("options")]
        own = [c for c in cases if block in c["text"] and not any(o in c["text"] for o in others)]
        assert len(own) > 10
        for case in own:
            for chunks in chunkings(case["text"]):
                named = events(FORMATS["deepseek_dsml"], chunks, case.get("tools"))
                assert events(derived, chunks, case.get("tools")) == named, case["id"]


def test_gigachat_35s_template_derives_its_format_exactly():
    """Our `gigachat_gcml` template: the whole corpus; renamed (its tags are assembled from the
    `｜GCML｜` prefix, renamed wherever it stands), all but a call drafted in a think block the
    template never renders (`scripts/derive_scores.py`: 46 of 47)."""
    with logs_silenced():
        derived = from_chat_template(FORMATS["gigachat_gcml"].template_path.read_text(encoding="utf-8"))
        assert type(derived.spec) is type(FORMATS["gigachat_gcml"].spec)
        assert score(derived, "gigachat_gcml") == (47, 47)


DS_CALL, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"
WRAPPED = re.compile(r'<｜tool▁sep｜>[^{]*\{\s*"(arguments|input)"')
"""DeepSeek's wrapped arguments, which `deepseek_json` takes off (a model's habit no template shows)."""


def _calls(text: str, marker: str) -> list[str]:
    return text.split(marker)[1:]


def _deepseek_v31(text: str) -> bool:
    return DS_CALL in text and "```" not in text and not WRAPPED.search(text)


def _deepseek_r1(text: str) -> bool:
    calls = _calls(text, DS_CALL)
    v3 = [
        c.lstrip().startswith(f"function{DS_SEP}") and not c.lstrip().startswith(f"function{DS_SEP}{{") for c in calls
    ]
    return bool(calls) and all(v3) and not WRAPPED.search(text)


def _kimi(text: str) -> bool:
    calls = _calls(text, "<|tool_call_begin|>")
    header = re.compile(r"\s*functions\.[^\s<:]+:[0-9]+\s*<\|tool_call_argument_begin\|>")
    return "<|tool_calls_section_begin|>" in text and "<think>" not in text and all(map(header.match, calls))


def _mistral(with_ids: bool) -> Callable[[str], bool]:
    header = re.compile(r"[A-Za-z0-9_.-]+" + (r"(\[CALL_ID\][A-Za-z0-9]{9})?" if with_ids else "") + r"\[ARGS\]")

    def own(text: str) -> bool:
        calls = _calls(text, "[TOOL_CALLS]")
        return bool(calls) and "[THINK]" not in text and "<think>" not in text and all(map(header.match, calls))

    return own


def _hy3(text: str) -> bool:
    return ":opensource>" in text and not re.search(r"</?tool_calls?>|<tool_sep>", text)


def _ifm_untyped(text: str) -> bool:
    return "<ifm|tool_call>" in text and "<ifm|arg_type>" not in text and "think_fast" not in text


def _lfm2_plain(text: str) -> bool:
    """Cases `lfm2_pythonic` reads alike without LFM2's own spelling (sets, leading zeros, quotes
    inside quotes: what its models write, which no template shows)."""
    from dataclasses import replace

    from derive_scores import events

    plain = replace(FORMATS["lfm2_pythonic"].spec, spelling=None).format(__name__)
    with logs_silenced():
        return "<|tool_call_start|>" in text and events(plain, [text], None) == events(
            FORMATS["lfm2_pythonic"], [text], None
        )


def _gigachat31(text: str) -> bool:
    return "<|function_call|>" in text and "role_sep" not in text and "<|message_sep|>" not in text


def _apertus(text: str) -> bool:
    return "<|inner_prefix|>" not in text


def _cohere(text: str) -> bool:
    return '"tool_name"' in text and '"name"' not in text and "<|START_THINKING|>" not in text


def _gemma4(text: str) -> bool:
    return "<|tool_call>" in text and not re.search(r"<start_function_call>|<\|tool_response>", text)


OWN_SPELLING = {
    "google-gemma-4-31B-it": ("gemma_calls", "LiteralCalls", _gemma4),
    "google-gemma-4-31B-it-interleaved": ("gemma_calls", "LiteralCalls", _gemma4),
    "ours: gemma_calls": ("gemma_calls", "LiteralCalls", _gemma4),
    "Cohere2MoE": ("cohere_json", "MarkedJsonFormat", _cohere),
    "CohereForAI-c4ai-command-r7b-12-2024-tool_use": ("cohere_json", "MarkedJsonFormat", _cohere),
    "ours: cohere_json": ("cohere_json", "MarkedJsonFormat", _cohere),
    "Apertus-8B-Instruct": ("apertus_json", "MarkedJsonFormat", _apertus),
    "ours: apertus_json": ("apertus_json", "MarkedJsonFormat", _apertus),
    "GigaChat3.1-10B-A1.8B": ("gigachat_json", "JsonBlockFormat", _gigachat31),
    "LFM2.5-8B-A1B": ("lfm2_pythonic", "PythonicFormat", _lfm2_plain),
    "ours: lfm2_pythonic": ("lfm2_pythonic", "PythonicFormat", _lfm2_plain),
    "deepseek-ai-DeepSeek-V3.1": ("deepseek_json", "NamedJson", _deepseek_v31),
    "ours: deepseek_json": ("deepseek_json", "NamedJson", _deepseek_v31),
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B": ("deepseek_json", "NamedJson", _deepseek_r1),
    "moonshotai-Kimi-K2": ("kimi_json", "NamedJson", _kimi),
    "unsloth-mistral-Devstral-Small-2507": ("mistral_json", "NamedJson", _mistral(with_ids=False)),
    "mistralai-Ministral-3-14B-Reasoning-2512": ("mistral_json", "NamedJson", _mistral(with_ids=False)),
    "Mistral-Small-3.2-24B-Instruct-2506": ("mistral_json", "NamedJson", _mistral(with_ids=True)),
    "ours: mistral_json": ("mistral_json", "NamedJson", _mistral(with_ids=True)),
    "tencent-Hy3": ("hunyuan_xml", "KeyValueFormat", _hy3),
    "ours: ifm_xml": ("ifm_xml", "KeyValueFormat", _ifm_untyped),
}
"""Templates whose derived format reads the corpus cases written in the spelling the template
shows, and which those are: DeepSeek V3.1's `NAME<｜tool▁sep｜>{..}`, R1's
`function<｜tool▁sep｜>NAME` and a fence, Kimi K2's `functions.NAME:0` in its plural section,
Mistral's `[TOOL_CALLS]NAME[ARGS]{..}` (with Small 3.2's `[CALL_ID]` and a nine-character id), all
named JSON; Hy3's `:opensource` tags with a `<tool_sep>` in a block, IFM's tags without type tags,
keys and values. The other cases are what the named format reads beyond its template: another
generation's spelling (Hy3-preview's bare tags), DeepSeek's wrapped arguments, Kimi's ids that name
no tool and calls in an unclosed think block, Mistral's JSON lists and either think pair (a
template renders one at most: Ministral 3's `[THINK]`, tested on its own), IFM's type tags,
LFM2's Python spelling (sets, leading zeros, quotes inside quotes), GigaChat 3's role header and
its message separator after a call (GigaChat 3.1's template writes a turn's first call alone),
Gemma 4's `<|tool_response>` (which the interleaved template does not write after calls) and
FunctionGemma's tokens, a call drafted in Apertus's reasoning (`<|inner_prefix|>`, which its template does not render),
Cohere's objects in the `name` / `arguments` spelling (SGLang's), objects with both names, and a
call drafted in reasoning (which ours and command-r7b's templates do not render).
Our `hunyuan_xml` template assembles its tags from a suffix (`'<tool_calls' ~ S ~ '>'`), which a
renaming of whole markers cannot reach; Hy3's own stands for it."""


@pytest.mark.parametrize("where", sorted(OWN_SPELLING))
def test_templates_derive_the_reading_of_their_own_spelling_exactly(model_template, where):
    """The derived format is the expected family's and reads every corpus case of its template's
    spelling as the named format does, in every chunking; renamed, the same markers come out anew."""
    from derive_scores import chunkings, events
    from helpers import load_corpus

    named, family, own = OWN_SPELLING[where]
    template = (
        FORMATS[where.removeprefix("ours: ")].template_path.read_text(encoding="utf-8")
        if where.startswith("ours: ")
        else model_template(where)
    )
    with logs_silenced():
        derived = from_chat_template(template)
        assert type(derived.spec).__name__ == family
        cases = [c for c in load_corpus(named) if not c.get("options") and own(c["text"])]
        assert len(cases) >= 10
        for case in cases:
            for chunks in chunkings(case["text"]):
                want = events(FORMATS[named], chunks, case.get("tools"))
                assert events(derived, chunks, case.get("tools")) == want, case["id"]
        table = renames(derived, template)
        again = from_chat_template(renamed(template, table))
        assert again.markers == tuple(renamed(m, table) for m in derived.markers)


SECTIONED = (
    "{% if loop.first %}<|calls|>{% endif %}<|call|>{{ tc.function.name }}<|args|>"
    "{{ tc.function.arguments | tojson }}<|/call|>{% if loop.last %}<|/calls|>{% endif %}"
)


def test_named_json_of_invented_markers_is_derived_and_read():
    """A template of invented markers that writes each call as its name, a separator and its JSON
    arguments in a section: the named-JSON family, read string-aware, in any chunking, with the
    section's and the call's ends missing, and no arguments where the call's end follows at once."""
    fmt = from_chat_template(PROBE_TEMPLATE.replace("CALLS", SECTIONED))
    assert fmt.markers == ("<|calls|>", "<|call|>", "<|args|>", "<|/call|>", "<|/calls|>")
    text = 'Sure.<|calls|><|call|>f<|args|>{"a": "<|/call|><|call|>g"}<|/call|><|call|>g<|args|><|/call|>'
    want = [("f", {"a": "<|/call|><|call|>g"}), ("g", {})]
    for chunks in ([text], list(text)):
        stream = fmt.stream()
        events = [e for chunk in chunks for e in stream.feed(chunk)] + stream.close()
        from toolcall_parsers.core.events import build_result

        result = build_result(events)
        assert [(c.name, c.arguments) for c in result.calls] == want
        assert result.content == "Sure."
    cut = parse(fmt, 'x<|calls|><|call|>f<|args|>{"a": 1}<|call|>g<|args|>{"b"')
    assert [(c.name, c.arguments) for c in cut.calls] == [("f", {"a": 1})]
    assert cut.content == 'x<|call|>g<|args|>{"b"'


def test_named_json_keeps_the_counter_header_as_the_id():
    """A counter after the name (Kimi K2's `functions.NAME:0`): the header as the model wrote it is
    the call's id, once per response; a second use of it gets another."""
    counted = SECTIONED.replace("}}<|args|>", "}}#{{ loop.index0 }}<|args|>")
    fmt = from_chat_template(PROBE_TEMPLATE.replace("CALLS", counted))
    assert (fmt.spec.counter, fmt.own_ids) == ("#", True)
    text = "<|calls|><|call|>f#0<|args|>{}<|/call|><|call|>f#0<|args|>{}<|/call|><|call|>g#7<|args|>{}<|/calls|>"
    calls = parse(fmt, text).calls
    assert [c.name for c in calls] == ["f", "f", "g"]
    assert calls[0].id == "f#0" and calls[2].id == "g#7" and calls[1].id not in ("f#0", "g#7")


def test_named_json_without_a_marker_between_name_and_arguments_is_refused():
    """A name and its JSON told apart by a space alone (our `tagged`'s way) is no marker: refused,
    with the named-JSON reason among the families' reasons."""
    spaced = "<<T>>{{ tc.function.name }} {{ tc.function.arguments | tojson }}"
    with pytest.raises(ValueError, match="named JSON: the name and its arguments are not told apart"):
        from_chat_template(PROBE_TEMPLATE.replace("CALLS", spaced))


KIMI_TEXT = (
    "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Pa<|tool_call_end|>ris", "days": 3}<|tool_call_end|><|tool_calls_section_end|>'
)


@needs("vllm", "sglang")
def test_both_engines_serve_kimis_template_as_named_json_with_its_ids(smollm2_dir, model_template):
    """`--tool-call-parser from_chat_template` on Kimi K2's template, in vLLM's parser stack and
    SGLang's `FunctionCallParser`, finished and streamed token by token: the call, string-aware; in
    vLLM's stream with the header as its id (`functions.get_weather:0`, what Kimi's template writes
    back)."""
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins
    from test_sglang_adapter import sglang_tools
    from test_vllm_adapter import complete_through, make_request, stream_through
    from toolcall_parsers.detect import PROBE_TOOLS
    from transformers import AutoTokenizer
    from vllm.plugins import load_general_plugins

    load_general_plugins()
    tokenizer = AutoTokenizer.from_pretrained(smollm2_dir)
    tokenizer.chat_template = model_template("moonshotai-Kimi-K2")
    request = make_request(PROBE_TOOLS)
    arguments = {"city": "Pa<|tool_call_end|>ris", "days": 3}
    _, content, calls = complete_through(tokenizer, KIMI_TEXT, request, fmt="from_chat_template")
    assert content == "Checking."
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_weather", arguments)]
    streamed = stream_through(tokenizer, KIMI_TEXT, request, fmt="from_chat_template")
    assert streamed["content"] == "Checking."
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in streamed["calls"]] == [
        ("functions.get_weather:0", "get_weather", arguments)
    ]
    load_plugins()
    parser = FunctionCallParser(sglang_tools(PROBE_TOOLS), "from_chat_template", tokenizer=tokenizer)
    content, items = parser.parse_non_stream(KIMI_TEXT)
    assert content.strip() == "Checking."
    assert [(c.name, json.loads(c.parameters)) for c in items] == [("get_weather", arguments)]
    parser = FunctionCallParser(sglang_tools(PROBE_TOOLS), "from_chat_template", tokenizer=tokenizer)
    pieces = [parser.parse_stream_chunk(c) for c in KIMI_TEXT] + [parser.parse_stream_end()]
    assert "".join(text for text, _ in pieces).strip() == "Checking."
    assert json.loads("".join(item.parameters for _, items in pieces for item in items)) == arguments


# -- an outside review of the families read today ---------------------------------------------------


@pytest.mark.parametrize(
    ("calls", "says"),
    [
        # a history id after the arguments: the probe's id would be the format's tail
        ("<call>{{ tc.function.name }}<sep>{{ tc.function.arguments|tojson }}<id>{{ tc.id }}</id></call>", "leaves"),
        # a tag after the name that is no name separator: the call's close left as text
        (
            "<tool_call>{{ tc.function.name }}<args>\n{% for k, v in tc.function.arguments.items() %}"
            "<arg_key>{{ k }}</arg_key>\n<arg_value>{{ v }}</arg_value>\n{% endfor %}</args></tool_call>\n",
            "no family of ours reads",
        ),
        # a run of tags before the calls taken as one section marker
        (
            "<|c|>{{ m.content }}<|/c|>{% if loop.first %}<sec>{% endif %}<c>{{ tc.function.name }}<s>"
            "{{ tc.function.arguments|tojson }}</c>{% if loop.last %}</sec>{% endif %}",
            "no family of ours reads",
        ),
    ],
)
def test_markup_a_derived_format_would_leave_as_text_is_refused(calls, says):
    """The template's own turns must read back with no text after the first call (but the tokens
    that end the turn): a format that turns the template's markup into content is refused."""
    with pytest.raises(ValueError, match=says):
        from_chat_template(PROBE_TEMPLATE.replace("CALLS", calls))


def test_r1s_required_grammar_writes_the_line_between_its_calls_and_its_names_end_at_markers(model_template):
    """R1's template writes a line break between two calls: the `required` grammar admits the
    writer's two calls; a name ends at a marker, so a call begin repeated before the header is
    text, and the call after it is read with its own name, as `deepseek_json` reads it."""
    from helpers import grammar_accepts, tag_grammar
    from toolcall_parsers.formats.spec import ConstraintRequest

    r1 = from_chat_template(model_template("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B"))
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    grammar = tag_grammar(r1.constraint(ConstraintRequest({"get_weather": schema})))
    assert grammar_accepts(grammar, r1.write([("get_weather", {"city": "P"})] * 2))
    begin, sep = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>"
    text = f'<｜tool▁calls▁begin｜>{begin}function{sep}{begin}function{sep}get_weather\n```json\n{{"city": "a"}}\n```'
    with logs_silenced():
        assert [c.name for c in parse(r1, text).calls] == [c.name for c in parse("deepseek_json", text).calls]
        assert [c.name for c in parse(r1, text).calls] == ["get_weather"]


def test_ministrals_think_pair_comes_from_its_thinking_blocks(model_template):
    """Ministral 3 renders reasoning from `thinking` content blocks as `[THINK]` .. `[/THINK]`: a
    call drafted there is reasoning, not a call."""
    fmt = from_chat_template(model_template("mistralai-Ministral-3-14B-Reasoning-2512"))
    assert fmt.think_pairs == (("[THINK]", "[/THINK]"),)
    text = '[THINK]maybe [TOOL_CALLS]get_weather[ARGS]{"city": "Lyon"}[/THINK]Done.'
    assert parse(fmt, text).calls == [] and parse("mistral_json", text).calls == []


def test_a_separator_of_letters_after_a_space_leaves_every_name_readable():
    """`NAME ARGS {..}`: the space ends the name, so a name holding the separator's first letter is
    read (a name stopped at `A` once); without the space nothing ends the name, and it is refused."""
    fmt = from_chat_template(
        PROBE_TEMPLATE.replace("CALLS", "<call>{{ tc.function.name }} ARGS {{ tc.function.arguments|tojson }}</call>")
    )
    assert [c.name for c in parse(fmt, "<call>getAll ARGS {}</call>").calls] == ["getAll"]
    assert fmt.writes_name("getAll")
    with pytest.raises(ValueError, match="nothing ends the name"):
        from_chat_template(
            PROBE_TEMPLATE.replace("CALLS", "<call>{{ tc.function.name }}ARGS{{ tc.function.arguments|tojson }}</call>")
        )


def test_a_constant_after_the_name_is_no_counter():
    """`#0` after every name is part of the separator, not a counter (the second call writes no `#1`)."""
    constant = SECTIONED.replace("}}<|args|>", "}}#0<|args|>")
    fmt = from_chat_template(PROBE_TEMPLATE.replace("CALLS", constant))
    assert (fmt.spec.counter, fmt.spec.separator, fmt.own_ids) == ("", "#0<|args|>", False)


def test_gemma_4s_think_pair_comes_from_its_calling_turns(model_template):
    """Gemma 4's template renders reasoning only in a turn with calls, as `<|channel>thought\n..
    <channel|>`: the derived pair is its channel's, so a call drafted there is reasoning, as
    `gemma_calls` reads it (an outside review found `<think>` derived)."""
    fmt = from_chat_template(model_template("google-gemma-4-31B-it"))
    assert fmt.think_pairs == (("<|channel>", "<channel|>"),)
    text = '<|channel>thought\nMaybe <|tool_call>call:get_weather{city:<|"|>x<|"|>}<tool_call|>?<channel|>Done.'
    assert parse(fmt, text).calls == [] and parse("gemma_calls", text).calls == []


@pytest.mark.parametrize(
    "calls",
    [
        '<C>call:{{ tc.function.name }}{city:"{{ tc.function.arguments.city }}",days:3}</C>',  # a quote
        "[C]call:{{ tc.function.name }}{city:<Q>{{ tc.function.arguments.city }}<Q>,days:3}[/C]",  # brackets
    ],
)
def test_literal_calls_need_tags_the_reader_meets(calls):
    """The literal reader meets markers at `<`: a delimiter that is a quote, or an opener that is
    a bracket, would read as JSON quoting or a list (an outside review), so it is refused."""
    with pytest.raises(ValueError, match="calls as literals: a marker that is no"):
        from_chat_template(PROBE_TEMPLATE.replace("CALLS", calls))


def test_a_string_in_gemmas_grammar_cannot_hide_a_delimiter_after_a_lone_open_angle():
    """`<<|"|>` in a string: the second `<` began the delimiter, which the grammar let through
    behind the first (an outside review); now a string holds no run of `<` before `|`, and `<<EOF`
    is still data."""
    from helpers import grammar_accepts, tag_grammar
    from toolcall_parsers.formats.spec import ConstraintRequest

    schema = {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}
    grammar = tag_grammar(FORMATS["gemma_calls"].constraint(ConstraintRequest({"get_weather": schema})))
    for good in ("a < b", "cat <<EOF"):
        assert grammar_accepts(grammar, f'<|tool_call>call:get_weather{{location:<|"|>{good}<|"|>}}<tool_call|>')
    for hidden in ('<|"|>a<<|"|>}<|"|>', '<|"|>a<<tool_call|>b<<|tool_call>call:x{<|"|>'):
        assert not grammar_accepts(grammar, f"<|tool_call>call:get_weather{{location:{hidden}}}<tool_call|>")
