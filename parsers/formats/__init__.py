"""The registry of wire formats: name -> `Format`, found, not listed.

Every module of this package that declares `FORMAT` (a `spec.Format`) is a format; the others are
shared family machines (`call_blocks`, `gptme_blocks`) and the spec itself; a module whose name starts
with `_` is not looked at (a format in the making). Adding a format is adding
its module (with its template and corpus file); the engines' classes, the tools and the tests all
iterate `FORMATS`. Order is by name, so it never depends on the file system.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import TypeVar

from .spec import CallTag, ConstraintRequest, Format

T = TypeVar("T")


def _discover() -> dict[str, Format]:
    found: dict[str, Format] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue  # a module in the making is not registered
        module = importlib.import_module(f"{__name__}.{info.name}")
        spec = getattr(module, "FORMAT", None)
        if isinstance(spec, Format):
            if spec.name in found:
                raise RuntimeError(f"two formats named {spec.name!r}")
            found[spec.name] = spec
    return dict(sorted(found.items()))


FORMATS: dict[str, Format] = _discover()


def get_format(name: str) -> Format:
    """The format registered as `name`; ValueError naming the known formats otherwise."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown tool-call format {name!r}; known: {', '.join(sorted(FORMATS))}") from None


def reasoning_classes(base: type[T], suffix: str, module: str) -> dict[str, type[T]]:
    """`--reasoning-parser` name -> a subclass of an engine's reasoning base class per format whose
    models reason in think blocks, named as the format (`qwen_xml` -> `QwenXml` + `suffix`), with
    `format_name` set: the vLLM and SGLang adapters make theirs alike."""
    return {
        name: type(
            fmt.class_stem + suffix,
            (base,),
            {
                "__doc__": f"`--reasoning-parser {name}`: reasoning in {fmt.think_markers[0]}..{fmt.think_markers[1]}"
                f" before {name} calls",
                "__module__": module,
                "format_name": name,
            },
        )
        for name, fmt in FORMATS.items()
        if fmt.think_blocks
    }


__all__ = ["FORMATS", "CallTag", "ConstraintRequest", "Format", "get_format", "reasoning_classes"]
