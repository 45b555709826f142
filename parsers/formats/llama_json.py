"""`llama_json`: Llama 3.1 / 3.2 / 3.3 JSON tool calls, and Llama 3.1's built-in tool calls.

Grammar, as this machine reads it::

    output   := (text | think | calls)*
    calls    := start call (ws [";" | ","] ws call)*      # text after the last call is content; without
                                                          # a separator, only a line break before a call is its own
    start    := output-start | line-start [ \\t]* | "<|python_tag|>" ws   # line breaks: core/lines.py
              | mid-line                                  # a declared tool's call only, see below
    call     := head args-value rest-of-object            # read by core/json_calls.py after the head
    head     := "{" ws ['"type"' ws ":" ws '"function"' ws "," ws] '"name"' ws ":" ws NAME ws "," ws KEY
    KEY      := '"parameters"' | '"arguments"'
    builtin  := "<|python_tag|>" ws IDENT ".call(" [kwarg ("," kwarg)* [","]] ")"   # core/python_calls.py
    code     := "<|python_tag|>" ws python-source        # only when the request declares `code_interpreter`

A call is decided from its first keys as they arrive, so what waits for the decision is bounded (the
keys, the name: at most TOOLCALL_PARSERS_MAX_NAME characters; all consumed, never re-read; only a
partial key or a lone backslash is held back):
the object's first key is `name` (or `"type": "function"` then `name`, as Llama 3.1 sometimes writes
and llama.cpp accepts), its value a JSON string, and the next key `parameters` or `arguments`. Any
other object (`{"name": "John", "age": 3}`, `{"name": "f"}`, a config, keys in another order,
`{'name': ..}`) is content, not logged, released as soon as it is known not to be a call; scanning
goes on right after the point where that became known. The line break a call object takes (the one
right before it) is the whole `\\r\\n`; a lone `\\r` breaks no line.

Mid-line (after prose on the same line: `Here are the results: {"name": "f", ..}; {..}`, as vLLM's and
SGLang's tests write it) a `{` opens a call only when its name is a tool the request declared (as
`llama_pythonic` reads mid-line lists) and the text before it leaves the object no other reading:
after a space or tab that follows prose, not one that follows `,`, `[`, `{`, `(` or a key's `":`
(a value inside JSON or code, `{"example": {"name": ..}}`); or right where a call broke (`{"name":
"f", "parameters": {{"name": "f", ..}}`: the model began again). So these stay content: a quoted
call of an undeclared name, anything mid-line when no tools are declared, an object glued to the text
before it (`[{`, `>{`: another format's markup, a JSON array), a call shape nested in JSON.

After the head the object is read by the shared JSON call reader, which starts where the head ended:
arguments stream as written, an arguments string holding an object is decoded, keys after the
arguments are ignored. A call whose JSON breaks, or that the output cuts off once its name began, is
text from its start marker (the tag or `;` before it included) up to the break; scanning goes on
there. Text after a call is content (vLLM's llama3_json drops it; we never lose text).

Built-in tools (Llama 3.1 `brave_search`, `wolfram_alpha`, any `NAME.call(..)`) count only right after
`<|python_tag|>`: a call named NAME whose keyword arguments are Python literals; a positional
argument or a value that is not a literal makes the whole call text; JSON calls may follow it as they
follow a JSON call (`;`, a line break or nothing between). After the tag, anything that is
neither `{` nor `NAME.call(` is Python source for `code_interpreter` when the request declares that
tool (`{"code": source}`, up to `<|eom_id|>` / `<|eot_id|>` or the end), else text.

`<|eom_id|>` / `<|eot_id|>` (present only when the server keeps special tokens and does not stop on
them) are text wherever they appear, as in `llama_pythonic`; they end a code body.

Each call is read by a reader in core that owns its state and its end of the output: a call object
by `json_calls.HeadedCallReader` with `HEAD`, what follows the tag by `python_tag.PythonTagReader`
(which hands a built-in to `python_calls`, code to `raw_arguments`); the machine here knows only the
states between calls.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.ids import IdFactory
from ..core.json_calls import CallHead, HeadedCallReader
from ..core.json_lexer import json_text
from ..core.line_start_stream import LineStartStream
from ..core.outside import OutsideCalls
from ..core.python_tag import PythonTagReader
from .constraints import (
    Element,
    const,
    json_value,
    one_call_in_text,
    one_of,
    regex,
    repeated,
    sequence,
    structural,
    tag,
    triggered,
)
from .spec import Call, CallTag, ConstraintRequest, Format

PYTHON_TAG, END_OF_MESSAGE, END_OF_TURN = "<|python_tag|>", "<|eom_id|>", "<|eot_id|>"

HEAD = CallHead(
    before_name=("{", ('"name"', '"type"'), ":"),
    after_name=(",", ('"parameters"', '"arguments"')),
    inserted={'"type"': (":", '"function"', ",", '"name"')},
)
"""`head` in the grammar above (`"type": "function"` first brings the name's key after it)."""

_TEXT, _CALL, _AFTER = "text", "call", "after"
_VALUE_BEFORE = ",[{("
"""After one of these and a space, a `{` is a value inside JSON or code (as after a key's `":`)."""


class LlamaJsonStream(LineStartStream[HeadedCallReader | PythonTagReader]):
    """Incremental parser for one response in Llama 3.x's JSON tool-call format."""

    format_name = "llama_json"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: tuple[str, str] | None = ("<think>", "</think>"),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, ["{", PYTHON_TAG], think_markers)
        self._state = _TEXT
        self._separated = False  # a `;` was read after the last call
        self._tail = ""  # the content's last two characters that are not spaces or tabs
        self._spaced = False  # the content ends in spaces or tabs
        self._at_break = False  # a call broke right here (no content since)
        self._readers = {_TEXT: self._scan_text, _CALL: self._scan_call, _AFTER: self._scan_after}

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is None:
            return at
        if m.group() == PYTHON_TAG:
            self._lines.release()
            self._read_call(PythonTagReader(self, PYTHON_TAG, HEAD, (END_OF_MESSAGE, END_OF_TURN)))
            return at
        if self._lines.at_line_start:
            self._read_call(HeadedCallReader(self, HEAD, self._lines.take()))
        elif self._mid_line_call_may_start():
            self._read_call(HeadedCallReader(self, HEAD, "", self.tools.schemas.__contains__))
        else:
            self._text("{")
            return at
        return m.start()

    def _mid_line_call_may_start(self) -> bool:
        """A `{` mid-line may open a declared tool's call right where a call broke, or after prose
        and a space, unless what precedes the space makes the `{` a JSON (or code) value."""
        last = self._tail[-1:]
        value = last in _VALUE_BEFORE or (last == ":" and self._tail[:1] == '"')
        return self._at_break or (self._spaced and not value)

    def _text(self, text: str) -> None:
        if text:
            body = text.rstrip(" \t")
            self._spaced = len(body) < len(text)
            if body:
                self._tail = (self._tail + body)[-2:]
            self._at_break = False
        super()._text(text)

    def _read_call(self, call: HeadedCallReader | PythonTagReader) -> None:
        self._call_reader = call
        self._raw = []
        self._state = _CALL

    def _scan_call(self, text: str, pos: int) -> int | None:
        """Inside a call: its reader reads it, up to its end or the point where it is not one."""
        call = self._call_reader
        assert call is not None
        at = call.read(text, pos)
        if call.done:
            self._call_reader = None
            if call.broken:
                self._state, self._at_break = _TEXT, True
            else:
                self._raw, self._separated = [], False
                self._state = _AFTER
        return at

    def _scan_after(self, text: str, pos: int) -> int | None:
        """After a call: whitespace, an optional `;` (or `,`), then another call object; anything else
        is content."""
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        c = text[pos]
        if c == "{":
            if not self._separated:  # only a line break right before the object belongs to it
                self._text("".join(self._raw))
                self._raw = [self._lines.take()]
            self._read_call(HeadedCallReader(self, HEAD, "".join(self._raw)))
            return pos
        if c in ";," and not self._separated:
            self._separated = True
            self._raw.append(c)
            return pos + 1
        self._text("".join(self._raw))  # what was read after the call is content
        self._raw = []
        self._state = _TEXT
        return pos


