"""Gemini values that every room reads or writes.

The codec's name, call metadata (the ids Gemini issued, thought signatures), finish reasons,
usage and error payloads.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.ids import derived_call_id
from toolwire.errors import ProviderError
from toolwire.types import (
    AssistantPart,
    Response,
    StopReason,
    ToolCall,
    Usage,
)

__all__ = [
    "NAME",
    "call_metadata",
    "decode_usage",
    "encode_usage",
    "first_candidate",
    "gemini_metadata",
    "provider_error",
    "stop_reason",
    "wire_call_id",
    "wire_finish_reason",
]


NAME = "gemini"


_FINISH_REASONS: dict[str, StopReason] = {
    "MAX_TOKENS": StopReason.MAX_TOKENS,
    "SAFETY": StopReason.CONTENT_FILTER,
    "RECITATION": StopReason.CONTENT_FILTER,
    "BLOCKLIST": StopReason.CONTENT_FILTER,
    "PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
    "SPII": StopReason.CONTENT_FILTER,
    "IMAGE_SAFETY": StopReason.CONTENT_FILTER,
    "IMAGE_PROHIBITED_CONTENT": StopReason.CONTENT_FILTER,
    "IMAGE_RECITATION": StopReason.CONTENT_FILTER,
    "MODEL_ARMOR": StopReason.CONTENT_FILTER,
    # Model-side failures: never relabelled as a normal end (litellm #21744, pydantic-ai #1687).
    "MALFORMED_FUNCTION_CALL": StopReason.ERROR,
    "UNEXPECTED_TOOL_CALL": StopReason.ERROR,
    "TOO_MANY_TOOL_CALLS": StopReason.ERROR,
    "MISSING_THOUGHT_SIGNATURE": StopReason.ERROR,
    "MALFORMED_RESPONSE": StopReason.ERROR,
}


# For rendering a neutral reply that carries no raw value.
_WIRE_FINISH_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "STOP",
    StopReason.TOOL_USE: "STOP",
    StopReason.MAX_TOKENS: "MAX_TOKENS",
    StopReason.CONTENT_FILTER: "SAFETY",
    StopReason.ERROR: "MALFORMED_FUNCTION_CALL",
    StopReason.OTHER: "OTHER",
}


def stop_reason(raw: str | None, has_calls: bool) -> StopReason:
    """Gemini ends tool turns with `STOP` too, so calls are recognised by their presence."""
    if raw is None or raw == "STOP":
        if has_calls:
            return StopReason.TOOL_USE
        return StopReason.END_TURN if raw == "STOP" else StopReason.OTHER
    return _FINISH_REASONS.get(raw, StopReason.OTHER)


def wire_call_id(response: Response, part: AssistantPart) -> str | None:
    """The `functionCall.id` to render: Gemini's own, or ours unless it is derivable on decode."""
    if not isinstance(part, ToolCall):
        return None
    issued = gemini_metadata(part.metadata).get("id")
    if isinstance(issued, str):
        return issued
    position = next(i for i, c in enumerate(response.tool_calls) if c is part)
    if response.id and part.id == derived_call_id(response.id, position):
        return None
    return part.id


def wire_finish_reason(response: Response) -> str:
    """The reply's own finish reason if known, else the wire word for the neutral stop reason."""
    return response.raw_stop_reason or _WIRE_FINISH_REASONS[response.stop_reason]


def encode_usage(usage: Usage) -> dict[str, Any]:
    """Usage as `usageMetadata` (candidates exclude thoughts; the total counts both)."""
    wire: dict[str, Any] = {}
    if usage.input_tokens is not None:
        wire["promptTokenCount"] = usage.input_tokens
    if usage.output_tokens is not None:
        wire["candidatesTokenCount"] = max(0, usage.output_tokens - (usage.reasoning_tokens or 0))
    if usage.reasoning_tokens is not None:
        wire["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cache_read_tokens is not None:
        wire["cachedContentTokenCount"] = usage.cache_read_tokens
    if usage.input_tokens is not None and usage.output_tokens is not None:
        wire["totalTokenCount"] = usage.input_tokens + usage.output_tokens
    return wire


def gemini_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The Gemini-owned values in a part's metadata (never another codec's)."""
    value = metadata.get(NAME)
    return value if isinstance(value, dict) else {}


def call_metadata(call_id: Any, signature: Any) -> dict[str, Any]:
    """`metadata["gemini"]` for a call: the id Gemini issued and the part's thoughtSignature."""
    own: dict[str, Any] = {}
    if isinstance(call_id, str) and call_id:
        own["id"] = call_id
    if isinstance(signature, str):
        own["thought_signature"] = signature
    return {NAME: own} if own else {}


def provider_error(body: dict[str, Any]) -> ProviderError:
    """The `ProviderError` for a `{"error": {code, message, status}}` payload."""
    error = body.get("error")
    details = error if isinstance(error, dict) else {}
    message = details.get("message") if isinstance(details.get("message"), str) else str(error)
    code = details.get("code")
    return ProviderError(
        f"Gemini returned an error payload: {message!r}; see `body` for its status and details.",
        provider=NAME,
        status=code if isinstance(code, int) else None,
        body=body,
    )


def decode_usage(usage: dict[str, Any]) -> Usage:
    """Usage from `usageMetadata`; `output_tokens` counts candidates and thoughts."""

    def count(key: str) -> int | None:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    candidates, thoughts = count("candidatesTokenCount"), count("thoughtsTokenCount")
    # output_tokens counts everything generated, reasoning included (candidates + thoughts): docs/wire-formats.md.
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return Usage(
        input_tokens=count("promptTokenCount"),
        output_tokens=output,
        cache_read_tokens=count("cachedContentTokenCount"),
        reasoning_tokens=thoughts,
    )


def first_candidate(body: dict[str, Any]) -> dict[str, Any] | None:
    """Only the first candidate is read (`candidateCount` > 1 is not modelled)."""
    candidates = body.get("candidates")
    if not isinstance(candidates, list):
        return None
    for candidate in candidates:
        if isinstance(candidate, dict) and candidate.get("index", 0) == 0:
            return candidate
    return None
