"""The chat template a vLLM server serves, as a parser can know it.

vLLM hands tool and reasoning parsers only the tokenizer, not the server's `--chat-template` (the
serving layer loads that separately, `entrypoints/launchers/api_server/app_state.py`). So the flag
is read from the process's command line (every API-server process, forked or spawned, carries the
same `sys.argv`) and resolved by vLLM's own `load_chat_template` (a path, a literal template or a
bundled name); without it, the tokenizer's own template is the served one. A template given only in
a `--config` YAML file is not seen.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import lru_cache


def chat_template_flag(argv: Sequence[str]) -> str | None:
    """The value of `--chat-template` (or `--chat_template`, or `=`-joined) in a command line."""
    value = None
    for i, arg in enumerate(argv):
        for flag in ("--chat-template", "--chat_template"):
            if arg == flag and i + 1 < len(argv):
                value = argv[i + 1]
            elif arg.startswith(flag + "="):
                value = arg[len(flag) + 1 :]
    return value


def server_chat_template(argv: Sequence[str] | None = None) -> tuple[str | None, str]:
    """(template text or None for the tokenizer's own, where it came from)."""
    flag = chat_template_flag(sys.argv if argv is None else argv)
    if flag is None:
        return None, "the tokenizer's chat template"
    return _loaded(flag), f"--chat-template {flag}"


@lru_cache(maxsize=8)
def _loaded(flag: str) -> str | None:
    """vLLM's reading of the flag, once per process (a reasoning parser is built per request)."""
    from vllm.renderers.chat_utils import load_chat_template

    return load_chat_template(flag)
