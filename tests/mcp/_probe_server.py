"""An MCP server on the official SDK for what the reference servers cannot show on demand.

`wait` blocks until the client cancels it and writes `started <id>` / `cancelled <id>` to the
file named by `PROBE_LOG`; `add_tool` adds a tool and sends `notifications/tools/list_changed`.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("probe")
LOG = Path(os.environ.get("PROBE_LOG", os.devnull))


def _log(line: str) -> None:
    with LOG.open("a", encoding="utf-8") as file:
        file.write(line + "\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def wait(tag: str) -> str:
    """Wait until cancelled."""
    _log(f"started {tag}")
    try:
        await anyio.sleep_forever()
    except anyio.get_cancelled_exc_class():
        _log(f"cancelled {tag}")
        raise
    return "never"


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
async def add_tool(name: str, ctx: Context) -> str:
    """Add a read-only tool called `name` and tell the client the list changed."""

    def added() -> str:
        return f"{name} ran"

    read_only = ToolAnnotations(read_only_hint=True)
    server.add_tool(added, name=name, description="Added at run time.", annotations=read_only)
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


if __name__ == "__main__":
    server.run("stdio")
