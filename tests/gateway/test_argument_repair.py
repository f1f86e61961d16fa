"""A large broken argument string from an upstream is repaired without holding the gateway.

The upstream is a hand-written Ollama server that sends one tool call whose arguments are a
60 KB Python-dict string (single quotes, `True`/`None`, a trailing comma, raw newlines), then
holds its stream open until the test has asked the gateway's `/health`. The gateway decodes
(and repairs) that line as it arrives, on its event loop; `/health` must answer while the
stream is still open, and the client must get the repaired arguments.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from tests.gateway.conftest import KEY_ENV, Gateway
from toolwire.gateway import Route, create_app

CONTENT = ('line with "quotes", a tab\tand a backslash \\ here\n' * 1200)[:60_000]
EXPECTED = {"path": "notes.txt", "content": CONTENT, "overwrite": True, "mode": None, "tags": ["a", "b"]}
BROKEN = repr(EXPECTED)[:-1].replace("\\n", "\n") + ", 'tags': ['a', 'b',],}"  # as a model might write it


class HeldUpstream:
    """An Ollama `/api/chat` that streams a call, then waits for `release` before it ends."""

    def __init__(self) -> None:
        self.release = threading.Event()
        held = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                self.send_response(200)
                self.send_header("content-type", "application/x-ndjson")
                self.send_header("connection", "close")
                self.end_headers()
                call = {"function": {"name": "write_file", "arguments": BROKEN}}
                self._line({"model": "m", "message": {"role": "assistant", "content": "", "tool_calls": [call]}})
                held.release.wait(120)  # a bound, not a timing assertion: the test fails by its order check
                self._line({"model": "m", "message": {"role": "assistant", "content": ""}, "done": True})

            def _line(self, data: dict[str, Any]) -> None:
                self.wfile.write(json.dumps(data).encode() + b"\n")
                self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> HeldUpstream:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def gateway(upstream_key: str) -> Iterator[tuple[Gateway, HeldUpstream]]:
    with HeldUpstream() as upstream:
        port = upstream.server.server_address[1]
        route = Route(model="to-ollama", target="ollama:m", base_url=f"http://127.0.0.1:{port}", api_key_env=KEY_ENV)
        with Gateway(create_app([route], keys=[])) as running:
            yield running, upstream


def test_a_60_kb_broken_argument_string_is_repaired_while_health_answers(
    gateway: tuple[Gateway, HeldUpstream],
) -> None:
    running, upstream = gateway
    body = {
        "model": "to-ollama",
        "stream": True,
        "messages": [{"role": "user", "content": "write the notes"}],
        "tools": [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}],
    }
    order: list[str] = []
    arguments = ""
    with httpx2.Client(timeout=120) as http:
        with http.stream("POST", running.url + "/v1/chat/completions", json=body) as stream:
            for line in stream.iter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                for choice in json.loads(line[6:])["choices"]:
                    for call in choice["delta"].get("tool_calls") or []:
                        arguments += call["function"].get("arguments") or ""
                        if "call" not in order:  # the upstream's line is decoded: its stream is still open
                            order.append("call")
                            health = http.get(running.url + "/health")
                            order.append(f"health {health.status_code}")
                            upstream.release.set()
            order.append("end")
    assert order == ["call", "health 200", "end"]
    assert json.loads(arguments) == EXPECTED
