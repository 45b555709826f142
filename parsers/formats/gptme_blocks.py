"""What gptme-style tool blocks (`markdown_tools`, `xml_tools`) share: positional words and a body
mapped onto the tool's JSON schema, the body streamed as it is read, and shell-like word splitting.

A tool block carries no parameter names. Its arguments come from the request's tool schema:

- The tool's **positional parameters** are its required parameters, in the order `properties`
  declares them. Each must be a string (`"type": "string"`, or a type list holding `"string"`);
  optional parameters are never filled.
- The words of the info string (markdown) or of the `args` attribute (XML) fill the positional
  parameters in order. With N positional parameters and k words: k == N means the block has no
  body parameter (its body must be empty); k == N - 1 means the body fills the last one.
- A tool with no parameters takes no words and an empty body: its arguments are `{}`.

Error cases (the block stays content, with one logged reason): a required parameter that is not a
string or that `properties` does not declare (the schema cannot be mapped); too many words (k > N);
too few (k < N - 1: more than one parameter left for the body); a non-empty body when all
parameters came from words (or the tool takes none); a word list with an unclosed quote or a
trailing backslash.

Word splitting follows the POSIX shell without expansions: spaces, tabs, carriage returns and
newlines separate words (a markdown info string holds no newline; an XML `args` value may);
`'...'` is literal; in `"..."` a backslash escapes only `"`, `\\`, `$` and a backquote; outside
quotes a backslash escapes the next character. Adjacent pieces join into one word (`a'b c'` is
`ab c`). The line is bounded by the caller (`info_bound`), and the splitter is one
pass of a regex that cannot backtrack.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core.ids import IdFactory
from ..core.json_lexer import json_string_body
from ..core.limits import Limits
from ..core.lines import HeldBreak
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import DeferredBound, FormatStream, NotACall
from ..core.typed_values import decoded_string

THINK_MARKERS = ("<think>", "</think>")
_WORD_PIECE = re.compile(r"""[^ \t\r\n'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[ \t\r\n]+""", re.DOTALL)
_DQUOTE_ESCAPE = re.compile(r"""\\([\\"$`])""")


def info_bound(limits: Limits) -> int:
    """The longest info string (markdown) or `args` attribute (XML) read: four tool names long
    (4096 characters by default), room for a name and a few paths. A longer one is never a call."""
    return 4 * limits.max_name


class BoundedRun:
    """A run of a block's markup (a tool name, an info string, an `args` value), read as it comes,
    never held back, up to one character past `bound`: a longer one is never a call."""

    __slots__ = ("bound", "length", "pieces")

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.pieces: list[str] = []
        self.length = 0

    def read(self, text: str, pos: int, chars: re.Pattern[str]) -> int:
        """Read the run of `chars` at `pos`, at most one character past the bound; return its end."""
        end = chars.match(text, pos, pos + self.bound - self.length + 1).end()  # type: ignore[union-attr]
        self.pieces.append(text[pos:end])
        self.length += end - pos
        return end

    @property
    def passed(self) -> bool:
        return self.length > self.bound

    @property
    def value(self) -> str:
        return "".join(self.pieces)


def split_words(line: str) -> list[str]:
    """The words of `line`, split as a POSIX shell does without expansions. Raises NotACall on an
    unclosed quote or a trailing backslash."""
    words: list[str] = []
    word: list[str] | None = None
    pos, end = 0, len(line)
    while pos < end:
        m = _WORD_PIECE.match(line, pos)
        if m is None:
            raise NotACall("an unclosed quote in the arguments" if line[pos] in "'\"" else "a trailing backslash")
        piece = m.group()
        pos = m.end()
        if piece[0] in " \t\r\n":
            if word is not None:
                words.append("".join(word))
                word = None
            continue
        if word is None:
            word = []
        if piece[0] == "'":
            word.append(piece[1:-1])
        elif piece[0] == '"':
            word.append(_DQUOTE_ESCAPE.sub(r"\1", piece[1:-1]))
        elif piece[0] == "\\":
            word.append(piece[1])
        else:
            word.append(piece)
    if word is not None:
        words.append("".join(word))
    return words


def _admits_string(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


class BlockCall:
    """A tool block's arguments, from the tool's schema and the block's words.

    `head_json` is the arguments JSON up to the body: the whole object when the block has no body
    parameter, else everything up to and including the opening quote of the body string, which is
    the last key so that it can stream. `tail_json` closes it. Raises NotACall for every error case
    of the module docstring that is known from the words alone."""

    def __init__(self, schema: dict[str, Any], words: list[str]) -> None:
        positional = positional_parameters(schema)
        if len(words) > len(positional):
            raise NotACall(f"{len(words)} words for {len(positional)} required string parameters")
        if len(words) < len(positional) - 1:
            raise NotACall(f"{len(words)} words for {len(positional)} required string parameters (one is the body)")
        given = list(zip(positional, words, strict=False))
        self.arguments: dict[str, Any] = {decoded_string(key): decoded_string(word) for key, word in given}
        self.body_parameter = positional[-1] if len(words) < len(positional) else None
        pairs = [f'"{json_string_body(key)}": "{json_string_body(word)}"' for key, word in given]
        if self.body_parameter is None:
            self.head_json, self.tail_json = "{" + ", ".join(pairs) + "}", ""
        else:
            pairs.append(f'"{json_string_body(self.body_parameter)}": "')
            self.head_json, self.tail_json = "{" + ", ".join(pairs), '"}'

    def finished(self, body: str) -> dict[str, Any]:
        """The arguments once the body is complete. Raises NotACall for a body the tool cannot take."""
        if self.body_parameter is None:
            if body:
                raise NotACall("a body, but no parameter is left for it")
            return self.arguments
        return {**self.arguments, decoded_string(self.body_parameter): decoded_string(body)}


class BlockBody:
    """A block's call, from its start to its end, and its body as it is read (`core.block_bodies`):
    streamed as the body string's JSON (when the tool takes a body), with the line break before a
    possible end of the block kept aside until it is known to be body (else it is framing).
    Arguments that pass their size bound on the way are acted on at the block's end, a place the
    text fixes, so the outcome does not depend on the chunking. Reports through its owner
    (`_start_call`, `_call_args`, `_end_call`), like the other sub-grammar readers.

    The call starts when the block's start is read: NotACall when the tool's schema cannot take the
    words or the call is refused."""

    def __init__(self, owner: FormatStream, name: str, words: list[str]) -> None:
        self._call = BlockCall(owner.tools.schemas[name], words)
        self._owner = owner
        self._key = owner._start_call(name)
        self._parts: list[str] = []
        self._break = HeldBreak()  # a line break (`\n` or `\r\n`), framing if the block's end follows
        self._bound = DeferredBound(self._send)  # the arguments' size bound, acted on at the block's end
        self._send(self._call.head_json)

    def write(self, data: str) -> None:
        """Body text (after the line break held before it, which is now known to be body)."""
        self._body(self._break.release() + data)

    def hold_break(self, line_break: str) -> None:
        """A line break that is framing if the block's end follows it; one held before is body."""
        self._body(self._break.hold(line_break))

    def _body(self, data: str) -> None:
        if not data:
            return
        self._parts.append(data)
        if self._call.body_parameter is None or self._bound.passed:
            return
        self._bound.send(json_string_body(data))

    def _send(self, fragment: str) -> None:
        self._owner._call_args(self._key, fragment)

    def finish(self) -> None:
        """The block's end: the rest of the arguments JSON is sent, and the call ends. Raises
        NotACall for a body the tool cannot take, or arguments past their bound."""
        self._break.drop()  # the line break before the block's end is framing
        self._bound.check()
        arguments = self._call.finished("".join(self._parts))
        self._send(self._call.tail_json)
        self._owner._end_call(self._key, arguments)


class ToolBlockStream(FormatStream):
    """What the two tool-block streams share: text outside blocks, and a block's text kept until it
    is known to be a call."""

    _block: BlockBody  # the block's call, once its start is read

    def __init__(
        self, tools: Any, id_factory: IdFactory | None, starts: list[str], think_markers: ThinkMarkers
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, starts, think_markers)
        self._info_bound = info_bound(self.limits)
        self._raw: list[str] = []  # the block read so far: text if it is not a call

    def _pending_text(self) -> str:
        return "".join(self._raw)


def positional_parameters(schema: dict[str, Any]) -> list[str]:
    """The tool's required parameters in declaration order; NotACall when one is not a string or
    is not declared (the schema cannot be mapped onto words and a body)."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) and all(isinstance(r, str) for r in required) else set()
    missing = required - properties.keys()
    if missing:
        raise NotACall(f"the tool's required parameter {sorted(missing)[0]!r} is not declared in its properties")
    names = [name for name in properties if name in required]
    for name in names:
        if not _admits_string(properties[name]):
            raise NotACall(f"the tool's required parameter {name!r} is not a string")
    return names


_PLAIN_WORD = re.compile(r"""[^\s'"\\`]+""")


def shell_word(value: Any) -> str:
    """A value as one word of a tool block's head, the way `split_words` reads it back: as it is
    when plain, else single-quoted (a `'` written `'\\''`); non-strings as JSON."""
    word = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if _PLAIN_WORD.fullmatch(word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def head_and_body(arguments: dict[str, Any]) -> tuple[list[str], str]:
    """A call's arguments as a block writes them: every value but the last as a head word, the last
    as the body (the writers take the arguments in the order of the tool's positional parameters)."""
    values = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in arguments.values()]
    if not values:
        return [], ""
    return [shell_word(v) for v in values[:-1]], values[-1]


MD_WORD = r"""(?:[^\s'"\\`]|'[^'\n`]*')+"""
"""A word the markdown constraint lets a model write: unquoted without quotes, backslashes and
backticks, or single-quoted (a path with spaces): a subset of what `split_words` reads."""
XML_WORD = r"""(?:[^\s'"\\<&]|'[^'"<&]*')+"""
"""The same inside a double-quoted `args` attribute (no `"`, `<` or `&`)."""


def mappable_tools(schemas: dict[str, dict[str, Any]], only: str | None) -> list[tuple[str, list[str]]]:
    """The tools a constraint may offer (`only`, if given) with their positional parameters; tools
    whose schema cannot be mapped are left out (a model cannot call them in these formats)."""
    names = [only] if only is not None else list(schemas)
    mapped = []
    for name in names:
        try:
            mapped.append((name, positional_parameters(schemas.get(name) or {})))
        except NotACall:
            continue
    return mapped


def tool_tags(
    tools: list[tuple[str, list[str]]], head: str, words: tuple[str, str, str], framing: tuple[str, str, str]
) -> list[Any]:
    """One xgrammar tag per tool for the `required` constraints: `head` (`{name}` filled in), then,
    when the tool takes words (all positional parameters but the last), `words` = (what precedes
    them, the regex of one word, what follows them), space-separated; then `framing` = (what ends
    the start, what ends the body, the closing text with `{name}`). A tool with no parameters takes
    no body."""
    lead, word, trail = words
    opened, body_end, closing = framing
    tags: list[Any] = []
    for name, positional in tools:
        given = " ".join([word] * (len(positional) - 1))
        pattern = (re.escape(lead) + given + re.escape(trail) if given else "") + re.escape(opened)
        if positional:
            content = {"type": "sequence", "elements": [{"type": "regex", "pattern": pattern}, {"type": "any_text"}]}
            end = body_end + closing.format(name=name)
        else:
            content = {"type": "const_string", "value": opened}
            end = closing.format(name=name)
        tags.append({"type": "tag", "begin": head.format(name=name), "content": content, "end": end})
    return tags
