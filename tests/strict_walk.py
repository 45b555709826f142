"""Texts a strict constraint admits, drawn by walking the compiled grammar (xgrammar's own matcher).

A strict request must never return an unchecked call: whatever the constraint lets the model write,
the parser reads back as prose or as calls to the declared tools with schema-valid arguments. Hand
written cases only find the spellings someone thought of; this walks the grammar itself over a small
vocabulary (single characters, the format's markers, tool names, and whole hostile snippets: calls to
undeclared tools or with bad arguments, in every spelling the format's markers allow), so each step
takes any piece the grammar allows there, as a model's sampler would.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from functools import cache
from typing import Any

CHARACTERS = [chr(c) for c in range(0x20, 0x7F)] + ["\n"]
WORDS = ["get_weather", "evil", "city", "days", "Paris", "12", "three", "true", "null", "functions.", "to="]


class GrammarWalk:
    """A compiled grammar over `pieces` (plus an end token), walked at random."""

    def __init__(self, tag: dict[str, Any], pieces: Sequence[str]) -> None:
        import xgrammar as xgr  # here, not at import: test modules import no engine to be collected

        self.pieces = list(dict.fromkeys(pieces))
        self.end = len(self.pieces)
        info = xgr.TokenizerInfo([*self.pieces, "\x00END\x00"], stop_token_ids=[self.end])
        grammar = xgr.Grammar.from_structural_tag(json.dumps(tag))
        self.compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(grammar)
        self.size = info.vocab_size
        self.weights = [1 if len(piece) == 1 else 25 for piece in self.pieces]

    def draw(self, rng: random.Random, steps: int = 500) -> str | None:
        """One text the grammar admits whole (it ends where the grammar allows the end), or None when
        the walk ran out of steps first."""
        import xgrammar as xgr
        from xgrammar.testing import _get_masked_tokens_from_bitmask

        matcher = xgr.GrammarMatcher(self.compiled)
        bitmask = xgr.allocate_token_bitmask(1, self.size)
        out: list[str] = []
        for step in range(steps):
            matcher.fill_next_token_bitmask(bitmask)
            allowed = _get_masked_tokens_from_bitmask(bitmask, self.size)
            allowed = [i for i in range(self.size) if i not in set(allowed)]
            if not allowed:
                return None
            if self.end in allowed and (len(allowed) == 1 or rng.random() < min(0.9, step / steps + 0.02)):
                return "".join(out)
            choices = [i for i in allowed if i != self.end]
            token = rng.choices(choices, [self.weights[i] for i in choices])[0]
            assert matcher.accept_token(token)
            out.append(self.pieces[token])
        return None


@cache
def cached_walk(key: str, tag_json: str, pieces: tuple[str, ...]) -> GrammarWalk:
    """One compiled walk per format and request (compiling is the slow part)."""
    return GrammarWalk(json.loads(tag_json), pieces)
