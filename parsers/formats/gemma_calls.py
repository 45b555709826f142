"""`gemma_calls`: Gemma 4's and FunctionGemma's calls, `call:NAME{key:value,...}` between tokens.

Grammar, as this machine reads it::

    output  := (text | channel | call)*
    channel := "<|channel>" text ["<channel|>"]              # reasoning: text, never a call
    call    := OPEN "call:" NAME ("{" args "}" | "(" args ")") CLOSE
    args    := [key ":" value ("," key ":" value)* [","]]      # see core/gemma_literals.py
    value   := D text D | bare | "{" args "}" | "[" [value ("," value)* [","]] "]"

with OPEN / CLOSE / D = `<|tool_call>` / `<tool_call|>` / `<|"|>` (Gemma 4) or
`<start_function_call>` / `<end_function_call>` / `<escape>` (FunctionGemma): one machine, two
marker sets, because the two write the same call syntax and differ only in their tokens; the
opener picks the set and its closer and delimiter must match. NAME is anything up to `{` or `(`
without whitespace, brackets or quotes, so `mcp:server:tool` and `a.b-c` are names. Calls follow
each other with no separator. `<|tool_response>`, which the template writes to end a turn with
calls (after its text) and the model may end its turn with, is dropped wherever it stands outside
a call and the reasoning channel: a special token, never prose. Whitespace between tokens is
markup.

Values, as Gemma 4's template prints them: strings between two delimiters with no escaping, numbers
and booleans bare, None for null, objects with bare keys (or keys between delimiters), lists. The
template writes every key of a call bare, whatever it holds, so words with spaces between them
(`{my key:1}`) are one key: that is how the model writes a declared key with a space, and how the
strict constraint writes it. A bare value is typed by the tool's schema where it declares one
(`3` stays `"3"` for a string), else as written (JSON numbers and Python's `108.`, `true` /
`false`, `null` / `None`; anything else a string); a bare `None` is null unless the schema says
only string. A number past a float's range (`1e400`) is no number a client can read (JSON has no
infinity): it is bare text like any other, the string `"1e400"` as written, in every schema, so
the client's own validation reports it rather than receiving a guessed infinity or losing the
call. A Gemma 4 delimited value is a string as written; FunctionGemma delimits every value
(`n:<escape>42<escape>`), so its delimited values are typed like bare ones, as vLLM's
`functiongemma` reads them. What the field reports, and what this reads:

- a delimiter inside a string (`<|"|>` is how Gemma 4 writes a `"` in a value, so code with
  `\"\"\"` is three of them): it closes the string only where a `,` or the closing bracket of the
  string's container follows; elsewhere it is a `"` in the value;
- quotes kept inside a value (`said "hi"`): verbatim;
- a missing opening delimiter (`{query:weather in Tokyo<|"|>}`): the bare value ends at the stray
  delimiter before `,` / `}` / `]`, and is the string `weather in Tokyo` (a recovered call: the
  model wrote the call, only a token is missing); in an object a `, ` that no `key:` follows is
  part of a bare value (`Paris, France<|"|>,limit:5`), as prose writes a comma;
- a missing closing delimiter, whose string runs into `,next:<|"|>` and a value's text: the
  string ends at that `,` and `next` is read (as vLLM now does); a delimiter followed by `key:`
  is a forgotten `,` (`command:<|"|>look<|"|>angle:90`);
- the call's closer inside a string (code that names `<tool_call|>`): data, since a string is
  data until its close; where that string, still open, then holds the next call's opener, the
  model ended its call at the closer without closing the string and began its next call: the
  first call is text up to that opener, and the next call counts (so a model's broken call
  never swallows the real one after it);
- values written as JSON or Python strings (`["a"]`, `['a']`, `{"mode": "fast"}`): strings
  without their quotes, since no bare value starts with a quote;
- a parenthesized call (`call:terminal(command:<|"|>ls<|"|>)`): read like braces (a recovered
  call: `(`..`)` holds the same arguments, only the bracket differs);
- the call begun again where a key or a value belongs (`call:f{<|tool_call>call:f{a:1}..`): the
  broken first attempt is text up to the new opener, and the call is read again from there, so
  the call the model meant counts;
- `key=value` (`save_as='x'`), a bare `:NAME{`, no `call:`, text where the closer belongs, an
  empty value, nesting past `TOOLCALL_PARSERS_MAX_DEPTH`, a bare value past
  `TOOLCALL_PARSERS_MAX_SCALAR`: the call is text, from its opener to where it broke, and scanning
  goes on there; the other calls still count.

The end of the output: a final call whose arguments are complete (their closing bracket written)
and only its closer missing, or cut part-way (that part is text), is a call, as in `hermes_json`:
the model wrote the whole call, and an output stopped at the closer (a stop sequence, a length
limit one token short) should not lose it; a call cut inside its arguments is text, since what it
would have held is unknown. Streaming: the call starts at its `{`, keys and values are sent as
they complete, strings stream inside the string.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.gemma_literals import BARE_KEY, ArgumentsGrammar, Dialect, GemmaArguments, GemmaSyntaxError
from ..core.ids import IdFactory
from ..core.outside import OutsideCalls, ThinkMarkers
from ..core.stream import DeferredBound, FormatStream, NotACall, shorten
from .constraints import repeated, structural, triggered
from .spec import Call, ConstraintRequest, Format

TOOL_CALL, TOOL_CALL_END, DELIM = "<|tool_call>", "<tool_call|>", '<|"|>'
FG_CALL, FG_CALL_END, FG_ESCAPE = "<start_function_call>", "<end_function_call>", "<escape>"
CHANNEL, CHANNEL_END, TOOL_RESPONSE = "<|channel>", "<channel|>", "<|tool_response>"
GEMMA4 = Dialect(DELIM, TOOL_CALL_END, opener=TOOL_CALL)
FUNCTION_GEMMA = Dialect(FG_ESCAPE, FG_CALL_END, typed_strings=True, opener=FG_CALL)
_DIALECTS = {TOOL_CALL: GEMMA4, FG_CALL: FUNCTION_GEMMA}
_CALL_WORD = "call:"

_TEXT, _HEAD, _NAME, _ARGS, _END = "text", "head", "name", "args", "end"
_NAME_RUN = re.compile(r"[^\s{}()\[\]<>,\"']*")


class GemmaCallsStream(FormatStream):
    """Incremental parser for one response in Gemma 4's (or FunctionGemma's) call format."""

    format_name = "gemma_calls"

    def __init__(
        self,
        tools: Any = None,
        id_factory: IdFactory | None = None,
        *,
        think_markers: ThinkMarkers = (CHANNEL, CHANNEL_END),
    ) -> None:
        super().__init__(tools, id_factory)
        self._outside = OutsideCalls(self._text, [*_DIALECTS, TOOL_RESPONSE], think_markers)
        self._state = _TEXT
        self._dialect = GEMMA4
        self._raw: list[str] = []  # the call's text so far: text again if it breaks
        self._args: GemmaArguments | None = None
        self._key = -1
        self._bound = DeferredBound(self._send_now)  # the arguments' bound, acted on at the call's end
        self._readers = {
            _TEXT: self._scan_text,
            _HEAD: self._scan_head,
            _NAME: self._scan_name,
            _ARGS: self._scan_args,
            _END: self._scan_end,
        }

    def _scan_text(self, text: str, pos: int) -> int | None:
        m, at = self._outside.read(text, pos)
        if m is not None and m.group() != TOOL_RESPONSE:  # that one ends the turn's calls: dropped
            self._dialect = _DIALECTS[m.group()]
            self._raw = [m.group()]
            self._state = _HEAD
        return at

    def _scan_head(self, text: str, pos: int) -> int | None:
        found = self._literal_at(text, pos, (_CALL_WORD,))
        if found is None:
            return None
        if not found:
            raise NotACall("no call: after the opener", pos)
        self._raw.append(found)
        self._state = _NAME
        return pos + len(found)

    def _scan_name(self, text: str, pos: int) -> int | None:
        bound = self.limits.max_name
        end = _NAME_RUN.match(text, pos, pos + bound + 1).end()  # type: ignore[union-attr]
        if end - pos > bound:
            raise NotACall("the tool name is too long (TOOLCALL_PARSERS_MAX_NAME)", end)
        if end == len(text):
            return None
        name, bracket = text[pos:end], text[end]
        if not name or bracket not in "{(":
            raise NotACall(f"no '{{' after the tool name {shorten(name)}", end)
        self._key = self._start_call(name)
        self._bound.reset()
        self._args = GemmaArguments(self._dialect, bracket, self.tools.schemas.get(name), self._send_args, self.limits)
        if bracket == "(":
            self._warn(f"a parenthesized call to {shorten(name)}; read as braces")
        self._raw.append(text[pos : end + 1])
        self._state = _ARGS
        return end + 1

    def _send_args(self, fragment: str) -> None:
        """Pass a piece of the arguments on. Past the size bound the call is broken, but it is read
        on to its end, which then comes back as text: breaking where the bound is crossed would
        read the rest of the call again from there (a string that never closes holds every later
        opener: one pass each, quadratic)."""
        self._bound.send(fragment)

    def _send_now(self, fragment: str) -> None:
        self._call_args(self._key, fragment)

    def _scan_args(self, text: str, pos: int) -> int | None:
        assert self._args is not None
        try:
            end = self._args.read(text, pos)
        except GemmaSyntaxError as err:
            raise NotACall(str(err), err.pos) from None
        if end is None:
            return None
        self._raw.append(text[pos:end])
        if self._args.done:
            self._state = _END
        return end

    def _scan_end(self, text: str, pos: int) -> int | None:
        if (at := self._markup_ws(text, pos, self._raw)) > pos:
            return at
        found = self._literal_at(text, pos, (self._dialect.closer,))
        if found is None:
            return None
        if not found:
            raise NotACall(f"no {self._dialect.closer} after the arguments", pos)
        self._finish(pos + len(found))
        return pos + len(found)

    def _finish(self, at: int | None) -> None:
        """The call ends: its closer read (reading goes on at `at`), or the output ended after its
        arguments. NotACall if its arguments passed the call's size bound."""
        assert self._args is not None
        self._bound.check(at)
        if self._args.missed:
            self._warn(f"{self._args.missed} string(s) without a closing delimiter, ended before the next key")
        self._end_call(self._key, self._args.arguments)
        self._raw, self._args = [], None
        self._state = _TEXT

    def _recover(self, err: NotACall, text: str, pos: int) -> int | None:
        """The call breaks: its text so far (and up to the break) is text; scanning goes on there."""
        at = pos if err.pos is None else max(err.pos, pos)
        self._reject(f"not a valid tool call ({err})", "".join(self._raw) + text[pos:at])
        self._raw, self._args = [], None
        self._state = _TEXT
        return at

    def _close(self) -> None:
        rest, self._buf = self._buf, ""
        if self._state == _END and not self._bound.passed:  # only the closer missing, or cut part-way
            self._finish(None)
        if self._state == _TEXT:
            self._text(rest)  # a closer cut part-way is text, as written
        else:
            self._reject("the output ended inside a tool call", "".join(self._raw) + rest)
        self._raw, self._args = [], None

    def _pending_text(self) -> str:
        return "".join(self._raw)


