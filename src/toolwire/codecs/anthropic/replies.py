"""Whole Messages API replies (`type: "message"` bodies), read and rendered.

Stop reasons, usage and error bodies live here; the stream rooms reuse them. Content blocks
are read by `blocks.decode_assistant_blocks`, the same reader a request's history uses.
"""

from __future__ import annotations

from typing import Any, assert_never

from toolwire.codecs.anthropic.blocks import (
    NAME,
    decode_assistant_blocks,
)
from toolwire.codecs.common.wire import object_or_empty, require_dict
from toolwire.errors import ProviderError
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Response,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
)

__all__ = [
    "build_response",
    "decode_response",
    "decode_usage",
    "encode_reply_part",
    "encode_response",
    "encode_usage",
    "neutral_stop_reason",
    "provider_error",
    "reply_input",
    "wire_stop_reason",
]


# Tables

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "refusal": StopReason.CONTENT_FILTER,
    "pause_turn": StopReason.OTHER,  # a long-running server tool paused; the caller sends the turn back
}
# For rendering a reply without a raw value: the first wire word of each reason (OTHER/ERROR: end_turn).
_WIRE_STOP_REASONS: dict[StopReason, str] = {
    v: k for k, v in reversed(_STOP_REASONS.items()) if v is not StopReason.OTHER
}

# Encode


def wire_stop_reason(response: Response) -> str | None:
    """The reply's raw stop reason if it has one, else the wire word for the neutral one."""
    if response.raw_stop_reason is not None:
        return response.raw_stop_reason
    return _WIRE_STOP_REASONS.get(response.stop_reason, "end_turn")


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as a Message body."""
    body: dict[str, Any] = {} if response.id is None else {"id": response.id}
    body.update(type="message", role="assistant")
    if response.model is not None:
        body["model"] = response.model
    body["content"] = [encode_reply_part(p) for p in response.message.parts]
    body["stop_reason"] = wire_stop_reason(response)
    body["stop_sequence"] = None
    if response.usage is not None:
        body["usage"] = encode_usage(response.usage)
    return body


def encode_reply_part(part: AssistantPart) -> dict[str, Any]:
    """One assistant part as a reply content block."""
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ThinkingPart() if part.redacted:
            return {"type": "redacted_thinking", "data": part.signature or ""}
        case ThinkingPart():
            return {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}
        case ToolCall():
            return {"type": "tool_use", "id": part.id, "name": part.name, "input": reply_input(part)}
        case _:
            assert_never(part)


def reply_input(call: ToolCall) -> Any:
    # A call decoded from broken JSON keeps its raw text; sending that text back makes the
    # decoder reach the same arguments and metadata (only a test server ever renders this).
    """A call's `input` as rendered: the raw text of broken arguments, so decoding reaches them again."""
    raw = call.metadata.get("raw_arguments")
    return raw if isinstance(raw, str) else call.arguments


def encode_usage(usage: Usage) -> dict[str, Any]:
    """Usage as the Messages API reports it."""
    wire: dict[str, Any] = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    wire["cache_read_input_tokens"] = usage.cache_read_tokens
    if usage.reasoning_tokens is not None:
        wire["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return wire


# Decode


def decode_response(body: dict[str, Any]) -> Response:
    """Read a Message body; an `{"type": "error"}` body raises `ProviderError`."""
    body = require_dict(body, NAME, "response body")
    if body.get("type") == "error":
        raise provider_error(body)
    content = body.get("content")
    message = AssistantMessage(parts=decode_assistant_blocks(content if isinstance(content, list) else None))
    return build_response(message, body.get("stop_reason"), body.get("usage"), body.get("model"), body.get("id"))


def build_response(message: AssistantMessage, raw: Any, usage: Any, model: Any, response_id: Any) -> Response:
    """The neutral reply from a decoded message and the body's (or stream's) head fields."""
    stop_reason = neutral_stop_reason(raw, bool(message.tool_calls))
    usage = decode_usage(usage)
    return Response(
        message=message, stop_reason=stop_reason, raw_stop_reason=raw, usage=usage, model=model, id=response_id
    )


def neutral_stop_reason(raw: Any, has_calls: bool) -> StopReason:
    """The neutral stop reason; calls are recognised by presence, a truncated or refused turn stays visible."""
    reason = _STOP_REASONS.get(raw, StopReason.OTHER) if isinstance(raw, str) else StopReason.OTHER
    # Calls are recognised by presence (docs/wire-formats.md), but a truncated or refused turn stays visible.
    if has_calls and reason in (StopReason.END_TURN, StopReason.OTHER):
        return StopReason.TOOL_USE
    return reason


def decode_usage(usage: Any) -> Usage | None:
    """Usage from its wire object, `None` when absent."""
    if not isinstance(usage, dict):
        return None
    details = usage.get("output_tokens_details")
    return Usage(
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_tokens=usage.get("cache_read_input_tokens"),
        reasoning_tokens=details.get("thinking_tokens") if isinstance(details, dict) else None,
    )


def provider_error(payload: dict[str, Any]) -> ProviderError:
    """The `ProviderError` for an `{"type": "error"}` body or stream event."""
    error = object_or_empty(payload.get("error"))
    message = f"Anthropic reported an error of type {error.get('type')!r}: {error.get('message') or 'no message'}"
    return ProviderError(message, provider=NAME, body=payload)


# Stream decoder
