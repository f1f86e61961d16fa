"""A streamed reply read as frames: one parsed JSON object per SSE event or NDJSON line.

`read_frames` picks the reader for the provider's framing. Each reader turns the body's bytes
into pieces of JSON text (`_sse` splits server-sent events; NDJSON lines are split here), parses
them, and holds the stream to the endpoint's idle timeout and deadline; its failures are the
endpoint's `Failures`. A framing is a value of `Framing`, a decoder of its bytes in a module of its
own (`_sse`, `_eventstream`), and a reader here. Imports only `toolwire.errors`, the http
package's own modules and the standard library (httpx2 inside the readers).

The AWS event stream (`_eventstream`, Bedrock) is binary: each frame becomes one object in
botocore's parsed form, `{event type: payload}`, and an exception frame `{exception type:
payload}` for the codec to raise as its typed error. `eventstream-chunks` is the same framing as
InvokeModelWithResponseStream uses it: each `chunk` event wraps one of the model's own events as
base64 JSON (`{"chunk": {"bytes": ...}}`), handed over unwrapped; an exception frame raises its
typed error here, since the model's own decoder knows nothing of AWS exceptions.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import builtins
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, cast

from toolwire.errors import ToolwireError
from toolwire.http._eventstream import EventStreamFormatError, EventStreamReader, parsed_event
from toolwire.http._failures import Failures, error_for_status
from toolwire.http._sse import SseEventTooLarge, SseReader

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "END_OF_STREAM",
    "EVENTSTREAM_MEDIA_TYPE",
    "MAX_EVENT_BYTES",
    "Frame",
    "Framing",
    "drain",
    "read_errors",
    "read_frames",
]

Framing: TypeAlias = Literal["sse", "ndjson", "eventstream", "eventstream-chunks"]
EVENTSTREAM_MEDIA_TYPE = "application/vnd.amazon.eventstream"


class _EndOfStream:
    """The transport-level end marker (`data: [DONE]`)."""

    def __repr__(self) -> str:
        return "END_OF_STREAM"


END_OF_STREAM: Final = _EndOfStream()
"""Yielded by `HttpTransport.stream` for OpenAI's `data: [DONE]` marker."""

Frame: TypeAlias = dict[str, Any] | _EndOfStream

_DRAIN_SECONDS = 0.1  # how long a finished stream may take to end its body and keep its connection
_DRAIN_FRAMES = 8
MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The largest SSE event or NDJSON line accepted (a whole reply with images can pass 1 MiB)."""


def read_frames(
    response: httpx2.Response, framing: Framing, failures: Failures, ends_at: float | None
) -> AsyncGenerator[list[Frame], None]:
    """The frames of a streamed reply, one list per piece of the body that completed any.

    Frames are parsed events, plus `END_OF_STREAM` for `[DONE]`. Grouped as the network
    delivered them, so a relay can write what arrived together in one write; nothing waits
    for a later piece.
    """
    if framing in ("eventstream", "eventstream-chunks"):
        return _eventstream_frames(response, failures, ends_at, chunks=framing == "eventstream-chunks")
    frames = _sse_frames if framing == "sse" else _ndjson_frames
    return frames(response, failures, ends_at)


async def drain(frames: AsyncIterator[list[Frame]]) -> None:
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


class _Stall:
    """The stream's idle timeout and deadline: one timer per stream, not a timeout scope per event.

    Each event must arrive within `timeout` of the read that waits for it, and before the
    deadline. The read timeout alone is reset by any byte, so a server that sends only
    keep-alive comments would hold a dead stream open forever. The deadline is checked here,
    in whatever task reads the event, because the transport's deadline scope can cancel only
    the task that opened the stream. The timer is armed once; when it fires while events
    keep coming it is armed again for the wait in progress, and it cancels the reading task
    only while that task waits for the body.
    """

    def __init__(self, failures: Failures, ends_at: float | None) -> None:
        self._failures = failures
        self._ends_at = ends_at
        self._since = time.monotonic()
        self._task: asyncio.Task[Any] | None = None
        self._cancelling = 0
        self._handle: asyncio.TimerHandle | None = None
        self._fired: ToolwireError | None = None

    def expect(self) -> None:
        """The last event was handed on: the next one is due within the timeout from now."""
        self._since = time.monotonic()

    async def read(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The body's next piece, or `None` at its end; a stall or the deadline raises its error."""
        task = self._task = asyncio.current_task()
        assert task is not None
        self._cancelling = task.cancelling()
        if self._handle is None:
            self._arm()
        try:
            return await anext(chunks)
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            if self._fired is not None and task.uncancel() <= self._cancelling:
                raise self._fired from None
            raise
        finally:
            self._task = None

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _due(self) -> float | None:
        timeout = self._failures.timeout
        due = None if timeout is None else self._since + timeout
        if self._ends_at is not None and (due is None or self._ends_at < due):
            due = self._ends_at
        return due

    def _arm(self) -> None:
        due = self._due()
        if due is not None:
            self._handle = asyncio.get_running_loop().call_later(max(0.0, due - time.monotonic()), self._check)

    def _check(self) -> None:
        self._handle = None
        task = self._task
        if task is None:  # between reads: the next read arms it again
            return
        due = self._due()
        now = time.monotonic()
        if due is not None and now < due:
            self._arm()
            return
        failures = self._failures
        if self._ends_at is not None and now >= self._ends_at:
            self._fired = failures.deadline_error()
        else:
            stalled = f"stalled: no event for {failures.timeout:g}s (keep-alives do not count)"
            self._fired = failures.scrub(failures.stream_error(stalled))
        task.cancel()


