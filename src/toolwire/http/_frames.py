"""A streamed reply read as frames: one parsed JSON object per SSE event or NDJSON line.

`read_frames` picks the reader for the provider's framing. Each reader turns the body's bytes
into pieces of JSON text (`_sse` splits server-sent events; NDJSON lines are split here), parses
them, and holds the stream to the endpoint's idle timeout and deadline; its failures are the
endpoint's `Failures`. A framing is a value of `Framing`, a decoder of its bytes in a module of its
own (`_sse`, `_eventstream`), and a reader here. Imports only
`toolwire.errors`, the http package's own modules and the standard library (httpx2 inside the readers).

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
from collections.abc import AsyncIterable, AsyncIterator
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypeVar

from toolwire.errors import ToolwireError
from toolwire.http._eventstream import EventStreamFormatError, EventStreamReader, parsed_event
from toolwire.http._failures import Failures, error_for_status
from toolwire.http._sse import SseEventTooLarge, SseReader

if TYPE_CHECKING:
    import httpx2

__all__ = ["END_OF_STREAM", "EVENTSTREAM_MEDIA_TYPE", "MAX_EVENT_BYTES", "Frame", "Framing", "drain", "read_frames"]

Framing: TypeAlias = Literal["sse", "ndjson", "eventstream", "eventstream-chunks"]
EVENTSTREAM_MEDIA_TYPE = "application/vnd.amazon.eventstream"


class _EndOfStream:
    """The transport-level end marker (`data: [DONE]`)."""

    def __repr__(self) -> str:
        return "END_OF_STREAM"


END_OF_STREAM: Final = _EndOfStream()
"""Yielded by `HttpTransport.stream` for OpenAI's `data: [DONE]` marker."""

_T = TypeVar("_T")
Frame: TypeAlias = dict[str, Any] | _EndOfStream

_DRAIN_SECONDS = 0.1  # how long a finished stream may take to end its body and keep its connection
_DRAIN_FRAMES = 8
MAX_EVENT_BYTES = 16 * 1024 * 1024
"""The largest SSE event or NDJSON line accepted (a whole reply with images can pass 1 MiB)."""


def read_frames(
    response: httpx2.Response, framing: Framing, failures: Failures, ends_at: float | None
) -> AsyncIterator[Frame]:
    """The frames of a streamed reply: parsed events, plus `END_OF_STREAM` for `[DONE]`."""
    if framing == "eventstream-chunks":
        return _chunk_frames(_eventstream_frames(response, failures, ends_at), failures)
    frames = {"sse": _sse_frames, "ndjson": _ndjson_frames, "eventstream": _eventstream_frames}[framing]
    return frames(response, failures, ends_at)


async def drain(frames: AsyncIterator[Frame]) -> None:
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


async def _sse_frames(response: httpx2.Response, failures: Failures, ends_at: float | None) -> AsyncIterator[Frame]:
    import httpx2

    media_type = response.headers.get("content-type", "").partition(";")[0].strip()
    if media_type.lower() != "text/event-stream":
        error = f"is not a valid event stream: its content type is {media_type!r}, not 'text/event-stream'"
        raise failures.scrub(failures.stream_error(error))
    try:
        async for data in _within_idle_timeout(_sse_data(response), failures, ends_at):
            data = data.strip()
            if not data:
                continue
            if data == "[DONE]":
                yield END_OF_STREAM
                continue
            yield _parse_frame(data, failures)
    except SseEventTooLarge as exc:
        raise failures.scrub(failures.stream_error(f"is not a valid event stream: {exc}")) from exc
    except httpx2.TimeoutException as exc:
        raise failures.scrub(failures.transport_error(exc)) from exc
    except httpx2.HTTPError as exc:
        raise failures.scrub(failures.stream_error(f"was cut: {type(exc).__name__}: {exc}")) from exc


