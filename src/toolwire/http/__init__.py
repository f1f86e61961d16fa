"""HTTP for toolwire: pooled connections, retries, SSE / NDJSON / AWS event-stream framing, typed errors.

The only package that imports `httpx2`, and only when a transport is created, so
`import toolwire` stays light. It knows nothing about any provider's body format: it
posts JSON, hands back parsed JSON objects (one per SSE `data` field or NDJSON line),
and turns HTTP failures into `toolwire.errors`. Secrets (API keys, tokens) are scrubbed
from every error and never logged.

This module only re-exports; the modules behind it:

- `_transport`: `HttpTransport`, one endpoint's requests: the pool, sending, reading replies.
- `_retries`: `RetryPolicy`, when a failed request is sent again and after how long.
- `_failures`: the typed error a failed request becomes, its secrets scrubbed.
- `_frames`: a streamed reply read as frames, for each framing (SSE, NDJSON).
- `_sse`: server-sent events read from the body's bytes.
- `_eventstream`: the AWS event stream (Bedrock), frames read and written.
- `_sigv4`: AWS Signature Version 4, Bedrock's request signing.
- `_secrets`: credentials kept out of error text and log lines (URL credentials included).
- `_connections`: which httpx2 transport carries the requests, and the requests it carries.
- `_http1`: HTTP/1.1 parsed by httptools (where the `serve` extra installed it).
- `_asyncio`: httpcore2's connections on asyncio's own transports (the fallback).
"""

from toolwire.http._eventstream import (
    EventMessage,
    EventStreamFormatError,
    EventStreamReader,
    encode_event,
    encode_message,
    parsed_event,
)
from toolwire.http._failures import error_for_status, request_id_from
from toolwire.http._frames import END_OF_STREAM, EVENTSTREAM_MEDIA_TYPE, MAX_EVENT_BYTES, Frame, Framing
from toolwire.http._retries import RetryPolicy, parse_retry_after
from toolwire.http._secrets import SafeLogFormatter, credential_parts, redact_urls, scrub_error
from toolwire.http._sigv4 import AwsCredentials, SigV4Signer
from toolwire.http._transport import MAX_REPLY_BYTES, HttpTransport, RawReply, Signer

__all__ = [
    "END_OF_STREAM",
    "EVENTSTREAM_MEDIA_TYPE",
    "MAX_EVENT_BYTES",
    "MAX_REPLY_BYTES",
    "AwsCredentials",
    "EventMessage",
    "EventStreamFormatError",
    "EventStreamReader",
    "Frame",
    "Framing",
    "HttpTransport",
    "RawReply",
    "RetryPolicy",
    "SafeLogFormatter",
    "SigV4Signer",
    "Signer",
    "credential_parts",
    "encode_event",
    "encode_message",
    "error_for_status",
    "parse_retry_after",
    "parsed_event",
    "redact_urls",
    "request_id_from",
    "scrub_error",
]
