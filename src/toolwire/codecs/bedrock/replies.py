"""Whole Converse replies, read and rendered; stop reasons, usage and the stream's exceptions.

A reply is `{"output": {"message": ...}, "stopReason", "usage", "metrics"}`; it has no id and
no model name (the caller knows the model). Every `stopReason` of the service model maps to a
neutral one with the raw word kept; none is invented when rendering.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.bedrock.blocks import NAME, decode_assistant_blocks, encode_assistant_part
from toolwire.codecs.common.wire import object_or_empty, require_dict
from toolwire.errors import BadRequestError, ProviderError, RateLimitError, ToolwireError
from toolwire.types import AssistantMessage, Response, StopReason, Usage

__all__ = [
    "EXCEPTIONS",
    "build_response",
    "decode_response",
    "decode_usage",
    "encode_response",
    "encode_usage",
    "stream_exception",
    "wire_stop_reason",
]

# Tables

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "content_filtered": StopReason.CONTENT_FILTER,
    "guardrail_intervened": StopReason.CONTENT_FILTER,
    # The model wrote something Bedrock could not read: a failure, never a normal end.
    "malformed_model_output": StopReason.ERROR,
    "malformed_tool_use": StopReason.ERROR,
}
_WIRE_STOP_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "end_turn",
    StopReason.TOOL_USE: "tool_use",
    StopReason.MAX_TOKENS: "max_tokens",
    StopReason.CONTENT_FILTER: "content_filtered",
    StopReason.ERROR: "malformed_model_output",
    StopReason.OTHER: "end_turn",
}

# The exception events of ConverseStream: the error type and HTTP status each stands for.
EXCEPTIONS: dict[str, tuple[type[ToolwireError], int]] = {
    "internalServerException": (ProviderError, 500),
    "modelStreamErrorException": (ProviderError, 424),
    "validationException": (BadRequestError, 400),
    "throttlingException": (RateLimitError, 429),
    "serviceUnavailableException": (ProviderError, 503),
}


# Encode


def wire_stop_reason(response: Response) -> str:
    """The reply's raw stop reason when it is Bedrock's own word, else the word for the neutral one."""
    raw = response.raw_stop_reason
    if raw is not None and raw in _STOP_REASONS:
        return raw
    return _WIRE_STOP_REASONS[response.stop_reason]


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as a Converse body."""
    content = [b for p in response.message.parts for b in encode_assistant_part(p, reply=True)]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": wire_stop_reason(response),
        "usage": encode_usage(response.usage),
        "metrics": {"latencyMs": 0},
    }


def encode_usage(usage: Usage | None) -> dict[str, Any]:
    """Usage as Converse reports it (its three counts are required: 0 when unknown)."""
    usage = usage or Usage()
    tokens_in, tokens_out = usage.input_tokens or 0, usage.output_tokens or 0
    wire: dict[str, Any] = {"inputTokens": tokens_in, "outputTokens": tokens_out, "totalTokens": tokens_in + tokens_out}
    if usage.cache_read_tokens is not None:
        wire["cacheReadInputTokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens is not None:
        wire["cacheWriteInputTokens"] = usage.cache_write_tokens
    return wire


# Decode


def decode_response(body: dict[str, Any]) -> Response:
    """Read a Converse body; an error body (`{"message": ...}` alone) raises `ProviderError`."""
    body = require_dict(body, NAME, "response body")
    if "output" not in body and isinstance(body.get("message"), str):
        raise ProviderError(f"Bedrock reported an error: {body['message']}", provider=NAME, body=body)
    message = object_or_empty(object_or_empty(body.get("output")).get("message"))
    content = message.get("content")
    parts = decode_assistant_blocks(content if isinstance(content, list) else [])
    return build_response(AssistantMessage(parts=parts), body.get("stopReason"), body.get("usage"))


def build_response(message: AssistantMessage, raw: Any, usage: Any) -> Response:
    """The neutral reply from a decoded message, its stop reason and its usage."""
    reason = _STOP_REASONS.get(raw, StopReason.OTHER) if isinstance(raw, str) else StopReason.OTHER
    # Calls are recognised by presence, but a truncated, filtered or malformed turn stays visible.
    if message.tool_calls and reason in (StopReason.END_TURN, StopReason.OTHER):
        reason = StopReason.TOOL_USE
    return Response(
        message=message,
        stop_reason=reason,
        raw_stop_reason=raw if isinstance(raw, str) else None,
        usage=decode_usage(usage),
    )


def decode_usage(usage: Any) -> Usage | None:
    """Usage from its wire object (cache reads and writes included), `None` when absent."""
    if not isinstance(usage, dict):
        return None
    return Usage(
        input_tokens=usage.get("inputTokens"),
        output_tokens=usage.get("outputTokens"),
        cache_read_tokens=usage.get("cacheReadInputTokens"),
        cache_write_tokens=usage.get("cacheWriteInputTokens"),
    )


def stream_exception(name: str, payload: Any) -> ToolwireError:
    """The typed error for an exception event of the stream (`throttlingException`: `RateLimitError`)."""
    kind, status = EXCEPTIONS.get(name, (ProviderError, 500))
    text = object_or_empty(payload).get("message") or "no message"
    return kind(f"Bedrock sent {name} mid-stream: {text}", provider=NAME, status=status, body={name: payload})
