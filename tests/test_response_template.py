"""Response templates (transformers' `response_template`) compiled into formats of ours, and ours
written as response templates: the derived format reads a family's corpus exactly as the named
format does, in every chunking and strict or not, also with every marker renamed; transformers' own
reader agrees with ours on what our writers write; what no family reads is refused by name."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from helpers import (
    NAMED_BY_TEMPLATE as NAMED,
)
from helpers import (
    RENAMES,
    builtin_templates,
    char_chunks,
    grammar_accepts,
    load_corpus,
    needs,
    random_chunks,
    renamed,
    run_chunks,
    tag_grammar,
)
from toolcall_parsers import FORMATS, Format, from_response_template, parse, to_response_template
from toolcall_parsers.detect import PROBE_TOOLS
from toolcall_parsers.formats.families.qwen_functions import QwenFunctions

pytestmark = needs("transformers")


def _events(fmt: str | Format, text: str, tools: Any, **options: Any) -> dict[str, Any]:
    chunkings = {"whole": [text], "chars": char_chunks(text), "random": random_chunks(text, 1)}
    return {mode: run_chunks(fmt, chunks, tools, **options) for mode, chunks in chunkings.items()}


@pytest.mark.parametrize("model", list(NAMED))
def test_transformers_templates_compile_to_the_family_of_the_named_format(model):
    derived, named = from_response_template(builtin_templates()[model]), FORMATS[NAMED[model]]
    assert derived.markers == named.markers
    assert derived.think_pairs == named.think_pairs
    assert type(derived.spec) is type(named.spec)


def _cases(name: str) -> list[dict[str, Any]]:
    return [case for case in load_corpus(name) if not case.get("options")]


@pytest.mark.parametrize("model", list(NAMED))
def test_a_derived_format_reads_the_named_formats_corpus_alike_in_every_mode(model):
    derived, name = from_response_template(builtin_templates()[model]), NAMED[model]
    cases = _cases(name)
    assert len(cases) > 40
    for case in cases:
        for strict in (False, True):
            expected = _events(name, case["text"], case.get("tools"), strict=strict)
            assert _events(derived, case["text"], case.get("tools"), strict=strict) == expected, case["id"]


@pytest.mark.parametrize("model", ["qwen2", "qwen3_5"])
def test_renamed_markers_read_alike(model):
    """The template is read, not looked up: spell every marker anew, in the template and in the
    corpus, and the derived format reads the renamed outputs as the named format reads the originals."""
    name = NAMED[model]
    renames = RENAMES[name]
    derived = from_response_template(renamed(builtin_templates()[model], renames))
    assert not set(derived.markers) & set(FORMATS[name].markers)
    for case in _cases(name):
        text, tools = case["text"], case.get("tools")
        expected = {mode: repr(events) for mode, events in _events(name, text, tools).items()}
        got = _events(derived, renamed(text, renames), tools)
        assert {mode: repr(events) for mode, events in got.items()} == {
            mode: renamed(events, renames) for mode, events in expected.items()
        }, case["id"]


def _exportable_formats() -> list[str]:
    out = []
    for name, fmt in FORMATS.items():
        try:
            to_response_template(fmt, "<|assistant|>")
        except ValueError:
            continue
        out.append(name)
    return out


def test_the_families_of_markers_export():
    assert {"hermes_json", "qwen_xml", "seed_xml", "zyphra_xml", "longcat_json"} <= set(_exportable_formats())


def _as_derived(fmt: Format) -> Format:
    """`fmt` as a derived format reads: the Qwen3-Coder XML family reads a function written without
    its block (for a declared tool) wherever it is derived, which no response template spells, so
    `seed_xml`, which reads it as text, is compared with that one field set as derived."""
    if isinstance(fmt.spec, QwenFunctions) and not fmt.spec.bare_calls:
        return dataclasses.replace(fmt.spec, bare_calls=True).format(__name__)
    return fmt


@pytest.mark.parametrize("name", _exportable_formats())
def test_an_exported_template_compiles_back_to_the_same_reading(name):
    fmt = FORMATS[name]
    back, expected = from_response_template(to_response_template(fmt, "<|assistant|>")), _as_derived(fmt)
    cases = _cases(name)
    assert cases
    for case in cases:
        text, tools = case["text"], case.get("tools")
        assert _events(back, text, tools) == _events(expected, text, tools), case["id"]


@pytest.mark.parametrize("name", _exportable_formats())
def test_transformers_reads_our_writers_output_with_the_exported_template(name):
    """transformers' own reader, with the template we export, returns the calls our writer wrote."""
    from transformers.utils.chat_parsing.response_parser import parse_response

    fmt = FORMATS[name]
    template = to_response_template(fmt, "<|assistant|>")
    calls = [("get_weather", {"city": "Paris", "days": 3}), ("search", {"query": "a </b> c"})]
    tools = PROBE_TOOLS  # get_weather(city, days), search(query)
    text = "Let me look.\n" + fmt.write(calls)
    message = parse_response(text, template, prefix="", tools=tools)
    theirs = [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]]
    ours = [(c.name, c.arguments) for c in parse(fmt, text, tools).calls]
    assert theirs == ours == calls


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda t: t["fields"].pop("tool_calls"), "no 'tool_calls' field"),
        (lambda t: t["fields"]["tool_calls"].update(content="kv-lines"), "content 'kv-lines'"),
        (lambda t: t["fields"].update(proposal={"open": "<p>", "close": "</p>"}), "'proposal' opens a region"),
        (lambda t: t["fields"]["tool_calls"].update(open_pattern=r"\s*<tool_call>|<call>"), "literal text"),
        (lambda t: t["fields"]["tool_calls"].update(transform={"x": "{content}"}), "must be the call object"),
        (lambda t: t.update(version=2), "version 2"),
        # an outside review's findings (each was accepted, and read wrongly or raised another error)
        (lambda t: t["fields"]["tool_calls"].update(open_pattern=r"\s*<tool_call>|<tool_call"), "literal text"),
        (lambda t: t["fields"]["tool_calls"].update(open_pattern=r"(?i)\s*<tool_call>"), "sets regex flags"),
        (lambda t: t["fields"]["tool_calls"].update(content_args=None), "'content_args' must be an object"),
        (lambda t: t["fields"]["tool_calls"].update(open_pattern=r"\s*"), "not nothing"),
        (lambda t: t.pop("fields"), "no 'fields'"),
    ],
)
def test_what_no_family_reads_is_refused_by_name(change, says):
    template = copy.deepcopy(builtin_templates()["qwen2"])
    change(template)
    with pytest.raises(ValueError, match=says):
        from_response_template(template)


