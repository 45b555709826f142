"""The request's tools, reduced to what parsers need: names and parameter schemas.

Accepts OpenAI chat tools (`{"type": "function", "function": {"name", "parameters"}}`), Responses-style
tools (`{"type": "function", "name", "parameters"}`), or objects with `model_dump()` of either shape.

Local `$ref`s are resolved once, here, so that every reader of a schema types what pydantic and
`openai.pydantic_function_tool` declare through `$defs` (an Enum, a nested model) as the schema says.
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
                self.schemas[name] = resolve_refs(params) if isinstance(params, dict) else {}

    def __bool__(self) -> bool:
        return bool(self.schemas)

    def knows(self, name: str) -> bool:
        """Whether `name` is a declared tool; always true when the request declared none."""
        return not self.schemas or name in self.schemas


MAX_REF_DEPTH = 16
"""Most `$ref`s followed inside one another; deeper ones are left as they are."""
MAX_RESOLVED_NODES = 10_000
"""Most schema objects a tool's resolved parameters may hold; past it, `$ref`s are left as they are
(a schema of many references to large definitions would otherwise grow exponentially)."""


def _pointer_target(root: dict[str, Any], ref: str) -> Any:
    """The schema a local JSON pointer (`#`, `#/$defs/X`, `#/definitions/X/properties/y`) names in
    `root`, or None."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _has_ref(schema: Any) -> bool:
    """Whether a `$ref` appears anywhere in `schema` (iterative; shared and cyclic parts looked at once)."""
    pending, seen = [schema], set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                return True
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return False


def resolve_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its local `$ref`s replaced by what they point to (a `$ref` with other keywords
    beside it becomes an `allOf` member, as JSON Schema reads it). Bounded (`MAX_REF_DEPTH`,
    `MAX_RESOLVED_NODES`) and cycle-safe: a `$ref` that points into its own resolution, or past a
    bound, stays a `$ref` (read as saying nothing; engines that compile the schema still resolve it,
    since `$defs` are kept). The input is not changed; without a `$ref` it is returned as it is."""
    if not _has_ref(schema):
        return schema
    budget = [MAX_RESOLVED_NODES]

    def copy(node: Any, refs: tuple[str, ...], path: frozenset[int]) -> Any:
        # Depth is the schema's own nesting plus at most MAX_REF_DEPTH hops; a Python object that
        # contains itself is cut where it repeats.
        if not isinstance(node, (dict, list)) or id(node) in path or budget[0] <= 0:
            return node
        budget[0] -= 1
        inner = path | {id(node)}
        if isinstance(node, list):
            return [copy(item, refs, inner) for item in node]
        ref = node.get("$ref")
        if isinstance(ref, str) and len(refs) < MAX_REF_DEPTH and ref not in refs:
            target = _pointer_target(schema, ref)
            if isinstance(target, dict):
                resolved = copy(target, (*refs, ref), inner)
                siblings = {k: copy(v, refs, inner) for k, v in node.items() if k != "$ref"}
                if not siblings:
                    return resolved
                all_of = siblings.get("allOf")
                siblings["allOf"] = [*(all_of if isinstance(all_of, list) else []), resolved]
                return siblings
        return {k: copy(v, refs, inner) for k, v in node.items()}

    try:
        return copy(schema, (), frozenset())
    except RecursionError:  # nested past Python's limit: the engines' own validation refuses such schemas
        return schema
