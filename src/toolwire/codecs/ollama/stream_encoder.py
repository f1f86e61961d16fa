"""Neutral stream events as Ollama `/api/chat` NDJSON lines, one at a time.

Thinking and content pieces go out as they arrive; Ollama's tool parser sends each call
whole, after the content: calls go out from the final reply at the end. The last line has
`done: true`, the reason and the counts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from toolwire.codecs.common.stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.codecs.ollama.replies import done_fields, reply_calls, reply_created_at
from toolwire.types import AssistantPart, Response, TextPart, ThinkingPart, ToolCall

__all__ = ["OllamaStreamEncoder"]


class OllamaStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    def __init__(
        self, model: str | None = None, response_id: str | None = None, *, reply: Response | None = None
    ) -> None:
        super().__init__(model, response_id, reply=reply)
        if reply is not None:  # rendering a known reply: its timestamp and calls as the whole body has them
            self._created_at = reply_created_at(reply)
            self._rendered = reply_calls(reply, self._created_at)
        else:
            self._created_at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            self._rendered = []

    def open(self, segment: Segment) -> list[WireEvent]:
        return []

    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        if segment.kind == "text":
            return [self._line({"content": text})]
        if segment.kind == "thinking":
            return [self._line({"content": "", "thinking": text})]
        return []  # arguments wait for the whole call

    def close(self, segment: Segment) -> list[WireEvent]:
        return []

    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        match part:
            case TextPart(text=text) | ThinkingPart(text=text):
                return self.more(segment, missing_text(segment, text))
            case ToolCall() if not segment.state.get("sent") and self.reply is not None:
                segment.state["sent"] = True
                position = next(i for i, call in enumerate(self.reply.tool_calls) if call is part)
                return [self._line({"content": "", "tool_calls": [self._rendered[position]]})]
            case ToolCall() if not segment.state.get("sent"):
                raw = part.metadata.get("raw_arguments")
                return self._send_call(segment, raw if isinstance(raw, str) else part.arguments)
        return []

    def end(self, response: Response) -> list[WireEvent]:
        return [WireEvent(self._line({"content": ""}).data | done_fields(response))]

    def _send_call(self, segment: Segment, arguments: Any) -> list[WireEvent]:
        segment.state["sent"] = True
        function = {"index": segment.call_index, "name": segment.name, "arguments": arguments}
        return [self._line({"content": "", "tool_calls": [{"id": segment.call_id, "function": function}]})]

    def _line(self, message: dict[str, Any]) -> WireEvent:
        body = {"model": self.model or "", "created_at": self._created_at, "message": {"role": "assistant", **message}}
        return WireEvent(body | {"done": False})
