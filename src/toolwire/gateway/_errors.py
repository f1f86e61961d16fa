"""Every failure the gateway answers, as a status, a message, a field and a `Retry-After`.

`GatewayError` is raised for what the gateway itself refuses (a bad body, an unknown model,
a wrong key); `classify` turns any exception from a request's handling into one, keeping an
upstream's status and `Retry-After`. The protocol row renders it in the client's own error
shape. Upstream messages are already free of keys (the transport scrubs them).
"""

from __future__ import annotations

import logging

from toolwire.errors import TimeoutError as UpstreamTimeout
from toolwire.errors import ToolwireError
from toolwire.gateway._routing import RouteConfigError, RoutingError
from toolwire.http import redact_urls

__all__ = ["GatewayError", "classify"]

logger = logging.getLogger("toolwire.gateway")


class GatewayError(Exception):
    """A request the gateway answers with an error.

    Attributes:
        status: The HTTP status for the client.
        message: One sentence for a person: what is wrong and how to fix it.
        field: The request field at fault, for 400s (OpenAI's `param`).
        retry_after: A `Retry-After` value to hand on (an upstream's, unchanged).
    """

    def __init__(self, status: int, message: str, *, field: str | None = None, retry_after: str | None = None) -> None:
        message = redact_urls(message)  # every message a client sees: no URL credentials, whatever raised it
        super().__init__(message)
        self.status = status
        self.message = message
        self.field = field
        self.retry_after = retry_after


def classify(exc: BaseException) -> GatewayError:
    """The client-facing error for an exception raised while serving a request."""
    match exc:
        case GatewayError():
            return exc
        case RoutingError():
            return GatewayError(404, str(exc), field="model")
        case UpstreamTimeout():
            return GatewayError(504, f"The upstream did not answer in time: {exc.message}")
        case ToolwireError(status=int(status)) if status >= 500:
            # One upstream failure, one status: the same 502 as when it fails mid-stream (no status then).
            return GatewayError(502, f"The upstream failed: {exc.message}", retry_after=exc.retry_after_header)
        case ToolwireError(status=int(status)) if status >= 400:  # a 200 the gateway cannot read is a 502
            return GatewayError(status, f"Upstream error: {exc.message}", retry_after=exc.retry_after_header)
        case ToolwireError():
            return GatewayError(502, f"The upstream failed: {exc.message}")
        case RouteConfigError():
            logger.error("gateway configuration problem: %s", exc)
            return GatewayError(500, f"The gateway cannot serve this route: {exc}")
        case ValueError():  # the target's codec refused what the client sent (a schema, a name)
            return GatewayError(400, f"The request cannot be sent to the upstream: {exc}")
        case _:
            logger.exception("unexpected gateway failure")
            return GatewayError(500, f"The gateway failed unexpectedly ({type(exc).__name__}); see its log.")
