"""The last word on a strict call: its arguments checked against the tool's schema.

A strict request's decoding constraint holds a pinned tool's arguments to its schema, but a
grammar is not a validator: xgrammar leaves some keywords unchecked (`not`, `if` / `then`,
`dependentRequired`), our raw-value grammars a string's `pattern` and length, and a constraint can
have gaps of its own. So a call to a
pinned tool is checked here, once complete, before anyone sees it (`FormatStream.pin_arguments`):
a strict request never returns a call whose arguments its schema refuses.

jsonschema (a dependency of both engines) is imported on the first strict call, not before, so
parsing without strict costs nothing; without it, strict calls are refused with that reason.
"""

from __future__ import annotations

from typing import Any

from .logs import shorten


class SchemaCheck:
    """Validators for a response's tools, each built on its first use. `reason(name, arguments)`
    is None when the call may stand, else why not (one short line)."""

    def __init__(self, schemas: dict[str, dict[str, Any]]) -> None:
        self._schemas = schemas
        self._validators: dict[str, Any] = {}

    def reason(self, name: str, arguments: dict[str, Any]) -> str | None:
        if name not in self._schemas:
            return f"{name!r} is not among the request's tools"
        try:
            validator = self._validators.get(name) or self._validator(name)
            error = next(iter(validator.iter_errors(arguments)), None)
        except ImportError:
            return "jsonschema is not installed, so the arguments cannot be checked"
        except RecursionError:
            return "the arguments are nested too deeply to check"
        except Exception as err:  # a schema jsonschema cannot use: nothing was checked
            return f"the schema cannot be checked ({type(err).__name__}: {shorten(str(err), 120)})"
        if error is None:
            return None
        where = "".join(f"[{p!r}]" for p in error.absolute_path) or "the arguments"
        return f"{where}: {shorten(error.message, 160)}"

    def _validator(self, name: str) -> Any:
        from jsonschema.validators import validator_for

        schema = self._schemas[name] or {"type": "object"}
        validator = self._validators[name] = validator_for(schema)(schema)
        return validator
