"""The format a served model's own templates describe, for the engines' adapters.

A checkpoint ships its response template in `tokenizer_config.json` (`"response_template": {...}`);
transformers puts it on the tokenizer (`tokenizer.response_template`), where vLLM and SGLang hand
our parsers the tokenizer. Its chat template is the served one (`--chat-template`, else the
tokenizer's). Each is compiled once per distinct template in a process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.tokens import chat_template_key, per_tokenizer
from ..formats.spec import Format
from .response_template import from_response_template

SERVED_NAME = "from_response_template"
"""`--tool-call-parser from_response_template`: the served model's response template, compiled."""
CHAT_NAME = "from_chat_template"
"""`--tool-call-parser from_chat_template`: the format the served chat template teaches, derived."""


def tokenizer_response_template(tokenizer: Any) -> dict[str, Any] | None:
    """The response template a tokenizer carries (its attribute, or its config's entry), else the
    older `response_schema` of its config (transformers 5.13+ drops it from the tokenizer, but its
    `init_kwargs` keep the config's entries), if any."""
    template = getattr(tokenizer, "response_template", None)
    init_kwargs = getattr(tokenizer, "init_kwargs", None)
    init_kwargs = init_kwargs if isinstance(init_kwargs, dict) else {}
    for candidate in (template, init_kwargs.get("response_template"), init_kwargs.get("response_schema")):
        if isinstance(candidate, dict):
            return candidate
    return None


def served_format(tokenizer: Any) -> Format:
    """The format of the tokenizer's response template; ValueError, naming the parser, where the
    model ships none or no family of ours reads it. Compiled once per tokenizer: the engines build
    a parser per request."""

    def compile_template() -> Format:
        template = tokenizer_response_template(tokenizer)
        if template is None:
            raise ValueError(
                "the model ships no response_template or response_schema (tokenizer_config.json); "
                "name one of our parsers, or use auto"
            )
        return from_response_template(template, SERVED_NAME)

    return _once(tokenizer, ("response_format",), SERVED_NAME, compile_template)


def chat_format(tokenizer: Any, template: str | None = None) -> Format:
    """The format the served chat template (`template`, else the tokenizer's own) teaches, derived
    by rendering it (`derive.chat_template`); ValueError, naming the parser, where it teaches none
    of our families. Derived once per tokenizer and template."""
    from .chat_template import from_chat_template

    key = ("chat_format", chat_template_key(tokenizer, template))
    return _once(tokenizer, key, CHAT_NAME, lambda: from_chat_template(template, CHAT_NAME, tokenizer=tokenizer))


def _once(tokenizer: Any, key: tuple[str, ...], parser: str, make: Callable[[], Format]) -> Format:
    """`make()`'s format, or its refusal (a ValueError naming `parser`), kept per tokenizer."""

    def made() -> Format | str:
        try:
            return make()
        except Exception as err:  # a refusal, or a template that does not render
            return f"{parser}: {err}"  # the tool parser of that name, or its reasoning parser

    derived, _ = per_tokenizer(tokenizer, key, made)
    if isinstance(derived, str):
        raise ValueError(derived)
    return derived
