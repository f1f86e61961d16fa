"""What the gateway knows about each inbound wire protocol, as data: fields, errors, framing.

One `Protocol` row per codec name. A row says which body fields a request must have, where
the model name sits, whether the client asked for a stream, how an error looks in that
protocol (as a reply body and as an in-stream event), and how stream events are framed
(SSE with or without event names, NDJSON, or the AWS event stream of Bedrock). Imports only
the standard library, `toolwire.codecs.common.wire` (for compact JSON) and the event-stream
writer of `toolwire.http`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolwire.codecs.common.wire import dumps
from toolwire.http import EVENTSTREAM_MEDIA_TYPE, encode_event

__all__ = ["PROTOCOLS", "Protocol", "frame", "status_kind", "usage_of"]

Framing = Literal["sse", "sse-named", "ndjson", "eventstream"]

# Each protocol's own word for a failure class, by HTTP status (the SDKs map status codes to
# exception types; these words are what a person reads).
_OPENAI_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}
_ANTHROPIC_TYPES = {**_OPENAI_TYPES, 413: "request_too_large", 529: "overloaded_error"}
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def status_kind(status: int, table: Mapping[int, str], server: str = "api_error") -> str:
    """The protocol's error word for `status` (`server` for unlisted 5xx, bad request otherwise)."""
    return table.get(status) or (server if status >= 500 else table[400])


def _openai_error(status: int, message: str, field: str | None) -> dict[str, Any]:
    kind = status_kind(status, _OPENAI_TYPES, "server_error")
    return {"error": {"message": message, "type": kind, "param": field, "code": kind}}


def _anthropic_error(status: int, message: str, field: str | None) -> dict[str, Any]:
    return {"type": "error", "error": {"type": status_kind(status, _ANTHROPIC_TYPES), "message": message}}


def _gemini_error(status: int, message: str, field: str | None) -> dict[str, Any]:
    # "error" must stay the first key: google-genai spots in-stream errors by the prefix '{"error":'.
    return {"error": {"code": status, "message": message, "status": status_kind(status, _GEMINI_STATUS, "INTERNAL")}}


def _ollama_error(status: int, message: str, field: str | None) -> dict[str, Any]:
    return {"error": message}


# Bedrock's error types by status: the `__type` botocore reads an error's code from, and the
# exception event of ConverseStream that carries a failure mid-stream.
_BEDROCK_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    413: "ValidationException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
}
_BEDROCK_STREAM_EVENTS = {
    400: "validationException",
    429: "throttlingException",
    503: "serviceUnavailableException",
}


def _bedrock_error(status: int, message: str, field: str | None) -> dict[str, Any]:
    return {"__type": status_kind(status, _BEDROCK_TYPES, "InternalServerException"), "message": message}


def _bedrock_stream_error(status: int, message: str) -> tuple[str | None, dict[str, Any]]:
    name = _BEDROCK_STREAM_EVENTS.get(status) or (
        "internalServerException" if status >= 500 else "modelStreamErrorException"
    )
    return name, {name: {"message": message}}


def _responses_stream_error(status: int, message: str) -> tuple[str | None, dict[str, Any]]:
    # The documented `error` event, plus an `error` object: openai-python raises on any event
    # whose data has one, so SDK users get an exception instead of a silently short reply.
    inner = _openai_error(status, message, None)["error"]
    return "error", {"type": "error", "code": inner["code"], "message": message, "param": None, "error": inner}


def _stream_error_of(body: Callable[[int, str, str | None], dict[str, Any]], event: str | None) -> StreamErrorBuilder:
    def build(status: int, message: str) -> tuple[str | None, dict[str, Any]]:
        return event, body(status, message, None)

    return build


