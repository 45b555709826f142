"""Reading the call after Llama 3.1's `<|python_tag|>`, where three kinds of call may follow.

Grammar, after the tag::

    tagged  := ws (object | builtin | code)
    object  := "{" ...                                     # json_calls.HeadedCallReader, the format's head
    builtin := IDENT ".call(" [kwarg ("," kwarg)* [","]] ")"  # python_calls.PythonCallReader.one_call
    code    := python-source                               # raw_arguments.RawArgumentReader, up to an end marker

A built-in call breaks as a whole (`python_calls`: a positional argument, a value that is not a
literal), and a call the core refuses is text up to its `(`. Code is read only when the request
declares `code_interpreter`; else the tag and the whitespace after it are text, and the owner reads
on at what follows them.

The word after the tag is held back (at most TOOLCALL_PARSERS_MAX_NAME characters, so it is short)
until the character after it shows whether it is a built-in's `NAME.call(`; then the reader of that
kind of call takes over, from where the decision was made. Like the readers it hands over to, this
one owns its state and its end of the output (`read_eof`: a word cut off there is the code when
`code_interpreter` is declared), and reports through its owner.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .json_calls import CallHead, HeadedCallReader
from .python_calls import PythonCallReader
from .raw_arguments import RawArgumentReader
from .stream import NotACall

if TYPE_CHECKING:
    from .stream import FormatStream

CODE_TOOL = "code_interpreter"
"""The built-in tool whose call after the tag is raw Python source; its one argument is `code`."""
_CALL_SUFFIX = ".call"
_NAME_RUN = re.compile(r"[\w.]*")

CallReader = HeadedCallReader | PythonCallReader | RawArgumentReader
"""A reader of one kind of call: `read`, `read_eof`, `pending`, `done` and `broken`."""


class PythonTagReader:
    """Reads what follows the tag (`prefix`: the tag's text), up to the end of the call it holds
    (see the module docstring): `head` decides a JSON call object, `code_ends` end a code body.
    `done` tells the owner the call is read, `broken` that it was text after all."""

    def __init__(self, owner: FormatStream, prefix: str, head: CallHead, code_ends: Sequence[str]) -> None:
        self._owner = owner
        self._head = head
        self._code_ends = code_ends
        self._markup = [prefix]  # the tag and the whitespace after it
        self._call: CallReader | None = None  # the reader that took over
        self.done = self.broken = False

    def read(self, text: str, pos: int) -> int | None:
        """Read from `pos`: where reading stopped (the owner reads on there once `done`), or None to
        hold `text[pos:]` back."""
        if self._call is not None:
            return self._read_call(self._call, text, pos)
        if (at := self._owner._markup_ws(text, pos, self._markup)) > pos:
            return at
        if text[pos] == "{":
            return self._read_call(HeadedCallReader(self._owner, self._head, "".join(self._markup)), text, pos)
        max_name = self._owner.limits.max_name
        end = _NAME_RUN.match(text, pos, pos + max_name + 1).end()  # type: ignore[union-attr]
        if end == len(text) and end - pos <= max_name:
            return None  # the name may go on
        name = text[pos:end]
        if end - pos <= max_name and text[end] == "(" and name.endswith(_CALL_SUFFIX):
            tool = name.removesuffix(_CALL_SUFFIX)
            if tool.isidentifier():
                return self._start_builtin(tool, "".join(self._markup) + text[pos : end + 1], end + 1)
        if CODE_TOOL in self._owner.tools.schemas:
            try:
                code = self._code()
            except NotACall as err:  # refused: the tag is text
                return self._refused(str(err), "".join(self._markup), pos)
            return self._read_call(code, text, pos)
        self._owner._text("".join(self._markup))
        self.done = self.broken = True
        return pos

    def read_eof(self, rest: str) -> None:
        """The output ended here (`rest`: the text held back, a word after the tag)."""
        self.done = True
        if self._call is not None:
            self._call.read_eof(rest)
            self.broken = self._call.broken
            return
        self.broken = True
        if not (rest.strip() and CODE_TOOL in self._owner.tools.schemas):
            self._owner._text("".join(self._markup) + rest)
            return
        try:  # the output ended right after the tag and a name-like run: that run is the code
            self._code().read_eof(rest)
        except NotACall as err:
            self._owner._reject(str(err), "".join(self._markup) + rest)

    def pending(self) -> str:
        """The text read and not reported yet."""
        return self._call.pending() if self._call is not None else "".join(self._markup)

    def _start_builtin(self, name: str, prefix: str, body: int) -> int | None:
        """`NAME.call(` read (`prefix`: the text up to its `(`); the arguments start at `body`."""
        try:
            call = PythonCallReader.one_call(self._owner, prefix, name)
        except NotACall as err:  # refused: the call is text up to its `(`
            return self._refused(str(err), prefix, body)
        self._call = call
        return body

    def _code(self) -> RawArgumentReader:
        """A `code_interpreter` call: the source after the tag is its `code` (NotACall: refused)."""
        return RawArgumentReader(self._owner, CODE_TOOL, "code", self._code_ends, "".join(self._markup))

    def _read_call(self, call: CallReader, text: str, pos: int) -> int | None:
        self._call = call
        at = call.read(text, pos)
        self.done, self.broken = call.done, call.broken
        return at

    def _refused(self, reason: str, span: str, pos: int) -> int:
        """The core refused the call: its text is text; the owner reads on at `pos`."""
        self._owner._reject(reason, span)
        self.done = self.broken = True
        return pos
