"""Neutral stream events as ConverseStream events, one at a time, in botocore's parsed form.

`messageStart`, then per part: a `contentBlockStart` for a tool call (text and reasoning blocks
open with their first delta, as Bedrock sends them), `contentBlockDelta`s, `contentBlockStop`;
then `messageStop` with the stop reason and `metadata` with the usage. Each `WireEvent` holds
`{event type: payload}` and names its type; the AWS event-stream framing writes it as a frame.
A tool without arguments streams `"{}"` as its input, which every client parses.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.bedrock.blocks import reply_input
from toolwire.codecs.bedrock.replies import encode_usage, wire_stop_reason
from toolwire.codecs.common.stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.codecs.common.wire import dumps
from toolwire.types import AssistantPart, Response, TextPart, ThinkingPart, ToolCall

__all__ = ["BedrockStreamEncoder"]


def _event(name: str, payload: dict[str, Any]) -> WireEvent:
    return WireEvent({name: payload}, name)


class BedrockStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    def start(self) -> list[WireEvent]:
        return [_event("messageStart", {"role": "assistant"})]

    def open(self, segment: Segment) -> list[WireEvent]:
        if segment.kind != "call":
            return []
        start = {"toolUse": {"toolUseId": segment.call_id, "name": segment.name}}
        return [_event("contentBlockStart", {"start": start, "contentBlockIndex": segment.position})]

    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        if segment.kind == "text":
            return [self._delta(segment, {"text": text})]
        if segment.kind == "thinking":
            return [self._delta(segment, {"reasoningContent": {"text": text}})]
        return [self._delta(segment, {"toolUse": {"input": text}})]

    def close(self, segment: Segment) -> list[WireEvent]:
        stop = _event("contentBlockStop", {"contentBlockIndex": segment.position})
        if segment.kind == "call" and not segment.text:
            return [self._delta(segment, {"toolUse": {"input": "{}"}}), stop]
        return [stop]

    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        match part:
            case ThinkingPart(redacted=True):
                return []  # sent whole (`whole`)
            case TextPart(text=text) | ThinkingPart(text=text):
                out = self.more(segment, missing_text(segment, text))
                if isinstance(part, ThinkingPart) and part.signature:
                    out.append(self._delta(segment, {"reasoningContent": {"signature": part.signature}}))
                return out
            case ToolCall() if not segment.text:
                raw = reply_input(part)
                return self.more(segment, raw if isinstance(raw, str) else (dumps(raw) if raw else ""))
        return []

    def whole(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        if isinstance(part, ThinkingPart) and part.redacted:
            return [self._delta(segment, {"reasoningContent": {"redactedContent": part.signature or ""}})]
        return super().whole(segment, part)

    def end(self, response: Response) -> list[WireEvent]:
        stop = _event("messageStop", {"stopReason": wire_stop_reason(response)})
        metadata = {"usage": encode_usage(response.usage), "metrics": {"latencyMs": 0}}
        return [stop, _event("metadata", metadata)]

    def _delta(self, segment: Segment, delta: dict[str, Any]) -> WireEvent:
        return _event("contentBlockDelta", {"delta": delta, "contentBlockIndex": segment.position})
