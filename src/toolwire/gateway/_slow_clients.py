"""Connections that never finish their request headers (slowloris) are closed after a deadline.

uvicorn has only a keep-alive timeout, which every byte resets: a client sending one header
byte every few seconds holds a connection (and a file descriptor) forever. The deadline here
starts when a connection opens and again when a reply ends; the next request's headers stop
it; trickling bytes do not. The same hooks exist in uvicorn's h11 and httptools protocols; the
httptools one is used when installed (the `serve` extra), as uvicorn itself would. Imports
uvicorn, so only `toolwire serve` loads it.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["DEFAULT_HEADER_TIMEOUT", "H11HeaderDeadlineProtocol", "HeaderDeadline", "header_deadline_protocol"]

DEFAULT_HEADER_TIMEOUT = 15.0
"""Seconds a client has to send a request's headers (from connecting, or the end of the last reply)."""


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
    cycle: Any
    loop: Any
    transport: Any

    def connection_made(self, transport: Any) -> None:
        """Start the clock for the first request's headers."""
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock."""
        self._header_due = None
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        """Stop the clock once the bytes completed a request's headers."""
        super().data_received(data)  # type: ignore[misc]
        self._disarm_on_new_request()

    def on_response_complete(self) -> None:
        """Start the clock for the next request on this connection (unless it is already in)."""
        self._arm()
        super().on_response_complete()  # type: ignore[misc]
        self._disarm_on_new_request()

    def _arm(self) -> None:
        self._waiting_on = self.cycle
        self._header_due = self.loop.time() + self.header_timeout
        if self._header_timer is None:
            self._header_timer = self.loop.call_at(self._header_due, self._headers_too_slow)

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
