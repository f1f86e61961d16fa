"""One provider endpoint's HTTP: a connection pool per event loop, requests sent with retries.

`HttpTransport` posts JSON and hands back the parsed reply, a stream of frames (`_frames`), or
the reply's bytes as they come (`RawReply`, for the gateway); an error status becomes the typed
error `_failures` words for it, after the retries `_retries` allows. It knows nothing about any
provider's body format. httpx2 is imported only when a transport is created, so `import toolwire`
stays light. Imports only `toolwire.errors`, the JSON writer the codecs share, the http package's
own modules and the standard library.
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import json
import ssl
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager, aclosing, asynccontextmanager, nullcontext
from typing import TYPE_CHECKING, Any, TypeVar

from toolwire.codecs.common.wire import dumps
from toolwire.errors import ProviderError, RateLimitError, ToolwireError
from toolwire.http._failures import Failures, error_for_status, error_message, request_id_from
from toolwire.http._frames import Frame, Framing, body_pieces, drain, read_errors, read_frames
from toolwire.http._retries import Attempt, RetryPolicy, parse_retry_after, retry_after_text, retryable
from toolwire.http._secrets import credential_parts, scrub_error

if TYPE_CHECKING:
    import httpx2

__all__ = ["MAX_REPLY_BYTES", "HttpTransport", "RawReply", "Signer", "StreamReply"]

Signer = Callable[[str, bytes, Mapping[str, str]], Mapping[str, str]]
"""Signs one request: `(url, body, headers) -> headers to add` (AWS SigV4), called for every attempt."""

_E = TypeVar("_E", bound=ToolwireError)

MAX_REPLY_BYTES = 32 * 1024 * 1024
"""The largest non-streamed reply body accepted; a longer one is refused before it is held whole."""
_MAX_ERROR_BYTES = 1024 * 1024  # an error body is read this far: its message is at the start


async def _read_at_most(response: httpx2.Response, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` bytes of the body, and whether that is all of it (a longer body is not read on)."""
    body = bytearray()
    async with aclosing(body_pieces(response)) as pieces:
        async for chunk in pieces:
            body.extend(chunk)
            if len(body) > limit:
                return bytes(body[:limit]), False
    return bytes(body), True


@functools.lru_cache(maxsize=256)
def _parsed_url(url: str) -> httpx2.URL:
    """`url` parsed once (httpx2.URL is immutable): parsing it costs ~40 µs of every request."""
    import httpx2

    return httpx2.URL(url)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    """One verified TLS context per process: loading the CA bundle costs ~0.1 s per client otherwise."""
    import httpx2

    return httpx2.create_ssl_context()


