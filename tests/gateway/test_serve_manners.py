"""`toolwire serve` in production: its log level and access log, a warm start, and the `serve` extra alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from tests.gateway.serve_process import ServeProcess
from toolwire.testing import ScriptedServer

ROUTE = """\
[[route]]
model = "gpt-*"
target = "anthropic:claude-up"
base_url = "{url}"
api_key_env = "SERVE_TEST_UPSTREAM_KEY"
"""
REQUEST_LINE = "INFO toolwire.gateway: POST /v1/chat/completions model=gpt-4o "


def _serve_one_request(
    tmp_path: Path, *flags: str, env: dict[str, str] | None = None, extra: dict[str, object] | None = None
) -> ServeProcess:
    """Start `toolwire serve` with `flags`, send one translated request, stop it; its log is then whole."""
    with ScriptedServer(["Hello."]) as upstream:
        config = tmp_path / "toolwire.toml"
        config.write_text(ROUTE.format(url=upstream.base_url), encoding="utf-8")
        env = dict(env if env is not None else os.environ, SERVE_TEST_UPSTREAM_KEY="upstream-key")
        with ServeProcess(config, *flags, env=env) as serve:
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], **(extra or {})}
            reply = httpx2.post(serve.url + "/v1/chat/completions", json=body, timeout=60)
            assert reply.status_code == 200, reply.text
            assert reply.json()["choices"][0]["message"]["content"] == "Hello."
    assert serve.process.returncode == 0, serve.log
    return serve


@pytest.mark.parametrize(
    ("flags", "lines"),
    [
        ((), 1),
        (("--access-log",), 1),
        (("--no-access-log",), 0),
        (("--log-level", "warning"), 0),
        (("--log-level", "debug", "--no-access-log"), 0),
    ],
)
def test_the_access_log_is_one_line_per_request_unless_switched_off(
    tmp_path: Path, flags: tuple[str, ...], lines: int
) -> None:
    serve = _serve_one_request(tmp_path, *flags)
    assert [line for line in serve.log.splitlines() if line.startswith(REQUEST_LINE)] == (
        [line for line in serve.log.splitlines() if "POST /v1/chat/completions" in line]
    )
    assert sum(line.startswith(REQUEST_LINE) for line in serve.log.splitlines()) == lines


def test_log_level_warning_keeps_warnings_and_error_hides_them(tmp_path: Path) -> None:
    dropped = {"logit_bias": {"1": 2}}  # no Anthropic equivalent: a warning, once per process
    warning = "WARNING toolwire.gateway: openai field 'logit_bias' has no equivalent in anthropic; dropped."
    assert _serve_one_request(tmp_path, "--log-level", "warning", extra=dropped).log.splitlines() == [warning]
    assert _serve_one_request(tmp_path, "--log-level", "error", extra=dropped).log == ""


def test_serve_runs_with_the_serve_extra_alone(tmp_path: Path) -> None:
    """rich (the `cli` extra) shadowed by a module that cannot be imported, as in a `[serve]` install."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "rich.py").write_text('raise ModuleNotFoundError("No module named \'rich\'", name="rich")\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shadow), os.environ.get("PYTHONPATH", "")]))
    serve = _serve_one_request(tmp_path, env=env)
    assert sum(line.startswith(REQUEST_LINE) for line in serve.log.splitlines()) == 1
    chat = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "run", "hi"], env=env, capture_output=True, text=True, timeout=120
    )
    assert (chat.returncode, chat.stdout) == (2, "")
    assert chat.stderr == (
        "toolwire: error: toolwire run needs rich; "
        "install it from the toolwire checkout with: pip install -e '.[cli]'\n"
    )


_PROBE = """
import json, sys
from toolwire.gateway import create_app
from toolwire.routes import RouteSettings

app = create_app([RouteSettings(model="*", target="anthropic:up", base_url="http://127.0.0.1:9", api_key_env="HOME")])
loaded = lambda: sorted(m for m in sys.modules if m.startswith(("toolwire.codecs.", "toolwire.http._http1", "httpx2")))
before = loaded()
if sys.argv[1] == "warm":
    app.state.gateway.warm_up()
target = app.state.gateway.router.routes[0].targets[0]
print(json.dumps({"before": before, "after": loaded(), "client": target._client is not None}))
"""


def test_warming_up_loads_every_codec_and_the_http_stack_and_builds_the_clients() -> None:
    """What a first request would import and build, `toolwire serve` does before its banner."""

    def probe(mode: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    cold, warm = probe("cold"), probe("warm")
    assert cold["after"] == cold["before"] and cold["client"] is False
    assert warm["client"] is True
    wanted = {"toolwire.http._http1", "httpx2"}
    for name in ("openai", "openai_responses", "anthropic", "gemini", "ollama"):
        wanted |= {f"toolwire.codecs.{name}.stream_encoder", f"toolwire.codecs.{name}.stream_decoder"}
    assert wanted <= set(warm["after"])  # type: ignore[call-overload]
    assert {"toolwire.http._http1", "toolwire.codecs.anthropic.stream_decoder"}.isdisjoint(cold["after"])  # type: ignore[arg-type]
