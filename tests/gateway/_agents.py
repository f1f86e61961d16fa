"""Claude Code, Codex CLI and Gemini CLI as subprocesses, and the scripted model they talk to.

Shared by `test_coding_agents.py`: where `install_coding_agents.sh` put the agents, a
hermetic environment for them, how each is run, and `ToolLoop`, the upstream side of a loop.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer, Turn, reply
from toolwire.toolmodes import OUTPUT_TOOL
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
GEMINI = BIN / "gemini"
UPSTREAM_KEY_ENV = "TOOLWIRE_AGENT_TEST_UPSTREAM_KEY"
SIGNATURE = "c2lnbmVkLWJ5LWdlbWluaQ=="  # base64, as Gemini's thought signatures are
THOUGHT_SIGNATURE = "c2lnbmVkLXRoaW5raW5n"
SIGNED_THINKING = ("gemini", "anthropic")  # upstreams whose thinking carries a signature to give back
FINAL = "Done: hello.txt holds the greeting."
ROUTER_SCORE = json.dumps({"complexity_reasoning": "Two small files.", "complexity_score": 10})


def router_answer(request: Request) -> Turn | None:
    """The JSON score of Gemini CLI's model router, where the request asks for JSON; else `None`.

    An upstream with a JSON-reply field gets the request with it; one without (Anthropic) gets a
    forced output tool from the gateway, answered by calling it.
    """
    if request.response_format is not None:
        return ROUTER_SCORE
    if any(tool.name == OUTPUT_TOOL for tool in request.tools):
        return reply("", [ToolCall(id="toolu_router", name=OUTPUT_TOOL, arguments=json.loads(ROUTER_SCORE))])
    return None


def _missing(path: Path) -> str:
    return f"{path.name} is not installed at {path}; run tests/gateway/install_coding_agents.sh (needs npm)"


needs_claude = pytest.mark.skipif(not CLAUDE.exists(), reason=_missing(CLAUDE))
needs_codex = pytest.mark.skipif(not CODEX.exists(), reason=_missing(CODEX))
needs_gemini = pytest.mark.skipif(not GEMINI.exists(), reason=_missing(GEMINI))


# the upstream side of the loop


@dataclass
class ToolLoop:
    """A scripted model: turn n after n assistant turns, then `FINAL`.

    The first turn thinks (signed, where the upstream signs thinking), says what it will do
    and makes two parallel calls; each later turn makes one call. Requests that do not offer
    `marker` (an agent's side requests: titles, summaries, a JSON score for Gemini CLI's model
    router) get a short answer and are not part of the loop.
    """

    marker: str
    upstream: str
    turns: Sequence[Sequence[ToolCall]]
    client: str = ""  # the agent's protocol: Gemini CLI drops Gemini's thoughts itself (no gateway at work)
    loop: list[Request] = field(default_factory=list)

    def __call__(self, request: Request) -> Turn:
        if (score := router_answer(request)) is not None:  # Gemini CLI's model router asks for a JSON score first
            return score
        if self.marker not in {tool.name for tool in request.tools}:
            return "side request"
        self.loop.append(request)
        done = sum(isinstance(m, AssistantMessage) and bool(m.tool_calls) for m in request.messages)
        if done >= len(self.turns):
            return FINAL
        calls = [signed(call, self.upstream) for call in self.turns[done]]
        if done:
            return reply("", calls)
        signature = THOUGHT_SIGNATURE if self.upstream in SIGNED_THINKING else None
        thinking = ThinkingPart(text="Two files.", signature=signature, provider=self.upstream)
        parts = [thinking, TextPart(text="I'll write both files."), *calls]
        return Response(message=AssistantMessage(parts=parts), stop_reason=StopReason.TOOL_USE)

    def results(self) -> list[str]:
        """The tool results of the last loop request, as text."""
        return [result_text(m) for m in self.loop[-1].messages if isinstance(m, ToolResult)]

    def assert_context_came_back(self) -> None:
        """Every later request holds the earlier turns with their signatures (a stateless gateway)."""
        assert "twctx1" not in repr(self.loop)  # the gateway's carriers never reach the upstream
        for request in self.loop[1:]:
            turns = [m for m in request.messages if isinstance(m, AssistantMessage) and m.tool_calls]
            assert [[c.name for c in m.tool_calls] for m in turns] == [
                [c.name for c in calls] for calls in self.turns[: len(turns)]
            ]
            if self.upstream in SIGNED_THINKING and self.client != self.upstream:
                first = turns[0].parts[0]
                assert isinstance(first, ThinkingPart) and first.signature == THOUGHT_SIGNATURE
            if self.upstream == "gemini":
                signatures = [
                    c.metadata.get("gemini", {}).get("thought_signature") for m in turns for c in m.tool_calls
                ]
                assert signatures == [SIGNATURE] * len(signatures)


def result_text(result: ToolResult) -> str:
    if isinstance(result.value, str):
        return result.value
    if isinstance(result.value, list):
        return "".join(getattr(part, "text", "") for part in result.value)
    return json.dumps(result.value)


def signed(call: ToolCall, upstream: str) -> ToolCall:
    """A call as `upstream` sends it: Gemini's carry a thought signature that must come back."""
    metadata = {"gemini": {"thought_signature": SIGNATURE}} if upstream == "gemini" else {}
    return ToolCall(id=call.id, name=call.name, arguments=call.arguments, metadata=metadata)


