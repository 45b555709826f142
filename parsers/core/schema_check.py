"""The last word on a strict call: its arguments checked against the tool's schema.

A strict request's decoding constraint holds a pinned tool's arguments to its schema, but a
grammar is not a validator: xgrammar leaves some keywords unchecked (`not`, `if` / `then`,
`dependentRequired`), our raw-value grammars a string's `pattern` and length, and a constraint can
have gaps of its own. So a call to a pinned tool is checked here, once complete, before anyone sees
it (`FormatStream.pin_arguments`): a strict request never returns a call whose arguments its schema
refuses.

The check is bounded like everything else a request can drive:
- **No fetching.** A `$ref` the schema does not hold (an `http://` or `file://` address) is never
  retrieved: the call cannot be checked, so it is refused (jsonschema's default would fetch it).
- **Linear work.** Each check has a budget of keyword evaluations proportional to the arguments'
  length; a schema whose branches multiply past it (nested `anyOf`) refuses the call rather than
  run on. `uniqueItems` compares hashed canonical forms, not every pair.
- **No stack-dependent answers.** Arguments nested deeper than `MAX_CHECKED_DEPTH` are refused
  before validation, so the answer never depends on how deep the engine's call stack happens to be.
- **One reading of the JSON.** Arguments whose JSON names a key twice are refused: the check sees
  one value of it, a client's decoder may keep the other.

jsonschema (a dependency of both engines) is imported on the first strict call, not before, so
parsing without strict costs nothing; without it, strict calls are refused with that reason.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .logs import shorten

MAX_CHECKED_DEPTH = 64
"""Deepest nesting of objects and arrays a strict call's arguments may have to be checked."""
BUDGET_BASE = 100_000
BUDGET_PER_CHAR = 20
"""Keyword evaluations one check may spend: a base, plus this much per character of arguments."""
AUDIT_BASE = 500
AUDIT_PER_CHAR = 2
"""An audit's budget (`SchemaCheck.refuses`): counting a call for the operator costs far less than
refusing it under strict may, whatever schema a request sends (a plain schema takes tens)."""


class _OverBudget(Exception):
    pass


class _DuplicateKey(Exception):
    pass


_budget = threading.local()
"""Keyword evaluations left in the check this thread is running (`SchemaCheck.reason`)."""
_BOUNDED: dict[type, type] = {}
"""jsonschema validator class -> the same with every keyword counted, `uniqueItems` hashed."""


