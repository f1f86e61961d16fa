"""The contract every codec keeps: requests both ways, replies both ways, streams both ways."""

from __future__ import annotations

from typing import Any, Protocol

from toolwire.codecs.common.stream_encoding import WireEvent
from toolwire.types import Request, Response, StreamEvent

__all__ = ["Codec", "StreamDecoder", "StreamEncoder"]


class StreamDecoder(Protocol):
    """Turns one provider stream into neutral events, one parsed event at a time."""

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one parsed SSE `data` object (or NDJSON line); return the events it yields.

        Emits `Done` itself only when the event marks the end of the stream.
        """
        ...

    def finish(self) -> Response:
        """Return the accumulated reply; callable more than once, always the same result."""
        ...


class StreamEncoder(Protocol):
    """Turns neutral stream events into one provider's stream, one event at a time (a gateway's half)."""

    def feed(self, event: StreamEvent) -> list[WireEvent]:
        """The provider events for one neutral event, to be sent at once (a `Done` ends the stream)."""
        ...

    def finish(self) -> list[WireEvent]:
        """Close a stream that ended without `Done`; nothing once `Done` was fed."""
        ...


class Codec(Protocol):
    """The operations every wire format offers: requests both ways, replies both ways."""

    name: str

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact JSON body for `request`.

        The body may share unchanged values (tool schemas, argument objects) with `request`, so
        encoding stays cheap; copy it before mutating it in place.
        """
        ...

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a non-streaming response body; never raises on what a real model may emit."""
        ...

    def stream_decoder(self) -> StreamDecoder:
        """Return a fresh decoder for one streamed response."""
        ...

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a request body back into a neutral `Request` (the inverse of `encode_request`)."""
        ...

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as the provider would send it (for test servers and proxies)."""
        ...

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> StreamEncoder:
        """Return a fresh encoder for one stream reporting `model` and `response_id` (made up if None)."""
        ...

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as the provider's stream events, in order (without a `[DONE]` marker).

        Feeding them to `stream_decoder()` gives back `response`.
        """
        ...