# -- the spec --------------------------------------------------------------------------------------


def write(calls: Sequence[Call]) -> str:
    """The calls joined by `; `, as the template writes them."""
    return "; ".join(json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls)


def _call_tags(request: ConstraintRequest, names: list[str]) -> list[Element]:
    begin = '{{"name": {}, "parameters": '.format
    return [tag(begin(json_text(name)), json_value(request.parameters(name)), "}") for name in names]


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """One or more `{"name": .., "parameters": ..}` objects joined by `; ` (at most one if
    `single`): the output then starts with a call."""
    return structural(repeated(request, _call_tags(request, request.names), "; "))


_WS = "[ \\t\\r\\n]*"
_REST = "([^}\\n<]|<[^|}\\n])*<?(\\}|\\n)"
"""After the text has shown it is no call: the rest of the line, up to a `}` (where a call could
start again on the next `{`) or the line break (after which a `{` starts a line, as a call does),
never `<|` (the tag, after which the parser reads a call anywhere)."""


def _not_starting(literal: str, rest: str = _REST) -> str:
    """A regex for text (to the end of a line or a `}`) that does not start with `literal`."""
    options = []
    for i, char in enumerate(literal):
        options.append(_regex_text(literal[:i]) + f"[^{_regex_text(char)}}}\\n]" + rest)
    return "(" + "|".join(options) + ")"


