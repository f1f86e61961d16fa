"""What a connection may do before its request is in: headers held to a deadline and a size.

uvicorn has only a keep-alive timeout, which every byte resets: a client sending one header
byte every few seconds holds a connection (and a file descriptor) forever. The deadline here
starts when a connection opens and again when a reply ends; the next request's headers stop
it; trickling bytes do not.

uvicorn's httptools protocol also holds headers of any size and number (one 64 MB header, or
10,000, were read whole and answered). Here a request's headers are counted as they arrive,
before anything parses them: past `MAX_HEADER_BYTES` or `MAX_HEADER_LINES` the client gets a
431 and the connection closes (nginx answers 400/494 at 8 KB a line, Envoy 431 at 60 KB and
100 headers). A reply sent before the client finished its body (that 431, or the app's 413)
closes the connection the way nginx's lingering close does: the write side first, then the
rest of the body is read and thrown away (never parsed nor held) for at most `LINGER_SECONDS`, so
the client reads the answer instead of a connection reset, and no body is read forever.

The same hooks exist in uvicorn's h11 and httptools protocols; the httptools one is used when
installed (the `serve` extra), as uvicorn itself would. Imports uvicorn, so only `toolwire
serve` loads it.
"""

from __future__ import annotations

import json
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = [
    "DEFAULT_HEADER_TIMEOUT",
    "LINGER_SECONDS",
    "MAX_HEADER_BYTES",
    "MAX_HEADER_LINES",
    "H11HeaderDeadlineProtocol",
    "HeaderDeadline",
    "header_deadline_protocol",
]

DEFAULT_HEADER_TIMEOUT = 15.0
"""Seconds a client has to send a request's headers (from connecting, or the end of the last reply)."""
MAX_HEADER_BYTES = 64 * 1024
"""The request line and headers together, in bytes (Envoy: 60 KiB; nginx: 4 buffers of 8 KiB)."""
MAX_HEADER_LINES = 100
"""Header lines in one request (Envoy's default; an SDK sends about 20)."""
LINGER_SECONDS = 10.0
"""How long the rest of a body is read and dropped after an early answer (nginx: 5 s idle, 30 s in all)."""

_TOO_LARGE = json.dumps(
    {
        "error": {
            "message": f"The request headers are larger than this gateway's limit of {MAX_HEADER_BYTES} bytes "
            f"or {MAX_HEADER_LINES} lines; send fewer or shorter headers.",
            "type": "invalid_request_error",
            "code": "request_header_fields_too_large",
        }
    }
).encode()
_431 = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_TOO_LARGE), _TOO_LARGE)
)


class _LingeringTransport:
    """The connection's transport as uvicorn sees it: `close` lingers while a body is still coming."""

    def __init__(self, transport: Any, owner: HeaderDeadline) -> None:
        self._transport = transport
        self._owner = owner
        self.write = transport.write  # the calls of every reply, bound once
        self.is_closing = transport.is_closing

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._owner.close_lingering()


class HeaderDeadline:
    """Mixed into an uvicorn HTTP protocol: closes a connection whose request headers take too long.

    One timer per connection, not one per request: between requests only the deadline moves,
    and a timer that fires early (the connection served requests meanwhile) is set again for
    the deadline then in force.
    """

    header_timeout = DEFAULT_HEADER_TIMEOUT
    _header_timer: Any = None
    _header_due: float | None = None  # when the headers awaited now are late; None: none awaited
    _waiting_on: Any = None
    _head_bytes = 0
    _head_lines = 0
    _head_tail = b""
    _lingering: Any = None  # the timer that ends a lingering close
    _raw: Any = None
    cycle: Any
    loop: Any
    transport: Any

    def connection_made(self, transport: Any) -> None:
        """Start the clock for the first request's headers."""
        self._raw = transport
        super().connection_made(_LingeringTransport(transport, self))  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock."""
        self._disarm()
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if self._lingering is not None:
            self._lingering.cancel()
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        """Count a request's header bytes before anything parses them; stop the clock once they are in."""
        if self._lingering is not None:
            return  # the rest of a request already answered: dropped unread
        if self._header_due is not None and self._headers_too_large(data):
            self._raw.write(_431)
            self.close_lingering(sending=True)
            return
        super().data_received(data)  # type: ignore[misc]
        self._disarm_on_new_request()

    def on_response_complete(self) -> None:
        """Start the clock for the next request on this connection (unless it is already in).

        A reply that went out before the request's body was all in ends the connection (lingering):
        reading the rest only to drop it could take forever.
        """
        if self.cycle is not None and self.cycle.more_body and not self._raw.is_closing():
            self.close_lingering()
        self._arm()
        super().on_response_complete()  # type: ignore[misc]
        self._disarm_on_new_request()

    def close_lingering(self, *, sending: bool = False) -> None:
        """Close the connection; while the client is still `sending` a request, lingering (see the module)."""
        if self._lingering is not None or self._raw.is_closing():
            return
        sending = sending or (self.cycle is not None and self.cycle.more_body)
        if not sending or not self._raw.can_write_eof():
            self._raw.close()
            return
        self._disarm()
        self._raw.write_eof()  # the answer, then the end of it: the client reads what was sent
        self._lingering = self.loop.call_later(LINGER_SECONDS, self._raw.close)

    def _headers_too_large(self, data: bytes) -> bool:
        """Count `data` against the header limits, up to the blank line that ends the headers."""
        seen = self._head_tail + data
        end = seen.find(b"\r\n\r\n")
        counted = data if end < 0 else data[: max(0, end + 4 - len(self._head_tail))]
        self._head_bytes += len(counted)
        self._head_lines += counted.count(b"\n")
        self._head_tail = seen[-3:]
        return self._head_bytes > MAX_HEADER_BYTES or self._head_lines > MAX_HEADER_LINES + 2

    def _arm(self) -> None:
        self._waiting_on = self.cycle
        self._header_due = self.loop.time() + self.header_timeout
        self._head_bytes, self._head_lines, self._head_tail = 0, 0, b""
        if self._header_timer is None:
            self._header_timer = self.loop.call_at(self._header_due, self._headers_too_slow)

    def _disarm(self) -> None:
        self._header_due = None  # the timer, if set, finds nothing due and stops

    def _disarm_on_new_request(self) -> None:
        if self.cycle is not self._waiting_on:
            self._header_due = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        due = self._header_due
        if due is None:  # no headers awaited: the next wait sets the timer again
            return
        if self.loop.time() < due:
            self._header_timer = self.loop.call_at(due, self._headers_too_slow)
            return
        if not self.transport.is_closing():
            self.transport.close()


class H11HeaderDeadlineProtocol(HeaderDeadline, H11Protocol):
    """uvicorn's h11 protocol with the header deadline."""


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is not installed: uvicorn would use h11 too
    _BEST: type[Any] = H11HeaderDeadlineProtocol
else:

    class HttpToolsHeaderDeadlineProtocol(HeaderDeadline, HttpToolsProtocol):
        """uvicorn's httptools protocol with the header deadline."""

    _BEST = HttpToolsHeaderDeadlineProtocol


def header_deadline_protocol(header_timeout: float = DEFAULT_HEADER_TIMEOUT) -> type[Any]:
    """The protocol class for `uvicorn.Config(http=...)`, with its own header deadline.

    The default deadline's class is a module-level one, so `--workers N` can pickle the config
    for its worker processes; another deadline makes a subclass (one process only).
    """
    if header_timeout == DEFAULT_HEADER_TIMEOUT:
        return _BEST
    return type("HeaderDeadlineProtocol", (_BEST,), {"header_timeout": header_timeout})