# -- served: the model's own template, through the engines' real layers ---------------------------


@pytest.fixture(scope="module")
def templated_tokenizer(smollm2_dir, tmp_path_factory):
    """A checkpoint that ships transformers' Qwen 3.5 response template in its tokenizer config, as
    real checkpoints do, loaded by transformers (which puts it on the tokenizer)."""
    import shutil

    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("templated")
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json", "chat_template.jinja"):
        shutil.copy(smollm2_dir / name, folder / name)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    config["response_template"] = builtin_templates()["qwen3_5"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert tokenizer.response_template == builtin_templates()["qwen3_5"]
    return tokenizer


SERVED_TOOLS = PROBE_TOOLS[:1]  # get_weather(city: string, days: integer)
SERVED_TEXT = (
    "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nSan </tool_call> Jose\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)
"""A value holding the block's close: transformers' reader closes the region there; ours does not."""


@needs("vllm")
def test_vllm_serves_the_models_own_template_and_constrains_required(templated_tokenizer):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.plugins import load_general_plugins
    from vllm.tool_parsers import ToolParserManager

    load_general_plugins()
    cls = ToolParserManager.get_tool_parser("from_response_template")
    request = ChatCompletionRequest(messages=[{"role": "user", "content": "x"}], model="m", tools=SERVED_TOOLS)
    parser = cls(templated_tokenizer, request.tools)
    result = parser.extract_tool_calls(SERVED_TEXT, request)
    assert [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls] == [
        ("get_weather", {"city": "San </tool_call> Jose", "days": 3})
    ]
    assert result.content == "Checking."
    required = ChatCompletionRequest(
        messages=[{"role": "user", "content": "x"}], model="m", tools=SERVED_TOOLS, tool_choice="required"
    )
    adjusted = cls(templated_tokenizer, required.tools).adjust_request(required)
    grammar = tag_grammar(json.loads(adjusted.structured_outputs.structural_tag))  # vLLM's `hf` refuses this
    written = FORMATS["qwen_xml"].write([("get_weather", {"city": "Paris", "days": 3})])
    assert grammar_accepts(grammar, written)
    assert not grammar_accepts(grammar, written.replace("get_weather", "get_time"))
    assert not grammar_accepts(grammar, "Checking.")


@needs("vllm")
def test_vllm_refuses_a_model_without_a_template_at_start_up(smollm2_tokenizer):
    from vllm.plugins import load_general_plugins
    from vllm.tool_parsers import ToolParserManager

    load_general_plugins()
    with pytest.raises(
        ValueError, match="from_response_template: the model ships no response_template or response_schema"
    ):
        ToolParserManager.get_tool_parser("from_response_template")(smollm2_tokenizer, None)


@needs("sglang")
def test_sglang_serves_the_models_own_template(templated_tokenizer):
    from sglang.srt.entrypoints.openai.protocol import Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from sglang.srt.plugins import load_plugins

    load_plugins()
    tools = [Tool.model_validate(tool) for tool in SERVED_TOOLS]
    parser = FunctionCallParser(tools, "from_response_template", tokenizer=templated_tokenizer)
    content, calls = parser.parse_non_stream(SERVED_TEXT)
    assert content.strip() == "Checking."
    assert [(c.name, json.loads(c.parameters)) for c in calls] == [
        ("get_weather", {"city": "San </tool_call> Jose", "days": 3})
    ]


def test_transformers_own_reader_closes_at_a_marker_inside_a_string_where_ours_reads_on():
    """The difference that makes ours exact: with the Qwen2/3 template, transformers closes the
    region at the first literal `</tool_call>`, inside a JSON string or not, and the call is lost;
    the derived format ends a block where its JSON value ends."""
    from transformers.utils.chat_parsing.response_parser import parse_response

    template = builtin_templates()["qwen2"]
    call = ("run_shell", {"command": "echo '</tool_call>'"})
    text = "Running.\n" + FORMATS["hermes_json"].write([call])
    with pytest.raises(ValueError, match="could not parse region as JSON"):
        parse_response(text, template, prefix="")
    assert [(c.name, c.arguments) for c in parse(from_response_template(template), text).calls] == [call]


@needs("vllm")
def test_auto_serves_the_response_template_where_no_named_format_fits(templated_tokenizer):
    """SmolLM2's chat template teaches no call syntax; its checkpoint's response template does."""
    from toolcall_parsers.detect import describe, detect_template
    from toolcall_parsers.vllm.auto import AutoToolParser

    detection = detect_template(templated_tokenizer)
    assert (
        detection.parser is None and detection.derived == from_response_template(builtin_templates()["qwen3_5"]).summary
    )
    assert "parsing with from_response_template" in describe(detection)
    parser = AutoToolParser(templated_tokenizer, SERVED_TOOLS)
    assert type(parser).__name__ == "FromResponseTemplateToolParser"


def test_the_cli_exports_ours_and_derives_it_back(tmp_path, capsys):
    from toolcall_parsers.cli import main

    assert main(["derive", "--export", "qwen_xml", "--start-anchor", "<|im_start|>assistant\n"]) == 0
    exported = capsys.readouterr().out
    assert json.loads(exported) == to_response_template(FORMATS["qwen_xml"], "<|im_start|>assistant\n")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"response_template": json.loads(exported)}))
    assert main(["derive", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["family"] == "QwenFunctions" and report["spec"]["param_open"] == "<parameter="
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 8}))
    assert main(["derive", str(tmp_path)]) == 2
    assert "response template" in capsys.readouterr().err


