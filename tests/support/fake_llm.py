"""A stand-in OpenAI-compatible chat-completions endpoint for tests (``http.server`` on 127.0.0.1, a
thread per request): the test's ``reply`` function answers each ``POST``; every request is recorded."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: ``reply(body)`` → ``(HTTP status, payload)`` for the request's JSON ``body``.
Reply = Callable[[dict[str, Any]], tuple[int, bytes]]


def completion(content: str, prompt_tokens: int, completion_tokens: int, model: str = "fake") -> bytes:
    """A chat completion whose message is ``content``, with its token ``usage``."""
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    ).encode()


def prompt_of(body: dict[str, Any]) -> str:
    """The user message of a chat request's body."""
    return str(body["messages"][-1]["content"])


@dataclass
class FakeLLM:
    """A running fake endpoint: ``url`` its API base (``…/v1``); ``requests`` what it received, each
    ``{"path", "auth" (the Authorization header), "body"}``."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextlib.contextmanager
def fake_llm(reply: Reply) -> Iterator[FakeLLM]:
    """Serve ``reply`` on a free port of 127.0.0.1 for the ``with`` block."""
    requests: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            status, payload = reply(body)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
                self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield FakeLLM(f"http://127.0.0.1:{server.server_address[1]}/v1", requests)
    finally:
        server.shutdown()
        server.server_close()
