"""MCP in the CLI: `--mcp "COMMAND ARGS…"`, `[[mcp]]` tables, and the `toolwire mcp-server` command.

The MCP servers named by flags and the settings file are opened on the command's event loop
before the agent is built, and closed when the command ends; their tools join the standard
tools (a clashing name gets the server's name as a prefix), with the two output-cache tools that
a clipped MCP result points to for the rest of it. A server that fails to start ends
the command with one line naming its command and the tail of its stderr (exit status 1).
Kept light: `toolwire.mcp` (and the `mcp` SDK) load only when a server is configured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolwire.cli._listening_socket import listening_socket
from toolwire.cli._settings import Settings, UsageError
from toolwire.config import McpServerSettings

if TYPE_CHECKING:
    from toolwire.cli._terminal import Loop
    from toolwire.mcp import MCPServer
    from toolwire.tools import Tool

__all__ = ["add_mcp_flag", "add_mcp_server_command", "mcp_server_command", "mcp_servers", "mcp_tools", "open_mcp"]

_FLAG_HELP = "tools from an MCP server run as COMMAND with ARGS (quote it as one word; repeatable)"

STANDARD_NAMES = (
    *("read", "write", "edit", "exec", "grep", "glob", "done", "write_todos"),
    *("tool_output_cache", "tool_output_cache_grep"),
)
"""Names the agent's own tools take; an MCP tool by one of these names gets its server's prefix."""


def add_mcp_flag(parser: argparse.ArgumentParser) -> None:
    """`--mcp "COMMAND ARGS…"`, repeatable, on `chat`, `run` and `tools`."""
    parser.add_argument("--mcp", action="append", default=None, metavar='"COMMAND ARGS"', help=_FLAG_HELP)


def add_mcp_server_command(parser: argparse.ArgumentParser) -> None:
    """The flags of `toolwire mcp-server`."""
    parser.add_argument("--root", type=Path, default=None, metavar="DIR", help="the folder the tools work in (.)")
    # Loopback only: `exec` runs commands, and MCP over HTTP has no key of its own here.
    http_help = "serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio (0: a free port, printed)"
    parser.add_argument("--http", type=int, default=None, metavar="PORT", help=http_help)


def mcp_servers(settings: Settings) -> list[McpServerSettings]:
    """The servers of the settings file's `[[mcp]]` tables, then those of the `--mcp` flags."""
    return list(settings.mcp_servers)


def _server(spec: McpServerSettings) -> MCPServer:
    from toolwire.mcp import MCPServer

    if spec.url is not None:
        return MCPServer.http(spec.url, dict(spec.headers), name=spec.name)
    assert spec.command is not None  # the settings file and the flag parser both ensure it
    return MCPServer.stdio(spec.command, spec.args, dict(spec.env) or None, name=spec.name)


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UsageError(
            "MCP servers need the mcp extra; from the toolwire checkout: pip install -e '.[mcp]'."
        ) from None


@contextlib.asynccontextmanager
async def open_mcp(specs: Sequence[McpServerSettings], reserved: Iterable[str]) -> Any:
    """Open the servers; yield their tools (none without servers, without loading the SDK)."""
    if not specs:
        yield []
        return
    _require_sdk()
    from toolwire.mcp import open_servers

    async with open_servers([_server(spec) for spec in specs], reserved) as group:
        yield group.tools


@contextlib.contextmanager
def mcp_tools(specs: Sequence[McpServerSettings], loop: Loop, reserved: Iterable[str]) -> Iterator[list[Tool]]:
    """The servers' tools and the cache tools, open on `loop` for as long as the block runs (runs share them)."""
    if not specs:
        yield []
        return
    from toolwire.cache import cache_tools

    stack = contextlib.AsyncExitStack()
    tools: list[Tool] = loop.run(stack.enter_async_context(open_mcp(specs, reserved)))
    try:
        yield [*tools, *cache_tools()]
    finally:
        with contextlib.suppress(Exception, KeyboardInterrupt):
            loop.run(stack.aclose())


def listed_tools(specs: Sequence[McpServerSettings], reserved: Iterable[str]) -> list[Tool]:
    """The servers' tools as they are named at start (the servers are closed again: for `toolwire tools`)."""
    if not specs:
        return []

    async def listing() -> list[Tool]:
        async with open_mcp(specs, reserved) as tools:
            return list(tools)

    return asyncio.run(listing())


def describe_tools(tools: Sequence[Tool]) -> list[dict[str, Any]]:
    """One entry per MCP tool: its name, risk and description's first line."""
    return [
        {"name": tool.name, "risk": tool.risk, "description": (tool.description or "").strip().split("\n", 1)[0]}
        for tool in tools
    ]


def mcp_server_command(settings: Settings, args: argparse.Namespace) -> int:
    """`toolwire mcp-server`: serve the standard tools over stdio, or streamable HTTP with --http."""
    _require_sdk()
    from toolwire.mcp._serve import serve_http, serve_stdio

    root = (args.root or Path.cwd()).resolve()
    if not root.is_dir():
        raise UsageError(f"--root {str(args.root)!r} is not a folder; pass an existing folder.")
    if args.http is None:
        asyncio.run(serve_stdio(root))
        return 0
    if not 0 <= args.http < 65536:
        raise UsageError(f"--http needs a port from 0 (any free one) to 65535, got {args.http}.")
    listening = listening_socket("127.0.0.1", args.http)  # a client that connects on reading the line waits
    port = listening.getsockname()[1]
    sys.stderr.write(f"toolwire: serving the standard tools in {root} at http://127.0.0.1:{port}/mcp\n")
    sys.stderr.flush()
    asyncio.run(serve_http(root, sock=listening))
    return 0
