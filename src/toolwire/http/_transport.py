"""HTTP for toolwire: pooled connections, retries, SSE / NDJSON framing, typed errors.

The only module that imports `httpx2`, and only when a transport is created, so
`import toolwire` stays light. It knows nothing about any provider's body format: it
posts JSON, hands back parsed JSON objects (one per SSE `data` field or NDJSON line),
and turns HTTP failures into `toolwire.errors`. Secrets (API keys, tokens) are scrubbed
from every error and never logged.
"""

from __future__ import annotations

import asyncio
import builtins
import email.utils
import functools
import json
import logging
import random
import ssl
import time
import weakref
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypeVar

from toolwire.codecs.common.wire import dumps
from toolwire.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderError,
    RateLimitError,
    StreamError,
    TimeoutError,
    ToolwireError,
)
from toolwire.http._secrets import credential_parts, scrub_error
from toolwire.http._sse import SseEventTooLarge, SseReader

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "END_OF_STREAM",
    "Framing",
    "HttpTransport",
    "RawReply",
    "RetryPolicy",
    "credential_parts",
    "error_for_status",
    "scrub_error",
]

logger = logging.getLogger("toolwire.transport")

Framing: TypeAlias = Literal["sse", "ndjson"]


class _EndOfStream:
    """The transport-level end marker (`data: [DONE]`)."""

    def __repr__(self) -> str:
        return "END_OF_STREAM"


END_OF_STREAM: Final = _EndOfStream()
"""Yielded by `HttpTransport.stream` for OpenAI's `data: [DONE]` marker."""

_E = TypeVar("_E", bound=ToolwireError)
_T = TypeVar("_T")
Frame: TypeAlias = dict[str, Any] | _EndOfStream

# Headers providers use for the id support staff ask for (OpenAI, Anthropic, Google, proxies).
_REQUEST_ID_HEADERS = ("x-request-id", "request-id", "x-goog-request-id", "x-amzn-requestid", "cf-ray")
_RETRY_STATUSES = frozenset({408, 409, 429})
_STATUS_ERRORS: dict[int, type[ToolwireError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
}
_HINTS: dict[type[ToolwireError], str] = {
    AuthenticationError: "check the API key or token and its permissions",
    RateLimitError: "slow down or raise max_retries",
    BadRequestError: "fix the request (model name, tools, parameters) before retrying",
    ProviderError: "the provider failed; retry later",
}
_MAX_RETRY_AFTER = 60.0  # a longer Retry-After is treated as "give up", not as a sleep
_DRAIN_SECONDS = 0.1  # how long a finished stream may take to end its body and keep its connection
_DRAIN_FRAMES = 8
MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The largest SSE event or NDJSON line accepted (a whole reply with images can pass 1 MiB)."""
MAX_REPLY_BYTES = 32 * 1024 * 1024
"""The largest non-streamed reply body accepted; a longer one is refused before it is held whole."""
_MAX_ERROR_BYTES = 1024 * 1024  # an error body is read this far: its message is at the start


async def _capped_lines(response: httpx2.Response) -> AsyncIterator[str | None]:
    """NDJSON lines, each at most `MAX_EVENT_BYTES`; `None` marks a longer one (memory stays bounded)."""
    buffer = bytearray()
    async for chunk in response.aiter_bytes():
        buffer.extend(chunk)
        while (end := buffer.find(b"\n")) >= 0:
            yield buffer[:end].decode("utf-8", "replace")
            del buffer[: end + 1]
        if len(buffer) > MAX_EVENT_BYTES:
            yield None
            return
    if buffer:
        yield buffer.decode("utf-8", "replace")


async def _sse_data(response: httpx2.Response) -> AsyncIterator[str]:
    """The data of each server-sent event in the body, as the events complete."""
    reader = SseReader(MAX_EVENT_BYTES)
    async for chunk in response.aiter_bytes():
        for data in reader.feed(chunk):
            yield data


async def _read_at_most(response: httpx2.Response, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` bytes of the body, and whether that is all of it (a longer body is not read on)."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body.extend(chunk)
        if len(body) > limit:
            return bytes(body[:limit]), False
    return bytes(body), True


async def _drain(frames: AsyncIterator[Frame]) -> None:
    """Read the little a stream sends after its end marker, so its connection goes back to the pool.

    A reader stops at `[DONE]` (or `message_stop`) before the body's own end (the chunked
    terminator); closing a half-read response closes its connection, and the next request
    then pays a new TCP (and TLS) handshake. A server that sends more, or does not end the
    body at once, only loses the connection, as before.
    """
    try:
        async with asyncio.timeout(_DRAIN_SECONDS):
            for _ in range(_DRAIN_FRAMES):
                await anext(frames)
    except (StopAsyncIteration, builtins.TimeoutError, ToolwireError):
        pass


# retry policy


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait before retrying a failed request.

    Attributes:
        max_retries: Retries after the first attempt (0 disables retrying).
        base_delay: The first backoff delay in seconds; doubled on each retry.
        max_delay: The cap on a backoff delay.
    """

    max_retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `attempt` (0-based), honouring the server's wish."""
        if retry_after is not None and 0 <= retry_after <= _MAX_RETRY_AFTER:
            return retry_after
        backoff = min(self.max_delay, self.base_delay * 2.0**attempt)
        return backoff * (1 - 0.25 * random.random())  # jitter spreads clients that failed together


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Read `retry-after-ms` (OpenAI) or `Retry-After` (seconds or an HTTP date) in seconds."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# errors