# -- the writer ------------------------------------------------------------------------------------


def literal(value: Any, delim: str = DELIM) -> str:
    """A value as Gemma 4's template prints it (`format_argument`): strings between delimiters,
    unescaped; booleans `true` / `false`; mappings with bare, sorted keys (`my key` too); None as
    `None`. A key the template would write bare but that would not read back as one (`x:y`, ` a`)
    is written between delimiters, as the template writes keys in declarations."""
    if isinstance(value, str):
        return delim + value + delim
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        members = (f"{_key(k, delim)}:{literal(v, delim)}" for k, v in sorted(value.items()))
        return "{" + ",".join(members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(literal(v, delim) for v in value) + "]"
    return str(value)


def _key(key: str, delim: str = DELIM) -> str:
    return key if BARE_KEY.fullmatch(key) else delim + key + delim


def write(calls: Sequence[Call]) -> str:
    """Gemma 4's calls, back to back, as its chat template writes a turn's calls."""
    return "".join(f"{TOOL_CALL}call:{name}{literal(dict(arguments))}{TOOL_CALL_END}" for name, arguments in calls)


# -- the constraints -------------------------------------------------------------------------------


def _call_tag(request: ConstraintRequest, name: str) -> dict[str, Any]:
    grammar = ArgumentsGrammar(literal, _key)
    schema = request.parameters(name) if request.pins(name) else {"type": "object"}
    root = grammar.members(schema)
    body = grammar.text(root)
    return {"type": "tag", "begin": f"{TOOL_CALL}call:{name}{{", "content": {"type": "grammar", "grammar": body},
            "end": f"}}{TOOL_CALL_END}"}  # fmt: skip


def required_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """The calls at once, one or more (one if `single`), each to a named tool with its arguments
    held to the schema where pinned; no text first, as in every format's `required`."""
    return structural(repeated(request, [_call_tag(request, name) for name in request.names]))


def auto_constraint(request: ConstraintRequest) -> dict[str, Any]:
    """Strict `auto`: free text, where `<|tool_call>` (the opener) opens a call to a declared tool."""
    return triggered(request, [TOOL_CALL], [_call_tag(request, name) for name in request.schemas])


def _writes_value(value: Any) -> bool:
    """A string (or key) holding the delimiter or the closer cannot be written: nothing escapes them."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if DELIM in item or TOOL_CALL_END in item:
                return False
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def _writes_name(name: str) -> bool:
    return _NAME_RUN.fullmatch(name) is not None


FORMAT = Format(
    "gemma_calls",
    '<|tool_call>call:f{a:<|"|>x<|"|>,n:3}<tool_call|> (FunctionGemma: <start_function_call>..<escape>)',
    GemmaCallsStream,
    write,
    markers=(TOOL_CALL, TOOL_CALL_END, DELIM, FG_CALL, FG_CALL_END, FG_ESCAPE),
    special_tokens=(TOOL_CALL, TOOL_CALL_END, DELIM),
    required_constraint=required_constraint,
    auto_constraint=auto_constraint,
    writes_name=_writes_name,
    writes_value=_writes_value,
    typed_values=True,
    think_label="thought\n",
    vllm_names=("gemma4", "functiongemma"),
    sglang_names=("gemma4",),
    models="Gemma 4, FunctionGemma",
)