def _regex_text(text: str) -> str:
    return "".join(f"\\{c}" if c in '\\^$.|?*+()[]{}-"' else c for c in text)


_NOT_AN_OBJECT_CALL = "|".join(
    [
        _WS + "\\}",  # {}
        _WS + '[^"\\s{}]' + _REST,  # the first key is not a string
        _WS + '"(' + "[^nt}\\n]" + _REST + "|n" + _not_starting('ame"') + "|t" + _not_starting('ype"') + ")",
        _WS
        + '"type"'
        + _WS
        + "(\\}|[^:\\s}]"
        + _REST
        + "|:"
        + _WS
        + '(\\}|[^"\\s}]'
        + _REST
        + '|"'
        + _not_starting('function"')
        + "))",
    ]
)
_NOT_A_CALL = f"{_NOT_AN_OBJECT_CALL}|[ \\t]*\\{{({_NOT_AN_OBJECT_CALL})"
"""What may follow a `{` that the parser reads as no call: an object whose first key is not `name`
(nor `type` with the value `function`), or no object at all; `{{` on one line (Jinja in prose) as
long as the second brace opens no call either (the parser reads a call to a declared tool mid-line)."""


def _call_after_brace(request: ConstraintRequest, name: str) -> Element:
    head = f'{_WS}("type"{_WS}:{_WS}"function"{_WS},{_WS})?"name"{_WS}:{_WS}'
    key = f'{_WS},{_WS}"(parameters|arguments)"{_WS}:{_WS}'
    return sequence(
        regex(head), const(json_text(name)), regex(key), json_value(request.parameters(name)), regex(f"{_WS}\\}}")
    )


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`. The parser reads a call at any `{` that starts a line (or the output), after
    `<|python_tag|>` and after a call, a declared tool's after prose, in any JSON spacing: so every
    `{` is held here, to a call of
    a declared tool or to text the parser keeps as text (a first key other than `name`); after the
    tag only a JSON call. With `single`, the one call may come anywhere among such text."""
    calls = [_call_after_brace(request, name) for name in request.schemas]
    other = regex(_NOT_A_CALL)
    after_tag = sequence(regex(_WS + "\\{"), one_of(calls))
    if not request.single:
        return triggered(
            request, ["{", PYTHON_TAG], [tag("{", one_of([*calls, other]), ""), tag(PYTHON_TAG, after_tag, "")]
        )
    one = one_of([sequence(const("{"), one_of(calls)), sequence(const(PYTHON_TAG), after_tag)])
    return one_call_in_text("{", other, [PYTHON_TAG], one)


def _may_call(text: str) -> bool:
    # Code after the tag is a call only when `code_interpreter` is declared, and a call mid-line only
    # when its tool is (see above): both need the tag, or the name key.
    return PYTHON_TAG in text or '"name"' in text


FORMAT = Format(
    "llama_json",
    '{"name": .., "parameters": {..}} (a line start or after <|python_tag|>; several joined by ";")',
    LlamaJsonStream,
    write,
    markers=(PYTHON_TAG, END_OF_MESSAGE),
    special_tokens=(PYTHON_TAG, END_OF_MESSAGE),
    required_constraint=required_constraint,
    call_tag=CallTag(PYTHON_TAG + '{{"name": "{name}", "parameters": ', "}", PYTHON_TAG),
    needs_declared_tools=_may_call,
    auto_constraint=auto_constraint,
    vllm_names=("llama3_json", "llama4_json"),
    sglang_names=("llama3",),
    models="Llama 3.1 / 3.2 / 3.3 (JSON tool calling)",
)
