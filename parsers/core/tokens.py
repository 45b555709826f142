"""What a served tokenizer says about a format's markers: which of them are single tokens.

One answer for both engines, looked up once per tokenizer: a parser or detector is built per
request, and `get_vocab()` copies the whole vocabulary each time it is called.
"""

from __future__ import annotations

from typing import Any


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
            if self._vocab is None:
                try:
                    self._vocab = self._tokenizer.get_vocab()
                except Exception:
                    self._vocab = {}
            self._ids[text] = self._vocab.get(text)
        return self._ids[text]

    def has(self, text: str) -> bool:
        """Whether `text` is one token of this tokenizer."""
        return self.token_id(text) is not None


_VOCABULARIES: dict[int, tuple[Any, Vocabulary]] = {}
"""Per tokenizer (kept alive here, so its id() stays its own)."""


def vocabulary(tokenizer: Any) -> Vocabulary | None:
    """The `Vocabulary` of `tokenizer`, made once per tokenizer; None without a tokenizer."""
    if tokenizer is None:
        return None
    entry = _VOCABULARIES.get(id(tokenizer))
    if entry is None or entry[0] is not tokenizer:
        entry = _VOCABULARIES[id(tokenizer)] = (tokenizer, Vocabulary(tokenizer))
    return entry[1]
