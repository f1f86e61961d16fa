"""`toolwire serve` as a user runs it: a real subprocess, a real port, a settings file."""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from toolwire.cli._app import run_cli
from toolwire.testing import ScriptedServer

ROUTE = """\
[[route]]
model = "gpt-*"
target = "anthropic:claude-up"
base_url = "{url}"
api_key_env = "SERVE_TEST_UPSTREAM_KEY"
"""


@pytest.fixture(autouse=True)
def _keep_logging() -> Iterator[None]:
    """run_cli configures the `toolwire` logger for a terminal; later tests need it as it was."""
    logger = logging.getLogger("toolwire")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved


def _config(tmp_path: Path, url: str = "http://127.0.0.1:9") -> Path:
    path = tmp_path / "toolwire.toml"
    path.write_text(ROUTE.format(url=url), encoding="utf-8")
    return path


def test_serve_refuses_a_public_address_without_gateway_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TOOLWIRE_GATEWAY_KEYS", raising=False)
    assert run_cli(["serve", "--config", str(_config(tmp_path)), "--host", "0.0.0.0"]) == 2
    assert capsys.readouterr().err == (
        "toolwire: error: Refusing to serve on '0.0.0.0' without gateway keys; set TOOLWIRE_GATEWAY_KEYS "
        "(comma-separated) or bind a loopback address such as 127.0.0.1.\n"
    )


def test_serve_needs_routes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "toolwire.toml"
    empty.write_text("[agent]\nmax_tool_turns = 3\n", encoding="utf-8")
    assert run_cli(["serve", "--config", str(empty)]) == 2
    assert capsys.readouterr().err == (
        f"toolwire: error: No [[route]] tables ({empty}); add one per model pattern (see toolwire serve --help).\n"
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_runs_the_gateway_and_logs_a_line_per_request(tmp_path: Path) -> None:
    port = _free_port()
    with ScriptedServer(["Hello through the gateway."]) as upstream:
        config = _config(tmp_path, upstream.base_url)
        env = dict(os.environ, SERVE_TEST_UPSTREAM_KEY="upstream-key", TOOLWIRE_GATEWAY_KEYS="k1,k2")
        command = [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", str(port)]
        process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx2.get(url + "/health", timeout=5).status_code == 200:
                        break
                except httpx2.HTTPError:
                    pass
                assert process.poll() is None and time.monotonic() < deadline, "toolwire serve did not start"
                time.sleep(0.05)
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
            reply = httpx2.post(url + "/v1/chat/completions", json=body, headers={"authorization": "Bearer k2"})
            assert reply.status_code == 200
            assert reply.json()["choices"][0]["message"]["content"] == "Hello through the gateway."
            assert upstream.requests[0].body["model"] == "claude-up"
        finally:
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    lines = [line for line in stderr.splitlines() if "POST /v1/chat/completions" in line]
    assert len(lines) == 1
    assert lines[0].startswith(
        "INFO toolwire.gateway: POST /v1/chat/completions model=gpt-4o route=gpt-* upstream=anthropic:claude-up "
        "mode=translate stream=no status=200 "
    )
    assert lines[0].endswith("tokens=0/0")  # the scripted upstream reports usage
    assert "upstream-key" not in stderr
