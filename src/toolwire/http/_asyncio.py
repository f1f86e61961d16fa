"""httpx2's connections on asyncio's own transports, without anyio's per-call cancel scopes.

httpcore2 reads and writes through anyio by default. On a gateway hop that is most of the time
an upstream request takes: every write enters a cancel scope (`fail_after`) and yields to the
event loop, every read enters another, and a request is a headers write, a body write and a few
reads. Measured inside `toolwire serve` (bench/gateway/README.md, "What the profile showed"): 1.7 ms from
sending a request to holding its reply's headers, against 0.1 ms for the upstream to answer.

This backend keeps httpcore2's pool, HTTP/1.1 parser and httpx2's API, and replaces only the
socket layer with an `asyncio.Protocol`: a write is `transport.write` (awaiting only when the
transport asks for back-pressure), a read returns what has already arrived and waits, with one
`asyncio.timeout`, only when nothing has. Errors are httpcore2's own types, so httpx2 maps them
as it maps anyio's (`ConnectTimeout`, `ReadError`, ...).

Where httptools is installed (the `serve` extra), `toolwire.http._http1` carries the requests and this
transport only what it hands on (HEAD, CONNECT); without httptools, it carries them all.

Imports only httpcore2, httpx2 and the standard library.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from collections.abc import Iterable
from typing import Any, cast

import httpcore2
import httpx2

__all__ = ["AsyncioBackend", "FlowProtocol", "asyncio_transport", "connect_failure"]

# Stop reading from the socket while this much is waiting for the reader (back-pressure).
_READ_HIGH_WATER = 1 << 20


class FlowProtocol(asyncio.Protocol):
    """A connection's protocol with the write side's back-pressure: writers wait while the transport asks."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.eof = False
        self.error: BaseException | None = None
        self.write_paused = False  # the transport asked for back-pressure
        self._writable: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport subclasses

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        self._free_writer()

    async def drained(self) -> None:
        while self.write_paused and self.error is None and not self.eof:
            self._writable = asyncio.get_running_loop().create_future()
            try:
                await self._writable
            finally:
                self._writable = None

    def _free_writer(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)


class _Buffer(FlowProtocol):
    """What arrived on one connection and not yet read, and whether the peer has closed."""

    def __init__(self) -> None:
        super().__init__()
        self.data = bytearray()
        self._reader: asyncio.Future[None] | None = None
        self._reading_paused = False

    def data_received(self, data: bytes) -> None:
        self.data += data
        if len(self.data) > _READ_HIGH_WATER and self.transport is not None and not self._reading_paused:
            self.transport.pause_reading()
            self._reading_paused = True
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake_reader()
        self._free_writer()

    def take(self, max_bytes: int) -> bytes:
        chunk = bytes(self.data[:max_bytes])
        del self.data[:max_bytes]
        if self._reading_paused and len(self.data) <= _READ_HIGH_WATER and self.transport is not None:
            self.transport.resume_reading()
            self._reading_paused = False
        return chunk

    async def arrival(self) -> None:
        self._reader = asyncio.get_running_loop().create_future()
        try:
            await self._reader
        finally:
            self._reader = None

    def _wake_reader(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)


class _Stream(httpcore2.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, buffer: _Buffer) -> None:
        self._transport = transport
        self._buffer = buffer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        buffer = self._buffer
        if not buffer.data and not buffer.eof:
            try:
                async with asyncio.timeout(timeout):
                    while not buffer.data and not buffer.eof:
                        await buffer.arrival()
            except TimeoutError:
                raise httpcore2.ReadTimeout(f"no data within {timeout}s") from None
        if buffer.data:
            return buffer.take(max_bytes)
        if buffer.error is not None:
            raise httpcore2.ReadError(str(buffer.error) or type(buffer.error).__name__)
        return b""

    async def write(self, data: bytes, timeout: float | None = None) -> None:
        if not data:
            return
        buffer = self._buffer
        if buffer.error is not None or self._transport.is_closing():
            raise httpcore2.WriteError(str(buffer.error or "the connection is closed"))
        self._transport.write(data)
        if buffer.write_paused:
            try:
                async with asyncio.timeout(timeout):
                    await buffer.drained()
            except TimeoutError:
                raise httpcore2.WriteTimeout(f"could not write within {timeout}s") from None

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            upgraded = await loop.start_tls(
                self._transport,
                self._buffer,
                ssl_context,
                server_hostname=server_hostname,
                ssl_handshake_timeout=timeout,
            )
        except TimeoutError:
            self._transport.close()
            raise httpcore2.ConnectTimeout(f"TLS handshake not done within {timeout}s") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.close()
            raise httpcore2.ConnectError(str(exc)) from exc
        if upgraded is None:  # the connection closed during the handshake
            raise httpcore2.ConnectError("the connection closed during the TLS handshake")
        self._buffer.transport = upgraded
        return _Stream(upgraded, self._buffer)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # an idle connection with data or an end waiting is no longer usable
            return bool(self._buffer.data) or self._buffer.eof or self._transport.is_closing()
        key = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        try:
            return self._transport.get_extra_info(key)
        except AttributeError:  # asyncio's TLS transport, once closed, has lost what it would ask
            return None


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    """httpcore2's network backend on asyncio transports (the event loop's own, uvloop's too)."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        local = None if local_address is None else (local_address, 0)
        loop = asyncio.get_running_loop()
        opening = loop.create_connection(_Buffer, host, port, local_addr=local)
        return await self._connect(opening, host, timeout, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        return await self._connect(loop.create_unix_connection(_Buffer, path), path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    async def _connect(
        self,
        opening: Any,
        host: str,
        timeout: float | None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None,
    ) -> _Stream:
        try:
            async with asyncio.timeout(timeout):
                transport, buffer = await opening
        except TimeoutError:
            raise httpcore2.ConnectTimeout(f"not connected within {timeout}s") from None
        except OSError as exc:
            raise httpcore2.ConnectError(connect_failure(exc, host)) from exc
        sock: socket.socket | None = transport.get_extra_info("socket")
        if sock is not None:
            for option in socket_options or ():
                sock.setsockopt(*option)
        return _Stream(transport, buffer)


def connect_failure(exc: OSError, host: str) -> str:
    """Why a connection could not be made, in words (asyncio's say "Connect call failed (addr)")."""
    if isinstance(exc, socket.gaierror):  # its errno is the resolver's, which os.strerror does not know
        return f"cannot resolve {host}: {exc.strerror}"
    return os.strerror(exc.errno) if exc.errno else str(exc)


def asyncio_transport(*, verify: ssl.SSLContext, limits: httpx2.Limits) -> httpx2.AsyncHTTPTransport:
    """httpx2's transport with its connection pool on `AsyncioBackend` (what `AsyncClient` makes, otherwise)."""
    transport = httpx2.AsyncHTTPTransport(verify=verify, limits=limits)
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=verify,
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=AsyncioBackend(),
    )
    return transport