def gateway_to(upstream: str, server: ScriptedServer) -> Gateway:
    base_url = server.base_url + ("/v1" if upstream.startswith("openai") else "")
    route = Route(model="*", target=f"{upstream}:up-{upstream}", base_url=base_url, api_key_env=UPSTREAM_KEY_ENV)
    return Gateway(create_app([route]))


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


def run(argv: Sequence[str], cwd: Path, env: dict[str, str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run an agent to the end; with `check`, it must succeed."""
    done = subprocess.run(
        list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300
    )
    if check:
        assert done.returncode == 0, f"{argv[0]} exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    return done


Command = tuple[list[str], dict[str, str]]


def claude_command(url: str, prompt: str, home: Path) -> Command:
    """Claude Code in print mode, Write and Bash allowed, the gateway as its API.

    Its default model (Claude Opus 5.5 in 2.1.331) sends mid-conversation system messages.
    """
    env = hermetic_env(home) | {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-unused"}
    argv = [str(CLAUDE), "-p", prompt, "--allowedTools", "Write", "Bash"]
    return argv, env


def codex_config(base_url: str) -> str:
    """A Codex config.toml with the gateway as its model provider."""
    return (
        'model = "gpt-5.1-codex"\nmodel_provider = "toolwire"\n\n[model_providers.toolwire]\n'
        f'name = "toolwire"\nbase_url = "{base_url}"\nenv_key = "TOOLWIRE_KEY"\nwire_api = "responses"\n'
    )


def codex_command(url: str, prompt: str, home: Path, config: str | None = None) -> Command:
    """`codex exec` with `config` (default: `codex_config`); commands run unsandboxed in its cwd."""
    env = hermetic_env(home) | {"TOOLWIRE_KEY": "unused"}
    folder = Path(env["CODEX_HOME"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(config or codex_config(url + "/v1"), encoding="utf-8")
    argv = [str(CODEX), "exec", "--skip-git-repo-check", "--ephemeral", "--color", "never"]
    return [*argv, "--dangerously-bypass-approvals-and-sandbox", prompt], env


def gemini_command(url: str, prompt: str, home: Path) -> Command:
    """Gemini CLI headless, every tool approved, an API key as its auth, the gateway as its API.

    Its default model, `auto`, first asks a small model for a JSON score (structured output).
    """
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "general": {"disableAutoUpdate": True},
    }
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    env = hermetic_env(home) | {"GEMINI_API_KEY": "unused", "GOOGLE_GEMINI_BASE_URL": url}
    return [str(GEMINI), "-p", prompt, "--yolo", "--skip-trust"], env


COMMANDS = {"claude": claude_command, "codex": codex_command, "gemini": gemini_command}


def run_agent(
    agent: str, url: str, prompt: str, cwd: Path, home: Path, *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `agent` ("claude", "codex", "gemini") against the gateway at `url`."""
    argv, env = COMMANDS[agent](url, prompt, home)
    return run(argv, cwd, env, check=check)
