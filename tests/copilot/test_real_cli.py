"""The real GitHub Copilot CLI (from npm), run hermetically against toolwire's loopback API server.

Install it first with `tests/copilot/install_real_cli.sh` (into `.cache/copilot-cli`, needs
npm); without it these tests are skipped. No network: the CLI gets a fake token, isolated
HOME/XDG folders, `COPILOT_API_URL`/`COPILOT_DEBUG_GITHUB_API_URL` pointed at
`toolwire.testing.copilot_api.CopilotApiServer`, and proxies that lead nowhere.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent import Agent
from toolwire.copilot import CopilotClient, CopilotProvider, connect_copilot
from toolwire.reviewers import DenyAll
from toolwire.testing import ScriptedServer, reply
from toolwire.testing.copilot_api import CopilotApiServer
from toolwire.tools import tool
from toolwire.types import ToolCall

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / ".cache" / "copilot-cli" / "node_modules" / ".bin" / "copilot"
CACHE = ROOT / ".cache" / "copilot-cli" / "xdg-cache"  # the CLI unpacks ~235 MB here on first run; keep it

pytestmark = pytest.mark.skipif(
    not CLI.exists(), reason=f"the real Copilot CLI is not installed at {CLI}; run tests/copilot/install_real_cli.sh"
)


def cli_version() -> str:
    out = subprocess.run([str(CLI), "--version"], capture_output=True, text=True, timeout=60, check=False)
    return out.stdout.strip().splitlines()[0] if out.stdout.strip() else "unknown"


@tool(risk="low")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@tool(risk="low")
def grep(pattern: str) -> str:
    """Search the files (overrides the CLI's built-in grep)."""
    raise FileNotFoundError(f"no index for {pattern!r}")


@tool(risk="high")
def delete(key: str) -> str:
    """Delete a key."""
    return f"deleted {key}"


def hermetic_env(home: Path) -> dict[str, str]:
    """Isolated folders, no GitHub token anywhere, and proxies that lead nowhere."""
    env = {
        "HOME": str(home),
        "COPILOT_HOME": str(home / "copilot"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(CACHE),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    return env | dict.fromkeys(("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN", "GITHUB_COPILOT_API_TOKEN"), "")


def hermetic_client(server: CopilotApiServer, home: Path) -> CopilotClient:
    env = hermetic_env(home) | server.cli_env()
    return connect_copilot(
        server.model, cli_path=str(CLI), env=env, token_env="COPILOT_SDK_AUTH_TOKEN", cwd=str(home), timeout=60
    )


def chat_requests(server: CopilotApiServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


async def test_agent_runs_two_parallel_calls_through_the_real_cli(
    tmp_path: Path, record_testsuite_property: Any
) -> None:
    calls = [
        ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="call_2", name="get_weather", arguments={"city": "Oslo"}),
    ]
    script = [reply("Checking both.", calls), reply("Paris and Oslo are sunny.")]
    with CopilotApiServer(script) as server:
        client = hermetic_client(server, tmp_path)
        try:
            result = await Agent(client, [get_weather], system="Answer briefly.").run("Weather in Paris and Oslo?")
            version = client.cli_version
        finally:
            await client.aclose()
    # The version this run was checked against, in the JUnit report (a suite property: per-test
    # properties are not allowed in the default xunit2 format and break `pytest --junitxml`).
    record_testsuite_property("copilot_cli_version", version)
    assert version is not None and version in cli_version()
    assert result.stop_reason == "end_turn" and result.text == "Paris and Oslo are sunny." and result.turns == 2
    assert [(r.call.id, r.result.value) for r in result.calls] == [
        ("call_1", "sunny in Paris"),
        ("call_2", "sunny in Oslo"),
    ]
    first, second = chat_requests(server)
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]  # availableTools: ours only
    assert "Answer briefly." in first["messages"][0]["content"]  # systemMessage appended
    assert first["stream"] is True
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool_messages == [
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny in Paris"},
        {"role": "tool", "tool_call_id": "call_2", "content": "sunny in Oslo"},
    ]
    assert [g.path for g in server.gets][:2] == ["/copilot_internal/user", "/models"]
    assert server.gets[0].headers["authorization"].endswith("toolwire-fake-token")


async def test_errors_and_rejections_reach_the_model_through_the_real_cli(tmp_path: Path) -> None:
    calls = [
        ToolCall(id="call_1", name="grep", arguments={"pattern": "x"}),
        ToolCall(id="call_2", name="delete", arguments={"key": "k"}),
    ]
    with CopilotApiServer([reply("", calls), reply("Understood.")]) as server:
        client = hermetic_client(server, tmp_path)
        try:
            result = await Agent(client, [grep, delete], reviewer=DenyAll()).run("clean up")
        finally:
            await client.aclose()
    assert result.text == "Understood."
    _, second = chat_requests(server)
    contents = {m["tool_call_id"]: m["content"] for m in second["messages"] if m["role"] == "tool"}
    assert contents == {"call_1": result.calls[0].result.value, "call_2": result.calls[1].result.value}
    assert "FileNotFoundError" in contents["call_1"] and "rejected by the reviewer" in contents["call_2"]


async def test_byok_over_tcp_with_a_connection_token_and_no_github_token(tmp_path: Path) -> None:
    """Bring your own key: the real CLI calls our OpenAI-compatible server and GitHub never."""
    calls = [ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})]
    script = [reply("Checking.", calls), reply("Paris is sunny.")]
    record = tmp_path / "traffic.jsonl"
    with ScriptedServer(script) as server:
        env = hermetic_env(tmp_path) | {"COPILOT_CONNECTION_TOKEN": "conn-secret"}
        provider = CopilotProvider(base_url=server.base_url + "/v1", api_key="byok-secret")
        client = connect_copilot(
            "my-own-model", cli_path=str(CLI), env=env, cwd=str(tmp_path), timeout=60, transport="tcp",
            provider=provider, record=record,
        )  # fmt: skip
        try:
            result = await Agent(client, [get_weather]).run("Weather in Paris?")
        finally:
            await client.aclose()
    assert result.stop_reason == "end_turn" and result.text == "Paris is sunny." and result.turns == 2
    assert [(r.path, r.headers["authorization"], r.body["model"]) for r in server.requests] == [
        ("/v1/chat/completions", "Bearer byok-secret", "my-own-model"),
        ("/v1/chat/completions", "Bearer byok-secret", "my-own-model"),
    ]
    traffic = record.read_text()
    assert "conn-secret" not in traffic and "byok-secret" not in traffic and '"method": "session.create"' in traffic


@pytest.fixture(autouse=True)
def _no_leftover_cli() -> Any:
    yield
    # Every CLI these tests start is stopped by its client; nothing named copilot may remain ours.
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    if children.exists():
        for pid in children.read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes() if Path(f"/proc/{pid}/cmdline").exists() else b""
            assert b"copilot" not in cmdline