def test_markers_that_a_stream_could_not_tell_apart_are_refused():
    """One open literal the start of another (read as either, depending on where chunks end), a
    blank marker, a call's close that is a parameter's close: refused, not read differently per
    chunking (found by an outside review)."""
    template = copy.deepcopy(builtin_templates()["qwen2"])
    template["fields"]["tool_calls"].pop("open_pattern")
    template["fields"]["tool_calls"]["open"] = ["<tool_call>", "<tool_call"]
    with pytest.raises(ValueError, match="'<tool_call' is the start of another"):
        from_response_template(template)
    template["fields"]["tool_calls"]["open"] = " "
    with pytest.raises(ValueError, match="is blank"):
        from_response_template(template)
    qwen = copy.deepcopy(builtin_templates()["qwen3_5"])
    qwen["fields"]["tool_calls"]["close_pattern"] = r"</parameter>\s*</tool_call>"
    with pytest.raises(ValueError, match="tags must differ"):
        from_response_template(qwen)


# -- the older regex response_schema ----------------------------------------------------------------

GEMMA4_SCHEMA = {  # Gemma 4's first checkpoints (transformers' gemma4 conversion script writes it)
    "type": "object",
    "properties": {
        "role": {"const": "assistant"},
        "thinking": {"type": "string"},
        "content": {"type": "string"},
        "tool_calls": {
            "x-regex-iterator": r"<\|tool_call>(.*?)<tool_call\|>",
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "x-regex": r"call\:(?P<name>\w+)(?P<arguments>\{.*\})",
                        "properties": {
                            "name": {"type": "string"},
                            "arguments": {"type": "object", "x-parser": "gemma4-tool-call", "additionalProperties": {}},
                        },
                    },
                },
            },
        },
    },
    "x-regex": r"(\<\|channel\>thought\n(?P<thinking>.*?)\<channel\|\>)?"
    r"(?P<tool_calls>\<\|tool_call\>.*\<tool_call\|\>)?(?P<content>(?:(?!\<turn\|\>)(?!\<\|tool_response\>).)+)?(?:\<turn\|\>|\<\|tool_response\>)?",
}
JSON_SCHEMA = {  # transformers' own tests' ERNIE schema, its <response> wrapper and thinking regex left out
    "type": "object",
    "properties": {
        "role": {"const": "assistant"},
        "content": {"type": "string"},
        "tool_calls": {
            "x-regex-iterator": "<tool_call>(.*?)</tool_call>",
            "type": "array",
            "items": {
                "type": "object",
                "x-parser": "json",
                "x-parser-args": {"transform": "{type: 'function', function: @}"},
                "properties": {"type": {"const": "function"}, "function": {"type": "object"}},
            },
        },
    },
}


