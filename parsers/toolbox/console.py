"""Output for people and for scripts: rich tables and progress bars on stderr when it is a terminal
or when asked, plain JSON on stdout for `--json`. Exit codes live here so every command agrees."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
"""The check ran and found a problem (a disagreement, no format of ours, a marker without a call)."""
EXIT_USAGE = 2
"""The command could not run: bad arguments, unreadable model or file, unreachable server."""


class UsageError(Exception):
    """A problem with the command line or its inputs; printed as one line, exit status 2."""


def stdout_console() -> Any:
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


def stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def print_json(value: Any) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=2))


@contextlib.contextmanager
def status(message: str, enabled: bool = True) -> Iterator[None]:
    """A spinner on stderr for a step that may take more than a second (loading transformers)."""
    if not enabled or not sys.stderr.isatty():
        yield
        return
    with stderr_console().status(message):
        yield


def progress(enabled: bool = True) -> Any:
    """A rich progress bar on stderr (disabled: a no-op with the same interface)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr_console(),
        disable=not enabled,
        transient=False,
    )
