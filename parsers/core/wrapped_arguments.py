"""Arguments a model wraps in one more object (`{"arguments": {..}}`, `{"input": {..}}`), taken off
where the tool's schema shows the wrapper is not one of its own properties.

The decision reads only the arguments' first characters (`KEY_BOUND`), however the text came, so it is
the same in every chunking: the fragments are held while the first key may still be a wrapper; a
first key that is one (for the call's tool) holds the value until it ends, anything else lets the
arguments stream as written. At the end, a wrapper that is the only key gives what it holds, when
that is arguments (an object, a JSON string holding one, or a plain string that is the value of the
tool's one string property); otherwise the object goes out as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any

from .json_lexer import json_text, too_deep
from .typed_values import SchemaFacts

KEY_BOUND = 64
"""Characters of the arguments' start in which a wrapper key must end."""
_FIRST_KEY = re.compile(r'\{[ \t\r\n]*"((?:[^"\\]|\\.)*)"')
_MAYBE_KEY = re.compile(r'\{[ \t\r\n]*(?:"(?:[^"\\]|\\.)*\\?)?')


class WrappedArguments:
    """One call's arguments on their way out (`send`), a wrapper in `wrappers` taken off (see the
    module docstring); `schema` is the tool's parameters (None: an undeclared tool, never unwrapped)."""

    def __init__(
        self, send: Callable[[str], None], schema: dict[str, Any] | None, wrappers: Collection[str], max_depth: int
    ) -> None:
        self._send = send
        self._schema = schema
        self._wrappers = wrappers
        self._max_depth = max_depth
        self._head: list[str] | None = []  # the arguments' start while a wrapper key may open them
        self._wrapper: str | None = None  # the wrapper key that opened them; its value is held
        self._wrapped: list[str] = []

    def send(self, fragment: str) -> None:
        """A stable piece of the arguments' JSON text."""
        if self._wrapper is not None:
            self._wrapped.append(fragment)
            return
        if self._head is None:
            self._send(fragment)
            return
        self._head.append(fragment)
        head = "".join(self._head)
        window = head[:KEY_BOUND]  # the decision reads the text's first characters, however it came
        m = _FIRST_KEY.match(window)
        if m is not None and self._unwraps(m.group(1)):
            self._wrapper, self._wrapped, self._head = m.group(1), self._head, None
        elif m is not None or len(head) >= KEY_BOUND or not _MAYBE_KEY.fullmatch(window):
            self._head = None
            self._send(head)

    def done(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The value is complete: send what was held, the wrapper taken off where it is the only key;
        returns the call's arguments."""
        head, wrapper, self._head, self._wrapper = self._head, self._wrapper, None, None
        if head:
            self._send("".join(head))
        inner = self._unwrapped(arguments[wrapper]) if wrapper is not None and len(arguments) == 1 else None
        if inner is not None:
            self._send(json_text(inner))
            return inner
        if wrapper is not None:
            self._send("".join(self._wrapped))
        return arguments

    def _unwraps(self, key: str) -> bool:
        if self._schema is None or key not in self._wrappers:
            return False
        return SchemaFacts().property_schema(self._schema, key) is None  # declared also through $ref, allOf, anyOf

    def _unwrapped(self, inner: Any) -> dict[str, Any] | None:
        """What a lone wrapper holds, as arguments: an object, a JSON string holding one, or a string
        that is the value of the tool's one string property; None for anything else."""
        if isinstance(inner, dict):
            return inner
        if not isinstance(inner, str):
            return None
        try:
            decoded = json.loads(inner)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict):
            return None if too_deep(decoded, self._max_depth) else decoded
        assert self._schema is not None  # a wrapper is taken off only for a declared tool
        properties = self._schema.get("properties")
        if isinstance(properties, dict) and len(properties) == 1:
            ((key, prop),) = properties.items()
            if isinstance(prop, dict) and prop.get("type") == "string":
                return {key: inner}
        return None