def test_gemma_4s_response_schema_is_served_as_gemma_calls(smollm2_dir, tmp_path):
    """transformers 5.13+ drops a config's `response_schema`; ours reads it from the tokenizer's
    config entries, so `from_response_template` serves Gemma 4's first checkpoints."""
    import shutil

    from toolcall_parsers.derive.served import served_format
    from transformers import AutoTokenizer

    for name in ("tokenizer.json", "tokenizer_config.json", "config.json"):
        shutil.copy(smollm2_dir / name, tmp_path / name)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({**config, "response_schema": GEMMA4_SCHEMA}))
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    assert getattr(tokenizer, "response_template", None) is None  # transformers itself keeps nothing
    assert served_format(tokenizer) is FORMATS["gemma_calls"]
    assert from_response_template({"response_schema": GEMMA4_SCHEMA}) is FORMATS["gemma_calls"]


def test_a_json_response_schema_compiles_to_json_in_markers():
    schema = renamed(JSON_SCHEMA, {"<tool_call>": "<act>", "</tool_call>": "</act>"})
    schema["properties"]["thinking"] = {"type": "string", "x-regex": "<reasoning>(.*?)</reasoning>"}
    fmt = from_response_template(schema)
    assert (fmt.spec.tags.start, fmt.spec.tags.end) == ("<act>", "</act>")
    assert fmt.think_pairs == (("<reasoning>", "</reasoning>"),)  # a call drafted in it stays text
    drafted = '<reasoning>maybe <act>{"name": "rm", "arguments": {}}</act>?</reasoning>Done.'
    assert not parse(fmt, drafted).calls
    text = 'Sure.<act>{"name": "get_weather", "arguments": {"city": "a </act> b"}}</act>'
    assert [(c.name, c.arguments) for c in parse(fmt, text).calls] == [("get_weather", {"city": "a </act> b"})]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda s: s["properties"].pop("tool_calls"), "no 'tool_calls' property"),
        (
            lambda s: s["properties"]["tool_calls"].update({"x-regex-iterator": "<tool_call>(.*)"}),
            "START\\(\\.\\*\\?\\)END",
        ),
        (lambda s: s["properties"]["tool_calls"].update({"x-regex-iterator": "<a|b>(.*?)</a>"}), "start.*holds branch"),
        (lambda s: s["properties"]["tool_calls"]["items"].update({"x-parser": "yaml"}), "read by none of our families"),
        (lambda s: s["properties"].update({"content": {"x-regex": "<response>\n(.*?)\n?</response>"}}), "content"),
        (lambda s: s.update({"x-regex": "(<r>(?P<thinking>.*?)</r>)?(?P<content>.*)"}), "other than <think>"),
        (lambda s: s.update({"properties": []}), "'properties' must be an object, not list"),
        (lambda s: s["properties"]["tool_calls"].update({"items": None}), "'items' must be an object"),
        (lambda s: s["properties"]["tool_calls"]["items"].update({"x-parser-args": [1]}), "must be an object"),
        (lambda s: s["properties"]["tool_calls"]["items"]["x-parser-args"].update({"transform": 5}), "read by none"),
        (
            lambda s: s["properties"].update({"thinking": {"x-regex": "<think(.*?)<tool_call"}}),
            "cannot be told apart|does not read",
        ),
    ],
)
def test_what_no_family_reads_in_a_response_schema_is_refused_by_name(change, says):
    schema = copy.deepcopy(JSON_SCHEMA)
    change(schema)
    with pytest.raises(ValueError, match=says):
        from_response_template(schema)
