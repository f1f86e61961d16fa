"""Kept for old imports: the HTTP layer lives in `toolwire.http`, and this module re-exports its public names."""

from toolwire.http import (
    END_OF_STREAM,
    MAX_EVENT_BYTES,
    MAX_REPLY_BYTES,
    Frame,
    Framing,
    HttpTransport,
    RawReply,
    RetryPolicy,
    credential_parts,
    error_for_status,
    parse_retry_after,
    request_id_from,
    scrub_error,
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
