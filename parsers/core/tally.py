"""What one response's parse came to, counted as it happens: the calls returned and the spans given
back as text, by kind. The stream keeps the count (`FormatStream.tally`); an adapter hands it to the
operator's metrics when the response ends (`toolcall_parsers.metrics`), so counting costs nothing
per delta, and the count and the log line come from the same reason.

Every span a format gives back as text has one reason (the text of its log line); `reason_kind`
sorts it into one of `KINDS`, by the rules the core's messages follow: a bound's message names its
`TOOLCALL_PARSERS_*` setting, a cut call's starts "the output ended", an undeclared tool's says the
request did not declare it, a refused name's says what is wrong with the name; what a reason quotes
of the output (`repr`) is dropped first, so no output picks its own kind. Everything else is
malformed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS = ("malformed", "truncated", "undeclared_tool", "refused_name", "bound", "schema", "internal_error")
"""Why a span that looked like a call was given back as text (`schema`: a strict call its schema
refuses; `internal_error`: a parser error, the rest of the output passed through)."""

_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
"""Model text a reason quotes (`repr`): dropped before sorting, so the output cannot pick its kind."""
_BOUND = re.compile(r"\((?:a )?TOOLCALL_PARSERS_[A-Z_]*(?: bound)?\)\)*\Z")
"""A bound's reason ends naming its setting (nested in other reasons' parentheses)."""
_UNDECLARED = ("did not declare", "is not a tool the request declares")
_REFUSED_NAME = (
    "lone surrogate",
    "a tag with an empty name",
    "names no tool",
    "an invoke without a name",
    "in a tag's name",
    "in the tool's name",
)


def reason_kind(reason: str) -> str:
    """The kind (`KINDS`) of a rejected span's logged reason (what it quotes of the output aside)."""
    reason = _QUOTED.sub("", reason)
    if _BOUND.search(reason):
        return "bound"
    if reason.startswith("the output ended"):
        return "truncated"
    if any(words in reason for words in _UNDECLARED):
        return "undeclared_tool"
    if any(words in reason for words in _REFUSED_NAME):
        return "refused_name"
    return "malformed"


@dataclass
class Tally:
    """One response's count: calls returned (and of them, calls to tools the request did not
    declare, and calls whose arguments the tool's schema refuses, where the adapter asked for that
    check: a strict call's refusal is a rejected span of kind `schema` instead); spans given back
    as text and their characters, by kind."""

    calls: int = 0
    undeclared_calls: int = 0
    schema_failures: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    rejected_chars: dict[str, int] = field(default_factory=dict)
    rejections: int = 0
    """Spans given back so far, of every kind."""
    spans: int = 0
    """Spans given back so far, the rests of a block counted with it included: one log line each."""
    last_kind: str = ""
    """The kind of the last of them."""

    def reject(self, kind: str, chars: int) -> None:
        """One more span given back as text, of `kind`."""
        self.spans += 1
        self.rejections += 1
        self.last_kind = kind
        self.rejected[kind] = self.rejected.get(kind, 0) + 1
        self.rejected_chars[kind] = self.rejected_chars.get(kind, 0) + chars

    def add_chars(self, chars: int) -> None:
        """More text of the last span given back (the rest of its block)."""
        self.spans += 1
        kind = self.last_kind or "malformed"
        self.rejected_chars[kind] = self.rejected_chars.get(kind, 0) + chars
