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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mcp import types
from mcp.server.lowlevel import Server

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
    from mcp.server.stdio import stdio_server

    server = build_server(root)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(root: Path, *, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve streamable HTTP at `http://host:port/mcp` (loopback by default) until interrupted."""
    import uvicorn

    app = build_server(root).streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
