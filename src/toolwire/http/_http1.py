"""HTTP/1.1 for httpx2, parsed by httptools in the socket's own callback.

On a gateway hop the upstream answers in ~0.1 ms, and httpcore2 took ~0.7 ms more to hand over the
first body bytes: h11, its pure-Python parser, builds and checks an event object per header block
and body piece, behind a few layers of pool and trace bookkeeping (bench/gateway/README.md, "Where the first
byte goes"). httptools (llhttp, the parser Node.js and uvicorn use, already in the `serve` extra)
parses each arrival as it comes off the socket, so a response's head and body are waiting for the
reader when it asks. The connection pool is toolwire's, with httpx2's `Limits`; requests it does
not carry (HEAD, CONNECT, other schemes) go to the httpcore2 transport given as the fallback.

Imports only httpx2, httptools, the asyncio backend's protocol (`_asyncio`) and the standard library.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

import httptools
import httpx2

from toolwire.http._asyncio import FlowProtocol, connect_failure

__all__ = ["Http1Transport"]

# Stop reading from the socket while this much body is waiting for the reader (back-pressure).
_READ_HIGH_WATER = 1 << 20
# A reply whose end marker was read may end its body this much later (the chunked terminator in
# the next packet) and still keep its connection; a body that goes on for longer, or for more
# bytes than this, was not ending: its connection is closed, as before.
_SETTLE_SECONDS = 1.0
_SETTLE_BYTES = 64 * 1024
_CHECKED_LINES = 512  # header lines a transport keeps as checked (see `_request_head`)
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(rb"[^\x00\r\n]*")
_TARGET = re.compile(rb"[\x21-\x7e]+")
_DELEGATED = frozenset({b"HEAD", b"CONNECT"})  # a bodiless reply to HEAD, a tunnel: the fallback knows them

Origin = tuple[str, str, int]


class _Wire(FlowProtocol):
    """One connection: the response being parsed off it, and whether it can carry another request."""

    def __init__(self, origin: Origin) -> None:
        super().__init__()
        self.origin = origin
        self.parser = httptools.HttpResponseParser(self)
        self.busy = False
        self.last = False  # the request asked the server to close the connection after its response
        self.idle_since = 0.0
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.has_head = False
        self.complete = False
        self.keep_alive = False
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.received = 0  # body bytes of the current response
        self._informational = False
        self._waiter: asyncio.Future[None] | None = None
        self._reading_paused = False
        self._settled: Callable[[], None] | None = None  # see `settle`
        self._settle_timer: asyncio.TimerHandle | None = None

    # --- asyncio.Protocol ---

    def data_received(self, data: bytes) -> None:
        if not self.busy or self.complete:  # bytes nobody asked for: this connection cannot be trusted again
            self._fail(httpx2.RemoteProtocolError("the server sent data that answers no request"))
            return
        try:
            self.parser.feed_data(data)
            self._wake()  # once for all the piece held (the callbacks below only record it)
        except httptools.HttpParserUpgrade:
            self._fail(httpx2.RemoteProtocolError("the server switched protocols, which was not asked for"))
        except httptools.HttpParserError as exc:
            self._fail(httpx2.RemoteProtocolError(f"malformed HTTP response: {exc}"))

    def eof_received(self) -> bool:
        self.eof = True
        if self.has_head and not self.complete and self._ends_at_close():
            self.complete = True  # a body without length or chunks ends where the connection does
        self._wake()
        self._settle_now()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        if exc is not None and self.error is None:
            self.error = exc
        if self.has_head and not self.complete and self.error is None and self._ends_at_close():
            self.complete = True
        self._wake()
        self._free_writer()
        self._settle_now()

    # --- httptools callbacks (after a failure llhttp may go on through the same chunk: ignored) ---

    def on_message_begin(self) -> None:
        if self.complete:  # a second response in the bytes that ended the first
            self._fail(httpx2.RemoteProtocolError("the server sent data that answers no request"))

    def on_status(self, status: bytes) -> None:
        self.reason += status

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.error is not None:
            return
        self.status = self.parser.get_status_code()
        if 100 <= self.status < 200:  # 100 Continue, 103 Early Hints: the final response follows
            self._informational = True
            self.headers = []
            self.reason = b""
            return
        self.has_head = True
        self._wake()

    def on_body(self, body: bytes) -> None:
        if self.error is not None:
            return
        if self._settled is not None:  # the rest of a finished reply: nobody reads it
            self.received += len(body)
            if self.received > _SETTLE_BYTES:
                self._fail(httpx2.RemoteProtocolError("the reply went on after its end"))
            return
        self.chunks.append(body)
        self.buffered += len(body)
        self.received += len(body)
        if self.buffered > _READ_HIGH_WATER and self.transport is not None and not self._reading_paused:
            self.transport.pause_reading()
            self._reading_paused = True

    def on_message_complete(self) -> None:
        if self.error is not None:
            return
        if self._informational:
            self._informational = False
            return
        self.keep_alive = self.parser.should_keep_alive()
        self.complete = True
        self._wake()
        self._settle_now()

    # --- used by the transport ---

    def start(self) -> None:
        """Make the connection ready for a new exchange (a new parser: llhttp keeps no state between them)."""
        self.busy = True
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.reason = b""
        self.headers = []
        self.has_head = self.complete = self.keep_alive = self.last = False
        self.received = 0

    def reusable(self) -> bool:
        ended = self.last or self.eof or self._closing()
        return self.complete and self.keep_alive and not self.chunks and not ended

    def usable(self, now: float, expiry: float | None) -> bool:
        fresh = expiry is None or now - self.idle_since < expiry
        return fresh and self.error is None and not self.eof and not self._closing()

    def take(self) -> bytes:
        chunk = self.chunks.popleft() if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        if self._reading_paused and self.transport is not None:
            self.transport.resume_reading()
            self._reading_paused = False
        return chunk

    def settle(self, then: Callable[[], None]) -> None:
        """Read and drop the rest of this response, then `then()`: once it ends, fails, or `_SETTLE_SECONDS` pass.

        For a reply whose reader has all it wanted: `then` pools the connection if the body
        ended whole, and closes it otherwise.
        """
        self.chunks.clear()
        self.received = 0
        self.take()  # reading resumes, if it was paused
        self._settled = then
        if self.complete or self.error is not None or self.eof:
            self._settle_now()
        else:
            self._settle_timer = asyncio.get_running_loop().call_later(_SETTLE_SECONDS, self._settle_now)

    def _settle_now(self) -> None:
        then, self._settled = self._settled, None
        if self._settle_timer is not None:
            self._settle_timer.cancel()
            self._settle_timer = None
        if then is not None:
            then()

    async def wait(self, timeout: float | None, what: str) -> None:
        """Until something arrives; `httpx2.ReadTimeout` after `timeout` seconds of nothing."""
        # A timer rather than `asyncio.timeout`: this runs once per piece of every body, and the
        # scope's bookkeeping (the current task, its cancel counts) showed in every stream's profile.
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = None if timeout is None else loop.call_later(timeout, _expire, waiter, timeout, what)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    async def write(self, data: bytes, timeout: float | None) -> None:
        if self.error is not None or self.transport is None or self._closing():
            raise httpx2.WriteError(str(self.error or "the connection is closed"))
        self.transport.write(data)
        if not self.write_paused:
            return
        try:
            async with asyncio.timeout(timeout):
                await self.drained()
        except TimeoutError:
            raise httpx2.WriteTimeout(f"could not write within {timeout}s") from None

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def failure(self) -> Exception:
        """What to raise for a connection that ended before its response did."""
        if isinstance(self.error, httpx2.HTTPError):
            return self.error
        if self.error is not None:
            return httpx2.ReadError(str(self.error) or type(self.error).__name__)
        if not self.has_head:
            return httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        length = next((v for n, v in self.headers if n.lower() == b"content-length"), None)
        # h11's words, which toolwire's errors have always quoted
        how = "incomplete chunked read" if length is None else f"received {self.received} bytes, expected {int(length)}"
        return httpx2.RemoteProtocolError(f"peer closed connection without sending complete message body ({how})")

    def _ends_at_close(self) -> bool:
        names = {name.lower() for name, _ in self.headers}
        chunked = any(n.lower() == b"transfer-encoding" and b"chunked" in v.lower() for n, v in self.headers)
        return b"content-length" not in names and not chunked

    def _fail(self, error: Exception) -> None:
        self.error = error
        self.close()
        self._wake()
        self._settle_now()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _closing(self) -> bool:
        return self.transport is None or self.transport.is_closing()


def _expire(waiter: asyncio.Future[None], timeout: float, what: str) -> None:
    if not waiter.done():
        waiter.set_exception(httpx2.ReadTimeout(f"no {what} within {timeout}s"))


class _Body(httpx2.AsyncByteStream):
    """A response body read off its connection; the connection goes back to the pool once it is whole."""

    def __init__(self, pool: Http1Transport, wire: _Wire, timeout: float | None) -> None:
        self._pool = pool
        self._wire = wire
        self._timeout = timeout
        self._done = False
        self._keep = False

    def keep_connection(self) -> None:
        """The reader has the whole reply (its end marker): closed early, the connection is still pooled.

        The rest of the body (a chunked terminator that comes in the next packet) is read and
        dropped as it arrives; the connection goes back to the pool once it ends. Without this,
        closing a half-read body closes the connection: what stops an upstream mid-reply.
        """
        self._keep = True

    async def __aiter__(self) -> AsyncIterator[bytes]:
        wire = self._wire
        try:
            while True:
                if wire.chunks:
                    yield wire.take()
                elif wire.complete:
                    break
                elif wire.eof or wire.error is not None:
                    raise wire.failure()
                else:
                    await wire.wait(self._timeout, "response data")
        except BaseException:
            self._finish()
            raise
        self._finish()

    async def aclose(self) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            wire = self._wire
            if self._keep and not wire.complete:
                wire.settle(lambda: self._pool.release(wire))
            else:
                self._pool.release(wire)


class _NetworkStream:
    """`response.extensions["network_stream"]`: what the connection's transport knows (peer, TLS)."""

    def __init__(self, wire: _Wire) -> None:
        self._wire = wire

    def get_extra_info(self, info: str) -> Any:
        transport = self._wire.transport
        key = {"client_addr": "sockname", "server_addr": "peername"}.get(info, info)
        return None if transport is None else transport.get_extra_info(key)


