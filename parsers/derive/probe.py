"""The calls a derived format is checked on: it must read what it or its template writes for them
back as those calls, fed whole and character by character alike."""

from __future__ import annotations

import re
from typing import Any

from ..formats.spec import Call, Format

_TURN_END = re.compile(r"(?:\s*(?:<[^<>\s]+>|\[[^\[\]\s]+\]))+")
"""Tokens that end the turn after the calls (`<|END_OF_TURN_TOKEN|>`, and the next turn's opening
some templates write), which a template's turn may keep: the one text a derived format may leave,
after the last call."""

PROBE_CALLS: list[Call] = [("get_weather", {"city": "Paris", "days": 3}), ("search_web", {"query": "cats"})]
PROBE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "a probe tool",
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "integer" if isinstance(value, int) else "string"} for key, value in arguments.items()
                },
            },
        },
    }
    for name, arguments in PROBE_CALLS
]


def check_reads_back(fmt: Format, source: str, turns: list[tuple[str, list[Any]]] | None = None) -> None:
    """The derived format reads `turns` (the writer's own spelling of the probe calls by default)
    back as their calls, fed whole and character by character alike, with no text from the first
    call on but tokens ending the turn (what follows the first call is the template's markup,
    which a format that leaves some as text misreads); ValueError naming `source` otherwise."""
    from ..core.events import CallStart, Text, build_result, merge_text

    for text, calls in turns or [(fmt.write(PROBE_CALLS), PROBE_CALLS)]:
        readings = []
        for chunks in ([text], list(text)):
            stream = fmt.stream(PROBE_TOOLS, lambda name, index: f"call_{index}")
            events: list[Any] = []
            for chunk in chunks:
                events += stream.feed(chunk)
            readings.append(merge_text(events + stream.close()))
        read = [(call.name, call.arguments) for call in build_result(readings[0]).calls]
        if read != calls or readings[0] != readings[1]:
            raise ValueError(f"the format derived from the {source} does not read {text!r} back as {calls}")
        first = next(i for i, event in enumerate(readings[0]) if isinstance(event, CallStart))
        after = readings[0][first:]
        left = "".join(event.text for event in after if isinstance(event, Text)).strip()
        if left and not (isinstance(after[-1], Text) and after[-1].text.strip() == left and _TURN_END.fullmatch(left)):
            raise ValueError(f"the format derived from the {source} leaves {left!r} of {text!r} as text")


def check_think_markers(fmt: Format, source: str) -> None:
    """No marker of the format is the start of one of its think tags, nor a think tag the start
    of a marker: which of the two a stream reads would depend on where its chunks end (a block
    opened by `<think` read as the think block whole, and as a call char by char)."""
    markers = [marker for marker in fmt.markers if marker]
    for pair in fmt.think_pairs:
        for tag in pair:
            for marker in markers:
                if marker != tag and (tag.startswith(marker) or marker.startswith(tag)):
                    raise ValueError(
                        f"the {source}: the marker {marker!r} and the think tag {tag!r} cannot be told apart "
                        "as a stream's chunks end"
                    )
