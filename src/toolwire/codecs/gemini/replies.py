"""Whole Gemini replies: one `GenerateContentResponse`, read and rendered.

A streamed chunk is itself a whole `GenerateContentResponse`, so the non-streaming decode is
the stream decoder fed one chunk: both give the same `Response` by construction.
"""

from __future__ import annotations

from typing import Any, assert_never

from toolwire.codecs.common.wire import require_dict
from toolwire.codecs.gemini.fields import (
    NAME,
    encode_usage,
    gemini_metadata,
    wire_call_id,
    wire_finish_reason,
)
from toolwire.codecs.gemini.stream_decoder import GeminiStreamDecoder
from toolwire.types import (
    AssistantPart,
    Response,
    TextPart,
    ThinkingPart,
    ToolCall,
)

__all__ = ["decode_response", "encode_response"]


def encode_response(response: Response) -> dict[str, Any]:
    """Render a reply as one non-streaming `GenerateContentResponse`."""
    parts = [_encode_reply_part(part, wire_call_id(response, part)) for part in response.message.parts]
    candidate: dict[str, Any] = {
        "content": {"role": "model", "parts": [p for p in parts if p is not None]},
        "finishReason": wire_finish_reason(response),
        "index": 0,
    }
    if not candidate["content"]["parts"]:
        candidate["content"] = {}  # what Gemini sends for an empty turn (e.g. MALFORMED_FUNCTION_CALL)
    body: dict[str, Any] = {"candidates": [candidate]}
    return with_reply_meta(body, response, usage=True)


def _encode_reply_part(part: AssistantPart, call_id: str | None) -> dict[str, Any] | None:
    match part:
        case TextPart():
            wire: dict[str, Any] = {"text": part.text}
            signature = gemini_metadata(part.metadata).get("thought_signature")
        case ThinkingPart():
            wire = {"text": part.text, "thought": True}
            signature = part.signature if part.provider in (NAME, None) else None
        case ToolCall():
            call: dict[str, Any] = {"name": part.name, "args": part.arguments}
            if call_id is not None:
                call["id"] = call_id
            wire = {"functionCall": call}
            signature = gemini_metadata(part.metadata).get("thought_signature")
        case _:
            assert_never(part)
    if isinstance(signature, str):
        wire["thoughtSignature"] = signature
    return wire


def with_reply_meta(body: dict[str, Any], response: Response, *, usage: bool = False) -> dict[str, Any]:
    if usage and response.usage is not None:
        body["usageMetadata"] = encode_usage(response.usage)
    if response.model is not None:
        body["modelVersion"] = response.model
    if response.id is not None:
        body["responseId"] = response.id
    return body


def decode_response(body: Any) -> Response:
    """Read a non-streaming body: the stream decoder fed it as its only chunk."""
    decoder = GeminiStreamDecoder()
    decoder.feed(require_dict(body, NAME, "response body"))
    return decoder.finish()
