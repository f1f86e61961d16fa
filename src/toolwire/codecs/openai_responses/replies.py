"""Whole Responses API replies (`Response` objects), read and rendered; stop reasons and usage."""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.wire import require_dict
from toolwire.codecs.openai_responses.items import (
    NAME,
    as_int,
    as_str,
    decode_item,
    encode_parts,
)
from toolwire.errors import CodecError, ProviderError
from toolwire.types import (
    AssistantMessage,
    Response,
    StopReason,
    Usage,
)

__all__ = [
    "decode_response",
    "decode_usage",
    "encode_response",
    "encode_usage",
    "neutral_stop_reason",
    "raise_for_error",
]


_INCOMPLETE_STOP = {"max_output_tokens": StopReason.MAX_TOKENS, "content_filter": StopReason.CONTENT_FILTER}


_STOP_STATUS = {
    StopReason.END_TURN: ("completed", None),
    StopReason.TOOL_USE: ("completed", None),
    StopReason.MAX_TOKENS: ("incomplete", "max_output_tokens"),
    StopReason.CONTENT_FILTER: ("incomplete", "content_filter"),
    StopReason.ERROR: ("failed", None),
    StopReason.OTHER: ("cancelled", None),
}


def raise_for_error(body: dict[str, Any]) -> None:
    """Raise `ProviderError` for an `{"error": ...}` body (a failed Response with output is read)."""
    error = body.get("error")
    if error and "output" not in body:
        message = error.get("message") if isinstance(error, dict) else error
        raise ProviderError(
            f"The OpenAI Responses API returned an error: {message!r}; fix the request or retry later.",
            provider=NAME,
            body=body,
        )


def decode_response(body: dict[str, Any]) -> Response:
    """Read a Response object; an `{"error": ...}` body raises `ProviderError`."""
    body = require_dict(body, NAME)
    raise_for_error(body)
    output = body.get("output")
    if not isinstance(output, list):
        raise CodecError(
            f"An openai-responses body needs an 'output' list, got {output!r}; pass the whole response object.",
            provider=NAME,
        )
    seed = as_str(body.get("id")) or ""
    parts = [part for index, item in enumerate(output) for part in decode_item(item, seed, index)]
    message = AssistantMessage(parts=parts)
    stop, raw = neutral_stop_reason(body.get("status"), body.get("incomplete_details"), bool(message.tool_calls))
    return Response(
        message=message,
        stop_reason=stop,
        raw_stop_reason=raw,
        usage=decode_usage(body.get("usage")),
        model=as_str(body.get("model")) or None,
        id=as_str(body.get("id")),
    )


def neutral_stop_reason(status: Any, incomplete: Any, has_calls: bool) -> tuple[StopReason, str | None]:
    # Failure states come first: a call cut off by max_output_tokens is not a tool turn
    # (vllm #53269: `tool_calls` hiding `length`).
    """The neutral stop reason and raw reason from `status` and `incomplete_details`."""
    reason = as_str(incomplete.get("reason")) if isinstance(incomplete, dict) else None
    if status == "incomplete":
        return _INCOMPLETE_STOP.get(reason or "", StopReason.OTHER), reason or "incomplete"
    if status == "failed":
        return StopReason.ERROR, "failed"
    if has_calls:
        return StopReason.TOOL_USE, as_str(status)
    if status == "completed":
        return StopReason.END_TURN, "completed"
    return StopReason.OTHER, as_str(status)


def decode_usage(usage: Any) -> Usage | None:
    """Usage from a Response's `usage` object, `None` when absent."""
    if not isinstance(usage, dict):
        return None
    inputs = usage.get("input_tokens_details")
    outputs = usage.get("output_tokens_details")
    return Usage(
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        cache_read_tokens=as_int(inputs.get("cached_tokens")) if isinstance(inputs, dict) else None,
        reasoning_tokens=as_int(outputs.get("reasoning_tokens")) if isinstance(outputs, dict) else None,
    )


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as a Response object, deriving item ids the reply does not carry."""
    seed = response.id or "resp_toolwire"
    output = encode_parts(response.message.parts, seed)
    for item in output:
        if item["type"] == "function_call":
            item["status"] = "completed"
    status, reason = _STOP_STATUS[response.stop_reason]
    if response.stop_reason is StopReason.OTHER and response.raw_stop_reason in ("cancelled", "in_progress", "queued"):
        status = response.raw_stop_reason
    error = {"code": "server_error", "message": "The model failed to complete the response."}
    return {
        "id": seed,
        "object": "response",
        "created_at": 1_700_000_000,
        "status": status,
        "error": error if status == "failed" else None,
        "incomplete_details": {"reason": reason} if reason else None,
        "model": response.model or "",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": encode_usage(response.usage),
    }


def encode_usage(usage: Usage | None) -> dict[str, Any] | None:
    """Usage as the Responses API reports it (`None` when unknown)."""
    if usage is None:
        return None
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    return {
        "input_tokens": inputs,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens or 0, "cache_write_tokens": 0},
        "output_tokens": outputs,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": inputs + outputs,
    }
