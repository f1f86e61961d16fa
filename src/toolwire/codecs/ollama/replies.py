"""Whole `/api/chat` replies (one JSON body, or the final `done` line's fields), read and rendered."""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.wire import (
    list_or_empty,
    require_dict,
)
from toolwire.codecs.ollama.calls import NAME, decode_call, message_metadata, reply_seed
from toolwire.errors import CodecError, ProviderError
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Response,
    StopReason,
    TextPart,
    ThinkingPart,
    Usage,
)

__all__ = [
    "decode_response",
    "decode_usage",
    "done_fields",
    "encode_response",
    "neutral_stop_reason",
    "provider_error",
    "reply_calls",
    "reply_created_at",
]

# Tables

# `done_reason` (server/routes.go): "stop" also ends tool turns, so calls are found by presence.
_STOP_REASONS: dict[str, StopReason] = {"stop": StopReason.END_TURN, "length": StopReason.MAX_TOKENS}
_WIRE_STOP_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "stop",
    StopReason.TOOL_USE: "stop",
    StopReason.MAX_TOKENS: "length",
}


# Encode


# Encode: replies (for test servers and proxies)


def reply_created_at(response: Response) -> str:
    """The `created_at` a rendered reply carries: the one it was decoded with, or the epoch."""
    own = response.message.metadata.get(NAME)
    created_at = own.get("created_at") if isinstance(own, dict) else None
    return created_at if isinstance(created_at, str) and created_at else "1970-01-01T00:00:00Z"


def reply_calls(response: Response, created_at: str) -> list[dict[str, Any]]:
    """Calls as the server renders them; an id is left out only where decoding re-derives it."""
    seed = reply_seed(response.model, created_at)
    calls = []
    for position, call in enumerate(response.tool_calls):
        wire: dict[str, Any] = {}
        if seed is None or call.id != derived_call_id(seed, position):
            wire["id"] = call.id
        # Arguments that came as a (broken) string go back as that string, as older servers send them.
        raw = call.metadata.get("raw_arguments")
        arguments = raw if isinstance(raw, str) else call.arguments
        wire["function"] = {"index": position, "name": call.name, "arguments": arguments}
        calls.append(wire)
    return calls


def _reply_line(response: Response, created_at: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"model": response.model or "", "created_at": created_at, "message": {"role": "assistant", **message}}


def done_fields(response: Response) -> dict[str, Any]:
    """The fields of the final `done: true` line (reason and counts)."""
    fields: dict[str, Any] = {"done": True}
    reason = response.raw_stop_reason or _WIRE_STOP_REASONS.get(response.stop_reason)
    if reason is not None:
        fields["done_reason"] = reason
    usage = response.usage
    if usage is not None and usage.input_tokens is not None:
        fields["prompt_eval_count"] = usage.input_tokens
    if usage is not None and usage.output_tokens is not None:
        fields["eval_count"] = usage.output_tokens
    return fields


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as a non-streamed `/api/chat` body."""
    created_at = reply_created_at(response)
    message: dict[str, Any] = {"content": response.text}
    thinking = _reply_thinking(response)
    if thinking:
        message["thinking"] = thinking
    if response.tool_calls:
        message["tool_calls"] = reply_calls(response, created_at)
    return {**_reply_line(response, created_at, message), **done_fields(response)}


def _reply_thinking(response: Response) -> str:
    return "".join(p.text for p in response.message.parts if isinstance(p, ThinkingPart) and not p.redacted)


# Decode


def provider_error(payload: dict[str, Any]) -> ProviderError:
    """The `ProviderError` for an `{"error": ...}` body or line."""
    error = payload.get("error")
    message = error if isinstance(error, str) else f"ollama returned an error payload: {error!r}"
    return ProviderError(message, provider=NAME, body=payload)


def neutral_stop_reason(raw: Any, has_calls: bool) -> StopReason:
    """The neutral stop reason; `stop` also ends tool turns, so calls are found by presence."""
    if raw is None or raw == "stop":
        # Older servers omit done_reason on a normal end.
        return StopReason.TOOL_USE if has_calls else StopReason.END_TURN
    return _STOP_REASONS.get(raw, StopReason.OTHER)


def decode_usage(body: dict[str, Any]) -> Usage | None:
    """Usage from the prompt and eval counts of a final line."""
    prompt, generated = body.get("prompt_eval_count"), body.get("eval_count")
    if prompt is None and generated is None:
        return None
    return Usage(input_tokens=prompt, output_tokens=generated)


def decode_response(body: dict[str, Any]) -> Response:
    """Read a non-streamed reply; an `{"error": ...}` body raises `ProviderError`."""
    body = require_dict(body, NAME)
    if "error" in body:
        raise provider_error(body)
    message = body.get("message")
    if not isinstance(message, dict):
        raise CodecError(f"The ollama reply has no 'message' object: {body!r}.", provider=NAME)
    parts: list[AssistantPart] = []
    if isinstance(message.get("thinking"), str) and message["thinking"]:
        parts.append(ThinkingPart(text=message["thinking"], provider=NAME))
    if isinstance(message.get("content"), str) and message["content"]:
        parts.append(TextPart(text=message["content"]))
    seed = reply_seed(body.get("model"), body.get("created_at"))
    raw_calls = list_or_empty(message.get("tool_calls"))
    calls = [c for c in (decode_call(raw, seed, i) for i, raw in enumerate(raw_calls)) if c is not None]
    parts.extend(calls)
    raw_stop = body.get("done_reason")
    return Response(
        message=AssistantMessage(parts=parts, metadata=message_metadata(body.get("created_at"), calls)),
        stop_reason=neutral_stop_reason(raw_stop, bool(calls)),
        raw_stop_reason=raw_stop,
        usage=decode_usage(body),
        model=body.get("model"),
    )


# Decode: requests


# Stream decoder
