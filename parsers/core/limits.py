"""Bounds on what one response can make a parser hold, do or log, and the operator's settings.

Model output is untrusted input that arrives at full server concurrency, and vLLM gives a tool-parser
plugin no options of its own, so every bound is an environment variable read when a response's
parser is made (a server picks up a change on restart). Past a bound the block in question becomes
text with one logged reason; the server keeps serving.

| variable | default | meaning |
|---|---|---|
| TOOLCALL_PARSERS_MAX_DEPTH | 256 | deepest nesting of a JSON or Python literal value (at most 800) |
| TOOLCALL_PARSERS_MAX_SCALAR | 512 | longest number or literal (`true`, `1.5e3`) |
| TOOLCALL_PARSERS_MAX_NAME | 1024 | longest tool name, parameter name or model-written call id |
| TOOLCALL_PARSERS_MAX_CALLS | 1024 | most calls in one response; later ones are text |
| TOOLCALL_PARSERS_MAX_CALL_CHARS | 8388608 | longest arguments JSON of one call (the most a call holds) |
| TOOLCALL_PARSERS_LOG_SPANS | 3 | rejected spans logged per response (0: none); then one summary |
| TOOLCALL_PARSERS_UNDECLARED_TOOLS | keep | `keep` a call to a tool the request did not declare, or make it `text` |
| TOOLCALL_PARSERS_STREAMING | 512 | when a streamed call is shown: `complete`, `eager`, or a bound N (see below) |

Streaming policy: `complete` sends a call (start, whole arguments, end) only once it is complete and
valid; `eager` sends the name as soon as it is known and the arguments as written; a number N holds a
call until it completes or its arguments pass N characters, and streams it as written from then on.
Calls shorter than N are exact: a stream never shows a call that the finished response would not
return. 512 characters hold every ordinary call (the median call in our corpus has 52 characters of
arguments, the largest 530) and a long argument (a file being written) still starts streaming within
about a second at GPU decoding speed (100-150 tokens/s at about 4 characters a token).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

_PREFIX = "TOOLCALL_PARSERS_"
_DEPTH_CEILING = 800
"""Python's json module recurses per level (about 1000 frames): no depth setting may reach that."""
_reported: set[str] = set()


def _bad_setting(name: str, message: str) -> None:
    """A setting the operator got wrong: said once per process, and the default is used, since
    a parser that fails to construct would fail every request."""
    if name not in _reported:
        _reported.add(name)
        logging.getLogger("toolcall_parsers").error("%s%s %s; using the default", _PREFIX, name, message)


def _int_setting(name: str, default: int, least: int, most: int = 2**62) -> int:
    raw = os.environ.get(_PREFIX + name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        _bad_setting(name, f"must be a whole number, not {raw!r}")
        return default
    if not least <= value <= most:
        _bad_setting(name, f"must be from {least} to {most}, not {value}")
        return default
    return value


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds and settings of one response's parser (see the module docstring)."""

    max_depth: int = 256
    max_scalar: int = 512
    max_name: int = 1024
    max_calls: int = 1024
    max_call_chars: int = 8 * 1024 * 1024
    log_spans: int = 3
    undeclared_as_text: bool = False
    streaming: int | None = 512
    """Argument characters a streamed call is held for: None holds it to the end (`complete`), 0
    holds nothing (`eager`)."""

    @classmethod
    def from_env(cls) -> Limits:
        """The settings in the environment, defaults for the rest (a bad one is logged once)."""
        undeclared = os.environ.get(_PREFIX + "UNDECLARED_TOOLS", "keep").strip().lower()
        if undeclared not in ("keep", "text"):
            _bad_setting("UNDECLARED_TOOLS", f"must be 'keep' or 'text', not {undeclared!r}")
        default = _DEFAULT
        return cls(
            max_depth=_int_setting("MAX_DEPTH", default.max_depth, 1, _DEPTH_CEILING),
            max_scalar=_int_setting("MAX_SCALAR", default.max_scalar, 16),
            max_name=_int_setting("MAX_NAME", default.max_name, 1),
            max_calls=_int_setting("MAX_CALLS", default.max_calls, 1),
            max_call_chars=_int_setting("MAX_CALL_CHARS", default.max_call_chars, 2),
            log_spans=_int_setting("LOG_SPANS", default.log_spans, 0),
            undeclared_as_text=undeclared == "text",
            streaming=_streaming_setting(default.streaming),
        )


def streaming_policy(value: object) -> int | None:
    """A streaming policy as given (`complete`, `eager`, a number of characters) -> the number of
    argument characters a call is held for (None: to its end). ValueError for anything else."""
    text = str(value).strip().lower()
    if text == "complete":
        return None
    if text == "eager":
        return 0
    if text.isdigit():
        return int(text)
    raise ValueError(f"a streaming policy is 'complete', 'eager' or a number of characters, not {value!r}")


def _streaming_setting(default: int | None) -> int | None:
    raw = os.environ.get(_PREFIX + "STREAMING")
    if raw is None:
        return default
    try:
        return streaming_policy(raw)
    except ValueError as err:
        _bad_setting("STREAMING", str(err))
        return default


_DEFAULT = Limits()
