"""SGLang's HTTP app with our detectors registered, for multi-tokenizer mode.

With `--tokenizer-worker-num` > 1, SGLang serves HTTP from worker processes that import the app by
path (`SGLANG_HTTP_SERVER_APP_PATH`, default `sglang.srt.entrypoints.http_server:app`) and never run
`load_plugins()`, so a detector registered in the launching process is unknown there. Setting
`SGLANG_HTTP_SERVER_APP_PATH=toolcall_parsers.sglang.app:app` makes each worker load SGLang's
general plugins (ours among them, and any other the launcher loaded) before it serves.
"""

from __future__ import annotations

from sglang.srt.plugins import load_plugins

from .plugin import register

load_plugins()
register()  # also when SGLANG_PLUGINS leaves us out: this module was chosen explicitly

from sglang.srt.entrypoints.http_server import app  # noqa: E402

__all__ = ["app"]