class HttpTransport:
    """One provider endpoint's HTTP: a connection pool per event loop, retries, typed errors.

    Args:
        provider: The provider name used in error messages.
        headers: Headers sent with every request (auth included); never logged or put in errors.
        secrets: Values to scrub from any error text (the API key, the bearer token).
        timeout: Seconds for connecting, for each read, and between two events of a stream.
        retry: The retry policy.
        deadline: Seconds for the whole request, retries and streaming included (`None`: no cap).
        max_connections: Connections open at once to this endpoint, idle ones kept for reuse
            included (`None`: no cap, what a gateway needs for its concurrent streams). The
            default is httpx's: 100 open, 20 kept idle.
        signer: Signs each request as it is sent (its signature covers the body and the time).
    """

    def __init__(
        self,
        *,
        provider: str,
        headers: Mapping[str, str],
        secrets: Iterable[str] = (),
        timeout: float | None = 60.0,
        retry: RetryPolicy | None = None,
        deadline: float | None = None,
        max_connections: int | None = 100,
        address_hint: str = "OpenAI-compatible servers usually end in /v1, e.g. http://localhost:8000/v1",
        signer: Signer | None = None,
    ) -> None:
        import httpx2  # noqa: F401 - fail early, at client creation, when httpx2 is missing

        self.address_hint = address_hint
        self.signer = signer
        self.deadline = deadline
        self.provider = provider
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._headers = dict(headers)
        # `Bearer TOK` is scrubbed as `TOK` too: providers echo the bare token.
        self._secrets = tuple(part for s in secrets if s for part in credential_parts(s))
        self._max_connections = max_connections
        # httpx2 pools are bound to the event loop that opened them; keep one per loop.
        self._pools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[httpx2.AsyncClient, httpx2.AsyncBaseTransport | None]
        ] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"HttpTransport(provider={self.provider!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values scrubbed from errors (never shown)."""
        return self._secrets

    def _pool(self) -> tuple[httpx2.AsyncClient, httpx2.AsyncBaseTransport | None]:
        """The running event loop's client, and the transport it sends through (None: httpx2's own, for a proxy)."""
        import httpx2

        from toolwire.http._connections import connections

        loop = asyncio.get_running_loop()
        pooled = self._pools.get(loop)
        if pooled is None or pooled[0].is_closed:
            most = self._max_connections
            limits = httpx2.Limits(max_connections=most, max_keepalive_connections=20)
            direct = connections(verify=_ssl_context(), limits=limits)
            pool = httpx2.AsyncClient(
                headers=self._headers,
                timeout=httpx2.Timeout(self.timeout),
                verify=_ssl_context(),
                limits=limits,
                transport=direct,
                trust_env=True,
            )
            pooled = self._pools[loop] = (pool, direct)
        return pooled

    def warm_up(self) -> None:
        """Build what the first request builds, short of connecting (a server warms before it serves).

        The HTTP stack's imports and the TLS context once per process; inside an event loop,
        that loop's pool too.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            import httpx2

            from toolwire.http._connections import connections

            connections(verify=_ssl_context(), limits=httpx2.Limits())  # imports the transports
            return
        self._pool()

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop."""
        pooled = self._pools.pop(asyncio.get_running_loop(), None)
        if pooled is not None:
            await pooled[0].aclose()

    def _fail(self, error: _E) -> _E:
        return scrub_error(error, self._secrets)

    @property
    def _failures(self) -> Failures:
        """How this endpoint's errors read, from its settings as they are now."""
        return Failures(self.provider, self._secrets, self.timeout, self.deadline)

    async def post_json(self, url: str, body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """POST `body`; return the parsed JSON reply and the request id, retrying transient failures."""
        import httpx2

        async with self._overall() as ends_at, self._send(url, body, ends_at=ends_at) as response:
            request_id = request_id_from(response.headers)
            try:
                raw = await self._read_reply(response, request_id)
                data = json.loads(raw)
            except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply to parse
                raise self._fail(
                    ProviderError(
                        f"{self.provider} answered with a body that is not JSON: {raw[:200]!r}; "
                        "check base_url points at the provider's API.",
                        provider=self.provider,
                        status=response.status_code,
                        request_id=request_id,
                    )
                ) from exc
            except httpx2.HTTPError as exc:
                raise self._fail(self._failures.transport_error(exc)) from exc
        if not isinstance(data, dict):
            raise self._fail(
                ProviderError(
                    f"{self.provider} answered with JSON that is not an object: {data!r:.200}.",
                    provider=self.provider,
                    request_id=request_id,
                    body=data,
                )
            )
        return data, request_id

    @asynccontextmanager
    async def stream(self, url: str, body: dict[str, Any], framing: Framing) -> AsyncIterator[StreamReply]:
        """POST `body` and yield the reply: its frames (parsed events, plus `END_OF_STREAM` for `[DONE]`).

        The frames come in lists, one per piece of the body that completed any (`read_frames`).

        Retries happen only while connecting and on an error status, before any event is read.
        """
        async with self._overall() as ends_at, self._send(url, body, stream=True, ends_at=ends_at) as response:
            reply = StreamReply(read_frames(response, framing, self._failures, ends_at), response)
            async with aclosing(reply.frames):  # closed here, not by the event loop's finalizer (a task each)
                yield reply
                if not reply.kept:
                    await drain(reply.frames)

    @asynccontextmanager
    async def forward(
        self, url: str, content: bytes, *, stream: bool, headers: Mapping[str, str] | None = None
    ) -> AsyncIterator[RawReply]:
        """POST `content` as it is and hand back the reply's bytes as they arrive (for a proxy).

        Error statuses raise the typed errors as `post_json` does (with the retry policy).
        """
        extra = {"content-type": "application/json"} | dict(headers or {})
        response = await self._open(url, None, stream=stream, content=content, headers=extra)
        try:
            yield RawReply(self, response)
        finally:
            await response.aclose()

    def _overall(self) -> AbstractAsyncContextManager[float | None]:
        """The request's `deadline`, over retries and the whole stream; yields when it ends (monotonic).

        The scope cancels only the task that opened the request; a stream read on from other
        tasks (`stream_sync` reads each event in a task of its own) is held to the returned
        end by the frame readers (`_frames`). Without a deadline there is nothing to set up.
        """
        return nullcontext(None) if self.deadline is None else self._deadline_scope(self.deadline)

    @asynccontextmanager
    async def _deadline_scope(self, deadline: float) -> AsyncIterator[float | None]:
        ends_at = time.monotonic() + deadline
        scope = asyncio.timeout(deadline)
        try:
            async with scope:
                yield ends_at
        except builtins.TimeoutError:
            if not scope.expired():
                raise
            raise self._failures.deadline_error() from None

    def _send(self, url: str, body: dict[str, Any], *, stream: bool = False, ends_at: float | None = None) -> _Sent:
        """`async with`: the response to POSTing `body`, closed at the end."""
        return _Sent(self._open(url, body, stream=stream, ends_at=ends_at))

    async def _open(
        self,
        url: str,
        body: dict[str, Any] | None,
        *,
        stream: bool,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        ends_at: float | None = None,
    ) -> httpx2.Response:
        """Send until a status below 400 arrives; the body is left unread for the caller."""
        import httpx2

        from toolwire.http._connections import post

        attempt = Attempt(self.retry, self.provider, ends_at)
        sent = dict(headers or {}) | ({"accept": "text/event-stream"} if stream else {})
        if body is not None:  # written as the codecs write JSON: a lone surrogate goes as its \uXXXX escape
            content, sent = dumps(body).encode(), {"content-type": "application/json"} | sent
        while True:
            pool, direct = self._pool()
            signed = sent if self.signer is None else sent | dict(self.signer(url, content or b"", sent))
            try:
                response = await post(pool, direct, _parsed_url(url), content or b"", signed)
            except (
                httpx2.ConnectError,
                httpx2.ConnectTimeout,
                httpx2.PoolTimeout,
                httpx2.RemoteProtocolError,
                httpx2.ReadError,  # a reset before any byte of the reply: nothing was processed yet
                httpx2.WriteError,
            ) as exc:
                if not await attempt.wait(type(exc).__name__):
                    raise self._fail(self._failures.transport_error(exc)) from exc
                continue
            except httpx2.HTTPError as exc:
                raise self._fail(self._failures.transport_error(exc)) from exc
            if response.status_code < 400:
                return response
            try:
                error = await self._status_error(response, url)
            finally:
                await response.aclose()
            retry_after = parse_retry_after(response.headers)
            if isinstance(error, RateLimitError):
                error.retry_after = retry_after
            if not (retryable(response.status_code) and await attempt.wait(f"HTTP {error.status}", retry_after)):
                raise self._fail(error)

    async def _read_reply(self, response: httpx2.Response, request_id: str | None) -> bytes:
        """The whole reply body, refused once it passes `MAX_REPLY_BYTES` (memory stays bounded)."""
        declared = response.headers.get("content-length", "")
        raw, complete = b"", False
        if not (declared.isdigit() and int(declared) > MAX_REPLY_BYTES):
            raw, complete = await _read_at_most(response, MAX_REPLY_BYTES)
        if complete:
            return raw
        raise self._fail(
            ProviderError(
                f"{self.provider} sent a reply larger than {MAX_REPLY_BYTES} bytes, which toolwire does not "
                "hold in memory; ask for less (max_tokens=) or stream the reply.",
                provider=self.provider,
                status=response.status_code,
                request_id=request_id,
            )
        )

    async def _status_error(self, response: httpx2.Response, url: str) -> ToolwireError:
        raw, _ = await _read_at_most(response, _MAX_ERROR_BYTES)
        text = raw.decode("utf-8", "replace")
        try:
            body: Any = json.loads(text)
        except (ValueError, RecursionError):
            body = text or None
        request_id = request_id_from(response.headers, body)
        error = error_for_status(response.status_code, body, text, provider=self.provider, request_id=request_id)
        if response.status_code == 404 and "model" not in error_message(body, text).lower():
            error.message = (
                f"{self.provider} answered HTTP 404 for POST {url}: "
                f"{error_message(body, text)!r}; nothing is served at that address: check base_url "
                f"({self.address_hint})."
            )
            error.args = (error.message,)
        error.retry_after_header = retry_after_text(parse_retry_after(response.headers))
        return error


class _Sent:
    """The response `HttpTransport._send` opens, closed on leaving (a class, not a generator: one less per request)."""

    def __init__(self, opening: Awaitable[httpx2.Response]) -> None:
        self._opening = opening
        self._response: httpx2.Response | None = None

    async def __aenter__(self) -> httpx2.Response:
        self._response = await self._opening
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        if self._response is not None:
            await self._response.aclose()


class StreamReply:
    """A streamed reply being read (`HttpTransport.stream`).

    Attributes:
        frames: Its frames, in lists as they arrived.
        request_id: The provider's request id, if the reply carried one.
        kept: Whether `ended` was heard by a transport that keeps the connection.
    """

    def __init__(self, frames: AsyncGenerator[list[Frame], None], response: httpx2.Response) -> None:
        self.frames = frames
        self.request_id = request_id_from(response.headers)
        self.kept = False
        self._response = response

    def ended(self) -> None:
        """The reply's end was read: its connection is pooled, not closed, when reading stops now.

        A reader stops at the reply's end marker (`[DONE]`, `message_stop`) before the body's
        own end (the chunked terminator, often in the next packet); closing a half-read
        response closes its connection, and the next request pays a new TCP and TLS handshake.
        """
        keep = getattr(self._response.stream, "keep_connection", None)  # toolwire's HTTP/1.1 transport has it
        if keep is not None:
            keep()
            self.kept = True


class RawReply:
    """A successful reply handed on as bytes (`HttpTransport.forward`).

    Attributes:
        status: The HTTP status.
        content_type: The reply's content type (`application/json` when it gave none).
        request_id: The provider's request id, if the reply carried one.
    """

    def __init__(self, transport: HttpTransport, response: httpx2.Response) -> None:
        self._transport = transport
        self._response = response
        self.status = response.status_code
        self.content_type = response.headers.get("content-type", "application/json")
        self.request_id = request_id_from(response.headers)

    async def read(self) -> bytes:
        """The whole body, refused (`ProviderError`) once it passes `MAX_REPLY_BYTES`."""
        import httpx2

        try:
            return await self._transport._read_reply(self._response, self.request_id)
        except httpx2.HTTPError as exc:
            raise self._transport._fail(self._transport._failures.transport_error(exc)) from exc

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; a cut connection raises `StreamError`."""
        with read_errors(self._transport._failures):
            async with aclosing(body_pieces(self._response)) as pieces:
                async for chunk in pieces:
                    yield chunk