class Http1Transport(httpx2.AsyncBaseTransport):
    """httpx2's transport for HTTP/1.1 over TCP or TLS, with a keep-alive pool per event loop's client."""

    def __init__(self, *, verify: ssl.SSLContext, limits: httpx2.Limits, fallback: httpx2.AsyncBaseTransport) -> None:
        self._ssl = verify
        self._limits = limits
        self._fallback = fallback
        self._idle: list[_Wire] = []  # oldest first
        self._open = 0
        self._wires: set[_Wire] = set()
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._closed = False
        self._lines: dict[tuple[bytes, bytes], bytes] = {}  # header lines already checked (`_request_head`)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        method = request.method.encode("ascii", "replace")  # anything not ASCII fails the token check below
        if url.scheme not in ("http", "https") or method in _DELEGATED:
            return await self._fallback.handle_async_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        head = _request_head(method, url.raw_path, request.headers.raw, self._lines)
        return await self._exchange(
            url, timeouts, request.headers.raw, lambda wire: self._send(wire, head, request, timeouts.get("write"))
        )

    async def post(
        self,
        url: httpx2.URL,
        headers: Sequence[tuple[bytes, bytes]],
        content: bytes,
        timeouts: Mapping[str, float | None],
    ) -> httpx2.Response:
        """POST `content` with `headers` as they are (`Host` included), without an `httpx2.Request`.

        What `handle_async_request` does for a built request; toolwire's own requests skip
        building one (its headers normalized, its body wrapped in a stream).
        """
        data = _request_head(b"POST", url.raw_path, headers, self._lines) + content
        return await self._exchange(url, timeouts, headers, lambda wire: wire.write(data, timeouts.get("write")))

    async def _exchange(
        self,
        url: httpx2.URL,
        timeouts: Mapping[str, float | None],
        headers: Sequence[tuple[bytes, bytes]],
        send: Callable[[_Wire], Awaitable[None]],
    ) -> httpx2.Response:
        """Send a request on a pooled connection (`send` writes it) and hand back its response's head."""
        if self._closed:
            raise RuntimeError("the transport is closed")  # httpx2 says so before it gets here
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        wire = await self._acquire(origin, timeouts)
        try:
            await send(wire)
            while not wire.has_head:
                if wire.eof or wire.error is not None:
                    raise wire.failure()
                await wire.wait(timeouts.get("read"), "response")
        except BaseException:
            self._discard(wire)
            raise
        # llhttp's keep-alive verdict reads the response; a request saying `connection: close` ends it too.
        wire.last = any(n.lower() == b"connection" and v.lower() == b"close" for n, v in headers)
        return httpx2.Response(
            wire.status,
            headers=wire.headers,
            stream=_Body(self, wire, timeouts.get("read")),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": wire.reason,
                "network_stream": _NetworkStream(wire),
            },
        )

    async def aclose(self) -> None:
        self._closed = True
        for wire in list(self._wires):
            wire.close()
        self._idle.clear()
        await self._fallback.aclose()

    def release(self, wire: _Wire) -> None:
        """Back to the pool if it finished cleanly, else closed."""
        if wire not in self._wires:
            return
        most_idle = self._limits.max_keepalive_connections
        if not wire.reusable() or self._closed or (most_idle is not None and len(self._idle) >= most_idle):
            self._discard(wire)
            return
        wire.busy = False
        wire.idle_since = time.monotonic()
        self._idle.append(wire)
        self._wake_one()

    def _discard(self, wire: _Wire) -> None:
        wire.close()
        if wire in self._wires:
            self._wires.discard(wire)
            self._open -= 1
            if wire in self._idle:
                self._idle.remove(wire)
            self._wake_one()

    async def _acquire(self, origin: Origin, timeouts: Mapping[str, float | None]) -> _Wire:
        ends_at = None if timeouts.get("pool") is None else time.monotonic() + cast(float, timeouts["pool"])
        while True:
            now = time.monotonic()
            for wire in reversed(self._idle):  # the most recently used first: the likeliest to be alive
                if wire.origin == origin:
                    self._idle.remove(wire)
                    if wire.usable(now, self._limits.keepalive_expiry):
                        wire.start()
                        return wire
                    self._discard(wire)
                    break
            else:
                most = self._limits.max_connections
                if most is None or self._open < most:
                    return await self._connect(origin, timeouts.get("connect"))
                if self._idle:  # room taken by idle connections to other hosts: give the oldest one up
                    self._discard(self._idle[0])
                    continue
                await self._queue(ends_at)
                continue

    async def _queue(self, ends_at: float | None) -> None:
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            async with asyncio.timeout(None if ends_at is None else max(0.0, ends_at - time.monotonic())):
                await waiter
        except BaseException as exc:
            if waiter in self._waiting:
                self._waiting.remove(waiter)
            elif waiter.done() and not waiter.cancelled():
                self._wake_one()  # woken and cancelled in the same step: the next one in line takes the turn
            if isinstance(exc, TimeoutError):
                raise httpx2.PoolTimeout("no connection became free in time") from None
            raise

    def _wake_one(self) -> None:
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def _connect(self, origin: Origin, timeout: float | None) -> _Wire:
        scheme, host, port = origin
        wire = _Wire(origin)
        self._open += 1
        self._wires.add(wire)
        loop = asyncio.get_running_loop()
        tls: dict[str, Any] = {}
        if scheme == "https":
            self._ssl.set_alpn_protocols(["http/1.1"])
            tls = {"ssl": self._ssl, "server_hostname": host}
        try:
            async with asyncio.timeout(timeout):
                await loop.create_connection(lambda: wire, host, port, **tls)
        except BaseException as exc:
            self._discard(wire)
            if isinstance(exc, TimeoutError):
                raise httpx2.ConnectTimeout(f"not connected to {host}:{port} within {timeout}s") from None
            if isinstance(exc, ssl.SSLError):
                raise httpx2.ConnectError(str(exc)) from exc
            if isinstance(exc, OSError):
                raise httpx2.ConnectError(connect_failure(exc, host)) from exc
            raise
        wire.start()
        return wire

    async def _send(self, wire: _Wire, head: bytes, request: httpx2.Request, timeout: float | None) -> None:
        stream = request.stream
        if isinstance(stream, httpx2.ByteStream):  # the whole body is at hand: one write with the head
            await wire.write(head + b"".join(stream), timeout)
            return
        chunked = any(n.lower() == b"transfer-encoding" for n, _ in request.headers.raw)
        await wire.write(head, timeout)
        async for part in cast(httpx2.AsyncByteStream, stream):
            if part:
                await wire.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part, timeout)
        if chunked:
            await wire.write(b"0\r\n\r\n", timeout)


