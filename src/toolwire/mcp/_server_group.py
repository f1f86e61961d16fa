"""Several MCP servers opened together, their tools named so none shadows another.

A tool name offered by two servers (or by one server and a tool of the caller's, such as a
standard tool) is given each server's name as a prefix: `fs__read_file`. The names are chosen
again whenever a server's tool list changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable, Sequence

from toolwire.mcp._client import MCPServer
from toolwire.mcp._mapping import prefixed_names
from toolwire.tools import Tool

__all__ = ["MCPServers", "open_servers"]


class MCPServers:
    """Open servers whose tools are named together; `.tools` lists them all, in server order."""

    def __init__(self, servers: Sequence[MCPServer], reserved: Iterable[str] = ()) -> None:
        self.servers = list(servers)
        self.reserved = frozenset(reserved)

    @property
    def tools(self) -> list[Tool]:
        """Every server's tools, clashing names prefixed with the server's name."""
        return [tool for server in self.servers for tool in server.tools]

    def rename(self, _changed: MCPServer | None = None) -> None:
        """Choose every tool's name again, across all servers (after a tool list changed)."""
        specs = prefixed_names(
            ((server.name, tool) for server in self.servers for tool in server.mcp_tools), self.reserved
        )
        for server in self.servers:
            server.use_names([spec for spec in specs if spec.server == server.name])


@contextlib.asynccontextmanager
async def open_servers(servers: Sequence[MCPServer], reserved: Iterable[str] = ()) -> AsyncIterator[MCPServers]:
    """Open `servers` one after another (closing them all on the way out) and name their tools together.

    Args:
        servers: The servers, not yet opened.
        reserved: Names already taken by other tools (an MCP tool with such a name gets a prefix).

    Raises:
        MCPServerError: When a server fails to start; the ones already open are closed.
    """
    group = MCPServers(servers, reserved)
    async with contextlib.AsyncExitStack() as stack:
        for server in group.servers:
            await stack.enter_async_context(server)
        _unique_server_names(group.servers)
        for server in group.servers:
            server.on_tools_changed = group.rename
        group.rename()
        yield group


def _unique_server_names(servers: Sequence[MCPServer]) -> None:
    seen: dict[str, int] = {}
    for server in servers:
        count = seen.get(server.name, 0) + 1
        seen[server.name] = count
        if count > 1:
            server.name = f"{server.name}{count}"
