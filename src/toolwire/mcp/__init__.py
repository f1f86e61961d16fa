"""Tools from Model Context Protocol servers, and toolwire's standard tools served as one.

```python
from toolwire.mcp import MCPServer

async with MCPServer.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."]) as fs:
    result = await Agent(client, fs.tools, reviewer=ConsoleReviewer()).run("summarize README.md")
```

`server.tools` are ordinary `Tool`s: read-only ones (`readOnlyHint: true`) are low risk and run
concurrently, all others go through the agent's reviewer. `open_servers` opens several at once
and prefixes clashing names with the server's name (`fs__read_file`). A result over
`max_result_chars` reaches the model clipped, the whole kept in the run's tool-output cache; a
stdio server's message over `max_message_bytes` fails that one call. `serve_stdio` and
`serve_http` (the `toolwire mcp-server` command) offer the standard tools to any MCP client.
Built on the official `mcp` SDK (`pip install -e '.[mcp]'` in the checkout), loaded only when this package is.
"""

from __future__ import annotations

try:
    import mcp as _sdk  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "toolwire.mcp needs the official MCP SDK; from the toolwire checkout: pip install -e '.[mcp]'."
    ) from exc

from toolwire.mcp._client import DEFAULT_CALL_TIMEOUT, DEFAULT_START_TIMEOUT, MCPServer, MCPServerError
from toolwire.mcp._mapping import result_value, tool_risk
from toolwire.mcp._server_group import MCPServers, open_servers
from toolwire.mcp._stdio import DEFAULT_MAX_MESSAGE_BYTES
from toolwire.mcp._truncate import DEFAULT_MAX_RESULT_CHARS

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_START_TIMEOUT",
    "MCPServer",
    "MCPServerError",
    "MCPServers",
    "open_servers",
    "result_value",
    "tool_risk",
]
