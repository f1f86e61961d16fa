"""A gateway on a real loopback socket (uvicorn in a thread), with ScriptedServer upstreams."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import uvicorn

from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer

UPSTREAM_KEY = "upstream-secret-key-0123456789"
KEY_ENV = "TOOLWIRE_TEST_UPSTREAM_KEY"

# provider name -> the client protocol it speaks
UPSTREAMS = {
    "openai": "openai",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
    "bedrock": "bedrock",
}


class Gateway:
    """A running gateway: its URL and the thread serving it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        # IPPROTO_TCP named: asyncio turns Nagle off only then (40 ms a request otherwise)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def __enter__(self) -> Gateway:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the gateway did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.sock.close()


def routes_to(servers: dict[str, ScriptedServer], tool_mode: str = "native") -> list[Route]:
    """One route per upstream: model `to-<provider>` goes to `<provider>:up-<provider>`."""
    return [
        Route(
            model=f"to-{name}",
            target=f"{name}:up-{name}",
            base_url=server.base_url + ("/v1" if name.startswith("openai") else ""),
            api_key_env=KEY_ENV,
            tool_mode=tool_mode,  # type: ignore[arg-type]
        )
        for name, server in servers.items()
    ]


@pytest.fixture(scope="module")
def upstream_key() -> Iterator[str]:
    saved = {name: os.environ.get(name) for name in (KEY_ENV, "AWS_REGION")}
    os.environ[KEY_ENV] = UPSTREAM_KEY
    os.environ["AWS_REGION"] = "us-east-1"  # where a Bedrock upstream's route would sign for
    yield UPSTREAM_KEY
    for name, old in saved.items():
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@pytest.fixture(scope="module")
def upstreams() -> Iterator[dict[str, ScriptedServer]]:
    servers = {name: ScriptedServer().start() for name in UPSTREAMS}
    yield servers
    for server in servers.values():
        server.stop()


def start_gateway(routes: Sequence[Route], **kwargs: Any) -> Gateway:
    return Gateway(create_app(routes, **kwargs)).__enter__()
