"""Neutral stream events as OpenAI Responses stream events, one at a time.

`response.created` and `response.in_progress`; per part an output item: a `message` with an
`output_text` content part and `output_text.delta`s, a `reasoning` item with a summary part
and `reasoning_summary_text.delta`s, or a `function_call` with
`function_call_arguments.delta`s and a `.done` holding the whole arguments; each item ends
with `response.output_item.done` carrying it complete. The stream ends with
`response.completed` (or `.incomplete` / `.failed`) whose `output` lists the same items.
Every event has a `sequence_number`.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.codecs.common.wire import dumps
from toolwire.codecs.openai_responses.items import NAME
from toolwire.codecs.openai_responses.replies import encode_response
from toolwire.types import AssistantMessage, AssistantPart, Response, StopReason, TextPart, ThinkingPart, ToolCall

__all__ = ["ResponsesStreamEncoder"]

_ID_PREFIX = {"text": "msg_", "thinking": "rs_", "call": "fc_"}


class ResponsesStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    id_prefix = "resp_"

    def __init__(
        self, model: str | None = None, response_id: str | None = None, *, reply: Response | None = None
    ) -> None:
        super().__init__(model, response_id, reply=reply)
        self._id = self.response_id or "resp_toolwire"  # what the whole body says of an id-less reply
        self._number = 0
        self._items: list[dict[str, Any]] = []

    def start(self) -> list[WireEvent]:
        empty = Response(
            message=AssistantMessage(parts=[]), stop_reason=StopReason.END_TURN, model=self.model, id=self._id
        )
        body = encode_response(empty) | {"status": "in_progress", "usage": None}
        return [self._event("response.created", response=body), self._event("response.in_progress", response=body)]

    def open(self, segment: Segment) -> list[WireEvent]:
        item_id = derived_call_id(self._id, segment.position, _ID_PREFIX[segment.kind])
        segment.state["id"] = item_id
        where = {"output_index": segment.position}
        if segment.kind == "call":
            added: dict[str, Any] = {
                "type": "function_call",
                "id": item_id,
                "call_id": segment.call_id,
                "name": segment.name,
            }
            added |= {"arguments": "", "status": "in_progress"}
            return [self._event("response.output_item.added", **where, item=added)]
        if segment.kind == "thinking":
            added = {"type": "reasoning", "id": item_id, "summary": []}
            part = {"type": "summary_text", "text": ""}
            return [
                self._event("response.output_item.added", **where, item=added),
                self._event("response.reasoning_summary_part.added", **self._at(segment), part=part),
            ]
        added = {"type": "message", "id": item_id, "status": "in_progress", "role": "assistant", "content": []}
        return [
            self._event("response.output_item.added", **where, item=added),
            self._event("response.content_part.added", **self._at(segment), part=_output_text("")),
        ]

    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        if segment.kind == "call":
            return [self._event("response.function_call_arguments.delta", **self._at(segment), delta=text)]
        if segment.kind == "thinking":
            return [self._event("response.reasoning_summary_text.delta", **self._at(segment), delta=text)]
        return [self._event("response.output_text.delta", **self._at(segment), delta=text, logprobs=[])]

    def close(self, segment: Segment) -> list[WireEvent]:
        at, item_id = self._at(segment), segment.state["id"]
        if segment.kind == "call":
            item = {"type": "function_call", "id": item_id, "call_id": segment.call_id, "name": segment.name}
            item |= {"arguments": segment.text, "status": "completed"}
            done = self._event("response.function_call_arguments.done", **at, name=segment.name, arguments=segment.text)
            return [done, self._item_done(segment, item)]
        if segment.kind == "thinking":
            part = {"type": "summary_text", "text": segment.text}
            item = {"type": "reasoning", "id": item_id, "summary": [part]}
            if "encrypted_content" in segment.state:
                item["encrypted_content"] = segment.state["encrypted_content"]
            return [
                self._event("response.reasoning_summary_text.done", **at, text=segment.text),
                self._event("response.reasoning_summary_part.done", **at, part=part),
                self._item_done(segment, item),
            ]
        content = _output_text(segment.text)
        item = {"type": "message", "id": item_id, "status": "completed", "role": "assistant", "content": [content]}
        return [
            self._event("response.output_text.done", **at, text=segment.text, logprobs=[]),
            self._event("response.content_part.done", **at, part=content),
            self._item_done(segment, item),
        ]

    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        match part:
            case TextPart(text=text) | ThinkingPart(text=text):
                if isinstance(part, ThinkingPart) and part.signature and part.provider in (NAME, None):
                    segment.state["encrypted_content"] = part.signature  # sent with the item, if still open
                return self.more(segment, missing_text(segment, text))
            case ToolCall() if not segment.text:
                raw = part.metadata.get("raw_arguments")
                return self.more(
                    segment, raw if isinstance(raw, str) else (dumps(part.arguments) if part.arguments else "")
                )
        return []

    def end(self, response: Response) -> list[WireEvent]:
        final = encode_response(response) | {"id": self._id, "model": self.model or "", "output": self._items}
        kind = {"completed": "response.completed", "failed": "response.failed"}.get(final["status"])
        return [self._event(kind or "response.incomplete", response=final)]

    def _at(self, segment: Segment) -> dict[str, Any]:
        where: dict[str, Any] = {"item_id": segment.state["id"], "output_index": segment.position}
        if segment.kind == "text":
            where["content_index"] = 0
        elif segment.kind == "thinking":
            where["summary_index"] = 0
        return where

    def _item_done(self, segment: Segment, item: dict[str, Any]) -> WireEvent:
        self._items.append(item)
        return self._event("response.output_item.done", output_index=segment.position, item=item)

    def _event(self, kind: str, **fields: Any) -> WireEvent:
        data = {"type": kind, "sequence_number": self._number, **fields}
        self._number += 1
        return WireEvent(data, kind)


def _output_text(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}
