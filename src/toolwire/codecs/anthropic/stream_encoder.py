"""Neutral stream events as Anthropic Messages stream events, one at a time.

`message_start`, then per part a `content_block_start` / `content_block_delta`s /
`content_block_stop` (text, thinking, or tool_use whose arguments stream as
`input_json_delta` fragments), then `message_delta` with the stop reason and the usage, and
`message_stop`. A thinking signature known only at the end goes as a `signature_delta` for
that block's index (SDKs accumulate deltas by index).
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.anthropic.replies import encode_reply_part, encode_usage, reply_input, wire_stop_reason
from toolwire.codecs.anthropic.requests import NAME
from toolwire.codecs.common.stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.codecs.common.wire import dumps, dumps_string
from toolwire.types import AssistantPart, Response, TextPart, ThinkingPart, ToolCall

__all__ = ["AnthropicStreamEncoder"]

_DELTAS = {
    "text": ("text_delta", "text"),
    "thinking": ("thinking_delta", "thinking"),
    "call": ("input_json_delta", "partial_json"),
}


def _event(data: dict[str, Any]) -> WireEvent:
    return WireEvent(data, data["type"])


class AnthropicStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    id_prefix = "msg_"

    def start(self) -> list[WireEvent]:
        message: dict[str, Any] = {"id": self.response_id} if self.response_id is not None else {}
        message.update(type="message", role="assistant")
        if self.model is not None:
            message["model"] = self.model
        message.update(content=[], stop_reason=None, stop_sequence=None)
        usage = self.reply.usage if self.reply is not None else None
        if self.reply is None:
            message["usage"] = {"input_tokens": 0, "output_tokens": 0}  # a relay learns them at the end
        elif usage is not None:  # what Anthropic reports at the start: the input, a token of output
            output = usage.output_tokens
            message["usage"] = encode_usage(usage) | {"output_tokens": min(output, 1) if output is not None else None}
            message["usage"].pop("output_tokens_details", None)
        return [_event({"type": "message_start", "message": message}), _event({"type": "ping"})]

    def open(self, segment: Segment) -> list[WireEvent]:
        block: dict[str, Any]
        if segment.kind == "text":
            block = {"type": "text", "text": ""}
        elif segment.kind == "thinking":
            block = {"type": "thinking", "thinking": "", "signature": ""}
        else:
            block = {"type": "tool_use", "id": segment.call_id, "name": segment.name, "input": {}}
        return [_event({"type": "content_block_start", "index": segment.position, "content_block": block})]

    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        kind, key = _DELTAS[segment.kind]
        return [self._delta(segment, {"type": kind, key: text}, f'{{"type":"{kind}","{key}":{dumps_string(text)}}}')]

    def close(self, segment: Segment) -> list[WireEvent]:
        stop = _event({"type": "content_block_stop", "index": segment.position})
        if segment.kind == "call" and not segment.text:  # a no-argument tool streams one empty fragment
            return [*self.delta(segment, ""), stop]
        return [stop]

    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        match part:
            case ThinkingPart(redacted=True):
                return []  # its start block held everything
            case TextPart(text=text) | ThinkingPart(text=text):
                out = self.more(segment, missing_text(segment, text))
                if isinstance(part, ThinkingPart) and part.signature and part.provider in (NAME, None):
                    out.append(self._delta(segment, {"type": "signature_delta", "signature": part.signature}))
                return out
            case ToolCall() if not segment.text:
                raw = reply_input(part)
                return self.more(segment, raw if isinstance(raw, str) else (dumps(raw) if raw else ""))
        return []

    def whole(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        if isinstance(part, ThinkingPart) and part.redacted:  # never streamed: its start holds it all
            block = encode_reply_part(part)
            return [_event({"type": "content_block_start", "index": segment.position, "content_block": block})]
        return super().whole(segment, part)

    def end(self, response: Response) -> list[WireEvent]:
        delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": wire_stop_reason(response)}}
        delta["delta"]["stop_sequence"] = None
        if response.usage is not None:
            delta["usage"] = encode_usage(response.usage)
        elif self.reply is None:  # the SDKs read message_delta.usage.output_tokens unconditionally
            delta["usage"] = {"output_tokens": 0}
        return [_event(delta), _event({"type": "message_stop"})]

    def _delta(self, segment: Segment, delta: dict[str, Any], written: str | None = None) -> WireEvent:
        """A `content_block_delta` holding `delta` (`written`: `dumps(delta)`, when the caller wrote it faster)."""
        data = {"type": "content_block_delta", "index": segment.position, "delta": delta}
        written = written if written is not None else dumps(delta)
        text = f'{{"type":"content_block_delta","index":{segment.position},"delta":{written}}}'
        return WireEvent(data, "content_block_delta", text)
