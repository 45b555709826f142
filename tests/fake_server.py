"""A misbehaving OpenAI-compatible server on 127.0.0.1, for the toolbox's tests: what `smoke` and
`capture` exist to catch, and must report instead of crashing or hanging.

The behaviour is chosen by the first path segment of the base URL
(`http://127.0.0.1:PORT/<mode>/v1`): `drip` sends a byte (or an SSE `: ping`) every 0.3 s for up
to 30 s and never finishes the answer; `object_args` returns tool-call `arguments` as a JSON object
instead of a string; `error500` fails every chat request; `empty_choices` answers with no choice;
`content_list` answers with a list as the message content; `ok` answers a plain message.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DRIP_EVERY, DRIP_FOR = 0.3, 30.0


def _completion(message: dict[str, Any], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
    }


OBJECT_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _mode(self) -> str:
        return self.path.strip("/").split("/", 1)[0]

    def _json(self, body: Any, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.endswith("/models"):
            self._json({"object": "list", "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "x"}]})
        else:
            self._json({"error": "not found"}, 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        mode, stream = self._mode(), bool(request.get("stream"))
        if mode == "drip":
            self._drip(stream)
        elif mode == "error500":
            self._json({"error": {"message": "boom", "type": "server_error"}}, 500)
        elif mode == "empty_choices":
            self._json({**_completion({"content": "x"}), "choices": []})
        elif mode == "content_list":
            self._json(_completion({"content": [{"type": "text", "text": "hi"}]}))
        elif mode == "object_args":
            if stream:
                delta = {"role": "assistant", "tool_calls": [{"index": 0, **OBJECT_CALL}]}
                self._sse([{"choices": [{"index": 0, "delta": delta, "finish_reason": "tool_calls"}]}])
            else:
                self._json(_completion({"content": None, "tool_calls": [OBJECT_CALL]}, "tool_calls"))
        else:
            self._json(_completion({"content": "Hello."}))

    def _sse(self, chunks: list[dict[str, Any]]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", **chunk}
            self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _drip(self, stream: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
        if not stream:
            self.send_header("Content-Length", "1000000")  # a body that never completes
        self.send_header("Connection", "close")
        self.end_headers()
        started = time.monotonic()
        try:
            while time.monotonic() - started < DRIP_FOR:
                self.wfile.write(b": ping\n\n" if stream else b" ")
                self.wfile.flush()
                time.sleep(DRIP_EVERY)
        except (BrokenPipeError, ConnectionResetError):
            pass


@contextmanager
def fake_server() -> Iterator[str]:
    """The server's root URL (`http://127.0.0.1:PORT`), stopped when the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
