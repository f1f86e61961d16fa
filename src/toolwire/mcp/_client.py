"""`MCPServer`: one connection to a Model Context Protocol server, its tools as toolwire `Tool`s.

The connection lives in a task of its own, which enters and leaves the `mcp` SDK's client (its
anyio task groups and cancel scopes stay in one task, whichever tasks call the tools). That task
also refreshes the tool list when the server sends `notifications/tools/list_changed`. A call
that outlives the per-call timeout, or meets a server that has gone away, becomes an `error`
result naming the server; cancelling a call sends `notifications/cancelled` (the SDK does).
A stdio server is read by toolwire's own transport (`_stdio`: linear in a message's size, one
message capped at `max_message_bytes`); a result reaches the model capped at `max_result_chars`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import mcp
from mcp import types
from mcp.shared.exceptions import MCPError

from toolwire.errors import ToolwireError
from toolwire.mcp._mapping import ToolPage, ToolSpec, build_tool, prefixed_names, safe_name, usable_tools
from toolwire.mcp._stdio import DEFAULT_MAX_MESSAGE_BYTES, MESSAGE_TOO_LARGE, stdio_transport
from toolwire.mcp._truncate import DEFAULT_MAX_RESULT_CHARS
from toolwire.tools import Tool, ToolError

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_START_TIMEOUT", "MCPServer", "MCPServerError"]

logger = logging.getLogger("toolwire.mcp")

DEFAULT_CALL_TIMEOUT = 120.0
"""Seconds one `tools/call` may take before it is cancelled and answered with an `error` result."""

DEFAULT_START_TIMEOUT = 60.0
"""Seconds for starting a server and its handshake: a first `npx` run downloads the package first."""
_STDERR_TAIL = 600
# The initialize handshake: every server speaks it, and on such a session the server sends
# `notifications/tools/list_changed` unasked (2026-07-28 sessions must subscribe first).
_MODE = "legacy"


class MCPServerError(ToolwireError):
    """An MCP server could not be started or reached (raised by `async with`, never by a tool call)."""


class MCPServer:
    """A connection to one MCP server; use `MCPServer.stdio(...)` or `MCPServer.http(...)`.

    ```python
    async with MCPServer.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."]) as fs:
        agent = Agent(client, fs.tools)
    ```

    Attributes:
        name: The server's name: prefixes clashing tool names and appears in error results.
        timeout: Seconds one call may take (`None`: no limit of its own).
        start_timeout: Seconds for starting the server and its MCP handshake (a first `npx` run
            downloads the package first).
        max_result_chars: Characters of one tool result the model sees; the whole result stays
            in the run's tool-output cache (`None`: no cap).
        max_message_bytes: The largest message a stdio server may send; a call whose answer is
            larger fails with an error saying so, and the server stays usable.
    """

    def __init__(
        self,
        target: mcp.StdioServerParameters | str,
        *,
        name: str | None,
        description: str,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_CALL_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        if max_result_chars is not None and max_result_chars < 1:
            raise ValueError(f"max_result_chars must be at least 1 or None, got {max_result_chars!r}.")
        if max_message_bytes < 1:
            raise ValueError(f"max_message_bytes must be at least 1, got {max_message_bytes!r}.")
        self._target = target
        self._headers = dict(headers or {})
        self._description = description
        self._given_name = name
        self.name = safe_name(name) if name else ""
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.max_result_chars = max_result_chars
        self.max_message_bytes = max_message_bytes
        self._specs: list[types.Tool] = []
        self._tools: list[Tool] = []
        self._client: mcp.Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._stale = asyncio.Event()
        self._stderr: IO[str] | None = None
        self.on_tools_changed: Callable[[MCPServer], None] | None = None

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        *,
        name: str | None = None,
        timeout: float | None = DEFAULT_CALL_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> MCPServer:
        """A server run as a child process, speaking MCP over its stdin and stdout.

        Args:
            command: The program (looked up on `PATH`).
            args: Its arguments.
            env: Extra environment variables (added to the SDK's safe default environment).
            cwd: The directory it runs in.
            name: The server's name (default: the name the server gives, else the program's).
            timeout: Seconds one call may take.
            start_timeout: Seconds for starting it and the MCP handshake.
            max_result_chars: Characters of one result the model sees (the rest: the output cache).
            max_message_bytes: The largest message it may send (default 32 MiB).
        """
        parameters = mcp.StdioServerParameters(
            command=command,
            args=list(args),
            env=dict(env) if env is not None else None,
            cwd=str(cwd) if cwd is not None else None,
        )
        description = shlex.join([command, *args])
        return cls(
            parameters,
            name=name,
            description=description,
            timeout=timeout,
            start_timeout=start_timeout,
            max_result_chars=max_result_chars,
            max_message_bytes=max_message_bytes,
        )

    @classmethod
    def http(
        cls,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        name: str | None = None,
        timeout: float | None = DEFAULT_CALL_TIMEOUT,
        start_timeout: float = DEFAULT_START_TIMEOUT,
        max_result_chars: int | None = DEFAULT_MAX_RESULT_CHARS,
    ) -> MCPServer:
        """A server reached over streamable HTTP at `url` (e.g. `http://127.0.0.1:8000/mcp`).

        Args:
            url: The MCP endpoint.
            headers: Sent with every request (e.g. `Authorization`).
            name: The server's name (default: the name the server gives).
            timeout: Seconds one call may take.
            start_timeout: Seconds for starting it and the MCP handshake.
            max_result_chars: Characters of one result the model sees (the rest: the output cache).
        """
        return cls(
            url,
            name=name,
            description=url,
            headers=headers,
            timeout=timeout,
            start_timeout=start_timeout,
            max_result_chars=max_result_chars,
        )

    def __repr__(self) -> str:
        return f"MCPServer(name={self.name!r}, {self._description!r})"

    @property
    def description(self) -> str:
        """The command line or URL, as error messages show it."""
        return self._description

    @property
    def tools(self) -> list[Tool]:
        """The server's tools as toolwire `Tool`s (refreshed when the server says the list changed)."""
        return list(self._tools)

    @property
    def mcp_tools(self) -> list[types.Tool]:
        """The tools exactly as the server listed them."""
        return list(self._specs)

    def use_names(self, specs: Sequence[ToolSpec]) -> None:
        """Rebuild `.tools` under the names chosen for this server's tools (see `open_servers`)."""
        label, cap = self._label(), self.max_result_chars
        self._tools = [build_tool(spec, self._call, server_label=label, max_result_chars=cap) for spec in specs]

    # lifecycle

    async def __aenter__(self) -> MCPServer:
        if self._task is not None:
            raise RuntimeError(f"{self!r} is already open; open it once.")
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready), name=f"toolwire-mcp-{self._description}")
        try:
            await ready
        except BaseException:
            await self._close()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._close()

    async def _close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)  # its failure was reported already
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """Open the connection, list the tools, then refresh them until asked to stop."""
        try:
            async with AsyncExitStack() as stack:
                client = mcp.Client(
                    await self._transport(stack), mode=_MODE, message_handler=self._on_message, cache=None
                )
                async with asyncio.timeout(self.start_timeout):
                    self._client = await stack.enter_async_context(client)
                    await self._refresh(client)
                ready.set_result(None)
                await self._watch(client)
        except BaseException as exc:  # a failed start goes to `__aenter__`; a later one is logged
            if not ready.done():
                ready.set_exception(self._start_error(exc))
            elif not isinstance(exc, Exception):
                raise
            else:
                logger.warning("MCP server %s stopped: %s", self._label(), exc)
        finally:
            self._client = None

    async def _transport(self, stack: AsyncExitStack) -> Any:
        if isinstance(self._target, str):
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=self._headers or None))
            return streamable_http_client(self._target, http_client=http)
        # A real file: the child writes its stderr there; the tail explains a failed start. Append
        # mode: the child shares the file offset, so reading the tail must not move its writes.
        self._stderr = tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace")
        return stdio_transport(self._target, self._stderr, max_message_bytes=self.max_message_bytes)

    async def _watch(self, client: mcp.Client) -> None:
        stop = asyncio.ensure_future(self._stop.wait())
        try:
            while not self._stop.is_set():
                stale = asyncio.ensure_future(self._stale.wait())
                await asyncio.wait({stop, stale}, return_when=asyncio.FIRST_COMPLETED)
                stale.cancel()
                if self._stale.is_set() and not self._stop.is_set():
                    self._stale.clear()
                    try:
                        await self._refresh(client)
                    except (MCPError, OSError) as exc:
                        logger.warning("MCP server %s: refreshing the tool list failed: %s", self._label(), exc)
        finally:
            stop.cancel()

    async def _refresh(self, client: mcp.Client) -> None:
        if not self.name:
            info = client.server_info
            self.name = safe_name(info.name if info is not None and info.name else self._fallback_name())
        listed = await self._list_tools(client)
        self._specs = listed
        if self.on_tools_changed is not None:
            self.on_tools_changed(self)  # a group renames across all its servers
        else:
            self.use_names(prefixed_names((self.name, t) for t in listed))

    async def _list_tools(self, client: mcp.Client) -> list[types.Tool]:
        """Every page of `tools/list`, each tool checked on its own; broken ones are skipped and logged.

        Not `client.list_tools()`: the SDK checks the whole result against the protocol, so one
        tool with a broken schema would refuse them all. The raw page comes from the session's
        dispatcher (the SDK's own seam for raw requests); an SDK without one is asked as usual.
        """
        dispatcher = getattr(client.session, "_dispatcher", None)
        if dispatcher is None:
            return list((await client.list_tools()).tools)
        listed: list[types.Tool] = []
        cursor: str | None = None
        while True:
            raw = await dispatcher.send_raw_request("tools/list", {"cursor": cursor} if cursor else None)
            page = ToolPage.model_validate(raw)
            usable, skipped = usable_tools(page.tools)
            for reason in skipped:
                logger.warning("MCP server %s: %s.", self._label(), reason)
            listed.extend(usable)
            cursor = page.next_cursor
            if not cursor:
                break
        # The session keeps each tool's output schema to check call results against it.
        absorb = getattr(client.session, "_absorb_tool_listing", None)
        if absorb is not None:
            absorb(types.ListToolsResult(tools=listed), complete=True)
        return listed

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._stale.set()

    # calls

    async def _call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        client = self._client
        if client is None:
            raise ToolError(
                f"MCP server {self._label()} is not running{self._stderr_note()}; tool {tool!r} did not run."
            )
        try:
            result = await client.call_tool(tool, arguments, read_timeout_seconds=self.timeout)
        except MCPError as exc:
            raise ToolError(self._call_failure(tool, exc)) from None
        except (OSError, RuntimeError, EOFError) as exc:
            raise ToolError(
                f"MCP server {self._label()} failed during tool {tool!r}: {exc}{self._stderr_note()}."
            ) from None
        if not isinstance(result, types.CallToolResult):
            raise ToolError(f"MCP server {self._label()} answered tool {tool!r} with a result toolwire cannot read.")
        return result

    def _call_failure(self, tool: str, exc: MCPError) -> str:
        code = exc.error.code
        if code == types.REQUEST_TIMEOUT:
            return (
                f"MCP server {self._label()} did not answer tool {tool!r} within {self.timeout:g} s; the call was "
                "cancelled. Try smaller inputs or another approach."
            )
        if code == types.CONNECTION_CLOSED:
            return f"MCP server {self._label()} went away during tool {tool!r}{self._stderr_note()}."
        if code == MESSAGE_TOO_LARGE:
            size = exc.error.data["size"] if isinstance(exc.error.data, dict) else "too many"
            return (
                f"MCP server {self._label()} answered tool {tool!r} with a message of {size} bytes, over the "
                f"cap of {self.max_message_bytes} bytes on one MCP message (max_message_bytes=); the answer was "
                "dropped. Ask for less at a time (a narrower query, a smaller page)."
            )
        return f"MCP server {self._label()} refused tool {tool!r}: {exc.error.message}"

    # naming and messages

    def _label(self) -> str:
        return f"{self.name!r} ({self._description})" if self.name else repr(self._description)

    def _fallback_name(self) -> str:
        if isinstance(self._target, str):
            return self._target.split("//", 1)[-1].split("/", 1)[0].split(":", 1)[0] or "mcp"
        return os.path.basename(self._target.command) or "mcp"

    def stderr_tail(self) -> str:
        """The end of what a stdio server wrote to stderr (empty for HTTP servers)."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - _STDERR_TAIL * 4))
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return " ".join(text.split())[-_STDERR_TAIL:]

    def _stderr_note(self) -> str:
        tail = self.stderr_tail()
        return f" (its stderr ended with: {tail})" if tail else ""

    def _start_error(self, exc: BaseException) -> MCPServerError:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # anyio task groups wrap the cause
            exc = exc.exceptions[0]
        if isinstance(exc, TimeoutError):
            reason = (
                f"it did not finish the MCP handshake within {self.start_timeout:g} s; "
                "raise start_timeout= if it is only slow"
            )
        elif isinstance(exc, FileNotFoundError):
            reason = "the command was not found"
        elif isinstance(exc, MCPError) and exc.error.code == types.CONNECTION_CLOSED:
            reason = "it closed the connection before the MCP handshake was over"
        elif isinstance(exc, MCPError):
            reason = exc.error.message
        else:
            reason = str(exc) or type(exc).__name__
        return MCPServerError(f"The MCP server {self._description!r} failed to start: {reason}{self._stderr_note()}.")