def _error_message(body: Any, text: str) -> str:
    """The provider's own words from an error body (OpenAI, Anthropic, Gemini and Ollama shapes)."""
    if isinstance(body, list) and body:
        body = body[0]  # Gemini sometimes wraps its error object in a list
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, str):
            return error
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    return text.strip()[:500] or "no error message"


def request_id_from(headers: Mapping[str, str], body: Any = None) -> str | None:
    """The provider's request id, from the usual headers or an Anthropic-style body field."""
    named = {name.lower(): value for name, value in headers.items()}  # one pass: httpx2's `get` is one each
    for name in _REQUEST_ID_HEADERS:
        if value := named.get(name):
            return value
    if isinstance(body, dict) and isinstance(body.get("request_id"), str):
        return str(body["request_id"])
    return None


def error_for_status(
    status: int, body: Any, text: str, *, provider: str, request_id: str | None = None
) -> ToolwireError:
    """The typed error for an HTTP failure, with the provider's message and a hint how to fix it."""
    kind = _STATUS_ERRORS.get(status)
    if kind is None:
        kind = BadRequestError if 400 <= status < 500 and status not in _RETRY_STATUSES else ProviderError
    message = f"{provider} answered HTTP {status}: {_error_message(body, text)!r}; {_HINTS[kind]}."
    return kind(message, provider=provider, status=status, request_id=request_id, body=body)


def _url_of(exc: Exception) -> str | None:
    """The address a failed request went to, so the error names what to check."""
    try:
        return str(exc.request.url)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # httpx raises RuntimeError when no request is attached
        return None


def _retryable(status: int) -> bool:
    return status in _RETRY_STATUSES or status >= 500


# transport


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


