"""A response template's anchors as pieces: literal text, optional whitespace, named groups.

transformers' response templates mark a region's open and close with literals or regular
expressions. A regular expression compiles into a format of ours only where it spells markers:
literal text, whitespace the model may or may not write (`\\s*`, `\\n?`), and the named groups
that capture a call's name (`(?P<name>[^>\\n]+)`). `anchor_pieces` reads an anchor into that
sequence with Python's own regex parser, and refuses anything else with the construct it met, so a
template is never read more loosely than these pieces (a named group's own pattern is not read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

try:
    import re._constants as _codes
    import re._parser as _regex_parser
except ImportError:  # Python 3.10
    import sre_constants as _codes  # type: ignore[no-redef]
    import sre_parse as _regex_parser  # type: ignore[no-redef]


@dataclass(frozen=True)
class Literal:
    text: str


@dataclass(frozen=True)
class Space:
    """Whitespace the model may write there: `newline` when the pattern admits only a line break."""

    newline: bool = False


@dataclass(frozen=True)
class Group:
    """A named capture (a call's `name`, a parameter's `key` or `value`)."""

    name: str


Piece = Literal | Space | Group


def _is_space_class(items: list[Any]) -> bool:
    """`\\s`, `[ \\t\\n]` and the like: a class of whitespace characters only."""
    for op, arg in items:
        if op is _codes.CATEGORY and arg is _codes.CATEGORY_SPACE:
            continue
        if op is _codes.LITERAL and chr(arg).isspace():
            continue
        return False
    return bool(items)


def _space_of(sub: list[tuple[Any, Any]]) -> Space | None:
    """The repeated item as whitespace, if it is one: `\\s`, `\\n`, a class of spaces."""
    if len(sub) != 1:
        return None
    op, arg = sub[0]
    if op is _codes.LITERAL and chr(arg) == "\n":
        return Space(newline=True)
    if op is _codes.LITERAL and chr(arg).isspace():
        return Space()
    if op is _codes.IN and _is_space_class(list(arg)):
        return Space()
    if op is _codes.CATEGORY and arg is _codes.CATEGORY_SPACE:
        return Space()
    return None


def pattern_pieces(pattern: str, scope: str) -> list[Piece]:
    """The pieces of a regular expression (see the module docstring); ValueError naming `scope`, the
    pattern and the construct otherwise."""
    try:
        parsed = _regex_parser.parse(pattern)
    except Exception as err:  # re.error, or a construct only the `regex` module knows
        raise ValueError(f"{scope}: {pattern!r} is not a regular expression Python reads ({err})") from None
    if parsed.state.flags & ~(_codes.SRE_FLAG_UNICODE | _codes.SRE_FLAG_DOTALL):  # DOTALL: transformers sets it
        raise ValueError(f"{scope}: {pattern!r} sets regex flags; our markers are read as written")
    names = {index: name for name, index in parsed.state.groupdict.items()}
    pieces: list[Piece] = []

    def walk(items: Any) -> None:
        for op, arg in items:
            if op is _codes.LITERAL:
                pieces.append(Literal(chr(arg)))
            elif op in (_codes.MAX_REPEAT, _codes.MIN_REPEAT) and arg[0] <= 1 and (space := _space_of(list(arg[2]))):
                pieces.append(space)
            elif op is _codes.SUBPATTERN and arg[0] in names:
                pieces.append(Group(names[arg[0]]))
            elif op is _codes.SUBPATTERN and arg[0] is None and not arg[1] and not arg[2]:
                walk(arg[3])  # a non-capturing group around literals (no flags of its own)
            else:
                raise ValueError(
                    f"{scope}: {pattern!r} is not markers our formats read (literal text, optional "
                    f"whitespace, named groups): it holds {str(op).lower()}"
                )

    walk(parsed)
    return _merged(pieces)


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Adjacent literals as one, adjacent whitespace as one."""
    out: list[Piece] = []
    for piece in pieces:
        last = out[-1] if out else None
        if isinstance(piece, Literal) and isinstance(last, Literal):
            out[-1] = Literal(last.text + piece.text)
        elif isinstance(piece, Space) and isinstance(last, Space):
            out[-1] = Space(newline=last.newline and piece.newline)
        else:
            out.append(piece)
    return out


def anchor_pieces(field: dict[str, Any], which: str, scope: str) -> list[list[Piece]] | None:
    """A field's `open` or `close` (`which`) as the alternatives it admits, each a list of pieces:
    one per literal of a literal anchor, one for a pattern; None where the field has none."""
    if which in field:
        literals = field[which]
        literals = [literals] if isinstance(literals, str) else literals
        if not isinstance(literals, list) or not literals or not all(isinstance(s, str) and s for s in literals):
            raise ValueError(f"{scope}: '{which}' must be a non-empty string or a list of them")
        return [[Literal(s)] for s in dict.fromkeys(literals)]
    pattern = field.get(f"{which}_pattern")
    if pattern is None:
        return None
    if not isinstance(pattern, str):
        raise ValueError(f"{scope}: '{which}_pattern' must be a string")
    return [pattern_pieces(pattern, f"{scope} '{which}_pattern'")]


def trimmed(pieces: list[Piece]) -> list[Piece]:
    """Without whitespace at either end (what a family reads as markup around its tags anyway)."""
    start, end = 0, len(pieces)
    while start < end and isinstance(pieces[start], Space):
        start += 1
    while end > start and isinstance(pieces[end - 1], Space):
        end -= 1
    return pieces[start:end]
