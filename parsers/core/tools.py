"""The request's tools, reduced to what parsers need: names and parameter schemas.

Accepts OpenAI chat tools (`{"type": "function", "function": {"name", "parameters"}}`), Responses-style
tools (`{"type": "function", "name", "parameters"}`), or objects with `model_dump()` of either shape.
"""

from __future__ import annotations

from typing import Any


def _as_dict(tool: Any) -> dict[str, Any]:
    if isinstance(tool, dict):
        return tool
    dump = getattr(tool, "model_dump", None)
    return dump() if callable(dump) else {}


class ToolIndex:
    """Name -> parameters schema of the request's function tools. Empty when there are none.
    Entries that are not function tools are skipped; `tools` that is not a list is a caller's
    mistake and raises TypeError at once."""

    def __init__(self, tools: Any = None) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}
        if tools is not None and not isinstance(tools, (list, tuple)):
            raise TypeError(f"tools must be a list of tool definitions or None, not {type(tools).__name__}")
        for tool in tools or ():
            spec = _as_dict(tool)
            function = spec.get("function") if isinstance(spec.get("function"), dict) else spec
            name = function.get("name")
            if isinstance(name, str):
                params = function.get("parameters")
                self.schemas[name] = params if isinstance(params, dict) else {}

    def __bool__(self) -> bool:
        return bool(self.schemas)

    def knows(self, name: str) -> bool:
        """Whether `name` is a declared tool; always true when the request declared none."""
        return not self.schemas or name in self.schemas
