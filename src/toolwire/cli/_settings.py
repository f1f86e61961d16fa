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
    api_key_env_source: str = "toolwire.toml"


def known_providers() -> list[str]:
    """Every name `--provider` accepts."""
    return sorted({*PROVIDERS, *SCRIPTED_PROVIDERS, COPILOT})


def _hint(name: str) -> str:
    guess = difflib.get_close_matches(name, known_providers(), n=1, cutoff=0.75)
    return f"did you mean {guess[0]!r}? Use" if guess else "use"


def split_model(model: str | None, provider: str | None, file_provider: str | None) -> tuple[str | None, str | None]:
    """`--model provider:model` as (provider, model); a model name with a colon of its own stays whole.

    `qwen3:8b` is Ollama's model name, not a provider: a prefix that names no provider is part of
    the model when a provider is given some other way, and an error naming what was typed when not.
    """
    if model is None or ":" not in model:
        return provider, model
    prefix, rest = model.split(":", 1)
    if prefix not in known_providers():
        if provider is None and file_provider is None:
            raise UsageError(
                f"Unknown provider {prefix!r} in --model {model!r}; {_hint(prefix)} one of: "
                f"{', '.join(known_providers())} (or pass --provider for a model name with a colon)."
            )
        return provider, model
    if provider is not None and provider != prefix:
        raise UsageError(f"--model {model!r} names provider {prefix!r} but --provider says {provider!r}; drop one.")
    if not rest:
        raise UsageError(f"No model in --model {model!r}; write provider:model, e.g. '{prefix}:my-model'.")
    return prefix, rest


def resolve(args: argparse.Namespace, config: Config) -> Settings:
    """Merge flags over the settings file over the defaults."""
    flag, model = split_model(args.model, args.provider, config.provider.name)
    name = flag or config.provider.name or DEFAULT_PROVIDER
    section = config.provider if flag in (None, config.provider.name) else ProviderSettings()
    if name not in known_providers():
        source = f" (from {config.path})" if flag is None and config.path else ""
        raise UsageError(f"Unknown provider {name!r}{source}; {_hint(name)} one of: {', '.join(known_providers())}.")
    agent = config.agent
    return Settings(
        provider=name,
        model=model or section.model,
        base_url=args.base_url or section.base_url,
        api_key_env=getattr(args, "api_key_env", None) or section.api_key_env,
        api_key_env_source="--api-key-env" if getattr(args, "api_key_env", None) else f"api_key_env in {config.path}",
        tool_mode=agent.tool_mode if args.tool_mode is None else args.tool_mode,
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
