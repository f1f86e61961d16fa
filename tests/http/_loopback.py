"""A loopback HTTP/1.1 server whose handler reads and writes the raw bytes, for the transports' tests."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

__all__ = ["Handler", "read_message", "read_request", "reply", "server"]

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def server(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    handling: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handling.add(asyncio.current_task())  # type: ignore[arg-type]
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    listening = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=tls)
    try:
        yield listening.sockets[0].getsockname()[1]
    finally:
        listening.close()
        for task in handling:
            task.cancel()
        await asyncio.gather(*handling, return_exceptions=True)


async def read_message(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request's head and body (a `content-length` one, or none)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lengths = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
    length = lengths[0] if lengths else 0
    return head, await reader.readexactly(length)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    return (await read_message(reader))[1]


def reply(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