class SchemaCheck:
    """Validators for a response's tools, each built on its first use. `reason(name, arguments,
    arguments_json)` is None when the call may stand, else why not (one short line)."""

    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self._schemas = schemas
        self._validators: dict[str, Any] = {}

    def reason(self, name: str, arguments: dict[str, Any], arguments_json: str) -> str | None:
        if name not in self._schemas:
            return f"{name!r} is not among the request's tools"
        if _depth(arguments) > MAX_CHECKED_DEPTH:
            return f"the arguments are nested deeper than {MAX_CHECKED_DEPTH} levels, too deep to check"
        try:
            json.loads(arguments_json or "{}", object_pairs_hook=_no_duplicates)
        except _DuplicateKey as err:
            return f"the key {shorten(str(err), 60)} is written twice"
        except ValueError:
            pass  # not JSON text: nothing to compare (the arguments themselves are checked below)
        _budget.left = BUDGET_BASE + BUDGET_PER_CHAR * len(arguments_json)
        try:
            validator = self._validators.get(name) or self._validator(name)
            error = next(iter(validator.iter_errors(arguments)), None)
        except ImportError:
            return "jsonschema is not installed, so the arguments cannot be checked"
        except _OverBudget:
            return "checking these arguments against the schema costs more than their length allows"
        except RecursionError:
            return "the arguments are nested too deeply to check"
        except Exception as err:  # a schema jsonschema cannot use, or a `$ref` not in it: nothing was checked
            return f"the schema cannot be checked ({type(err).__name__}: {shorten(str(err), 120)})"
        if error is None:
            return None
        where = "".join(f"[{p!r}]" for p in error.absolute_path) or "the arguments"
        return f"{where}: {shorten(error.message, 160)}"

    def refuses(self, name: str, arguments: dict[str, Any], chars: int) -> bool:
        """For the operator's count of calls that break their schema (`core.tally`): True only where
        the check ran, within `AUDIT_BASE` plus `AUDIT_PER_CHAR` per character of the arguments
        (`chars`), and found an error; a check that cannot run (no such tool, nesting too deep, a
        schema it cannot use, over budget) counts nothing."""
        if name not in self._schemas or _depth(arguments) > MAX_CHECKED_DEPTH:
            return False
        _budget.left = AUDIT_BASE + AUDIT_PER_CHAR * chars
        try:
            validator = self._validators.get(name) or self._validator(name)
            return next(iter(validator.iter_errors(arguments)), None) is not None
        except Exception:  # over budget, RecursionError, an unusable schema, no jsonschema
            return False

    def _validator(self, name: str) -> Any:
        """The tool's validator: built once per distinct schema in the process (agents send the same
        tools with every request), at most `_SHARED_MAX` kept."""
        schema = self._schemas[name] or {"type": "object"}
        try:
            key = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):  # not JSON (a tool given as an object): this request's own
            key = None
        validator = _SHARED.get(key) if key is not None else None
        if validator is None:
            validator = _build(schema)
            if key is not None:
                if len(_SHARED) >= _SHARED_MAX:
                    _SHARED.clear()
                _SHARED[key] = validator
        self._validators[name] = validator
        return validator


_SHARED: dict[str, Any] = {}
"""Validators by their schema's JSON, shared by every request of the process."""
_SHARED_MAX = 512


def _build(schema: dict[str, Any]) -> Any:
    from jsonschema.validators import validator_for
    from referencing import Registry

    base = validator_for(schema)
    cls = _BOUNDED.get(base) or _bounded(base)
    return cls(schema, registry=Registry())  # retrieves nothing


def _bounded(base: type) -> type:
    """`base` with every keyword counted against the running check's budget, `uniqueItems` hashed."""
    from jsonschema.validators import extend

    def counted(keyword: Callable[..., Iterator[Any] | None]) -> Callable[..., Iterator[Any]]:
        def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            _budget.left -= 1
            if _budget.left < 0:
                raise _OverBudget
            return keyword(validator, value, instance, schema) or iter(())

        return run

    keywords = {keyword: counted(function) for keyword, function in base.VALIDATORS.items()}
    if "uniqueItems" in keywords:
        keywords["uniqueItems"] = counted(_unique_items)
    cls = _BOUNDED[base] = extend(base, keywords)
    return cls


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if unique and validator.is_type(instance, "array"):
        seen = set()
        for item in instance:
            key = _canonical(item)
            if key in seen:
                yield ValidationError(f"{shorten(repr(instance), 100)} has non-unique elements")
                return
            seen.add(key)


def _canonical(value: Any) -> Any:
    """A hashable form equal for JSON values JSON Schema calls equal (`1` and `1.0`; not `true` and
    `1`); recursive, and bounded: arguments are at most `MAX_CHECKED_DEPTH` deep by then."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("n", int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, list):
        return ("a", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("o", tuple(sorted((key, _canonical(item)) for key, item in value.items())))
    return ("?", repr(value))


def _depth(value: Any) -> int:
    """How deep objects and arrays nest in `value` (iterative)."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        node, level = pending.pop()
        if isinstance(node, (dict, list)):
            level += 1
            deepest = max(deepest, level)
            if level > MAX_CHECKED_DEPTH:
                return level
            pending.extend((item, level) for item in (node.values() if isinstance(node, dict) else node))
    return deepest


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(repr(key))
        found[key] = value
    return found
