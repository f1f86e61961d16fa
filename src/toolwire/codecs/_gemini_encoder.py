"""Neutral stream events as Gemini `streamGenerateContent` chunks, one at a time.

Text and thought pieces go out as they arrive, one part per chunk. Gemini sends each
function call whole, with a thought signature that a neutral stream tells only at its end:
calls go out from the final reply, in the last chunks, as Gemini itself sends them after the
text. The last chunk holds the finish reason and the usage.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs._gemini_stream import NAME, _encode_usage, _wire_finish_reason, gemini_metadata
from toolwire.codecs._stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.types import AssistantPart, Response, TextPart, ThinkingPart, ToolCall

__all__ = ["GeminiStreamEncoder"]


class GeminiStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    def open(self, segment: Segment) -> list[WireEvent]:
        return []

    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        if segment.kind == "text":
            return [self._chunk({"text": text})]
        if segment.kind == "thinking":
            return [self._chunk({"text": text, "thought": True})]
        return []  # arguments wait for the whole call

    def close(self, segment: Segment) -> list[WireEvent]:
        return []

    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        match part:
            case TextPart(text=text):
                signature = gemini_metadata(part.metadata).get("thought_signature")
                return self._with_signature(self.more(segment, missing_text(segment, text)), signature, {})
            case ThinkingPart(text=text):
                signature = part.signature if part.provider in (NAME, None) else None
                out = self.more(segment, missing_text(segment, text))
                return self._with_signature(out, signature, {"thought": True})
            case ToolCall() if not segment.state.get("sent"):
                own = gemini_metadata(part.metadata)
                issued = own.get("id")
                call: dict[str, Any] = {"id": issued if isinstance(issued, str) else part.id, "name": part.name}
                call["args"] = part.arguments
                signature = own.get("thought_signature")
                extra = {"thoughtSignature": signature} if isinstance(signature, str) else {}
                return self._send_call(segment, call, extra)
        return []

    def end(self, response: Response) -> list[WireEvent]:
        candidate = {"finishReason": _wire_finish_reason(response), "index": 0}
        body: dict[str, Any] = {"candidates": [candidate]}
        if response.usage is not None:
            body["usageMetadata"] = _encode_usage(response.usage)
        return [WireEvent(body | self._meta())]

    def _send_call(
        self, segment: Segment, call: dict[str, Any], extra: dict[str, Any] | None = None
    ) -> list[WireEvent]:
        segment.state["sent"] = True
        return [self._chunk({"functionCall": call, **(extra or {})})]

    def _with_signature(self, out: list[WireEvent], signature: Any, fields: dict[str, Any]) -> list[WireEvent]:
        """Gemini puts a part's signature on its last piece; here it comes as an empty piece."""
        if isinstance(signature, str):
            out.append(self._chunk({"text": "", **fields, "thoughtSignature": signature}))
        return out

    def _chunk(self, part: dict[str, Any]) -> WireEvent:
        candidate = {"content": {"role": "model", "parts": [part]}, "index": 0}
        return WireEvent({"candidates": [candidate]} | self._meta())

    def _meta(self) -> dict[str, Any]:
        return {"modelVersion": self.model, "responseId": self.response_id}
