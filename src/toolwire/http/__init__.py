"""HTTP for toolwire: pooled connections, retries, SSE / NDJSON framing, typed errors.

The only package that imports `httpx2`, and only when a transport is created, so
`import toolwire` stays light. It knows nothing about any provider's body format: it
posts JSON, hands back parsed JSON objects (one per SSE `data` field or NDJSON line),
and turns HTTP failures into `toolwire.errors`. Secrets (API keys, tokens) are scrubbed
from every error and never logged.

This module only re-exports; the modules behind it:

- `_transport`: `HttpTransport`, one provider endpoint's requests, streams and retries.
- `_connections`: which httpx2 transport carries the requests, and the requests it carries.
- `_http1`: HTTP/1.1 parsed by httptools (where the `serve` extra installed it).
- `_asyncio`: httpcore2's connections on asyncio's own transports (the fallback).
- `_sse`: server-sent events read from the body's bytes.
- `_secrets`: credentials kept out of error text.
"""

from toolwire.http._secrets import credential_parts, scrub_error
from toolwire.http._transport import (
    END_OF_STREAM,
    MAX_EVENT_BYTES,
    MAX_REPLY_BYTES,
    Frame,
    Framing,
    HttpTransport,
    RawReply,
    RetryPolicy,
    error_for_status,
    parse_retry_after,
    request_id_from,
)

__all__ = [
    "END_OF_STREAM",
    "MAX_EVENT_BYTES",
    "MAX_REPLY_BYTES",
    "Frame",
    "Framing",
    "HttpTransport",
    "RawReply",
    "RetryPolicy",
    "credential_parts",
    "error_for_status",
    "parse_retry_after",
    "request_id_from",
    "scrub_error",
]
