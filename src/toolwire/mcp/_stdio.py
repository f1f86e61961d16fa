"""The stdio transport for MCP servers run as child processes: linear in a message's size, and capped.

The SDK's `stdio_client` re-joins its whole buffer with every chunk it reads, so one long line
costs quadratic time (a 100 MB tool result was not delivered in 90 s, and stalled the event
loop for most of a second at a time). This reader splits bytes with `LineSplitter` and parses
each message once, on the event loop (the parser holds the GIL, so a thread would not free the
loop; the cap bounds the stall, about 0.1 s for 32 MiB). A message over `max_message_bytes` is
dropped up to its newline without being held in memory, and the request it answers fails with
`MESSAGE_TOO_LARGE` (its `data` holds the size and the cap); the session stays open.

Everything else is the SDK's, by its own functions: the child runs in its own process group
(session) with stderr to `errlog`, and shutdown closes stdin, waits, then kills the whole tree,
shielded from cancellation. Those functions are private to `mcp.client.stdio`; the `mcp<3`
pin in pyproject.toml holds them still.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from typing import TextIO

import anyio
import anyio.lowlevel
from mcp import StdioServerParameters, types
from mcp.client._transport import TransportStreams
from mcp.client.stdio import (
    _aclose_all,
    _create_platform_compatible_process,
    _drain_stdout,
    _get_executable_command,
    _stop_server_process,
    get_default_environment,
)
from mcp.os.win32.utilities import ServerProcess
from mcp.shared.message import SessionMessage

from toolwire.mcp._ndjson import LineSplitter, Oversize, answered_id

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "MESSAGE_TOO_LARGE", "stdio_transport"]

logger = logging.getLogger("toolwire.mcp")

DEFAULT_MAX_MESSAGE_BYTES = 32 << 20
"""The largest message (one line) a stdio MCP server may send: 32 MiB."""

MESSAGE_TOO_LARGE = -32010
"""The error a request gets when its answer was over the cap (implementation-defined JSON-RPC range)."""

_WRITER_FLUSH_TIMEOUT = 0.5  # as the SDK's stdio_client


class _Pending:
    """The ids of our requests the server has not answered yet (to fail the one a dropped message answered)."""

    def __init__(self) -> None:
        self.ids: set[Hashable] = set()

    def sent(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCRequest):
            self.ids.add(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            self.ids.discard((message.params or {}).get("requestId"))

    def received(self, message: types.JSONRPCMessage) -> None:
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            self.ids.discard(message.id)


@asynccontextmanager
async def stdio_transport(
    server: StdioServerParameters, errlog: TextIO, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
) -> AsyncIterator[TransportStreams]:
    """Start `server` and yield the `(read, write)` streams `mcp.Client` and `ClientSession` take."""
    splitter = LineSplitter(max_message_bytes)  # checks the cap before a process starts
    process = await _create_platform_compatible_process(
        command=await _get_executable_command(server.command),
        args=server.args,
        env=get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # As in the SDK: no await between the spawn and the task group, or a cancellation would leak the process.
    pipes = _Pipes(process, server, splitter)
    async with anyio.create_task_group() as group:
        group.start_soon(pipes.read_stdout)
        group.start_soon(pipes.write_stdin)
        try:
            yield pipes.read_stream, pipes.write_stream
        finally:
            pipes.closing = True
            with anyio.CancelScope(shield=True):  # bounded waits: the server must not outlive us
                await pipes.shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


class _Pipes:
    """The child's stdout and stdin bridged to the session's memory streams (the SDK's shape)."""

    def __init__(self, process: ServerProcess, server: StdioServerParameters, splitter: LineSplitter) -> None:
        self.process = process
        self.server = server
        self.splitter = splitter
        self.read_writer, self.read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        self.write_stream, self.write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        self.pending = _Pending()
        self.writer_done = anyio.Event()
        self.closing = False

    async def read_stdout(self) -> None:
        assert self.process.stdout is not None  # spawned with pipes
        try:
            async with self.read_writer:
                try:
                    async for chunk in self.process.stdout:
                        for line in self.splitter.feed(chunk):
                            try:
                                await self._deliver(line)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session is gone; only the drain below remains
                finally:
                    await _drain_stdout(self.process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed stdout under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not self.closing:
                logger.exception("Reading from the MCP server's stdout failed mid-session")

    async def _deliver(self, line: bytes | Oversize) -> None:
        if isinstance(line, Oversize):
            failure = _too_large(line, self.pending, self.splitter.limit)
            if failure is not None:
                await self.read_writer.send(SessionMessage(failure))
            return
        if not line.strip():
            return
        parsed = _parse(line, self.server)
        if isinstance(parsed, SessionMessage):
            self.pending.received(parsed.message)
        await self.read_writer.send(parsed)

    async def write_stdin(self) -> None:
        assert self.process.stdin is not None  # spawned with pipes
        encoding, errors = self.server.encoding, self.server.encoding_error_handler
        try:
            async with self.write_reader:
                async for session_message in self.write_reader:
                    self.pending.sent(session_message.message)
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await self.process.stdin.send((text + "\n").encode(encoding, errors))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await self.read_writer.aclose()  # the session sees the connection end instead of waiting forever
        finally:
            self.writer_done.set()

    async def shutdown(self) -> None:
        """Stop traffic, let the writer flush, stop the server (the SDK's escalation), close the streams."""
        self.read_stream.close()  # the reader goes to its drain, so a server stuck writing can read stdin
        self.write_stream.close()
        with anyio.move_on_after(_WRITER_FLUSH_TIMEOUT):
            await self.writer_done.wait()
        await _stop_server_process(self.process)
        await _aclose_all(self.read_stream, self.write_stream, self.read_writer, self.write_reader)
        await anyio.lowlevel.checkpoint()


def _parse(line: bytes, server: StdioServerParameters) -> SessionMessage | Exception:
    """One message, or the parse error as a value for the session to surface (as the SDK does)."""
    try:
        text = line.decode(server.encoding, server.encoding_error_handler)
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except ValueError as exc:
        logger.warning("An MCP server sent a line that is not a JSON-RPC message: %s", str(exc).splitlines()[0])
        return exc


def _too_large(line: Oversize, pending: _Pending, cap: int) -> types.JSONRPCError | None:
    """The error for the request a dropped message answered; `None` (and a warning) when unknown."""
    request_id = answered_id(line, pending.ids)
    if request_id is None:
        logger.warning(
            "An MCP server sent a message of %d bytes, over the cap of %d bytes; it was dropped (it answered "
            "no single request toolwire is waiting for).",
            line.size,
            cap,
        )
        return None
    pending.ids.discard(request_id)
    message = f"the server's answer was {line.size} bytes, over the cap of {cap} bytes on one message"
    error = types.ErrorData(code=MESSAGE_TOO_LARGE, message=message, data={"size": line.size, "cap": cap})
    assert isinstance(request_id, int | str)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
