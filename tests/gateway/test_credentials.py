"""Credentials in an upstream's URL reach no client, no log line and no banner; log lines stay lines."""

from __future__ import annotations

import io
import logging
import os
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx2
import pytest

from tests.gateway.conftest import KEY_ENV, Gateway
from tests.gateway.serve_process import ServeProcess
from toolwire.cli._app import run_cli
from toolwire.gateway import Route, Target, create_app
from toolwire.http import SafeLogFormatter, redact_urls

SECRET = "s3cretpw"
TOKEN = "tok-0123456789"


class _NotFound(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(404)
        self.send_header("content-length", "9")
        self.end_headers()
        self.wfile.write(b"not found")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def not_found() -> Iterator[str]:
    """An upstream that answers 404 to everything: `host:port`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _dead_port() -> int:
    dead = socket.create_server(("127.0.0.1", 0))
    port: int = dead.getsockname()[1]
    dead.close()
    return port


@pytest.fixture
def log() -> Iterator[io.StringIO]:
    """The `toolwire` log as `toolwire serve` writes it (its formatter), captured."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(SafeLogFormatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("toolwire")
    saved = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield out
    logger.removeHandler(handler)
    logger.setLevel(saved)


def test_urls_lose_their_user_password_and_query_values_and_keep_the_rest() -> None:
    text = f"Could not reach openai at http://admin:{SECRET}@host:8/v1?token={TOKEN}&alt=sse: refused"
    assert redact_urls(text) == (
        "Could not reach openai at http://[redacted]@host:8/v1?token=[redacted]&alt=[redacted] refused"
    )
    assert redact_urls("'https://h/v1/chat/completions'") == "'https://h/v1/chat/completions'"


def test_a_log_line_stays_one_line_whatever_a_client_sent() -> None:
    sent = "a\nINFO forged\r\x00"
    record = logging.LogRecord("toolwire.gateway", logging.INFO, __file__, 1, "model=%s", (sent,), None)
    line = SafeLogFormatter("%(levelname)s %(message)s").format(record)
    assert line == "INFO model=a\\nINFO forged\\r\\x00"


def test_url_credentials_reach_neither_the_client_nor_the_log(
    upstream_key: str, log: io.StringIO, not_found: str
) -> None:
    dead = f"http://admin:{SECRET}@127.0.0.1:{_dead_port()}/v1"
    nowhere = f"http://admin:{SECRET}@{not_found}/v1"
    routes = [
        Route(model="down", target="openai:m", base_url=dead, api_key_env=KEY_ENV),
        Route(model="lost", target="openai:m", base_url=nowhere, api_key_env=KEY_ENV),
        Route(
            model="both",
            targets=[Target("openai:m", dead, KEY_ENV), Target("openai:m", nowhere, KEY_ENV)],
        ),
    ]
    body = {"messages": [{"role": "user", "content": "hi"}]}
    with Gateway(create_app(routes)) as gateway:
        down = httpx2.post(gateway.url + "/v1/chat/completions", json=body | {"model": "down"}, timeout=30)
        lost = httpx2.post(gateway.url + "/v1/chat/completions", json=body | {"model": "lost"}, timeout=30)
        both = httpx2.post(gateway.url + "/v1/chat/completions", json=body | {"model": "both"}, timeout=30)
    assert (down.status_code, lost.status_code, both.status_code) == (502, 404, 404)
    assert "Could not reach openai at http://[redacted]@127.0.0.1:" in down.json()["error"]["message"]
    assert "for POST http://[redacted]@127.0.0.1:" in lost.json()["error"]["message"]
    for text in (down.text, lost.text, both.text, log.getvalue()):
        assert SECRET not in text and "admin" not in text
    assert "[redacted]@127.0.0.1" in log.getvalue()


def test_a_base_url_with_a_query_string_is_refused_at_start_without_showing_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERVE_TEST_UPSTREAM_KEY", "upstream-key")
    config = tmp_path / "toolwire.toml"
    config.write_text(
        f'[[route]]\nmodel = "gpt-*"\ntarget = "openai:m"\nbase_url = "http://127.0.0.1:9/v1?token={TOKEN}"\n'
        'api_key_env = "SERVE_TEST_UPSTREAM_KEY"\n',
        encoding="utf-8",
    )
    logger = logging.getLogger("toolwire")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        assert run_cli(["serve", "--config", str(config)]) == 1
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    err = capsys.readouterr().err
    assert TOKEN not in err
    assert err == (
        "toolwire: error: Route 'gpt-*' cannot reach 'openai:m': base_url "
        "'http://127.0.0.1:9/v1?token=[redacted]' for openai has a query string or fragment, which the request "
        "paths would be appended to; remove it and pass a token as the API key (api_key_env) instead.\n"
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_the_banner_and_the_request_log_of_toolwire_serve_show_no_url_credentials(tmp_path: Path) -> None:
    config = tmp_path / "toolwire.toml"
    config.write_text(
        f'[[route]]\nmodel = "gpt-*"\ntarget = "openai:m"\nbase_url = "http://admin:{SECRET}@127.0.0.1:{_dead_port()}/v1"\n'
        'api_key_env = "SERVE_TEST_UPSTREAM_KEY"\n',
        encoding="utf-8",
    )
    env = dict(os.environ, SERVE_TEST_UPSTREAM_KEY="upstream-key")
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with ServeProcess(config, env=env) as serve:
        body = {"model": "gpt-4\nINFO toolwire.gateway: forged", "messages": [{"role": "user", "content": "hi"}]}
        reply = httpx2.post(serve.url + "/v1/chat/completions", json=body, timeout=30)
        assert reply.status_code == 502
    assert serve.banner[2] == "  gpt-* -> openai:m (http://[redacted]@127.0.0.1:" + serve.banner[2].split(":", 3)[3]
    assert all(SECRET not in line for line in serve.banner)
    assert SECRET not in serve.log and SECRET not in reply.text
    assert [line for line in serve.log.splitlines() if "forged" in line] == [
        next(line for line in serve.log.splitlines() if line.startswith("INFO toolwire.gateway: POST"))
    ]
    assert "model=gpt-4\\nINFO toolwire.gateway: forged" in serve.log
