"""toolwire's exceptions: one root, a small tree, messages a user can act on.

```
ToolwireError
├── CodecError            a body that is not the provider's format (also a ValueError)
├── AuthenticationError   401 / 403: missing, wrong or expired key
├── RateLimitError        429
├── BadRequestError       400 / 404 / 422: the provider refused the request as sent
├── ProviderError         5xx and error payloads, including an error event inside a stream
├── StreamError           a stream cut or malformed mid-way; `.partial` holds what arrived
└── TimeoutError          the request took longer than its timeout (also a builtin TimeoutError)
```

No error ever carries an API key: transports redact headers before they build one.
This module imports nothing from toolwire.
"""

from __future__ import annotations

import builtins
from typing import Any

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CodecError",
    "ProviderError",
    "RateLimitError",
    "StreamError",
    "TimeoutError",
    "ToolwireError",
]


class ToolwireError(Exception):
    """Root of every error toolwire raises.

    Attributes:
        message: The human-readable explanation (the provider's own words when it gave some).
        provider: The provider or codec name involved, if any.
        status: The HTTP status code, if the error came from a response.
        request_id: The provider's request id, if the response carried one.
        body: The parsed error body from the provider, if any.
        retry_after_header: The provider's `Retry-After` (or `retry-after-ms`), read within
            bounds and written as whole seconds, if it gave a usable one, so a proxy can hand it on.
    """

    retry_after_header: str | None = None

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status: int | None = None,
        request_id: str | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.provider = provider
        self.status = status
        self.request_id = request_id
        self.body = body

    def __str__(self) -> str:
        details = []
        if self.provider:
            details.append(self.provider)
        if self.status is not None:
            details.append(f"HTTP {self.status}")
        if self.request_id:
            details.append(f"request id {self.request_id}")
        return f"{self.message} ({', '.join(details)})" if details else self.message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, provider={self.provider!r}, status={self.status!r})"


class CodecError(ToolwireError, ValueError):
    """A body handed to a codec is not in that provider's format."""


class AuthenticationError(ToolwireError):
    """The provider rejected the credentials (HTTP 401 or 403)."""


class RateLimitError(ToolwireError):
    """The provider is rate limiting this key (HTTP 429).

    Attributes:
        retry_after: Seconds the provider asked to wait (`Retry-After`), if it said.
    """

    retry_after: float | None = None


class BadRequestError(ToolwireError):
    """The provider refused the request as sent (HTTP 400, 404 or 422)."""


class ProviderError(ToolwireError):
    """The provider failed (HTTP 5xx) or returned an error payload, possibly mid-stream.

    Attributes:
        partial: For an error event in a stream, the events received before it.
    """

    partial: list[Any] | None = None


class StreamError(ToolwireError):
    """A stream was cut or malformed before its end marker.

    Attributes:
        partial: The events received before the failure, so nothing already streamed is lost.
    """

    def __init__(self, message: str, *, partial: list[Any] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.partial: list[Any] = partial if partial is not None else []


class TimeoutError(ToolwireError, builtins.TimeoutError):
    """The request did not complete within its timeout."""
