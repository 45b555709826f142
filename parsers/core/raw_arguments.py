"""A call whose one argument is raw text up to an end marker: Llama 3.1's `code_interpreter`, whose
call after `<|python_tag|>` is plain Python source, up to `<|eom_id|>` / `<|eot_id|>` or the end of
the output.

The text streams as the argument's JSON string as it is read (only a partial end marker is held
back), and the end marker itself is left for the format to read. Arguments past a size bound make
the call text, up to where the text ends (a place the text fixes, so the outcome does not depend on
the chunking). Like the other sub-grammar readers (`python_calls`, `json_calls.HeadedCallReader`),
it owns its state and its end of the output (`read_eof`), and reports through its owner
(`_start_call`, `_call_args`, `_end_call`, `_reject`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .json_lexer import json_string_body, json_text
from .markers import MarkerScanner
from .python_literals import joined_surrogates
from .stream import NotACall

if TYPE_CHECKING:
    from .stream import FormatStream


class RawArgumentReader:
    """Reads the raw text of `tool`'s one argument `key`, up to one of `ends` (see the module
    docstring); `prefix` is the call's text before it. The call starts now: NotACall when refused."""

    def __init__(self, owner: FormatStream, tool: str, key: str, ends: Sequence[str], prefix: str) -> None:
        self._owner = owner
        self._tool, self._argument = tool, key
        self._ends = MarkerScanner(ends)
        self._read = [prefix]  # all of it: text if the call breaks
        self._value: list[str] = []
        self._failure = ""  # past a bound: the call is text, once the value ends
        self.done = self.broken = False
        self._key = owner._start_call(tool)
        owner._call_args(self._key, "{" + json_text(key) + ': "')

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos` up to an end marker (not consumed): where reading stopped, or None to hold
        `text[pos:]` back (a partial marker)."""
        m = self._ends.search(text, pos)
        cut = m.start() if m is not None else self._ends.releasable(text, pos)
        self._add(text[pos:cut])
        if m is not None:
            self._finish()
            return cut
        return cut if cut > pos else None

    def read_eof(self, rest: str) -> None:
        """The end of the output ends the value too."""
        self._add(rest)
        self._finish()

    def pending(self) -> str:
        return "".join(self._read)

    def _add(self, piece: str) -> None:
        if not piece:
            return
        self._read.append(piece)
        if self._failure:
            return
        self._value.append(piece)
        try:
            self._owner._call_args(self._key, json_string_body(piece))
        except NotACall as err:
            self._failure = str(err)

    def _finish(self) -> None:
        if not self._failure:
            try:
                self._owner._call_args(self._key, '"}')
            except NotACall as err:
                self._failure = str(err)
        if self._failure:
            self._owner._reject(f"a {self._tool} call: {self._failure}", "".join(self._read))
            self.broken = True
        else:
            self._owner._end_call(self._key, {self._argument: joined_surrogates("".join(self._value))})
        self.done = True