def _request_head(
    method: bytes, target: bytes, headers: Sequence[tuple[bytes, bytes]], checked: dict[tuple[bytes, bytes], bytes]
) -> bytes:
    """The request line and headers, refusing what would split them (a CR or LF in a name or value).

    `checked` holds the lines of headers checked before (a client's own headers repeat on every
    request; two patterns matched per header were ~5 % of a gateway's pass-through request);
    it is emptied when it reaches `_CHECKED_LINES` (per-request values such as signatures churn it).
    """
    if not _TOKEN.fullmatch(method):
        raise httpx2.LocalProtocolError(f"invalid HTTP method {method!r}")
    if not _TARGET.fullmatch(target):
        raise httpx2.LocalProtocolError(f"invalid request target {target!r}")
    lines = [b"%s %s HTTP/1.1\r\n" % (method, target)]
    for pair in headers:
        line = checked.get(pair)
        if line is None:
            name, value = pair
            if not _TOKEN.fullmatch(name):
                raise httpx2.LocalProtocolError(f"invalid header name {name!r}")
            if not _FIELD_VALUE.fullmatch(value):
                raise httpx2.LocalProtocolError(f"invalid value for header {name.decode('latin-1')!r}")
            line = b"%s: %s\r\n" % (name, value)
            if len(checked) >= _CHECKED_LINES:
                checked.clear()
            checked[pair] = line
        lines.append(line)
    lines.append(b"\r\n")
    return b"".join(lines)