async def _ndjson_frames(response: httpx2.Response, failures: Failures, ends_at: float | None) -> AsyncIterator[Frame]:
    import httpx2

    try:
        async for line in _within_idle_timeout(_capped_lines(response), failures, ends_at):
            if line is None:
                raise failures.scrub(failures.stream_error(f"sent a line longer than {MAX_EVENT_BYTES} bytes"))
            if line.strip():
                yield _parse_frame(line, failures)
    except httpx2.TimeoutException as exc:
        raise failures.scrub(failures.transport_error(exc)) from exc
    except httpx2.HTTPError as exc:
        raise failures.scrub(failures.stream_error(f"was cut: {type(exc).__name__}: {exc}")) from exc


async def _event_messages(response: httpx2.Response) -> AsyncIterator[dict[str, Any]]:
    """Each frame of an AWS event stream in botocore's parsed form, as the frames complete."""
    reader = EventStreamReader()
    async for chunk in response.aiter_bytes():
        for message in reader.feed(chunk):
            yield parsed_event(message)
    reader.close()


async def _eventstream_frames(
    response: httpx2.Response, failures: Failures, ends_at: float | None
) -> AsyncIterator[Frame]:
    import httpx2

    media_type = response.headers.get("content-type", "").partition(";")[0].strip()
    if media_type.lower() != EVENTSTREAM_MEDIA_TYPE:
        error = f"is not an AWS event stream: its content type is {media_type!r}, not {EVENTSTREAM_MEDIA_TYPE!r}"
        raise failures.scrub(failures.stream_error(error))
    try:
        async for event in _within_idle_timeout(_event_messages(response), failures, ends_at):
            yield event
    except EventStreamFormatError as exc:
        raise failures.scrub(failures.stream_error(f"is not a valid event stream: {exc}")) from exc
    except httpx2.TimeoutException as exc:
        raise failures.scrub(failures.transport_error(exc)) from exc
    except httpx2.HTTPError as exc:
        raise failures.scrub(failures.stream_error(f"was cut: {type(exc).__name__}: {exc}")) from exc


# InvokeModelWithResponseStream's exception events, by the HTTP status each stands for.
_EXCEPTION_STATUS = {
    "validationException": 400,
    "modelTimeoutException": 408,
    "modelStreamErrorException": 424,
    "throttlingException": 429,
    "internalServerException": 500,
    "serviceUnavailableException": 503,
}


async def _chunk_frames(events: AsyncIterator[Frame], failures: Failures) -> AsyncIterator[Frame]:
    """The model's own events out of `chunk` frames; an exception frame raises its typed error."""
    async for event in events:
        assert isinstance(event, dict)  # an event stream has no `[DONE]`
        ((name, payload),) = event.items()
        if name != "chunk":
            status = _EXCEPTION_STATUS.get(name, 500 if name.endswith("Exception") else 0)
            if status:
                raise failures.scrub(error_for_status(status, payload, name, provider=failures.provider))
            continue  # an event type added later
        data = payload.get("bytes") if isinstance(payload, dict) else None
        try:
            text = base64.b64decode(data if isinstance(data, str) else "", validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            raise failures.scrub(failures.stream_error(f"sent a chunk that is not base64: {data!r:.200}")) from None
        yield _parse_frame(text, failures)


async def _within_idle_timeout(
    events: AsyncIterable[_T], failures: Failures, ends_at: float | None
) -> AsyncIterator[_T]:
    """Each event must arrive within `timeout` of the last one, and before the deadline.

    The read timeout alone is reset by any byte, so a server that sends only keep-alive
    comments holds a dead stream open forever. The deadline is checked here, in whatever
    task reads the event, because the transport's deadline scope can cancel only the task
    that opened the stream.
    """
    iterator = aiter(events)
    while True:
        wait, by_deadline = failures.timeout, False
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
                raise failures.deadline_error() from None
            raise failures.scrub(
                failures.stream_error(f"stalled: no event for {failures.timeout:g}s (keep-alives do not count)")
            ) from None
        yield event


def _parse_frame(data: str, failures: Failures) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise failures.scrub(failures.stream_error(f"sent an event that is not a JSON object: {data[:200]!r}"))
    return value