def read_errors(failures: Failures) -> AbstractContextManager[None]:
    """A body read as toolwire's errors: too slow is the transport's error, cut or malformed a `StreamError`."""
    return _ReadErrors(failures)


class _ReadErrors:
    """`read_errors`, as a class: a generator-based manager cost a generator per stream read."""

    __slots__ = ("_failures",)

    def __init__(self, failures: Failures) -> None:
        self._failures = failures

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, trace: object) -> None:
        if not isinstance(exc, Exception):  # none, or a generator closed at its yield
            return
        import httpx2

        failures = self._failures
        if isinstance(exc, SseEventTooLarge | EventStreamFormatError):
            raise failures.scrub(failures.stream_error(f"is not a valid event stream: {exc}")) from exc
        if isinstance(exc, httpx2.TimeoutException):
            raise failures.scrub(failures.transport_error(exc)) from exc
        if isinstance(exc, httpx2.HTTPError):
            raise failures.scrub(failures.stream_error(f"was cut: {type(exc).__name__}: {exc}")) from exc


def body_pieces(response: httpx2.Response) -> AsyncGenerator[bytes, None]:
    """The body's pieces as they arrive: `response.aiter_bytes()`, straight off the transport when not encoded.

    httpx2's `aiter_bytes` runs each piece, and the close, through two generators and three
    context managers (decoding, counting bytes, naming the request in errors); a body without a
    content encoding needs none of them. Close what this returns (`aclosing`) when stopping early.
    """
    import httpx2

    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    stream = response.stream
    if (
        encoding not in ("", "identity")
        or hasattr(response, "_content")
        or not isinstance(stream, httpx2.AsyncByteStream)
    ):
        return response.aiter_bytes()
    response.is_stream_consumed = True  # as `aiter_raw` marks it: a second read raises StreamConsumed
    try:
        request = response.request
    except RuntimeError:  # toolwire's own HTTP/1.1 posts build none: its errors have none to name
        pieces = stream.__aiter__()
        if isinstance(pieces, AsyncGenerator):  # as toolwire's bodies are: handed on as they are
            return cast(AsyncGenerator[bytes, None], pieces)
        return _naming(None, pieces)
    return _naming(request, stream)


async def _naming(
    request: httpx2.Request | None, stream: httpx2.AsyncByteStream | AsyncIterator[bytes]
) -> AsyncGenerator[bytes, None]:
    """The stream's pieces, its errors naming the request (as httpx2 names it), closed at the end."""
    import httpx2

    pieces = stream.__aiter__()
    try:
        async for piece in pieces:
            yield piece
    except httpx2.RequestError as exc:
        if request is not None:
            exc.request = request
        raise
    finally:
        await _aclose(pieces)


async def _sse_frames(
    response: httpx2.Response, failures: Failures, ends_at: float | None
) -> AsyncGenerator[list[Frame], None]:
    media_type = response.headers.get("content-type", "").partition(";")[0].strip()
    if media_type.lower() != "text/event-stream":
        error = f"is not a valid event stream: its content type is {media_type!r}, not 'text/event-stream'"
        raise failures.scrub(failures.stream_error(error))
    reader = SseReader(MAX_EVENT_BYTES)
    stall = _Stall(failures, ends_at)
    chunks = body_pieces(response)
    try:
        with read_errors(failures):
            while (chunk := await stall.read(chunks)) is not None:
                batch: list[Frame] = []
                try:
                    for text in reader.feed(chunk):
                        if data := text.strip():
                            batch.append(END_OF_STREAM if data == "[DONE]" else _parse_frame(data, failures))
                finally:
                    if batch:  # the events before a bad one are read first, as they came
                        yield batch
                        stall.expect()
    finally:
        stall.close()
        await _aclose(chunks)


