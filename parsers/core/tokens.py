"""What a served tokenizer says about a format's markers: which of them are single tokens.

One answer for both engines, looked up once per tokenizer: a parser or detector is built per
request, and `get_vocab()` copies the whole vocabulary each time it is called.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class Vocabulary:
    """A tokenizer's single-token ids, looked up on demand and kept."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._ids: dict[str, int | None] = {}
        self._vocab: dict[str, int] | None = None

    def token_id(self, text: str) -> int | None:
        """The id of `text` when the tokenizer has it as one token, else None (also when the
        tokenizer cannot list its vocabulary)."""
        if text not in self._ids:
            self._ids[text] = self._listing().get(text)
        return self._ids[text]

    @property
    def listed(self) -> bool:
        """Whether the tokenizer listed a vocabulary (a tokenizer that cannot says nothing)."""
        return bool(self._listing())

    def _listing(self) -> dict[str, int]:
        if self._vocab is None:
            try:
                self._vocab = self._tokenizer.get_vocab()
            except Exception:
                self._vocab = {}
        return self._vocab

    def has(self, text: str) -> bool:
        """Whether `text` is one token of this tokenizer."""
        return self.token_id(text) is not None


_PER_TOKENIZER: dict[tuple[int, Hashable], tuple[Any, Any]] = {}
"""(id(tokenizer), key) -> (the tokenizer, kept alive here so its id() stays its own; the value)."""


def chat_template_key(tokenizer: Any, template: str | None) -> str:
    """What identifies the chat template served with `tokenizer` in a cache key: `template` where
    one is given, else the tokenizer's own."""
    return template if template is not None else repr(getattr(tokenizer, "chat_template", None))


def per_tokenizer(tokenizer: Any, key: Hashable, make: Callable[[], T]) -> tuple[T, bool]:
    """The value cached for `tokenizer` under `key`, made by `make()` the first time: (value, whether
    it was made now). The one per-tokenizer cache: engines build a parser per request but serve one
    tokenizer for the life of the process."""
    entry = _PER_TOKENIZER.get((id(tokenizer), key))
    if entry is not None and entry[0] is tokenizer:
        return entry[1], False
    value = make()
    _PER_TOKENIZER[(id(tokenizer), key)] = (tokenizer, value)
    return value, True


def vocabulary(tokenizer: Any) -> Vocabulary | None:
    """The `Vocabulary` of `tokenizer`, made once per tokenizer; None without a tokenizer."""
    if tokenizer is None:
        return None
    return per_tokenizer(tokenizer, Vocabulary, lambda: Vocabulary(tokenizer))[0]


def check_special_tokens(tokenizer: Any, format_name: str, tokens: Sequence[str]) -> list[str]:
    """The format's special tokens that `tokenizer` does not have as single tokens, found and logged
    once per tokenizer and format (an engine builds a parser per request): such a tokenizer is most
    likely another family's, whose model would write the markers as plain text. Never raises; an
    empty list when all are there or the tokenizer cannot list its vocabulary."""
    if tokenizer is None or not tokens:
        return []

    def find_missing() -> list[str]:
        vocab = vocabulary(tokenizer)
        return [token for token in tokens if not vocab.has(token)] if vocab is not None and vocab.listed else []

    missing, found_now = per_tokenizer(tokenizer, ("missing special tokens", format_name), find_missing)
    if found_now and missing:
        logging.getLogger("toolcall_parsers").warning(
            "%s: the served tokenizer has no single token for %s, which this format's models have; "
            "check that --tool-call-parser %s fits the model",
            format_name,
            ", ".join(repr(t) for t in missing),
            format_name,
        )
    return missing
