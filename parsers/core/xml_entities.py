"""XML entities, decoded the same wherever a format reads them (`xml_tools` bodies and `args`, Kimi
K3's attributes): `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` and numeric `&#N;` / `&#xH;` are decoded;
an unknown or broken entity, or a numeric one that is not a valid XML character (0, a surrogate,
past U+10FFFF), is kept literally (models write `&` in code more often than they break entities).
"""

from __future__ import annotations

import re

_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot|apos)|#([0-9]{1,7})|#x([0-9a-fA-F]{1,6}));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}
ENTITY_BOUND = len("&#x10FFFF;")
"""The longest entity decoded: a partial entity held back is never longer."""


def _entity(m: re.Match[str]) -> str:
    named, decimal, hexadecimal = m.groups()
    if named:
        return _NAMED[named]
    code = int(decimal) if decimal else int(hexadecimal, 16)
    if code == 0 or 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
        return m.group()
    return chr(code)


def decode_entities(text: str) -> str:
    """`text` with its XML entities decoded (see the module docstring)."""
    return _ENTITY.sub(_entity, text) if "&" in text else text


def entity_at(text: str, pos: int) -> tuple[str, int] | None:
    """At an `&`: (what it stands for, the position after it). None while `text` may still
    complete an entity (at most ENTITY_BOUND characters); ("&", pos + 1) when it is literal."""
    m = _ENTITY.match(text, pos, pos + ENTITY_BOUND)
    if m is not None:
        return _entity(m), m.end()
    rest = len(text) - pos
    if rest < ENTITY_BOUND and ";" not in text[pos:] and _could_be_entity(text[pos + 1 :]):
        return None
    return "&", pos + 1


_ENTITY_PREFIX = re.compile(r"(?:[a-z]{0,4}|#[0-9]{0,7}|#x[0-9a-fA-F]{0,6})")


def _could_be_entity(head: str) -> bool:
    m = _ENTITY_PREFIX.fullmatch(head)
    return m is not None and (head[:1] in "#" or any(name.startswith(head) for name in _NAMED))