async def _ndjson_frames(
    response: httpx2.Response, failures: Failures, ends_at: float | None
) -> AsyncGenerator[list[Frame], None]:
    stall = _Stall(failures, ends_at)
    chunks = body_pieces(response)
    buffer = bytearray()
    try:
        with read_errors(failures):
            while (chunk := await stall.read(chunks)) is not None:
                buffer.extend(chunk)
                batch: list[Frame] = []
                try:
                    while (end := buffer.find(b"\n")) >= 0:
                        line = buffer[:end].decode("utf-8", "replace")
                        del buffer[: end + 1]
                        if line.strip():
                            batch.append(_parse_frame(line, failures))
                finally:
                    if batch:  # the lines before a bad one are read first, as they came
                        yield batch
                        stall.expect()
                if len(buffer) > MAX_EVENT_BYTES:  # memory stays bounded
                    raise failures.scrub(failures.stream_error(f"sent a line longer than {MAX_EVENT_BYTES} bytes"))
            if buffer.strip():
                yield [_parse_frame(buffer.decode("utf-8", "replace"), failures)]
    finally:
        stall.close()
        await _aclose(chunks)


async def _eventstream_frames(
    response: httpx2.Response, failures: Failures, ends_at: float | None, *, chunks: bool
) -> AsyncGenerator[list[Frame], None]:
    media_type = response.headers.get("content-type", "").partition(";")[0].strip()
    if media_type.lower() != EVENTSTREAM_MEDIA_TYPE:
        error = f"is not an AWS event stream: its content type is {media_type!r}, not {EVENTSTREAM_MEDIA_TYPE!r}"
        raise failures.scrub(failures.stream_error(error))
    reader = EventStreamReader()
    stall = _Stall(failures, ends_at)
    pieces = body_pieces(response)
    try:
        with read_errors(failures):
            while (piece := await stall.read(pieces)) is not None:
                batch: list[Frame] = []
                try:
                    for message in reader.feed(piece):
                        event = parsed_event(message)
                        if not chunks:
                            batch.append(event)
                        elif (inner := _chunk(event, failures)) is not None:
                            batch.append(inner)
                finally:
                    if batch:  # the frames before a bad one are read first, as they came
                        yield batch
                        stall.expect()
            reader.close()
    finally:
        stall.close()
        await _aclose(pieces)


# InvokeModelWithResponseStream's exception events, by the HTTP status each stands for.
_EXCEPTION_STATUS = {
    "validationException": 400,
    "modelTimeoutException": 408,
    "modelStreamErrorException": 424,
    "throttlingException": 429,
    "internalServerException": 500,
    "serviceUnavailableException": 503,
}


def _chunk(event: dict[str, Any], failures: Failures) -> dict[str, Any] | None:
    """The model's own event out of a `chunk` frame; an exception frame raises its typed error."""
    ((name, payload),) = event.items()
    if name != "chunk":
        status = _EXCEPTION_STATUS.get(name, 500 if name.endswith("Exception") else 0)
        if status:
            raise failures.scrub(error_for_status(status, payload, name, provider=failures.provider))
        return None  # an event type added later
    data = payload.get("bytes") if isinstance(payload, dict) else None
    try:
        text = base64.b64decode(data if isinstance(data, str) else "", validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise failures.scrub(failures.stream_error(f"sent a chunk that is not base64: {data!r:.200}")) from None
    return _parse_frame(text, failures)


async def _aclose(chunks: AsyncIterator[bytes]) -> None:
    """Close the body's iterator here, rather than leave it to the event loop's finalizer (a task each)."""
    close = getattr(chunks, "aclose", None)
    if close is not None:
        await close()


# What `json.loads` ends in, without its three Python layers (untyped, hence getattr).
_scan: Any = getattr(json.decoder.JSONDecoder(), "scan_once")  # noqa: B009


def _parse_frame(data: str, failures: Failures) -> dict[str, Any]:
    """`json.loads(data)`, which must be an object; the scanner alone reads an event that is one value, unspaced."""
    try:
        value, end = _scan(data, 0)
    except StopIteration:  # not a value where it starts: whitespace first, or none at all
        end = -1
    except (ValueError, RecursionError):
        value, end = None, len(data)
    if end != len(data):  # whitespace around it, or more after it: `json.loads` decides
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            value = None
    if not isinstance(value, dict):
        raise failures.scrub(failures.stream_error(f"sent an event that is not a JSON object: {data[:200]!r}"))
    return value
