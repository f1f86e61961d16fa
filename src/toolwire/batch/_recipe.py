"""An agent factory that travels: plain settings, clients made in whichever process runs it.

Ray ships the factory to worker processes by pickling it; a live client (sockets, locks, an
event loop) cannot travel, so `AgentRecipe` holds only settings and connects on first use in
each process, keeping one client per model there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.agent import Agent
from toolwire.batch._tasks import Task
from toolwire.client import BaseClient, connect_http
from toolwire.reviewers import AutoApprove, DenyAll
from toolwire.stdtools import ROOT, standard_tools
from toolwire.textcalls import ToolMode
from toolwire.tools import ToolContext

__all__ = ["AgentRecipe"]

_NO_REVIEWER = "a batch run has no one to ask; pass --yes to allow high-risk tools"


@dataclass
class AgentRecipe:
    """How to build each task's agent over the standard tools.

    Args:
        provider: A provider name `connect` knows (`openai`, `vllm`, `anthropic`, ...).
        model: The default model; a task's `model` wins.
        base_url: Where the API lives (`None`: the provider's default).
        api_key: A key to use as is; else `api_key_env` names the variable, else the provider's own.
        root: The folder the file tools work in, unless a task names its own `root`.
        approve: Approve high-risk calls; otherwise they are rejected (nobody can be asked).
    """

    provider: str
    model: str
    root: str
    base_url: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    system: str | None = None
    tool_mode: ToolMode = "native"
    max_tool_turns: int = 10
    output_budget_chars: int | None = None
    approve: bool = False
    _clients: dict[str, BaseClient] = field(default_factory=dict, repr=False)

    def __call__(self, task: Task) -> Agent:
        """The agent for one task."""
        return Agent(
            self._client(task.model or self.model),
            _tools(task.tools),
            system=task.system or self.system,
            max_tool_turns=self.max_tool_turns if task.max_tool_turns is None else task.max_tool_turns,
            reviewer=AutoApprove() if self.approve else DenyAll(_NO_REVIEWER),
            tool_mode=self.tool_mode,
            output_budget_chars=self.output_budget_chars,
            context=ToolContext(deps={ROOT.id: Path(task.root or self.root)}),
        )

    async def aclose(self) -> None:
        """Close the clients this process opened."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_clients"] = {}  # live clients stay in the process that made them
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def _client(self, model: str) -> BaseClient:
        client = self._clients.get(model)
        if client is None:
            key = self.api_key or (os.environ.get(self.api_key_env) if self.api_key_env else None)
            client = connect_http(f"{self.provider}:{model}", api_key=key, base_url=self.base_url)
            self._clients[model] = client
        return client


def _tools(names: tuple[str, ...] | None) -> list[Any]:
    tools = standard_tools()
    if names is None:
        return tools
    by_name = {tool.name: tool for tool in tools}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise ValueError(f"unknown standard tools {unknown!r}; known: {', '.join(sorted(by_name))}")
    return [by_name[name] for name in names]
