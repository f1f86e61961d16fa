"""Neutral stream events as Gemini `streamGenerateContent` chunks, one at a time.

Text and thought pieces go out as they arrive, one part per chunk. Gemini sends each
function call whole, with a thought signature that a neutral stream tells only at its end:
calls go out from the final reply, in the last chunks, as Gemini itself sends them after the
text. The last chunk holds the finish reason and the usage.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.codecs.gemini.fields import NAME, encode_usage, gemini_metadata, wire_call_id, wire_finish_reason
from toolwire.types import AssistantPart, Done, Response, StreamEvent, TextPart, ThinkingPart, ToolCall

__all__ = ["GeminiStreamEncoder"]


class GeminiStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    def __init__(
        self, model: str | None = None, response_id: str | None = None, *, reply: Response | None = None
    ) -> None:
        super().__init__(model, response_id, reply=reply)
        self._held: list[WireEvent] = []  # sent with the next chunk: the last one carries the finish

    def feed(self, event: StreamEvent) -> list[WireEvent]:
        """See `SegmentedEncoder.feed`; the finish reason rides on the last call's chunk, as Gemini sends it."""
        out = super().feed(event)
        calls, self._held = self._held, []
        if not isinstance(event, Done) or not calls or not out:
            return calls + out
        *before, end = out
        last = calls[-1].data
        calls[-1] = WireEvent(last | end.data | {"candidates": [last["candidates"][0] | end.data["candidates"][0]]})
        return before + calls

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
                call: dict[str, Any] = {"name": part.name, "args": part.arguments}
                call_id = self._call_id(part, own.get("id"))
                if call_id is not None:
                    call["id"] = call_id
                signature = own.get("thought_signature")
                extra = {"thoughtSignature": signature} if isinstance(signature, str) else {}
                return self._send_call(segment, call, extra)
        return []

    def end(self, response: Response) -> list[WireEvent]:
        candidate = {"finishReason": wire_finish_reason(response), "index": 0}
        body: dict[str, Any] = {"candidates": [candidate]}
        if response.usage is not None:
            body["usageMetadata"] = encode_usage(response.usage)
        return [WireEvent(body | self._meta())]

    def _send_call(
        self, segment: Segment, call: dict[str, Any], extra: dict[str, Any] | None = None
    ) -> list[WireEvent]:
        segment.state["sent"] = True
        self._held.append(self._chunk({"functionCall": call, **(extra or {})}))
        return []

    def _call_id(self, call: ToolCall, issued: Any) -> str | None:
        if self.reply is not None:  # rendering a known reply: the id as the whole body gives it
            return wire_call_id(self.reply, call)
        return issued if isinstance(issued, str) else call.id

    def _with_signature(self, out: list[WireEvent], signature: Any, fields: dict[str, Any]) -> list[WireEvent]:
        """Gemini puts a part's signature on its last piece; here it comes as an empty piece."""
        if isinstance(signature, str):
            out.append(self._chunk({"text": "", **fields, "thoughtSignature": signature}))
        return out

    def _chunk(self, part: dict[str, Any]) -> WireEvent:
        candidate = {"content": {"role": "model", "parts": [part]}, "index": 0}
        return WireEvent({"candidates": [candidate]} | self._meta())

    def _meta(self) -> dict[str, Any]:
        meta = {"modelVersion": self.model, "responseId": self.response_id}
        return {key: value for key, value in meta.items() if value is not None}
