"""Tool-call ids. Engines pass their own factory; this is the engine-neutral default."""

from __future__ import annotations

import uuid
from collections.abc import Callable

IdFactory = Callable[[str, int], str]
"""Makes the id of a call from its name and its index in the response."""


def random_call_id(name: str, index: int) -> str:
    """`call_` and 24 hex digits, the shape OpenAI clients are used to."""
    return "call_" + uuid.uuid4().hex[:24]


class ResponseIds:
    """The call ids one response has handed out, so that no two of its calls share one. A model-written
    id is kept when it is free; a made one is the factory's (asked up to `asks` times), unless the
    response used it already (a model-written id, a factory that repeats itself), and then the
    format's own `numbered(name, n)` for the first free n from the call's index. Bounded: one of the
    next len(used) + 1 numbers is free, so it never hangs on a constant factory."""

    def __init__(self, factory: IdFactory, numbered: IdFactory, asks: int = 1) -> None:
        self._factory = factory
        self._numbered = numbered
        self._asks = asks
        self._used: set[str] = set()

    def free(self, call_id: str | None) -> str | None:
        """`call_id` if it is one and no call of this response has it yet, else None."""
        return call_id if call_id and call_id not in self._used else None

    def keep(self, call_id: str) -> None:
        """A model-written id a call now has."""
        self._used.add(call_id)

    def make(self, name: str, index: int) -> str:
        for _ in range(self._asks):
            call_id = self._factory(name, index)
            if call_id not in self._used:
                break
        else:
            number = index
            while (call_id := self._numbered(name, number)) in self._used:
                number += 1
        self._used.add(call_id)
        return call_id
