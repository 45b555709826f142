"""`toolcall-parsers capture`: record what a served model really writes, for review into tests/corpus.

Each prompt is sent with its tools and `tool_choice="none"` and `skip_special_tokens=False`: the
template still shows the tools, the model answers as it would, and the text reaches us untouched
(our parsers pass `tool_choice="none"` through; an engine's own parser does too) with its marker
tokens. Each answer is written as one JSON line in the corpus format (`id`, `source`, `classes`,
`tools`, `text`, `expected`), `expected` being our parse of it with `--parser` (to be reviewed, not
trusted), else the formats whose parse finds calls. Lines are appended and flushed one by one; a
second run skips the ids already in the output file, so an interrupted capture resumes.

Prompts file: one prompt per line, either plain text or a JSON object with `prompt` (or `messages`)
and optional `id` and `tools` (default: the detect probe's two tools).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import FORMATS, parse
from ..detect import PROBE_TOOLS
from .console import UsageError


@dataclass
class CapturePrompt:
    id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


def read_prompts(path: Path) -> list[CapturePrompt]:
    """The prompts of `path`; ValueError naming the line for anything else."""
    prompts = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        entry: Any = line
        if line.lstrip().startswith("{"):
            try:
                entry = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{number}: not JSON: {err}") from None
        if isinstance(entry, str):
            prompts.append(CapturePrompt(f"p{number}", [{"role": "user", "content": entry}], PROBE_TOOLS))
            continue
        messages = entry.get("messages") or (
            [{"role": "user", "content": entry["prompt"]}] if isinstance(entry.get("prompt"), str) else None
        )
        if not messages:
            raise ValueError(f"{path}:{number}: needs a `prompt` string or `messages`")
        prompts.append(CapturePrompt(str(entry.get("id", f"p{number}")), messages, entry.get("tools") or PROBE_TOOLS))
    ids = [p.id for p in prompts]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: prompt ids repeat")
    return prompts


def done_ids(out: Path) -> set[str]:
    """Ids already captured in `out` (a cut-off last line is ignored, and rewritten by the resume)."""
    if not out.exists():
        return set()
    ids = set()
    for line in out.read_text(encoding="utf-8").splitlines():
        try:
            ids.add(json.loads(line)["id"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue
    return ids


def _summary(fmt: str, text: str, tools: Any) -> dict[str, Any]:
    result = parse(fmt, text, tools=tools)
    return {"content": result.content, "calls": [{"name": c.name, "arguments": c.arguments} for c in result.calls]}


def corpus_entry(prompt: CapturePrompt, text: str, parser: str | None, source: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": prompt.id, "source": source, "classes": [], "tools": prompt.tools}
    entry["messages"] = prompt.messages
    entry["text"] = text
    if parser is not None:
        entry["expected"] = _summary(parser, text, prompt.tools)
    else:
        entry["formats_finding_calls"] = [name for name in FORMATS if _summary(name, text, prompt.tools)["calls"]]
    return entry


def capture(
    client: Any,
    model: str,
    prompts: list[CapturePrompt],
    out: Path,
    parser: str | None,
    source: str,
    max_tokens: int = 512,
    on_prompt: Callable[[], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Capture every prompt not yet in `out`, appending each entry as it arrives; yields them."""
    done = done_ids(out)
    if out.exists() and out.read_bytes()[-1:] not in (b"", b"\n"):
        with out.open("a", encoding="utf-8") as fh:  # a line cut off by an interrupted run
            fh.write("\n")
    for prompt in prompts:
        if prompt.id in done:
            continue
        text = _raw_output(client, model, prompt, max_tokens)
        entry = corpus_entry(prompt, text, parser, source)
        with out.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
        if on_prompt:
            on_prompt()
        yield entry


def _raw_output(client: Any, model: str, prompt: CapturePrompt, max_tokens: int) -> str:
    """The server's raw text for one prompt. A server that fails (an HTTP error, no choice, content
    that is not a string) stops the capture with one line naming the prompt: what was captured
    before stays in the file, and a later run resumes there."""
    try:
        response = client.chat.completions.create(
            model=model,
            messages=prompt.messages,
            tools=prompt.tools,
            tool_choice="none",
            temperature=0,
            max_tokens=max_tokens,
            extra_body={"skip_special_tokens": False},
        )
    except Exception as err:  # the openai client's errors, and whatever the transport raises
        reason = f"{type(err).__name__}: {err}"[:200]
        raise UsageError(f"could not capture {prompt.id!r}: the request failed: {reason}") from None
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise UsageError(f"could not capture {prompt.id!r}: the server's answer has no choice")
    content = getattr(getattr(choices[0], "message", None), "content", None)
    if content is not None and not isinstance(content, str):
        kind = type(content).__name__
        raise UsageError(f"could not capture {prompt.id!r}: the message content is a {kind}, not a string")
    return content or ""
