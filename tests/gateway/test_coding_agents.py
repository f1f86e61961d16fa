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
from toolwire.types import (
    AssistantMessage,
    Request,
    Response,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
)

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".cache" / "coding-agents" / "node_modules" / ".bin"
CLAUDE = BIN / "claude"
CODEX = BIN / "codex"
README = (ROOT / "README.md").read_text(encoding="utf-8")
UPSTREAM_KEY_ENV = "TOOLWIRE_AGENT_TEST_UPSTREAM_KEY"
SIGNATURE = "c2lnbmVkLWJ5LWdlbWluaQ=="  # base64, as Gemini's thought signatures are
THOUGHT_SIGNATURE = "c2lnbmVkLXRoaW5raW5n"
SIGNED_THINKING = ("gemini", "anthropic")  # upstreams whose thinking carries a signature to give back
FINAL = "Done: hello.txt holds the greeting."


def _missing(path: Path) -> str:
    return f"{path.name} is not installed at {path}; run tests/gateway/install_coding_agents.sh (needs npm)"


needs_claude = pytest.mark.skipif(not CLAUDE.exists(), reason=_missing(CLAUDE))
needs_codex = pytest.mark.skipif(not CODEX.exists(), reason=_missing(CODEX))


# the upstream side of the loop


@dataclass
class ToolLoop:
    """A scripted model: turn n after n assistant turns, then `FINAL`.

    The first turn thinks (signed, where the upstream signs thinking), says what it will do
    and makes two parallel calls; each later turn makes one call. Requests that do not offer
    `marker` (an agent's side requests: titles, summaries) get a short text and are not part
    of the loop.
    """

    marker: str
    upstream: str
    turns: Sequence[Sequence[ToolCall]]
    loop: list[Request] = field(default_factory=list)

    def __call__(self, request: Request) -> Turn:
        if self.marker not in {tool.name for tool in request.tools}:
            return "side request"
        self.loop.append(request)
        done = sum(isinstance(m, AssistantMessage) and bool(m.tool_calls) for m in request.messages)
        if done >= len(self.turns):
            return FINAL
        calls = [_signed(call, self.upstream) for call in self.turns[done]]
        if done:
            return reply("", calls)
        signature = THOUGHT_SIGNATURE if self.upstream in SIGNED_THINKING else None
        thinking = ThinkingPart(text="Two files.", signature=signature, provider=self.upstream)
        parts = [thinking, TextPart(text="I'll write both files."), *calls]
        return Response(message=AssistantMessage(parts=parts), stop_reason=StopReason.TOOL_USE)

    def results(self) -> list[str]:
        """The tool results of the last loop request, as text."""
        return [_text(m) for m in self.loop[-1].messages if isinstance(m, ToolResult)]

    def assert_context_came_back(self) -> None:
        """Every later request holds the earlier turns with their signatures (a stateless gateway)."""
        assert "twctx1" not in repr(self.loop)  # the gateway's carriers never reach the upstream
        for request in self.loop[1:]:
            turns = [m for m in request.messages if isinstance(m, AssistantMessage)]
            assert [[c.name for c in m.tool_calls] for m in turns] == [
                [c.name for c in calls] for calls in self.turns[: len(turns)]
            ]
            if self.upstream in SIGNED_THINKING:
                first = turns[0].parts[0]
                assert isinstance(first, ThinkingPart) and first.signature == THOUGHT_SIGNATURE
            if self.upstream == "gemini":
                signatures = [
                    c.metadata.get("gemini", {}).get("thought_signature") for m in turns for c in m.tool_calls
                ]
                assert signatures == [SIGNATURE] * len(signatures)


def _text(result: ToolResult) -> str:
    if isinstance(result.value, str):
        return result.value
    if isinstance(result.value, list):
        return "".join(getattr(part, "text", "") for part in result.value)
    return json.dumps(result.value)


def _signed(call: ToolCall, upstream: str) -> ToolCall:
    """A call as `upstream` sends it: Gemini's carry a thought signature that must come back."""
    metadata = {"gemini": {"thought_signature": SIGNATURE}} if upstream == "gemini" else {}
    return ToolCall(id=call.id, name=call.name, arguments=call.arguments, metadata=metadata)


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


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def claude_turns(work: Path) -> list[list[ToolCall]]:
    """Two files written at once, then both shown by one command."""
    return [
        [
            call("call_w1", "Write", file_path=str(work / "a.txt"), content="A\n"),
            call("call_w2", "Write", file_path=str(work / "b.txt"), content="B\n"),
        ],
        [call("call_b3", "Bash", command="cat a.txt b.txt", description="Show both files")],
    ]


def assert_the_tools_ran(work: Path, loop: ToolLoop, server: ScriptedServer) -> None:
    assert (work / "a.txt").read_text(encoding="utf-8") == "A\n"
    assert (work / "b.txt").read_text(encoding="utf-8") == "B\n"
    assert len(loop.loop) == 3
    assert all(r.stream for r in server.requests)  # the agents stream; so does the upstream leg
    ids = [m.tool_call_id for m in loop.loop[-1].messages if isinstance(m, ToolResult)]
    assert ids == [c.id for calls in loop.turns for c in calls]
    loop.assert_context_came_back()


@needs_claude
@pytest.mark.parametrize("upstream", ["openai", "openai-responses", "gemini"])
def test_claude_code_runs_its_tools_through_the_gateway(upstream: str, dirs: tuple[Path, Path]) -> None:
    work, home = dirs
    loop = ToolLoop("Write", upstream, claude_turns(work))
    with ScriptedServer(loop) as server, _gateway_to(upstream, server) as gateway:
        env = hermetic_env(home) | {"ANTHROPIC_BASE_URL": gateway.url, "ANTHROPIC_API_KEY": "sk-ant-unused"}
        printed = claude("Write a.txt and b.txt, then show them.", work, env, "--model", "claude-sonnet-4-6")
    assert printed.strip() == FINAL
    assert_the_tools_ran(work, loop, server)
    # Bash's output went back to the upstream model (Claude Code appends a <system-reminder> to it)
    assert loop.results()[2].splitlines()[:2] == ["A", "B"]


# Codex CLI


def codex_turns() -> list[list[ToolCall]]:
    return [
        [
            call("call_x1", "exec_command", cmd="echo A > a.txt"),
            call("call_x2", "exec_command", cmd="echo B > b.txt"),
        ],
        [call("call_x3", "exec_command", cmd="cat a.txt b.txt")],
    ]


@needs_codex
@pytest.mark.parametrize("upstream", ["anthropic", "gemini", "openai"])
def test_codex_runs_its_tools_through_the_gateway(upstream: str, dirs: tuple[Path, Path]) -> None:
    work, home = dirs
    loop = ToolLoop("exec_command", upstream, codex_turns())
    with ScriptedServer(loop) as server, _gateway_to(upstream, server) as gateway:
        env = hermetic_env(home) | {"TOOLWIRE_KEY": "unused"}
        printed = codex("Write a.txt and b.txt, then show them.", work, env, codex_config(gateway.url + "/v1"))
    assert printed.strip() == FINAL
    assert_the_tools_ran(work, loop, server)
    assert "A\nB\n" in loop.results()[2]  # the command's output went back to the upstream model
