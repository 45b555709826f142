"""Tool-call ids. Engines pass their own factory; this is the engine-neutral default."""

from __future__ import annotations

import uuid
from collections.abc import Callable

IdFactory = Callable[[str, int], str]
"""Makes the id of a call from its name and its index in the response."""


def random_call_id(name: str, index: int) -> str:
    """`call_` and 24 hex digits, the shape OpenAI clients are used to."""
    return "call_" + uuid.uuid4().hex[:24]
