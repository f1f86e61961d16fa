"""toolwire's standard tools as an MCP server (`toolwire mcp-server`), over stdio or streamable HTTP.

Each tool is offered with its JSON Schema and annotations from its risk: low-risk tools are
`readOnlyHint: true`, high-risk ones `readOnlyHint: false, destructiveHint: true`, so an MCP
client can decide what to confirm. File tools stay confined to the root (the `ROOT` dependency
of `toolwire.stdtools`): a path outside it comes back as an `isError` result. Built on the `mcp`
SDK's low-level `Server`; no JSON-RPC is written here.
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from toolwire.stdtools import ROOT, standard_tools
from toolwire.tools import Tool, ToolContext
from toolwire.types import ImagePart, TextPart, ToolResult

__all__ = ["build_server", "serve_http", "serve_stdio", "served_tools", "to_call_result"]

_INSTRUCTIONS = (
    "File and shell tools working in one folder. Paths are relative to that folder; paths outside it are refused."
)


def served_tools() -> list[Tool]:
    """The standard tools an MCP client gets: all but `done`, which only ends toolwire's own agent loop."""
    return [tool for tool in standard_tools() if tool.name != "done"]


def _annotations(tool: Tool) -> types.ToolAnnotations:
    low = tool.risk == "low"
    return types.ToolAnnotations(read_only_hint=low, destructive_hint=not low, open_world_hint=False)


def _listing(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name, description=tool.description, input_schema=tool.parameters, annotations=_annotations(tool)
    )


def build_server(root: Path, tools: Sequence[Tool] | None = None) -> Server[Any]:
    """An MCP server offering `tools` (default: `served_tools()`), file tools confined to `root`."""
    offered = list(tools) if tools is not None else served_tools()
    by_name = {tool.name: tool for tool in offered}
    listing = types.ListToolsResult(tools=[_listing(tool) for tool in offered])
    context = ToolContext(deps={ROOT.id: root})

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            known = ", ".join(by_name)
            return _error(f"Unknown tool {params.name!r}. Available tools: {known}.")
        result = await tool.execute_raw(dict(params.arguments or {}), context)
        return to_call_result(result)

    from toolwire import __version__

    return Server(
        "toolwire",
        version=__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """A toolwire result as MCP content: text, JSON (also as `structuredContent` when an object), images."""
    match result.kind:
        case "error":
            return _error(str(result.value))
        case "text":
            return types.CallToolResult(content=[types.TextContent(text=str(result.value))])
        case "multimodal":
            return types.CallToolResult(content=[_content(part) for part in result.value])
        case _:
            text = json.dumps(result.value, ensure_ascii=False)
            structured = result.value if isinstance(result.value, dict) else None
            return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def _content(part: TextPart | ImagePart) -> types.TextContent | types.ImageContent:
    if isinstance(part, TextPart):
        return types.TextContent(text=part.text)
    if part.data is not None:
        data = base64.b64encode(part.data).decode("ascii")
        return types.ImageContent(data=data, mime_type=part.media_type or "application/octet-stream")
    return types.TextContent(text=f"[image {part.url}]")


async def serve_stdio(root: Path) -> None:
    """Serve on this process's stdin and stdout until the client closes them."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(root)
    async with stdio_server() as (read, write):
        readable, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as group:
            group.start_soon(_answer_unreadable, read, readable, write)
            await server.run(inbound, write, server.create_initialization_options())


async def _answer_unreadable(read: Any, readable: Any, write: Any) -> None:
    """Pass readable messages on; answer a line that is not one as JSON-RPC says (the SDK drops it).

    Not JSON at all is `-32700 Parse error`; JSON that is no JSON-RPC message is `-32600 Invalid
    Request`. Either has `id: null`: the id of what could not be read is not known.
    """
    async with readable:
        async for item in read:
            if not isinstance(item, Exception):
                await readable.send(item)
                continue
            unparsed = isinstance(item, ValidationError) and item.errors()[0]["type"] == "json_invalid"
            code, message = (
                (types.PARSE_ERROR, "Parse error") if unparsed else (types.INVALID_REQUEST, "Invalid Request")
            )
            error = types.JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))
            await write.send(SessionMessage(error))


async def serve_http(
    root: Path, *, host: str = "127.0.0.1", port: int = 8000, sock: socket.socket | None = None
) -> None:
    """Serve streamable HTTP at `http://host:port/mcp` (loopback by default) until interrupted.

    `sock`, already bound, is served instead of binding `host:port` (a caller that must name the
    port before serving binds port 0 itself).
    """
    import uvicorn

    if sock is not None:
        host = str(sock.getsockname()[0])
    app = build_server(root).streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock] if sock is not None else None)
