"""Family machines configured by data: each module holds one family's machine and its spec, a frozen
dataclass whose one value per format gives that format's stream, writer, constraints and `Format`
(docs/adding-a-format.md). The older families still live beside their formats in `formats/`."""

from __future__ import annotations

from typing import Any

from ...core.ids import IdFactory
from ...core.outside import ThinkMarkers
from ...core.stream import FormatStream


def format_stream(
    base: type[FormatStream], name: str, module: str, family: str, think: ThinkMarkers, **attributes: Any
) -> type[Any]:
    """A format's stream class: the family's machine `base` with the format's class `attributes`
    (set in the class body, so the family's `__init_subclass__` sees them), its `format_name`, and
    `think` as the think pairs it reads by default (`Format.text_think_pairs` reads that default);
    declared in `module`, where the docs find the format's docstring. Other keyword options (a
    family's own, such as its markers) go to the machine."""

    def __init__(
        self: Any,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = think,
        **options: Any,
    ) -> None:
        base.__init__(self, tools, id_factory, think_markers=think_markers, **options)  # type: ignore[call-arg]

    stem = "".join(part.title() for part in name.split("_")) + "Stream"
    namespace = {
        "__init__": __init__,
        "__module__": module,
        "__qualname__": stem,
        "__doc__": f"Incremental parser for one response of `{name}` ({family}).",
        "format_name": name,
        **attributes,
    }
    return type(stem, (base,), namespace)
