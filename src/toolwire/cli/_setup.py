"""From settings to a running model and an agent: the offline scripted server or a real endpoint."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from toolwire._connect import connect
from toolwire.agent import Agent
from toolwire.cli._settings import COPILOT, SCRIPTED_PROVIDERS, Settings, UsageError
from toolwire.client import PROVIDERS, BaseClient, connect_http
from toolwire.errors import AuthenticationError
from toolwire.offline import OfflineModel
from toolwire.reviewers import Reviewer
from toolwire.stdtools import ROOT, standard_tools
from toolwire.tools import Tool, ToolContext

__all__ = ["Model", "build_agent", "open_model"]

_SYSTEM = (
    "You are toolwire, an agent working in the folder {root}. Use the tools to look at and change "
    "files there; paths are relative to that folder. When the task is complete, answer briefly."
)


@dataclass(slots=True)
class Model:
    """An open client, the folder its tools work in, and a line describing both."""

    client: BaseClient
    root: Path
    banner: str
    report: Callable[[], str] | None = None


@contextlib.contextmanager
def open_model(settings: Settings) -> Iterator[Model]:
    """The client for `settings`: the offline scripted server or a real endpoint."""
    if settings.provider in SCRIPTED_PROVIDERS:
        for flag, value in (("--model", settings.model), ("--base-url", settings.base_url)):
            if value is not None:
                raise UsageError(f"{flag} does not apply to the offline scripted provider {settings.provider!r}.")
        with OfflineModel(settings.provider) as offline:
            yield Model(offline.connect(), offline.root, offline.describe(), offline.report)
        return
    root = Path.cwd()
    client = _connect(settings)
    where = getattr(client, "url", None) or "the Copilot CLI"
    yield Model(client, root, f"{settings.provider}:{settings.model} at {where}, tools in {root}")


def _connect(settings: Settings) -> BaseClient:
    if not settings.model:
        raise UsageError(
            f"No model for provider {settings.provider!r}; pass --model or set [provider] model in toolwire.toml."
        )
    key = None
    if settings.api_key_env:
        key = os.environ.get(settings.api_key_env)
        if not key:
            raise UsageError(f"{settings.api_key_env} is not set ({settings.api_key_env_source}); export it.")
    if settings.provider == COPILOT:
        return _connect_copilot(settings, key)
    try:
        options: dict[str, Any] = {"max_tokens": settings.max_tokens, "temperature": settings.temperature}
        if settings.timeout is not None:
            options["timeout"] = settings.timeout
        return connect_http(f"{settings.provider}:{settings.model}", api_key=key, base_url=settings.base_url, **options)
    except AuthenticationError:
        provider = PROVIDERS[settings.provider]
        variables = " or ".join((*provider.key_env, *provider.token_env))
        raise UsageError(
            f"No API key for {settings.provider}: set {variables}, or api_key_env in toolwire.toml."
        ) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# The variable each BYOK provider type reads its key from when api_key_env does not say.
_BYOK_KEY_ENV = {"openai": "OPENAI_API_KEY", "azure": "AZURE_OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def _connect_copilot(settings: Settings, key: str | None) -> BaseClient:
    """The Copilot CLI; with --base-url or --copilot-byok it calls that endpoint with your own key."""
    options: dict[str, Any] = {"cwd": str(Path.cwd())}
    if settings.copilot_record is not None:
        options["record"] = settings.copilot_record
    if settings.base_url is None and settings.copilot_byok is None:
        return connect(f"copilot:{settings.model}", api_key=key, **options)  # key: a GitHub token
    if settings.base_url is None:
        raise UsageError(
            "--copilot-byok needs the endpoint's URL: pass --base-url or set [provider] base_url in toolwire.toml."
        )
    kind = settings.copilot_byok or "openai"
    from toolwire.copilot import CopilotProvider  # the Copilot package loads only when used
    from toolwire.copilot._byok import ByokType, WireApi

    options["provider"] = CopilotProvider(
        type=cast(ByokType, kind),  # checked by argparse and by the settings file
        base_url=settings.base_url,
        api_key=key or os.environ.get(_BYOK_KEY_ENV[kind]) or None,
        wire_api=cast(WireApi | None, settings.copilot_wire_api),
    )
    return connect(f"copilot:{settings.model}", **options)


def build_agent(
    model: Model, settings: Settings, reviewer: Reviewer | None, tools: Sequence[Tool] = (), **output: Any
) -> Agent:
    """The agent over the standard tools (and `tools`, e.g. MCP servers'), rooted in the model's folder.

    `output` holds `run`'s typed-answer options (`output_type`, `output_strategy`, `output_retries`).
    """
    try:
        return Agent(
            model.client,
            [*standard_tools(), *tools],
            system=settings.system_prompt or _SYSTEM.format(root=model.root),
            max_tool_turns=settings.max_tool_turns,
            reviewer=reviewer,
            tool_mode=settings.tool_mode,
            output_budget_chars=settings.output_budget_chars,
            context=ToolContext(deps={ROOT.id: model.root}),
            tool_choice=settings.tool_choice,
            **output,
        )
    except ValueError as exc:  # a --tool-choice naming no tool, a schema that is not one: the user's to fix
        said = str(exc).replace("tool_choice", "--tool-choice", 1).replace("output_strategy", "--output-strategy", 1)
        raise UsageError(said) from None