@dataclass(slots=True)
class _Attempt:
    """Bookkeeping for one logical request across retries."""

    policy: RetryPolicy
    provider: str
    ends_at: float | None = None
    number: int = 0
    errors: list[str] = field(default_factory=list)

    async def wait(self, reason: str, retry_after: float | None = None) -> bool:
        """Sleep before the next retry; `False` when retries are exhausted or not worth waiting for.

        A `Retry-After` longer than `_MAX_RETRY_AFTER` gives up at once: sleeping minutes inside
        one call helps nobody; the error carries the wait so the caller can schedule it. So does
        a wait that would end after the request's deadline: sleeping into a `TimeoutError` would
        lose the provider's error and its `retry_after`.
        """
        if self.number >= self.policy.max_retries:
            return False
        if retry_after is not None and retry_after > _MAX_RETRY_AFTER:
            return False
        delay = self.policy.delay(self.number, retry_after)
        if self.ends_at is not None and time.monotonic() + delay >= self.ends_at:
            return False
        logger.info("toolwire: retrying %s request in %.2fs after %s", self.provider, delay, reason)
        self.number += 1
        await asyncio.sleep(delay)
        return True


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
    ) -> None:
        import httpx2  # noqa: F401 - fail early, at client creation, when httpx2 is missing

        self.address_hint = address_hint
        self.deadline = deadline
        self.provider = provider
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._headers = dict(headers)
        # `Bearer TOK` is scrubbed as `TOK` too: providers echo the bare token.
        self._secrets = tuple(part for s in secrets if s for part in credential_parts(s))
        self._max_connections = max_connections
        # httpx2 pools are bound to the event loop that opened them; keep one per loop.
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"HttpTransport(provider={self.provider!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        """The values scrubbed from errors (never shown)."""
        return self._secrets

    def _pool(self) -> httpx2.AsyncClient:
        import httpx2

        from toolwire.http._connections import connections

        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None or pool.is_closed:
            most = self._max_connections
            limits = httpx2.Limits(max_connections=most, max_keepalive_connections=20)
            pool = httpx2.AsyncClient(
                headers=self._headers,
                timeout=httpx2.Timeout(self.timeout),
                verify=_ssl_context(),
                limits=limits,
                transport=connections(verify=_ssl_context(), limits=limits),
                trust_env=True,
            )
            self._pools[loop] = pool
        return pool

    async def aclose(self) -> None:
        """Close the connection pool of the running event loop."""
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            await pool.aclose()

    def _fail(self, error: _E) -> _E:
        return scrub_error(error, self._secrets)

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
                raise self._fail(self._transport_error(exc)) from exc
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
    async def stream(
        self, url: str, body: dict[str, Any], framing: Framing
    ) -> AsyncIterator[tuple[AsyncIterator[Frame], str | None]]:
        """POST `body` and yield `(frames, request_id)`: parsed events, plus `END_OF_STREAM` for `[DONE]`.

        Retries happen only while connecting and on an error status, before any event is read.
        """
        async with self._overall() as ends_at, self._send(url, body, stream=True, ends_at=ends_at) as response:
            request_id = request_id_from(response.headers)
            frames = self._sse_frames if framing == "sse" else self._ndjson_frames
            reader = frames(response, ends_at)
            yield reader, request_id
            await _drain(reader)

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

    @asynccontextmanager
    async def _overall(self) -> AsyncIterator[float | None]:
        """The request's `deadline`, over retries and the whole stream; yields when it ends (monotonic).

        The scope cancels only the task that opened the request; a stream read on from other
        tasks (`stream_sync` reads each event in a task of its own) is held to the returned
        end by `_within_idle_timeout`.
        """
        if self.deadline is None:
            yield None
            return
        ends_at = time.monotonic() + self.deadline
        scope = asyncio.timeout(self.deadline)
        try:
            async with scope:
                yield ends_at
        except builtins.TimeoutError:
            if not scope.expired():
                raise
            raise self._deadline_error() from None

    def _deadline_error(self) -> TimeoutError:
        return self._fail(
            TimeoutError(
                f"{self.provider} did not finish within the deadline of {self.deadline:g}s; "
                "raise deadline= or ask for less.",
                provider=self.provider,
            )
        )

    @asynccontextmanager
    async def _send(
        self, url: str, body: dict[str, Any], *, stream: bool = False, ends_at: float | None = None
    ) -> AsyncIterator[httpx2.Response]:
        response = await self._open(url, body, stream=stream, ends_at=ends_at)
        try:
            yield response
        finally:
            await response.aclose()

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

        from toolwire.http._connections import post_request

        attempt = _Attempt(self.retry, self.provider, ends_at)
        sent = dict(headers or {}) | ({"accept": "text/event-stream"} if stream else {})
        if body is not None:  # written as the codecs write JSON: a lone surrogate goes as its \uXXXX escape
            content, sent = dumps(body).encode(), {"content-type": "application/json"} | sent
        while True:
            pool = self._pool()
            try:
                request = post_request(pool, _parsed_url(url), content or b"", sent)
                response = await pool.send(request, stream=True)
            except (
                httpx2.ConnectError,
                httpx2.ConnectTimeout,
                httpx2.PoolTimeout,
                httpx2.RemoteProtocolError,
                httpx2.ReadError,  # a reset before any byte of the reply: nothing was processed yet
                httpx2.WriteError,
            ) as exc:
                if not await attempt.wait(type(exc).__name__):
                    raise self._fail(self._transport_error(exc)) from exc
                continue
            except httpx2.HTTPError as exc:
                raise self._fail(self._transport_error(exc)) from exc
            if response.status_code < 400:
                return response
            try:
                error = await self._status_error(response)
            finally:
                await response.aclose()
            retry_after = parse_retry_after(response.headers)
            if isinstance(error, RateLimitError):
                error.retry_after = retry_after
            if not (_retryable(response.status_code) and await attempt.wait(f"HTTP {error.status}", retry_after)):
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

    async def _status_error(self, response: httpx2.Response) -> ToolwireError:
        raw, _ = await _read_at_most(response, _MAX_ERROR_BYTES)
        text = raw.decode("utf-8", "replace")
        try:
            body: Any = json.loads(text)
        except (ValueError, RecursionError):
            body = text or None
        request_id = request_id_from(response.headers, body)
        error = error_for_status(response.status_code, body, text, provider=self.provider, request_id=request_id)
        if response.status_code == 404 and "model" not in _error_message(body, text).lower():
            error.message = (
                f"{self.provider} answered HTTP 404 for POST {response.request.url}: "
                f"{_error_message(body, text)!r}; nothing is served at that address: check base_url "
                f"({self.address_hint})."
            )
            error.args = (error.message,)
        error.retry_after_header = response.headers.get("retry-after")
        return error

    def _transport_error(self, exc: Exception) -> ToolwireError:
        import httpx2

        where = _url_of(exc)
        at = f" at {where}" if where else ""
        if isinstance(exc, httpx2.TimeoutException):
            return TimeoutError(
                f"{self.provider}{at} did not answer within {self.timeout}s ({type(exc).__name__}); "
                "raise timeout= or retry later.",
                provider=self.provider,
            )
        return ProviderError(
            f"Could not reach {self.provider}{at}: {type(exc).__name__}: {exc}; check base_url and the network.",
            provider=self.provider,
        )

    async def _sse_frames(self, response: httpx2.Response, ends_at: float | None) -> AsyncIterator[Frame]:
        import httpx2

        media_type = response.headers.get("content-type", "").partition(";")[0].strip()
        if media_type.lower() != "text/event-stream":
            error = f"is not a valid event stream: its content type is {media_type!r}, not 'text/event-stream'"
            raise self._fail(self._stream_error(error))
        try:
            async for data in self._within_idle_timeout(_sse_data(response), ends_at):
                data = data.strip()
                if not data:
                    continue
                if data == "[DONE]":
                    yield END_OF_STREAM
                    continue
                yield self._parse_frame(data)
        except SseEventTooLarge as exc:
            raise self._fail(self._stream_error(f"is not a valid event stream: {exc}")) from exc
        except httpx2.TimeoutException as exc:
            raise self._fail(self._transport_error(exc)) from exc
        except httpx2.HTTPError as exc:
            raise self._fail(self._stream_error(f"was cut: {type(exc).__name__}: {exc}")) from exc

    async def _ndjson_frames(self, response: httpx2.Response, ends_at: float | None) -> AsyncIterator[Frame]:
        import httpx2

        try:
            async for line in self._within_idle_timeout(_capped_lines(response), ends_at):
                if line is None:
                    raise self._fail(self._stream_error(f"sent a line longer than {MAX_EVENT_BYTES} bytes"))
                if line.strip():
                    yield self._parse_frame(line)
        except httpx2.TimeoutException as exc:
            raise self._fail(self._transport_error(exc)) from exc
        except httpx2.HTTPError as exc:
            raise self._fail(self._stream_error(f"was cut: {type(exc).__name__}: {exc}")) from exc

    async def _within_idle_timeout(self, events: AsyncIterable[_T], ends_at: float | None) -> AsyncIterator[_T]:
        """Each event must arrive within `timeout` of the last one, and before the deadline.

        The read timeout alone is reset by any byte, so a server that sends only keep-alive
        comments holds a dead stream open forever. The deadline is checked here, in whatever
        task reads the event, because `_overall` can cancel only the task that opened the stream.
        """
        iterator = aiter(events)
        while True:
            wait, by_deadline = self.timeout, False
            if ends_at is not None:
                left = max(0.0, ends_at - time.monotonic())
                if wait is None or left < wait:
                    wait, by_deadline = left, True
            try:
                async with asyncio.timeout(wait):
                    event = await anext(iterator)
            except StopAsyncIteration:
                return
            except builtins.TimeoutError:
                if by_deadline:
                    raise self._deadline_error() from None
                raise self._fail(
                    self._stream_error(f"stalled: no event for {self.timeout:g}s (keep-alives do not count)")
                ) from None
            yield event

    def _parse_frame(self, data: str) -> dict[str, Any]:
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            raise self._fail(self._stream_error(f"sent an event that is not a JSON object: {data[:200]!r}"))
        return value

    def _stream_error(self, what: str) -> StreamError:
        return StreamError(f"The {self.provider} stream {what}; retry the request.", provider=self.provider)


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
            raise self._transport._fail(self._transport._transport_error(exc)) from exc

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; a cut connection raises `StreamError`."""
        import httpx2

        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx2.TimeoutException as exc:
            raise self._transport._fail(self._transport._transport_error(exc)) from exc
        except httpx2.HTTPError as exc:
            error = self._transport._stream_error(f"was cut: {type(exc).__name__}: {exc}")
            raise self._transport._fail(error) from exc
