"""LSP-style framing of JSON-RPC messages: a `Content-Length: N` header, a blank line, N bytes of JSON.

The Copilot CLI frames every message this way on stdio and on TCP: no
`Content-Type`, nothing between frames. The decoder is a pure object (`feed(bytes) -> list`)
so it is testable with plain bytes split anywhere. Imports only `toolwire.errors`.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import StreamError

__all__ = ["MAX_FRAME_BYTES", "FrameDecoder", "encode_frame"]

MAX_FRAME_BYTES = 64 * 1024 * 1024
"""Refuse larger frames: a corrupt length would otherwise buffer without bound."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """One framed message: compact UTF-8 JSON behind its byte length."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _garbage(what: str, value: object) -> StreamError:
    return StreamError(
        f"The Copilot CLI sent {what} {value!r}, which is not a JSON-RPC frame; "
        "check that the configured CLI speaks the headless protocol (copilot --headless).",
        provider="copilot",
    )


class FrameDecoder:
    """Turns a byte stream into JSON messages, however the bytes are split.

    Headers are read up to a blank line; `Content-Length` is matched case-insensitively and
    counts bytes; other headers are skipped (the python SDK reads one header, quorum skips
    extras). Anything else raises `StreamError`.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._length: int | None = None

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add bytes; return the messages they complete, in order."""
        self._buffer.extend(data)
        messages: list[dict[str, Any]] = []
        while True:
            if self._length is None and not self._read_headers():
                return messages
            assert self._length is not None
            if len(self._buffer) < self._length:
                return messages
            body = bytes(self._buffer[: self._length])
            del self._buffer[: self._length]
            self._length = None
            messages.append(_parse_body(body))

    @property
    def pending(self) -> bool:
        """Whether a partial frame is buffered (a stream ending now was cut mid-frame)."""
        return bool(self._buffer) or self._length is not None

    def _read_headers(self) -> bool:
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > 8192:
                raise _garbage("a header block of more than 8 KiB starting", bytes(self._buffer[:60]))
            return False
        block = bytes(self._buffer[:end])
        del self._buffer[: end + 4]
        length: int | None = None
        for line in block.split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if not sep:
                raise _garbage("the header line", line[:80])
            if name.strip().lower() == b"content-length":
                length = _parse_length(value.strip())
        if length is None:
            raise _garbage("a header block without Content-Length", block[:80])
        self._length = length
        return True


def _parse_length(value: bytes) -> int:
    if not value.isdigit() or int(value) > MAX_FRAME_BYTES:
        raise _garbage("the Content-Length", value[:40])
    return int(value)


def _parse_body(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _garbage("the frame body", body[:80]) from None
    if not isinstance(message, dict):
        raise _garbage("the frame body", body[:80])
    return message
