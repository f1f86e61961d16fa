"""Real coding agents from npm (Claude Code, Codex CLI) run their tool loops through the gateway.

Each agent talks its own protocol to a gateway on a loopback socket (Claude Code: Anthropic
Messages via `ANTHROPIC_BASE_URL`; Codex: the Responses API via a custom model provider),
and the gateway translates to a `ScriptedServer` upstream speaking another protocol. The
upstream script calls one of the agent's own tools per turn, then answers with text; the
test checks that the tool really ran (a file in the agent's temp working dir, the tool's
output in the next upstream request) and that the agent printed the final text.

The agents come from `tests/gateway/install_coding_agents.sh` (`make test` runs it; it needs
npm and the npm registry). They run hermetically: temp HOME and config dirs, a dummy key,
telemetry and updates off, proxies that lead nowhere (loopback excepted).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer, Turn, reply
from toolwire.types import AssistantMessage, Request, ToolCall, ToolResult

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".cache" / "coding-agents" / "node_modules" / ".bin"
CLAUDE = BIN / "claude"
CODEX = BIN / "codex"
README = (ROOT / "README.md").read_text(encoding="utf-8")
UPSTREAM_KEY_ENV = "TOOLWIRE_AGENT_TEST_UPSTREAM_KEY"
SIGNATURE = "c2lnbmVkLWJ5LWdlbWluaQ=="  # base64, as Gemini's thought signatures are
FINAL = "Done: hello.txt holds the greeting."


def _missing(path: Path) -> str:
    return f"{path.name} is not installed at {path}; run tests/gateway/install_coding_agents.sh (needs npm)"


needs_claude = pytest.mark.skipif(not CLAUDE.exists(), reason=_missing(CLAUDE))
needs_codex = pytest.mark.skipif(not CODEX.exists(), reason=_missing(CODEX))


# the upstream side of the loop


@dataclass
class ToolLoop:
    """A scripted model: the n-th call after n tool results, then `FINAL`.

    Requests that do not offer `marker` (an agent's side requests: titles, summaries) get a
    short text and are not part of the loop.
    """

    marker: str
    calls: Sequence[ToolCall]
    loop: list[Request] = field(default_factory=list)

    def __call__(self, request: Request) -> Turn:
        if self.marker not in {tool.name for tool in request.tools}:
            return "side request"
        self.loop.append(request)
        done = sum(isinstance(m, ToolResult) for m in request.messages)
        return reply("", [self.calls[done]]) if done < len(self.calls) else FINAL

    def results(self) -> list[str]:
        """The tool results of the last loop request, as text."""
        return [_text(m) for m in self.loop[-1].messages if isinstance(m, ToolResult)]


def _text(result: ToolResult) -> str:
    if isinstance(result.value, str):
        return result.value
    if isinstance(result.value, list):
        return "".join(getattr(part, "text", "") for part in result.value)
    return json.dumps(result.value)


def _call(call_id: str, name: str, arguments: dict[str, Any], upstream: str) -> ToolCall:
    """A call as `upstream` sends it: Gemini's carry a thought signature that must come back next turn."""
    metadata = {"gemini": {"thought_signature": SIGNATURE}} if upstream == "gemini" else {}
    return ToolCall(id=call_id, name=name, arguments=arguments, metadata=metadata)


def _assert_signatures_came_back(loop: ToolLoop, upstream: str) -> None:
    if upstream != "gemini":
        return
    for request in loop.loop[1:]:
        calls = [c for m in request.messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
        assert calls and all(c.metadata.get("gemini", {}).get("thought_signature") == SIGNATURE for c in calls)


def _gateway_to(upstream: str, server: ScriptedServer) -> Gateway:
    base_url = server.base_url + ("/v1" if upstream.startswith("openai") else "")
    route = Route(model="*", target=f"{upstream}:up-{upstream}", base_url=base_url, api_key_env=UPSTREAM_KEY_ENV)
    return Gateway(create_app([route]))


@pytest.fixture(autouse=True)
def _upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UPSTREAM_KEY_ENV, "upstream-key-for-agent-tests")


# running the agents


def hermetic_env(home: Path) -> dict[str, str]:
    """Temp HOME and config dirs, no telemetry or updates, proxies that lead nowhere."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "CLAUDE_CONFIG_DIR": str(home / "claude"),
        "CODEX_HOME": str(home / "codex"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


def run_agent(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{argv[0]} exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done


def claude(prompt: str, cwd: Path, env: dict[str, str], *extra: str) -> str:
    """Claude Code in print mode with Write and Bash allowed; what it printed."""
    argv = [str(CLAUDE), "-p", prompt, "--allowedTools", "Write", "Bash", "--output-format", "text", *extra]
    return run_agent(argv, cwd, env).stdout


def codex_config(base_url: str) -> str:
    return (
        'model = "gpt-5.1-codex"\nmodel_provider = "toolwire"\n\n[model_providers.toolwire]\n'
        f'name = "toolwire"\nbase_url = "{base_url}"\nenv_key = "TOOLWIRE_KEY"\nwire_api = "responses"\n'
    )


def codex(prompt: str, cwd: Path, env: dict[str, str], config: str) -> str:
    """`codex exec` with the given config.toml (commands run unsandboxed in `cwd`); what it printed."""
    home = Path(env["CODEX_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(config, encoding="utf-8")
    argv = [str(CODEX), "exec", "--skip-git-repo-check", "--ephemeral", "--color", "never"]
    argv += ["--dangerously-bypass-approvals-and-sandbox", prompt]
    return run_agent(argv, cwd, env).stdout


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    return work, home


# Claude Code


def claude_calls(work: Path, upstream: str) -> list[ToolCall]:
    write = {"file_path": str(work / "hello.txt"), "content": "hi from toolwire\n"}
    bash = {"command": "cat hello.txt", "description": "Show hello.txt"}
    return [_call("call_w1", "Write", write, upstream), _call("call_b2", "Bash", bash, upstream)]


@needs_claude
@pytest.mark.parametrize("upstream", ["openai", "openai-responses", "gemini"])
def test_claude_code_runs_its_tools_through_the_gateway(upstream: str, dirs: tuple[Path, Path]) -> None:
    work, home = dirs
    loop = ToolLoop("Write", claude_calls(work, upstream))
    with ScriptedServer(loop) as server, _gateway_to(upstream, server) as gateway:
        env = hermetic_env(home) | {"ANTHROPIC_BASE_URL": gateway.url, "ANTHROPIC_API_KEY": "sk-ant-unused"}
        printed = claude("Write hello.txt, then show it.", work, env, "--model", "claude-sonnet-4-6")
    assert printed.strip() == FINAL
    assert (work / "hello.txt").read_text(encoding="utf-8") == "hi from toolwire\n"
    assert len(loop.loop) == 3
    assert all(r.stream for r in server.requests)  # Claude Code streams; so does the upstream leg
    assert [m.tool_call_id for m in loop.loop[-1].messages if isinstance(m, ToolResult)] == ["call_w1", "call_b2"]
    # Bash's output went back to the upstream model (Claude Code appends a <system-reminder> to it)
    assert loop.results()[1].splitlines()[0] == "hi from toolwire"
    _assert_signatures_came_back(loop, upstream)
    assert "twctx1" not in json.dumps([r.body for r in server.requests])  # carriers never reach the upstream


# Codex CLI


@needs_codex
@pytest.mark.parametrize("upstream", ["anthropic", "gemini"])
def test_codex_runs_its_tools_through_the_gateway(upstream: str, dirs: tuple[Path, Path]) -> None:
    work, home = dirs
    calls = [
        _call("call_x1", "exec_command", {"cmd": "echo hi from toolwire > hello.txt"}, upstream),
        _call("call_x2", "exec_command", {"cmd": "cat hello.txt"}, upstream),
    ]
    loop = ToolLoop("exec_command", calls)
    with ScriptedServer(loop) as server, _gateway_to(upstream, server) as gateway:
        env = hermetic_env(home) | {"TOOLWIRE_KEY": "unused"}
        printed = codex("Write hello.txt, then show it.", work, env, codex_config(gateway.url + "/v1"))
    assert printed.strip() == FINAL
    assert (work / "hello.txt").read_text(encoding="utf-8") == "hi from toolwire\n"
    assert len(loop.loop) == 3
    assert all(r.stream for r in server.requests)
    assert [m.tool_call_id for m in loop.loop[-1].messages if isinstance(m, ToolResult)] == ["call_x1", "call_x2"]
    assert "hi from toolwire" in loop.results()[1]  # the command's output went back to the upstream model
    _assert_signatures_came_back(loop, upstream)
