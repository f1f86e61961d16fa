"""From flags and `toolwire.toml` to the settings a command runs with: the settings order lives here.

Flags win over the settings file, which wins over the built-in defaults; the environment
only supplies API keys. A flag naming another provider than the file's `[provider]` section
sets that whole section aside (its model and URL belong to the other provider). Kept light:
`tools`, `convert` and usage errors never load the agent.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.client import PROVIDERS
from toolwire.config import Config, McpServerSettings, ProviderSettings, ToolMode
from toolwire.offline import SCRIPTED_PROVIDERS

__all__ = [
    "COPILOT",
    "DEFAULT_PROVIDER",
    "SCRIPTED_PROVIDERS",
    "CommandFailed",
    "Settings",
    "UsageError",
    "known_providers",
    "resolve",
]

DEFAULT_PROVIDER = "scripted"

COPILOT = "copilot"  # the GitHub Copilot CLI, driven as a child process (toolwire.copilot)


class UsageError(Exception):
    """A command line or settings combination that cannot work (exit status 2)."""


class CommandFailed(Exception):
    """A command could not start or finish for a reason the message names (exit status 1)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """The settings a command runs with, after flags, the file and the defaults are merged."""

    provider: str
    model: str | None
    base_url: str | None
    api_key_env: str | None
    tool_mode: ToolMode
    max_tool_turns: int
    output_budget_chars: int | None
    system_prompt: str | None
    yes: bool
    config_path: Path | None
    copilot_byok: str | None = None
    copilot_wire_api: str | None = None
    copilot_record: Path | None = None
    mcp_servers: tuple[McpServerSettings, ...] = ()
    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float | None = None


def known_providers() -> list[str]:
    """Every name `--provider` accepts."""
    return sorted({*PROVIDERS, *SCRIPTED_PROVIDERS, COPILOT})


def resolve(args: argparse.Namespace, config: Config) -> Settings:
    """Merge flags over the settings file over the defaults."""
    name = args.provider or config.provider.name or DEFAULT_PROVIDER
    section = config.provider if args.provider in (None, config.provider.name) else ProviderSettings()
    if name not in known_providers():
        source = f" (from {config.path})" if args.provider is None and config.path else ""
        guess = difflib.get_close_matches(name, known_providers(), n=1, cutoff=0.75)
        hint = f"did you mean {guess[0]!r}? Use" if guess else "use"
        raise UsageError(f"Unknown provider {name!r}{source}; {hint} one of: {', '.join(known_providers())}.")
    agent = config.agent
    if args.tool_mode == "constrained" and getattr(args, "command", None) != "eval":
        raise UsageError("--tool-mode constrained is only in `toolwire eval` so far; use native, text or auto here.")
    return Settings(
        provider=name,
        model=args.model or section.model,
        base_url=args.base_url or section.base_url,
        api_key_env=section.api_key_env,
        tool_mode=agent.tool_mode if args.tool_mode in (None, "constrained") else args.tool_mode,
        max_tool_turns=agent.max_tool_turns if args.max_tool_turns is None else args.max_tool_turns,
        output_budget_chars=agent.output_budget_chars,
        system_prompt=agent.system_prompt,
        yes=bool(args.yes),
        config_path=config.path,
        mcp_servers=(*config.mcp, *_mcp_flags(args)),
        tool_choice=getattr(args, "tool_choice", None),
        max_tokens=getattr(args, "max_tokens", None),
        temperature=getattr(args, "temperature", None),
        timeout=getattr(args, "timeout", None),
        **_copilot(args, section, name),
    )


def _mcp_flags(args: argparse.Namespace) -> list[McpServerSettings]:
    """The servers of the `--mcp "COMMAND ARGS"` flags (after the settings file's `[[mcp]]` tables)."""
    servers: list[McpServerSettings] = []
    for text in getattr(args, "mcp", None) or []:
        try:
            words = shlex.split(text)
        except ValueError as exc:
            raise UsageError(f"--mcp {text!r} is not a command line: {exc}.") from None
        if not words:
            raise UsageError('--mcp needs a command, e.g. --mcp "npx -y @modelcontextprotocol/server-everything".')
        servers.append(McpServerSettings(command=words[0], args=tuple(words[1:])))
    return servers


def _copilot(args: argparse.Namespace, section: ProviderSettings, name: str) -> dict[str, Any]:
    """The Copilot settings (bring your own key, the traffic record); only `copilot` takes them."""
    byok = getattr(args, "copilot_byok", None) or section.copilot_byok
    wire_api = getattr(args, "copilot_wire_api", None) or section.copilot_wire_api
    record = getattr(args, "copilot_record", None) or section.copilot_record
    given = {"--copilot-byok": byok, "--copilot-wire-api": wire_api, "--copilot-record": record}
    stray = [flag for flag, value in given.items() if value is not None]
    if stray and name != COPILOT:
        raise UsageError(f"{stray[0]} applies only to --provider copilot, not {name!r}.")
    return {
        "copilot_byok": byok,
        "copilot_wire_api": wire_api,
        "copilot_record": Path(record) if record is not None else None,
    }