ErrorBuilder = Callable[[int, str, str | None], dict[str, Any]]
StreamErrorBuilder = Callable[[int, str], tuple[str | None, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Protocol:
    """One inbound wire protocol.

    Attributes:
        name: The codec name (`toolwire.codecs.get_codec`).
        required: Body fields a request must have, with the JSON type each must be.
        framing: `sse` (data only), `sse-named` (an `event:` line per event) or `ndjson`.
        done_marker: Whether a stream ends with `data: [DONE]` (OpenAI Chat Completions).
        stream_default: Whether a body without `stream` asks for a stream (Ollama does).
        error_body: `(status, message, field) -> body` in the protocol's error shape.
        stream_error: `(status, message) -> (event name, data)`: the in-stream error event.
        media_type: The content type of a stream.
    """

    name: str
    required: Mapping[str, type | tuple[type, ...]]
    framing: Framing
    error_body: ErrorBuilder
    stream_error: StreamErrorBuilder
    done_marker: bool = False
    stream_default: bool = False

    @property
    def media_type(self) -> str:
        """`application/x-ndjson` for NDJSON, the AWS event stream's own, `text/event-stream` otherwise."""
        if self.framing == "eventstream":
            return EVENTSTREAM_MEDIA_TYPE
        return "application/x-ndjson" if self.framing == "ndjson" else "text/event-stream"

    def wants_stream(self, body: Mapping[str, Any], action: str | None = None) -> bool:
        """Whether the request asks for a stream (`action`: Gemini's method, Bedrock's operation)."""
        if self.name == "gemini":
            return action == "streamGenerateContent"
        if self.name == "bedrock":
            return action == "converse-stream"
        return body.get("stream", self.stream_default) is True


PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol(
            "openai",
            {"model": str, "messages": list},
            "sse",
            _openai_error,
            _stream_error_of(_openai_error, None),
            done_marker=True,
        ),
        Protocol(
            "openai-responses",
            {"model": str, "input": (str, list)},
            "sse-named",
            _openai_error,
            _responses_stream_error,
        ),
        Protocol(
            "anthropic",
            {"model": str, "messages": list},
            "sse-named",
            _anthropic_error,
            _stream_error_of(_anthropic_error, "error"),
        ),
        Protocol("gemini", {"contents": list}, "sse", _gemini_error, _stream_error_of(_gemini_error, None)),
        Protocol(
            "ollama",
            {"model": str, "messages": list},
            "ndjson",
            _ollama_error,
            _stream_error_of(_ollama_error, None),
            stream_default=True,
        ),
        Protocol("bedrock", {"messages": list}, "eventstream", _bedrock_error, _bedrock_stream_error),
    )
}


def frame(protocol: Protocol, data: Mapping[str, Any], event: str | None = None, text: str | None = None) -> bytes:
    """One stream event as the bytes the protocol puts on the wire (`text`: `data` already written)."""
    if protocol.framing == "eventstream":
        return encode_event(dict(data))
    if text is None:
        text = dumps(data)
    if protocol.framing == "ndjson":
        return (text + "\n").encode()
    if protocol.framing == "sse-named":
        name = event or str(data.get("type") or "message")
        return f"event: {name}\ndata: {text}\n\n".encode()
    return f"data: {text}\n\n".encode()


def _int(value: Any) -> int | None:
    """A token count an upstream reported, if it is one (`-1` is none)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_of(body: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """Input and output tokens from a reply body of any protocol, for the request log."""
    usage = body.get("usage")
    if isinstance(usage, Mapping) and "inputTokens" in usage:  # Bedrock Converse
        return _int(usage.get("inputTokens")), _int(usage.get("outputTokens"))
    if isinstance(usage, Mapping):
        tokens_in = _int(usage.get("input_tokens", usage.get("prompt_tokens")))
        return tokens_in, _int(usage.get("output_tokens", usage.get("completion_tokens")))
    meta = body.get("usageMetadata")
    if isinstance(meta, Mapping):
        return _int(meta.get("promptTokenCount")), _int(meta.get("candidatesTokenCount"))
    return _int(body.get("prompt_eval_count")), _int(body.get("eval_count"))
