"""A format derived from a Jinja chat template alone, by rendering it with controlled differences.

The template is never looked up among our formats: it renders the same conversation with one call,
with another call, with two calls, and with reasoning, and what changes between those renderings
is read off as markers (as llama.cpp's autoparser does): the text around a call's JSON object, or
the tags around its name, each parameter's key and value. Those markers fill a family spec of ours:

- a JSON call object (`{"name": .., KEY: {..}}`) between two markers, alone or in a JSON list:
  JSON in markers (`hermes_json`'s family), with the markers, the framing (whitespace, a list's
  brackets) and the arguments key;
- `OPEN NAME>` then one `POPEN KEY>` .. `PCLOSE` per argument, then `FCLOSE`, inside a block
  (`S` .. `E`): Qwen3-Coder XML (`qwen_xml`'s family), with all six tags and whether a line break
  frames a value;
- `OPEN NAME [SEP]` then `KOPEN KEY KCLOSE VOPEN VALUE VCLOSE` per argument, then `CLOSE`, each a
  tag, perhaps in a block: keys and values (`glm_xml`'s family), with the tags and the line breaks
  between them;
- `IOPEN "NAME">` then one `POPEN "KEY">VALUE PCLOSE` per argument, then `ICLOSE`, inside a block
  (`S` .. `E`): invokes (`minimax_xml`'s grammar, the invoke family), with all six tags;
- `START [{"NAME": {..}}, ..] [END]` or `START [{NK: NAME, AK: {..}}, ..] [END]`, a JSON list of
  call objects keyed by the tool's name or with keys of the template's own, after a marker: JSON
  after a marker (`apertus_json`'s and `cohere_json`'s family), with the markers and keys;
- `BEGIN [PREFIX] NAME [COUNTER 0 | ID_MARKER ID] SEP {..} [TAIL] [END]` per call, perhaps in a section
  (`S` .. `E`): named JSON (the family of DeepSeek V3.1's, R1's, Kimi K2's and Mistral's calls),
  with the markers each part of that header, the pieces around the arguments and the section;
- `OPEN [NAME(KEY=VALUE, ..), ..] CLOSE`, or one `NAME(..)` per line between the tags, values
  Python literals: Python call lists (`lfm2_pythonic`'s and `olmo3_pythonic`'s family), with the
  tags (a list without a tag around it is refused);
- `OPEN WORD NAME{KEY:VALUE,..} CLOSE`, strings between a delimiter: calls as literals
  (`gemma_calls`'s family), with the opener, the word, the delimiter and the closer;
- `IOPEN name="NAME">` then one `POPEN name="KEY" string="true|false">VALUE PCLOSE` per argument
  (a string raw, anything else JSON), then `ICLOSE`, inside a block: flagged invokes (DeepSeek
  DSML's grammar in one dialect), with all six tags.

The derived format must read the template's own renderings back as the calls rendered, or it is
refused. A template that renders no call, or renders one no family of ours reads, is refused with
a ValueError that says what was found.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ..core.gemma_literals import Dialect
from ..core.json_calls import NAME_AS_KEY, CallShape
from ..formats.families.flagged_invokes import FlaggedInvokes, flagged_dialect
from ..formats.families.invokes import Invokes
from ..formats.families.json_blocks import JsonBlockFormat, JsonBlockTags
from ..formats.families.key_values import KeyValueFormat, KeyValueTags
from ..formats.families.literal_calls import LiteralCalls
from ..formats.families.marked_json import NAME_AS_KEY_SPELLING, MarkedJsonFormat, keyed_spelling
from ..formats.families.named_json import NamedJson
from ..formats.families.pythonic import PythonicFormat
from ..formats.families.qwen_functions import QwenFunctions
from ..formats.spec import Call, Format
from .probe import PROBE_CALLS, check_reads_back, check_think_markers

DEFAULT_NAME = "chat_template"
CALL_A, CALL_B = PROBE_CALLS
USER = "What is the weather in Paris?"
THOUGHT = "The user wants the weather, so I call the tool."

Render = Callable[..., str]


def from_chat_template(
    template: str | None, name: str = DEFAULT_NAME, *, tokenizer: Any = None, **special_tokens: str
) -> Format:
    """The format `template` teaches (module docstring), rendered through `tokenizer` where one is
    given (None: the tokenizer's own template), else by transformers' Jinja alone with
    `special_tokens` (`bos_token`, ...). ValueError naming what was not found where it teaches none
    of our families."""
    from ..detect import renderer_for, template_renderer

    if tokenizer is not None:
        render = renderer_for(tokenizer, template)
    elif template is not None:
        render = template_renderer(template, **special_tokens)
    else:
        raise ValueError("from_chat_template: no template, and no tokenizer to take one from")
    from ..detect import turn_closing

    try:
        closing = turn_closing(render)
    except Exception as err:  # the template fails on a plain conversation (jinja's errors)
        raise ValueError(f"the chat template does not render: {type(err).__name__}: {err}") from None
    one = _turn(render, closing, [CALL_A])
    try:
        two: str | None = _turn(render, closing, [CALL_A, CALL_B])
    except ValueError:  # a template that takes one call a turn (Llama 3.x's)
        two = None
    if two is not None and CALL_B[0] not in two:
        two = None  # a template that writes a turn's first call alone (GigaChat 3's)
    if CALL_A[0] not in one:
        raise ValueError(f"the chat template renders no call: an assistant call to {CALL_A[0]} is not in its turn")
    think = _think_pair(render)
    errors = []
    for label, derive in _FAMILIES.items():
        try:
            fmt = derive(one, two, think, name)
            check_think_markers(fmt, "chat template")
            check_reads_back(fmt, "chat template", [(one, [CALL_A]), *([(two, [CALL_A, CALL_B])] if two else [])])
        except ValueError as err:
            errors.append(str(err) if str(err).startswith(label) else f"{label}: {err}")
            continue
        except Exception as err:  # a shape a family's reading did not foresee: refused, by name
            errors.append(f"{label}: {type(err).__name__}: {err}")
            continue
        return fmt
    raise ValueError(f"no family of ours reads the call the chat template writes, {one!r}: " + "; ".join(errors))


def _messages(calls: list[Call], arguments_as_string: bool, content: str | None) -> list[dict[str, Any]]:
    tool_calls = [
        {
            "id": f"call{i}abcd",
            "type": "function",
            "function": {"name": n, "arguments": json.dumps(a) if arguments_as_string else a},
        }
        for i, (n, a) in enumerate(calls)
    ]
    return [{"role": "user", "content": USER}, {"role": "assistant", "content": content, "tool_calls": tool_calls}]


def _turn(render: Render, closing: str, calls: list[Call]) -> str:
    """The assistant turn the template writes for `calls` (after its generation prompt, without
    the turn's closing text), in the first shape of the history it renders: arguments as objects or
    as JSON strings, content None or empty; `closing` is the text the template ends a turn with."""
    from ..detect import assistant_turn

    errors = []
    for as_string, content in ((False, None), (False, ""), (True, None), (True, "")):
        try:
            return assistant_turn(render, _messages(calls, as_string, content), closing).strip()
        except Exception as err:  # a template that raises on one shape of the history
            errors.append(f"{type(err).__name__}: {err}")
    raise ValueError(f"the chat template does not render an assistant call ({'; '.join(dict.fromkeys(errors))})")


def _think_pair(render: Render) -> tuple[str, str]:
    """The markers the template writes around a history's reasoning (a message's reasoning field,
    else a `thinking` block of its content, as Mistral's templates take it): the tags right before
    and right after the thought where there are tags, else what rendering the reasoning adds on
    each side of it; else a think tag its generation prompt opens; `<think>` .. `</think>` where it
    shows none."""
    plain = {"role": "assistant", "content": "Sunny."}
    blocks = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": THOUGHT}, {"type": "text", "text": "Sunny."}],
    }
    calling = _messages([CALL_A], False, None)[1]  # reasoning some templates render only with calls (Gemma 4's)
    without = with_thought = ""
    for bare, thought in (
        (plain, {**plain, "reasoning_content": THOUGHT, "reasoning": THOUGHT}),
        (plain, blocks),
        (calling, {**calling, "reasoning_content": THOUGHT, "reasoning": THOUGHT}),
    ):
        try:
            without = render([{"role": "user", "content": USER}, bare], add_generation_prompt=False)
            with_thought = render([{"role": "user", "content": USER}, thought], add_generation_prompt=False)
        except Exception:
            continue
        at = with_thought.find(THOUGHT)
        if at >= 0 and "thinking" not in with_thought[max(0, at - 40) : at]:  # not the blocks printed whole
            break
        with_thought = ""
    at = with_thought.find(THOUGHT)
    if at < 0:
        return _opened_by_prompt(render) or ("<think>", "</think>")
    before, after = with_thought[:at], with_thought[at + len(THOUGHT) :]
    tag_before, tag_after = _TAG_AT_END.search(before), _TAG_AT_START.match(after)
    if tag_before and tag_after:
        return (tag_before.group(1), tag_after.group(1))
    start = _common_prefix(without, with_thought)
    end = len(with_thought) - _common_prefix(without[::-1], with_thought[::-1])
    opener, closer = with_thought[start:at].strip(), with_thought[at + len(THOUGHT) : end].strip()
    if not opener or not closer or "\n" in opener or "\n" in closer:
        return ("<think>", "</think>")
    return (opener, closer)


_TAG_AT_END = re.compile(r"(<[^<>\n]+>|\[[^\[\]\s]+\])[A-Za-z]*\s*\Z")  # a label may follow (Gemma's `thought`)
_TAG_AT_START = re.compile(r"\s*(<[^<>\n]+>|\[[^\[\]\s]+\])")


def _opened_by_prompt(render: Render) -> tuple[str, str] | None:
    """A think tag the generation prompt opens (`<think>\n`), or an empty block it writes to end
    with (`<think>\n</think>`), with its closing tag."""
    try:
        prompt = render([{"role": "user", "content": USER}], add_generation_prompt=True).rstrip()
    except Exception:
        return None
    ending = re.search(r"(<[^<>\s/|]+>)\s*(</[^<>\s|]+>)?\s*\Z", prompt)
    if ending is None:
        return None
    opener, closer = ending.groups()
    if closer is not None and closer != "</" + opener[1:]:
        return None
    return (opener, "</" + opener[1:])


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _json_objects(text: str, start: int = 0) -> Iterator[tuple[int, int, Any]]:
    """Each JSON value that begins at a `{` of `text` from `start`: (where it starts, ends, value)."""
    decoder = json.JSONDecoder()
    at = text.find("{", start)
    while at >= 0:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            pass
        else:
            yield at, end, value
        at = text.find("{", at + 1)


def _call_object(text: str, call: Call) -> tuple[int, int, str]:
    """Where `call`'s JSON object stands in `text` and its arguments' key: (start, end, key)."""
    name, arguments = call
    for at, end, value in _json_objects(text):
        if isinstance(value, dict) and value.get("name") == name:
            for key, held in value.items():
                if key != "name" and held in (arguments, json.dumps(arguments)):
                    return at, end, key
    raise ValueError(f"JSON in markers: no JSON object names {name} with its arguments")


def _json_blocks(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    start_at, end_at, key = _call_object(one, CALL_A)
    before, after = one[:start_at], one[end_at:]
    start = before.rstrip().rsplit("\n", 1)[-1].strip()
    listed = start.endswith("[") and after.lstrip().startswith("]")  # the calls as a JSON list
    start = start.removesuffix("[").rstrip() if listed else start
    if not start:
        raise ValueError("JSON in markers: nothing marks the call object's start")
    if any(c in start for c in '{"') or "}" in after.strip().split("\n", 1)[0]:
        raise ValueError(f"JSON in markers: the call object sits inside other JSON ({start!r} before it)")
    after_start = before[before.rindex(start) + len(start) :]
    closing = after.lstrip().removeprefix("]") if listed else after
    end = closing.strip().split("\n", 1)[0].strip() or None
    before_end = after[: after.index(end)] if end else after[: len(after) - len(closing)]
    separator = _separator(two, start, before_end + (end or ""))
    tags = JsonBlockTags(start, end, after_start, before_end, separator if not separator.strip() else "\n", key)
    summary = f'{start}{after_start}{{"name": .., "{key}": {{..}}}}{before_end}{end or ""}, from a chat template'
    spec = JsonBlockFormat(name, summary, tags, think=think, models="a model with this chat template")
    return spec.format(__name__)


def _separator(two: str | None, start: str, closing: str) -> str:
    """What the template writes between two calls' blocks (a line break where it shows none)."""
    if two is None:
        return "\n"
    first_end = _call_object(two, CALL_A)[1] + len(closing)
    second_start = two.rfind(start, 0, _call_object(two, CALL_B)[0])
    return two[first_end:second_start] if second_start >= first_end else "\n"


def _line_around(text: str, at: int) -> tuple[str, str]:
    """The text of `at`'s line before it, and after it (up to the line's end)."""
    line_start = text.rfind("\n", 0, at) + 1
    line_end = text.find("\n", at)
    return text[line_start:at], text[at : line_end if line_end >= 0 else len(text)]


def _qwen_functions(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    call_name, arguments = CALL_A
    at = one.find(call_name)
    function_open, rest = _line_around(one, at)
    if not function_open.strip() or rest[len(call_name) :] != ">":
        raise ValueError("Qwen3-Coder XML: the call's name is not written as OPEN NAME> on a line of its own")
    start = one[: at - len(function_open)].strip().rsplit("\n", 1)[-1].strip()
    keys = list(arguments)
    key_at = one.find(keys[0] + ">", at)
    param_open, _ = _line_around(one, key_at)
    value = str(arguments[keys[0]])
    value_at = one.find(value, key_at)
    framing = one[key_at + len(keys[0]) + 1 : value_at]
    if key_at < 0 or value_at < 0 or framing not in ("", "\n"):
        raise ValueError("Qwen3-Coder XML: a parameter is not written as POPEN KEY> VALUE PCLOSE")
    close_from = value_at + len(value) + len(framing)
    param_close = one[close_from:].split("\n", 1)[0]
    last_key_at = one.find(keys[-1] + ">", key_at)
    last_value = str(arguments[keys[-1]])
    last_value_at = one.find(last_value, last_key_at + len(keys[-1]) + 1)
    if last_key_at < 0 or last_value_at < 0:
        raise ValueError("Qwen3-Coder XML: the call's last parameter is not written as POPEN KEY> VALUE PCLOSE")
    tail = one[last_value_at + len(last_value) :].strip().split("\n")
    lines = [line.strip() for line in tail if line.strip()]
    if len(lines) != 3 or lines[0] != param_close:
        raise ValueError("Qwen3-Coder XML: a call does not end PCLOSE, FCLOSE, then the block's end")
    if not start or not param_open.strip() or not param_close.strip():
        raise ValueError("Qwen3-Coder XML: the block or a parameter has no markers")
    spec = QwenFunctions(
        name,
        f"{start}{function_open}f>{param_open}p>v{param_close}{lines[1]}{lines[2]}, from a chat template",
        start,
        lines[2],
        function_open=function_open,
        function_close=lines[1],
        param_open=param_open,
        param_close=param_close,
        inline=not framing,
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _tag_before(text: str, at: int) -> str:
    """The tag that ends right at `at` (from its `<`), or "" where none does."""
    start = text.rfind("<", 0, at)
    tag = text[start:at] if start >= 0 else ""
    return tag if tag.endswith(">") and "\n" not in tag and tag.count("<") == 1 else ""


def _tag_after(text: str, at: int) -> str:
    """The tag that starts right at `at` (up to its `>`), or "" where none does."""
    end = text.find(">", at)
    tag = text[at : end + 1] if end >= 0 else ""
    return tag if tag.startswith("<") and "\n" not in tag and tag.count(">") == 1 else ""


def _key_values(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """`[S] OPEN NAME [SEP] (KOPEN KEY KCLOSE VOPEN VALUE VCLOSE)* CLOSE [E]`, every marker a tag:
    the key-and-value family, with the whitespace the template writes after the name, each key and
    each value; a block (`S` .. `E`) where a tag stands before the call's open, a name separator
    where a tag stands between the name and the first key's tag (Hy3's `<tool_sep>`)."""
    call_name, arguments = CALL_A
    at = one.find(call_name)
    call_open = _tag_before(one, at)
    if not call_open:
        raise ValueError("keys and values: no tag right before the call's name")
    opened = one[: at - len(call_open)].rstrip()
    block_start = _tag_before(opened, len(opened))  # a block's, where a tag closes the turn after it
    pos, gaps, tags = at + len(call_name), [], []
    spaced = pos + len(one[pos:]) - len(one[pos:].lstrip())
    separator = _tag_after(one, spaced)
    first_key_at = one.find(next(iter(arguments)), pos)
    if separator and one[spaced + len(separator) : first_key_at].strip():  # a tag, then the key's own
        pos = spaced + len(separator)
    else:
        separator = ""
    for key, value in arguments.items():
        key_at, value_text = one.find(key, pos), str(value)
        key_open = one[pos:key_at].strip()
        gaps.append(one[pos : one.find(key_open, pos)] if key_open else "")
        key_close = _tag_after(one, key_at + len(key))
        value_at = one.find(value_text, key_at + len(key) + len(key_close))
        between = one[key_at + len(key) + len(key_close) : value_at]
        value_open = between.strip()
        value_close = _tag_after(one, value_at + len(value_text))
        if (
            key_at < 0
            or value_at < 0
            or not key_close
            or not value_close
            or (value_open and not _is_tag_text(value_open))
        ):
            raise ValueError("keys and values: an argument is not written as KOPEN KEY KCLOSE VOPEN VALUE VCLOSE")
        tags.append((key_open, key_close, value_open, value_close, between[: len(between) - len(between.lstrip())]))
        pos = value_at + len(value_text) + len(value_close)
    if len(set(tags)) != 1 or not _is_tag_text(tags[0][0]):
        raise ValueError("keys and values: the arguments are not written alike, each key in a tag")
    key_open, key_close, value_open, value_close, key_line = tags[0]
    rest = one[pos:]
    call_close = _tag_after(one, pos + len(rest) - len(rest.lstrip()))
    line = gaps[0]
    after = rest.strip()[len(call_close) :].lstrip()
    block_end = _tag_after(after, 0) if block_start and block_start not in think else ""
    if not call_close or not rest.strip().startswith(call_close) or any(gap.strip() for gap in gaps):
        raise ValueError("keys and values: the call does not end in its close tag after the arguments")
    if not block_end:
        block_start = ""
    elif two is None or two.count(block_start) != one.count(block_start) or two.count(block_end) != 1:
        raise ValueError(f"keys and values: {block_start!r} and {block_end!r} do not hold a turn's calls")
    kv = KeyValueTags(
        call_open,
        call_close,
        key_open,
        key_close,
        value_open,
        value_close,
        block=(block_start, block_end) if block_start else None,
        name_separator=separator or None,
        think=think,
    )
    spec = KeyValueFormat(
        name,
        f"{block_start}{call_open}f{separator}{key_open}k{key_close}{value_open}v{value_close}{call_close}"
        f"{block_end}, from a chat template",
        kv,
        line=line,
        key_line=key_line if key_line != line else None,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _is_tag_text(text: str) -> bool:
    return text.startswith("<") and text.endswith(">") and "\n" not in text and text.count("<") == 1


def _invokes(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """`S` / `IOPEN "NAME">` / one `POPEN "KEY">VALUE PCLOSE` line per argument / `ICLOSE` / `E`,
    each on a line of its own: the invoke family, with the six markers the template writes."""
    call_name, arguments = CALL_A
    at = one.find(f'"{call_name}">')
    invoke_open = _line_around(one, at)[0].strip()
    lines = [line.strip() for line in one[at:].split("\n")]
    start = one[: one.rfind(invoke_open, 0, at)].strip().rsplit("\n", 1)[-1].strip() if invoke_open else ""
    if at < 0 or not invoke_open or not start or lines[0] != f'"{call_name}">':
        raise ValueError('invokes: the call\'s name is not written as OPEN "NAME"> on a line of its own')
    params = lines[1 : 1 + len(arguments)]
    first = params[0] if params else ""
    param_open = first.split('"', 1)[0]
    param_close = first.split(">", 1)[1].removeprefix(str(arguments[next(iter(arguments))])) if ">" in first else ""
    written = [f'{param_open}"{k}">{v}{param_close}' for k, v in arguments.items()]
    if not param_open.strip() or not param_close.strip() or params != written:
        raise ValueError('invokes: a parameter is not written as POPEN "KEY">VALUE PCLOSE on a line of its own')
    tail = [line for line in lines[1 + len(arguments) :] if line]
    if len(tail) != 2 or not _is_tag_text(tail[0]):
        raise ValueError("invokes: a call does not end in its close tag, then the block's end")
    spec = Invokes(
        name,
        f'{start}{invoke_open}"f">{param_open}"p">v{param_close}{tail[0]}{tail[1]}, from a chat template',
        start,
        tail[1],
        invoke_open=invoke_open,
        invoke_close=tail[0],
        param_open=param_open,
        param_close=param_close,
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _flagged_invokes(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """`S` / `IOPEN name="NAME">` / one `POPEN name="KEY" string="true|false">VALUE PCLOSE` line per
    argument / `ICLOSE` / `E`, each on a line of its own: the flagged-invoke family."""
    call_name, arguments = CALL_A
    at = one.find(f' name="{call_name}">')
    invoke_open = _line_around(one, at)[0].strip() if at >= 0 else ""
    lines = [line.strip() for line in one[at:].split("\n")] if at >= 0 else []
    if not invoke_open or not lines or lines[0] != f'name="{call_name}">':
        raise ValueError('flagged invokes: the call\'s name is not written as OPEN name="NAME"> on a line of its own')
    start = one[: one.rfind(invoke_open, 0, at)].strip().rsplit("\n", 1)[-1].strip()
    params = lines[1 : 1 + len(arguments)]
    first = params[0] if params else ""
    param_open = first.split(' name="', 1)[0]
    key, value = next(iter(arguments.items()))
    head = f'{param_open} name="{key}" string="{_flag(value)}">{_raw(value)}'
    param_close = first.removeprefix(head) if first.startswith(head) else ""
    written = [f'{param_open} name="{k}" string="{_flag(v)}">{_raw(v)}{param_close}' for k, v in arguments.items()]
    if not param_open or not param_close.strip() or params != written:
        raise ValueError(
            'flagged invokes: a parameter is not written as POPEN name="KEY" string="true|false">VALUE PCLOSE'
        )
    tail = [line for line in lines[1 + len(arguments) :] if line]
    if not start or len(tail) != 2 or not _is_tag_text(tail[0]):
        raise ValueError("flagged invokes: a call does not end in its close tag, then the block's end")
    dialect = flagged_dialect(start, tail[1], invoke_open, tail[0], param_open, param_close)
    spec = FlaggedInvokes(
        name,
        f'{start}{invoke_open} name="f">{param_open} name="p" string="true">v{param_close}{tail[0]}{tail[1]}, '
        "from a chat template",
        dialect,
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _flag(value: Any) -> str:
    return "true" if isinstance(value, str) else "false"


def _raw(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


_PIECE = re.compile(r"<+[^<>\n]*>+|\[+[^\[\]\n]*\]+|\s+|[^\s<\[]+|.", re.S)
"""A rendering cut into pieces: a tag (`<..>`, `<<..>>`), a bracketed token (`[..]`), whitespace, a
word."""


def _pieces(text: str) -> list[str]:
    return _PIECE.findall(text)


def _is_marker(piece: str) -> bool:
    return len(piece) > 2 and piece[0] + piece[-1] in ("<>", "[]")


def _marker_ending(text: str) -> str:
    """The marker `text` ends with (whitespace aside), or "" where it ends otherwise."""
    pieces = _pieces(text.rstrip())
    return pieces[-1] if pieces and _is_marker(pieces[-1]) else ""


def _marker_starting(text: str) -> str:
    """The marker `text` starts with (whitespace aside), or "" where it starts otherwise."""
    pieces = _pieces(text.lstrip())
    return pieces[0] if pieces and _is_marker(pieces[0]) else ""


def _arguments_at(text: str, arguments: dict[str, Any], start: int = 0) -> tuple[int, int]:
    """Where the JSON object equal to `arguments` stands in `text`, from `start`."""
    for at, end, value in _json_objects(text, start):
        if value == arguments:
            return at, end
    raise ValueError("the call's arguments are not written as a JSON object")


def _common(a: list[str], b: list[str]) -> int:
    """How many pieces `a` and `b` start with alike."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _named_json(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """Each call `BEGIN PREFIX NAME HEADER SEP {..} TAIL END`, BEGIN a marker, the calls perhaps in
    a section: what differs between one call and two tells the section's markers from the call's
    (the pieces both write after the first call's arguments end it, those both write before a
    call's name open it); a counter (`:0`, `:1`) or the history's call id may follow the name."""
    call_name, arguments = CALL_A
    args_at, args_end = _arguments_at(one, arguments)
    name_at = one.rfind(call_name, 0, args_at)
    if name_at <= 0 or one[name_at - 1] == '"':
        raise ValueError("named JSON: the call's name is not written before its arguments, outside JSON")
    mid = one[name_at + len(call_name) : args_at]
    counter = id_marker = ""
    if (m := re.match(r"([^\s\w<\[{\"]+)0(?!\d)", mid)) is not None and two and f"{CALL_B[0]}{m.group(1)}1" in two:
        counter, mid = m.group(1), mid[m.end() :]  # `:0`, then `:1`: the call's index
    if "call0abcd" in mid:  # the history's id, as `_messages` gives it
        id_marker, mid = mid.split("call0abcd", 1)
    if two is None:
        raise ValueError("named JSON: the template renders one call a turn, which cannot tell a section from a call")
    a_end = _arguments_at(two, arguments)[1]
    b_name, b_arguments = CALL_B
    b_args_at = _arguments_at(two, b_arguments, a_end)[0]
    b_name_at = two.rfind(b_name, a_end, b_args_at)
    after, between, before = _pieces(one[args_end:]), _pieces(two[a_end:b_name_at]), _pieces(one[:name_at])
    k = _common(after, between)
    j = _common(before[::-1], between[k:][::-1])
    ending, opening, gap = after[:k], between[len(between) - j :], "".join(between[k : len(between) - j])
    section = ("".join(before[: len(before) - j]).strip(), "".join(after[k:]).strip())
    begin = next((piece for piece in opening if not piece.isspace()), "")
    prefix = "".join(opening[opening.index(begin) + 1 :]).lstrip() if begin else ""
    marks = [i for i, piece in enumerate(ending) if _is_marker(piece)]
    end = ending[marks[-1]] if marks else ""
    tail = "".join(ending[: marks[-1]] if marks else ending).rstrip()
    spelled = (begin, prefix, counter, id_marker, mid, tail, end, *section)
    if not _is_marker(begin):
        raise ValueError(f"named JSON: no marker opens each call ({begin!r} before the name)")
    if gap.strip() or any(c in part for part in spelled for c in '{}"') or not mid.strip():
        raise ValueError(f"named JSON: the name and its arguments are not told apart by a marker ({mid!r})")
    if bool(section[0]) != bool(section[1]) or any(part and _pieces(part) != [part] for part in section):
        raise ValueError(f"named JSON: the calls' section is not one marker on each side {section}")
    if mid.strip()[0].isalnum() and not mid[0].isspace():
        raise ValueError(f"named JSON: nothing ends the name before the separator {mid.strip()!r}")
    spec = NamedJson(
        name,
        f"{section[0]}{begin}{prefix}f{counter}{id_marker}{mid}{{..}}{tail}{end}{section[1]}, from a chat template",
        begin,
        mid,
        end,
        section if section[0] else None,
        name_prefix=prefix,
        counter=counter,
        id_marker=id_marker,
        tail=tail,
        between=gap,
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _python_call(text: str, call: Call, start: int = 0) -> tuple[int, int]:
    """Where `call` stands in `text` as `NAME(KEY=LITERAL, ..)` (from `start`)."""
    name, arguments = call
    at = text.find(name + "(", start)
    close = text.find(")", at)
    while at >= 0 and close >= 0:
        try:
            node = ast.parse(text[at : close + 1], mode="eval").body
        except SyntaxError:
            close = text.find(")", close + 1)
            continue
        if isinstance(node, ast.Call) and not node.args:
            try:
                written = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            except ValueError:
                break
            if written == arguments:
                return at, close + 1
        break
    raise ValueError(f"Python calls: the call is not written as {name}(KEY=VALUE, ..)")


def _pythonic(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """A tag, then `[NAME(KEY=VALUE, ..), ..]` or one call per line, then a close tag (or none)."""
    at, end = _python_call(one, CALL_A)
    before, after = one[:at].rstrip(), one[end:].lstrip()
    listed = before.endswith("[") and after.startswith("]")
    if listed:
        before, after = before[:-1].rstrip(), after[1:].lstrip()
    opener, closer = _marker_ending(before), _marker_starting(after)
    if not opener:
        raise ValueError("Python calls: no tag stands before the calls (a bare list is refused)")
    one_per_line = False
    if two is not None:
        a_end = _python_call(two, CALL_A)[1]
        gap = two[a_end : _python_call(two, CALL_B, a_end)[0]]
        one_per_line = not listed and gap.strip() == "" and "\n" in gap
        if gap.strip() not in ("", ",") or (gap.strip() == ",") != listed:
            raise ValueError(f"Python calls: two calls are not written as a list or a line each ({gap!r})")
    spec = PythonicFormat(
        name,
        f"{opener}{'[' if listed else ''}f(k=v){']' if listed else ''}{closer}, from a chat template",
        ((opener, closer),),
        one_per_line=one_per_line,
        special_tokens=False,
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _listed_object(text: str, call: Call) -> tuple[int, int, tuple[str, str] | None]:
    """Where `call`'s JSON object stands in `text`, and its name and arguments keys (None: the
    object's one key is the name)."""
    name, arguments = call
    for at, end, value in _json_objects(text):
        if value == {name: arguments}:
            return at, end, None
        if isinstance(value, dict):
            names = [k for k, v in value.items() if v == name]
            held = [k for k, v in value.items() if v == arguments]
            if len(names) == 1 and len(held) == 1:
                return at, end, (names[0], held[0])
    raise ValueError("JSON after a marker: no JSON object in a list holds the call")


def _marked_json(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """A marker, then a JSON list of call objects, then a marker (or none): each object keyed by
    the tool's name (Apertus's `{"NAME": {..}}`) or holding the name and the arguments under keys of
    the template's own (Cohere's `tool_name` and `parameters`; other keys, an id, are ignored)."""
    at, end, keys = _listed_object(one, CALL_A)
    before, after = one[:at].rstrip(), one[end:].lstrip()
    if not (before.endswith("[") and after.startswith("]")):
        raise ValueError("JSON after a marker: the call object is not in a JSON list")
    start, close = _marker_ending(before[:-1]), _marker_starting(after[1:])
    if not start:
        raise ValueError("JSON after a marker: no marker stands before the list")
    if keys is None:
        shape, spelling, spelled = NAME_AS_KEY, NAME_AS_KEY_SPELLING, '{"NAME": {..}}'
    else:
        shape = CallShape(frozenset({keys[0]}), frozenset({keys[1]}), None)
        spelling, spelled = keyed_spelling(*keys), f'{{"{keys[0]}": NAME, "{keys[1]}": {{..}}}}'
    spec = MarkedJsonFormat(
        name,
        f"{start}[{spelled}, ..]{close}, from a chat template",
        (start,),
        shape,
        end=close,
        spelling=spelling,
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


def _literal_calls(one: str, two: str | None, think: tuple[str, str], name: str) -> Format:
    """`OPEN WORD NAME{KEY:D STRING D,KEY:NUMBER} CLOSE` (Gemma 4's `<|tool_call>call:NAME{..}`);
    the tokens the template writes after a turn's calls are dropped where they stand."""
    call_name, arguments = CALL_A
    at = one.find(call_name + "{")
    (key, value), (number_key, number) = arguments.items()
    head = one.find(f"{{{key}:", at)
    opened = _pieces(one[:at])
    marks = [i for i, piece in enumerate(opened) if _is_marker(piece)]
    if at < 0 or head < 0 or not marks or not isinstance(value, str):
        raise ValueError("calls as literals: the call is not written as OPEN WORD NAME{KEY:VALUE,..}")
    # the literal reader meets markers at `<` alone: a delimiter, opener or closer spelled otherwise
    # would read as a quote or a bracket
    opener, word = opened[marks[-1]], "".join(opened[marks[-1] + 1 :])
    delimited = one[head + len(key) + 2 :]
    delim = delimited[: delimited.find(value)] if value in delimited else ""
    body = f"{{{key}:{delim}{value}{delim},{number_key}:{number}}}"
    if not word.strip() or not delim or not one.startswith(body, at + len(call_name)):
        raise ValueError(
            f"calls as literals: the arguments are not written as {{KEY:D STRING D,KEY:NUMBER}} ({delim!r})"
        )
    rest = _pieces(one[at + len(call_name) + len(body) :])
    if not rest or not _is_marker(rest[0]) or not all(_is_marker(p) or p.isspace() for p in rest):
        raise ValueError("calls as literals: no closing token after the arguments")
    if not all(_is_marker(m) and m.startswith("<") for m in (opener, delim, rest[0])):
        raise ValueError(f"calls as literals: a marker that is no `<..>` tag ({opener!r}, {delim!r}, {rest[0]!r})")
    spec = LiteralCalls(
        name,
        f"{opener}{word}f{{k:{delim}v{delim}}}{rest[0]}, from a chat template",
        (Dialect(delim, rest[0], opener=opener),),
        call_word=word,
        dropped=tuple(p for p in rest[1:] if not p.isspace()),
        think=think,
        models="a model with this chat template",
    )
    return spec.format(__name__)


_FAMILIES: dict[str, Callable[[str, str | None, tuple[str, str], str], Format]] = {
    "JSON in markers": _json_blocks,
    "JSON after a marker": _marked_json,
    "named JSON": _named_json,
    "Qwen3-Coder XML": _qwen_functions,
    "keys and values": _key_values,
    "invokes": _invokes,
    "flagged invokes": _flagged_invokes,
    "Python calls": _pythonic,
    "calls as literals": _literal_calls,
}
"""The readings tried, in order, each under the name its refusals carry."""
