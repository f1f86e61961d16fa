"""The AWS event stream (`application/vnd.amazon.eventstream`), read and written as bytes.

Bedrock's streamed replies (ConverseStream, InvokeModelWithResponseStream) are binary frames,
not server-sent events. A frame is a prelude — its total length and its headers' length, both
u32 big-endian — with a CRC32 of those 8 bytes, then typed headers (`:message-type`,
`:event-type`, `:exception-type`, `:content-type`), the payload, and a CRC32 of everything
before it. `EventStreamReader` takes the body's chunks as they arrive (a frame may span many
reads, a read may hold many frames) and refuses a bad CRC, a length out of bounds or a body
that ends inside a frame with `EventStreamFormatError`, so a broken stream is an error at once,
never a wait for bytes that will not come. `encode_message` writes frames (the gateway and
`toolwire.testing` speak the format). The limits are botocore's (`botocore.eventstream`).
Imports only the standard library.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_HEADERS_BYTES",
    "MAX_PAYLOAD_BYTES",
    "EventMessage",
    "EventStreamFormatError",
    "EventStreamReader",
    "encode_event",
    "encode_message",
    "parsed_event",
]

MAX_HEADERS_BYTES = 128 * 1024
"""The largest headers section a frame may declare (botocore's `_MAX_HEADERS_LENGTH`)."""
MAX_PAYLOAD_BYTES = 24 * 1024 * 1024
"""The largest payload a frame may declare (botocore's `_MAX_PAYLOAD_LENGTH`)."""

_PRELUDE = struct.Struct(">III")  # total length, headers length, prelude CRC
_PRELUDE_BYTES = _PRELUDE.size
_CRC_BYTES = 4
_MIN_FRAME = _PRELUDE_BYTES + _CRC_BYTES

# Header value types: the fixed-size ones by their struct format, then byte arrays and strings.
_FIXED: dict[int, tuple[str, int]] = {2: (">b", 1), 3: (">h", 2), 4: (">i", 4), 5: (">q", 8), 8: (">q", 8)}
_BYTES, _STRING, _UUID = 6, 7, 9


class EventStreamFormatError(ValueError):
    """The bytes are not a well-formed AWS event stream (bad CRC, bad length, cut short)."""


@dataclass(frozen=True, slots=True)
class EventMessage:
    """One frame: its headers (by name) and its payload bytes."""

    headers: dict[str, Any]
    payload: bytes


class EventStreamReader:
    """Feed the body's chunks as they arrive; get back the frames they complete."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> list[EventMessage]:
        """The frames completed by `chunk` (none while a frame is still arriving)."""
        self._buffer.extend(chunk)
        messages: list[EventMessage] = []
        while len(self._buffer) >= _PRELUDE_BYTES:
            total, headers_length, prelude_crc = _PRELUDE.unpack_from(self._buffer)
            _check_prelude(self._buffer, total, headers_length, prelude_crc)
            if len(self._buffer) < total:
                break
            frame = bytes(self._buffer[:total])
            del self._buffer[:total]
            messages.append(_decode_frame(frame, headers_length))
        return messages

    def close(self) -> None:
        """The body ended: anything left over is a frame cut short."""
        if self._buffer:
            left = len(self._buffer)
            self._buffer.clear()
            raise EventStreamFormatError(f"The event stream ended inside a frame ({left} bytes of it arrived).")


def _check_prelude(buffer: bytearray, total: int, headers_length: int, prelude_crc: int) -> None:
    actual = zlib.crc32(bytes(buffer[:8]))
    if actual != prelude_crc:
        raise EventStreamFormatError(
            f"An event stream frame's prelude CRC is {prelude_crc:#010x}, its bytes give {actual:#010x}."
        )
    if headers_length > MAX_HEADERS_BYTES:
        raise EventStreamFormatError(
            f"An event stream frame declares {headers_length} bytes of headers; the limit is {MAX_HEADERS_BYTES}."
        )
    payload_length = total - _MIN_FRAME - headers_length
    if payload_length < 0:
        raise EventStreamFormatError(
            f"An event stream frame's total length {total} cannot hold its {headers_length} bytes of headers."
        )
    if payload_length > MAX_PAYLOAD_BYTES:
        raise EventStreamFormatError(
            f"An event stream frame declares a {payload_length} byte payload; the limit is {MAX_PAYLOAD_BYTES}."
        )


def _decode_frame(frame: bytes, headers_length: int) -> EventMessage:
    (message_crc,) = struct.unpack_from(">I", frame, len(frame) - _CRC_BYTES)
    actual = zlib.crc32(frame[:-_CRC_BYTES])
    if actual != message_crc:
        raise EventStreamFormatError(
            f"An event stream frame's CRC is {message_crc:#010x}, its bytes give {actual:#010x}."
        )
    headers_end = _PRELUDE_BYTES + headers_length
    headers = _decode_headers(frame[_PRELUDE_BYTES:headers_end])
    return EventMessage(headers=headers, payload=frame[headers_end:-_CRC_BYTES])


def _decode_headers(data: bytes) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    at = 0
    try:
        while at < len(data):
            name_length = data[at]
            name = data[at + 1 : at + 1 + name_length].decode("utf-8")
            at += 1 + name_length
            headers[name], at = _header_value(data, at)
    except (IndexError, struct.error, UnicodeDecodeError) as exc:
        raise EventStreamFormatError(f"An event stream frame's headers cannot be read: {exc}.") from None
    return headers


def _header_value(data: bytes, at: int) -> tuple[Any, int]:
    kind = data[at]
    at += 1
    if kind in (0, 1):
        return kind == 0, at
    if kind in _FIXED:
        form, size = _FIXED[kind]
        return struct.unpack_from(form, data, at)[0], at + size
    if kind in (_BYTES, _STRING):
        (length,) = struct.unpack_from(">H", data, at)
        value = data[at + 2 : at + 2 + length]
        if len(value) != length:
            raise IndexError("a header value runs past the headers")
        return (value.decode("utf-8") if kind == _STRING else value), at + 2 + length
    if kind == _UUID:
        return data[at : at + 16], at + 16
    raise EventStreamFormatError(f"An event stream header has the unknown value type {kind}.")


# writing


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One frame with string headers: what every Bedrock event and exception uses."""
    encoded = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _MIN_FRAME + len(encoded) + len(payload)
    prelude = struct.pack(">II", total, len(encoded))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return head + struct.pack(">I", zlib.crc32(head))


def _encode_header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return bytes([len(raw_name)]) + raw_name + bytes([_STRING]) + struct.pack(">H", len(raw_value)) + raw_value


def encode_event(event: dict[str, Any]) -> bytes:
    """An event in botocore's parsed form (`{"contentBlockDelta": {...}}`) as one frame.

    A key ending in `Exception` (`throttlingException`, `modelStreamErrorException`) is written
    as an exception frame, the way Bedrock reports failures mid-stream.
    """
    ((name, payload),) = event.items()
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    if name.endswith("Exception"):
        kind = {":message-type": "exception", ":exception-type": name}
    else:
        kind = {":message-type": "event", ":event-type": name}
    return encode_message({**kind, ":content-type": "application/json"}, body)


def parsed_event(message: EventMessage) -> dict[str, Any]:
    """A frame in botocore's parsed form: `{event type: payload}` (`{exception type: payload}`).

    The payload's padding field `p` (random length, there to hide the size of the text) is left
    out. An `error` frame (`:error-code`, `:error-message`) raises `EventStreamFormatError`.
    """
    headers = message.headers
    kind = headers.get(":message-type")
    if kind == "error":
        code, text = headers.get(":error-code"), headers.get(":error-message")
        raise EventStreamFormatError(f"The event stream sent an error frame: {code}: {text}")
    name = headers.get(":exception-type") if kind == "exception" else headers.get(":event-type")
    if not isinstance(name, str):
        raise EventStreamFormatError(f"An event stream frame names no event type: headers {headers!r:.200}.")
    try:
        payload = json.loads(message.payload) if message.payload else {}
    except (ValueError, RecursionError):
        raise EventStreamFormatError(f"The {name} frame's payload is not JSON: {message.payload[:200]!r}.") from None
    if isinstance(payload, dict):
        payload.pop("p", None)
    return {name: payload}
