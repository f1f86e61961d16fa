"""`toolwire serve` as a user runs it: a real subprocess, a real port, a settings file."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.gateway.serve_process import ServeProcess
from toolwire.cli._app import run_cli
from toolwire.providers import PROVIDERS
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
        f"toolwire: error: No [[route]] tables ({empty}); add one per model pattern to toolwire.toml, e.g. "
        """printf '[[route]]\\nmodel = "*"\\ntarget = "scripted:demo"\\n' > toolwire.toml (the offline scripted """
        'model; target = "openai:gpt-4o" or "vllm:NAME" with base_url for a real one).\n'
    )


def test_serve_runs_the_gateway_and_logs_a_line_per_request(tmp_path: Path) -> None:
    with ScriptedServer(["Hello through the gateway."]) as upstream:
        upstream_url = upstream.base_url
        config = _config(tmp_path, upstream_url)
        env = dict(os.environ, SERVE_TEST_UPSTREAM_KEY="upstream-key", TOOLWIRE_GATEWAY_KEYS="k1,k2")
        with ServeProcess(config, env=env) as serve:
            body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
            reply = httpx2.post(serve.url + "/v1/chat/completions", json=body, headers={"authorization": "Bearer k2"})
            assert reply.status_code == 200
            assert reply.json()["choices"][0]["message"]["content"] == "Hello through the gateway."
            assert upstream.requests[0].body["model"] == "claude-up"
    assert serve.process.returncode == 0, serve.log
    stderr = serve.log
    lines = [line for line in stderr.splitlines() if "POST /v1/chat/completions" in line]
    assert len(lines) == 1
    assert lines[0].startswith(
        "INFO toolwire.gateway: POST /v1/chat/completions model=gpt-4o route=gpt-* upstream=anthropic:claude-up "
        "mode=translate stream=no status=200 "
    )
    assert lines[0].endswith("tokens=0/0")  # the scripted upstream reports usage
    assert "upstream-key" not in stderr
    assert serve.banner == [
        f"toolwire gateway at {serve.url} - 1 worker, gateway keys on, bodies up to 32 MiB",
        "routes, first match wins:",
        f"  gpt-* -> anthropic:claude-up ({upstream_url}/v1/messages)",
        "clients: /v1/chat/completions, /v1/responses, /v1/messages, /v1beta/models/..., /api/chat, "
        "/model/.../converse (and /v1/models, /health, /metrics)",
    ]


OFFLINE = """\
[[route]]
model = "demo*"
target = "scripted:demo"

[[route]]
model = "*"
target = "scripted-anthropic:any"
"""


def test_the_offline_scripted_model_is_a_route_target_no_key_no_network(tmp_path: Path) -> None:
    import openai

    config = tmp_path / "toolwire.toml"
    config.write_text(OFFLINE, encoding="utf-8")
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["C", "F"]}},
                "required": ["city", "unit"],
            },
        },
    }
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLWIRE_GATEWAY_KEYS", "PROMETHEUS_MULTIPROC_DIR")}
    with ServeProcess(config, env=env) as serve:
        hello = httpx2.post(
            serve.url + "/v1/chat/completions",
            json={"model": "demo", "messages": [{"role": "user", "content": "Hi there"}]},
        )
        sdk = openai.OpenAI(base_url=serve.url + "/v1", api_key="unused")
        messages: list[dict[str, object]] = [{"role": "user", "content": "Weather in Paris?"}]
        called = sdk.chat.completions.create(model="demo", messages=messages, tools=[weather])  # type: ignore[arg-type,list-item]
        call = called.choices[0].message.tool_calls[0]  # type: ignore[index]
        messages += [
            called.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "18 C, sunny"},
        ]
        answered = sdk.chat.completions.create(model="demo", messages=messages, tools=[weather])  # type: ignore[arg-type]
        through_anthropic = httpx2.post(
            serve.url + "/v1/chat/completions",
            json={"model": "other", "messages": [{"role": "user", "content": "Hi"}]},
        )
    assert serve.banner[2:4] == [
        "  demo* -> scripted:demo (offline scripted model, in-process, no key)",
        "  * -> scripted-anthropic:any (offline scripted model, in-process, no key)",
    ]
    assert hello.status_code == 200, hello.text
    assert hello.json()["choices"][0]["message"]["content"] == (
        "Hello from the offline scripted model (no model, no key). You said: 'Hi there'"
    )
    assert (call.function.name, call.function.arguments) == ("get_weather", '{"city":"example","unit":"C"}')  # type: ignore[union-attr]
    assert called.choices[0].finish_reason == "tool_calls"
    assert answered.choices[0].message.content == (
        "The offline scripted model called get_weather, which returned: 18 C, sunny"
    )
    assert through_anthropic.json()["choices"][0]["message"]["content"].startswith("Hello from the offline")
    assert "mode=translate" in serve.log  # the second route's model speaks Anthropic's protocol


@pytest.mark.parametrize(
    ("route", "env", "message"),
    [
        (
            'model = "m"\ntarget = "opnai:gpt-4o"',
            {},
            "toolwire: error: Route 'm' cannot reach 'opnai:gpt-4o': Unknown provider 'opnai' in 'opnai:gpt-4o'; "
            f"did you mean 'openai'? Use one of: {', '.join(sorted(PROVIDERS))}.",
        ),
        (
            'model = "m"\ntarget = "anthropic:c"\napi_key_env = "SERVE_TEST_UNSET_KEY"',
            {},
            "toolwire: error: Route 'm': the variable SERVE_TEST_UNSET_KEY holding the key of 'anthropic:c' "
            "is not set.",
        ),
        (
            'model = "m"\ntarget = "anthropic:c"',
            {"ANTHROPIC_API_KEY": ""},
            "toolwire: error: Route 'm' cannot reach 'anthropic:c': No API key for anthropic: set api_key_env in the "
            "route, or ANTHROPIC_API_KEY.",
        ),
        (
            'model = "m"\ntarget = "vllm:q"\nbase_url = "localhost:8000/v1"',
            {},
            "toolwire: error: Route 'm' cannot reach 'vllm:q': base_url 'localhost:8000/v1' for vllm is not an "
            "http(s) URL; OpenAI-compatible servers usually end in /v1, e.g. http://localhost:8000/v1.",
        ),
        (
            'model = "m"\ntarget = "openai-compatible:q"',
            {},
            "toolwire: error: Route 'm' cannot reach 'openai-compatible:q': openai-compatible needs base_url in the "
            "route, the server's OpenAI-compatible URL ending in /v1.",
        ),
    ],
    ids=["unknown provider", "key variable unset", "provider key unset", "bad base URL", "no base URL"],
)
def test_serve_checks_every_route_at_start_and_exits_1_naming_it(
    tmp_path: Path, route: str, env: dict[str, str], message: str
) -> None:
    config = tmp_path / "toolwire.toml"
    config.write_text('[[route]]\nmodel = "ok"\ntarget = "scripted:x"\n\n[[route]]\n' + route + "\n", encoding="utf-8")
    child = {k: v for k, v in os.environ.items() if k not in ("SERVE_TEST_UNSET_KEY", "ANTHROPIC_API_KEY")} | env
    argv = [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", "0"]
    done = subprocess.run(argv, env=child, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n")


def test_serve_says_when_its_port_is_taken(tmp_path: Path) -> None:
    config = tmp_path / "toolwire.toml"
    config.write_text(OFFLINE, encoding="utf-8")
    with ServeProcess(config) as first:
        port = first.url.rsplit(":", 1)[1]
        argv = [sys.executable, "-m", "toolwire.cli", "serve", "--config", str(config), "--port", port]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"toolwire: error: Cannot listen on 127.0.0.1:{port}: Address already in use.\n"


def test_serve_caps_request_bodies_as_told(tmp_path: Path) -> None:
    config = tmp_path / "toolwire.toml"
    config.write_text(OFFLINE, encoding="utf-8")
    text = "x" * (1024 * 1024)
    body = {"model": "demo", "messages": [{"role": "user", "content": text}]}
    with ServeProcess(config, "--max-body-mb", "0.5") as serve:
        refused = httpx2.post(serve.url + "/v1/chat/completions", json=body)
    assert serve.banner[0].endswith("bodies up to 0.5 MiB")
    assert refused.status_code == 413
    assert refused.json()["error"]["message"] == (
        "The request body is larger than this gateway's limit of 524288 bytes; send a shorter conversation."
    )


def test_the_readmes_try_it_now_works_as_written(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Try it now: no model, no key\n", 1)[1].split("\n### ", 1)[0]
    [block] = [b for b in section.split("```bash\n")[1:]]
    lines = block.split("```", 1)[0].splitlines()
    printf, serve, curl, expected = lines[0], lines[1], "\n".join(lines[2:-1]), lines[-1]
    subprocess.run(["bash", "-c", printf], cwd=tmp_path, check=True)
    assert serve == "toolwire serve --config try.toml &"
    body = json.loads(curl.split(" -d '", 1)[1].rstrip("'"))
    with ServeProcess(tmp_path / "try.toml") as gateway:
        answer = httpx2.post(gateway.url + "/v1/chat/completions", json=body)
    fragment = expected.removeprefix("# ... ").removesuffix(" ...")
    assert fragment in answer.text


def test_toolwire_run_reaches_a_gateway_by_the_anthropic_sdks_base_url(tmp_path: Path) -> None:
    config = tmp_path / "toolwire.toml"
    config.write_text(OFFLINE, encoding="utf-8")
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "todo.md").write_text("- [ ] ship it\n", encoding="utf-8")
    with ServeProcess(config) as gateway:
        argv = ["run", "--provider", "anthropic", "--model", "demo", "--base-url", gateway.url, "--yes", "Go"]
        env = dict(os.environ, ANTHROPIC_API_KEY="unused", NO_COLOR="1")
        done = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", *argv],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert "Done: I wrote SUMMARY.md" in done.stdout
    assert (work / "SUMMARY.md").read_text(encoding="utf-8") == "# Open items\n\n- [ ] ship it\n"
    assert "POST /v1/messages model=demo route=demo* upstream=scripted:demo mode=translate" in gateway.log


def test_connections_to_the_listening_socket_have_nagle_off() -> None:
    """Off on every accepted connection, or a reply's headers and body (two writes) wait ~40 ms."""
    from toolwire.cli._listening_socket import listening_socket

    with listening_socket("127.0.0.1", 0) as listening:
        with socket.create_connection(listening.getsockname()[:2]):
            accepted, _ = listening.accept()
            with accepted:
                nodelay = accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        assert (listening.proto, bool(nodelay)) == (socket.IPPROTO_TCP, True)


def _hanging_route(tmp_path: Path) -> tuple[Path, Any]:
    from tests.gateway.test_errors import Hanging

    upstream = Hanging()
    path = tmp_path / "toolwire.toml"
    path.write_text(
        f'[[route]]\nmodel = "*"\ntarget = "openai-compatible:m"\nbase_url = "http://127.0.0.1:{upstream.port}/v1"\n',
        encoding="utf-8",
    )
    return path, upstream


def _in_flight(url: str, count: int) -> list[threading.Thread]:
    def ask() -> None:
        with contextlib.suppress(httpx2.HTTPError):
            httpx2.post(url + "/v1/chat/completions", json={"model": "m", "messages": []}, timeout=120)

    threads = [threading.Thread(target=ask, daemon=True) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_second_signal_forces_the_exit_non_zero_without_tracebacks(tmp_path: Path, workers: str) -> None:
    config, upstream = _hanging_route(tmp_path)
    with ServeProcess(config, "--workers", workers) as serve:
        threads = _in_flight(serve.url, 3)
        assert upstream.accepted.wait(60)
        serve.process.send_signal(signal.SIGTERM)
        assert _refuses_connections(serve.url)  # before, with --workers 2: accepted, never answered
        code = serve.stop(signal.SIGINT)
    upstream.sock.close()
    for thread in threads:
        thread.join(60)
    assert code == 1  # before: 0
    assert "Traceback" not in serve.log  # before: one per request in flight, and the lifespan's
    assert "toolwire serve: forced exit before requests in flight finished." in serve.log


def _refuses_connections(url: str) -> bool:
    """Whether new connections are refused once the draining gateway closed its socket (waits up to 60 s)."""
    host, port = url.removeprefix("http://").split(":")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
        except ConnectionRefusedError:
            return True
        except OSError:
            pass
        time.sleep(0.05)
    return False
