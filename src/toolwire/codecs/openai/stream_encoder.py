"""Neutral stream events as OpenAI `chat.completion.chunk`s, one at a time.

A first chunk with the role, then content / `reasoning_content` pieces and `tool_calls`
entries (id, type and name on a call's first entry, argument fragments on the rest, all
keyed by the call's `index`), then a chunk with the finish reason and, as
`stream_options.include_usage` asks, a last `choices: []` chunk with the usage. The `[DONE]`
marker is the transport's, not an event.
"""

from __future__ import annotations

import time
from typing import Any

from toolwire.codecs.common.stream_encoding import Segment, SegmentedEncoder, WireEvent, missing_text
from toolwire.codecs.common.wire import dumps, dumps_string
from toolwire.codecs.openai.messages import NAME, REASONING_FIELDS, is_refusal
from toolwire.codecs.openai.replies import REPLY_REASONING_FIELD, encode_usage, finish_reason
from toolwire.types import AssistantPart, Response, TextPart, ThinkingPart, ToolCall

__all__ = ["OpenAIStreamEncoder"]

_UNFINISHED = ',"logprobs":null,"finish_reason":null}]}'  # how every chunk but the last ends


class OpenAIStreamEncoder(SegmentedEncoder):
    """See the module docstring."""

    id_prefix = "chatcmpl-"

    def __init__(
        self, model: str | None = None, response_id: str | None = None, *, reply: Response | None = None
    ) -> None:
        super().__init__(model, response_id, reply=reply)
        self._head: dict[str, Any] = {} if self.response_id is None else {"id": self.response_id}
        self._head.update(object="chat.completion.chunk", created=int(time.time()))
        if self.model is not None:
            self._head["model"] = self.model
        self._head_text: str | None = None

    def start(self) -> list[WireEvent]:
        return [self._chunk({"role": "assistant", "content": ""})]

    def open(self, segment: Segment) -> list[WireEvent]:
        if segment.kind != "call":
            return []
        function = {"name": segment.name, "arguments": ""}
        entry = {"index": segment.call_index, "id": segment.call_id, "type": "function", "function": function}
        opaque = segment.part.metadata.get(NAME) if segment.part is not None else None
        if isinstance(opaque, dict) and "extra_content" in opaque:
            entry["extra_content"] = opaque["extra_content"]  # Gemini's OpenAI endpoint: its signature
        return [self._chunk({"tool_calls": [entry]})]

    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        part = segment.part
        if isinstance(part, TextPart) and is_refusal(part):
            return [self._chunk({"refusal": text})]
        if segment.kind == "text":
            return [self._chunk({"content": text}, written=f'{{"content":{dumps_string(text)}}}')]
        if segment.kind == "thinking":
            opaque = part.metadata.get(NAME) if part is not None else None
            field = opaque.get("field") if isinstance(opaque, dict) else None
            return [self._chunk({field if field in REASONING_FIELDS else REPLY_REASONING_FIELD: text})]
        index = segment.call_index
        written = f'{{"tool_calls":[{{"index":{index},"function":{{"arguments":{dumps_string(text)}}}}}]}}'
        return [self._chunk({"tool_calls": [{"index": index, "function": {"arguments": text}}]}, written=written)]

    def close(self, segment: Segment) -> list[WireEvent]:
        return []

    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        match part:
            case TextPart(text=text) | ThinkingPart(text=text) if missing_text(segment, text):
                return self.more(segment, missing_text(segment, text))
            case ToolCall() if not segment.text:
                raw = part.metadata.get("raw_arguments")
                text = raw if isinstance(raw, str) else (dumps(part.arguments) if part.arguments else "")
                return self.more(segment, text)
        return []

    def end(self, response: Response) -> list[WireEvent]:
        out = [self._chunk({}, finish_reason(response))]
        usage = encode_usage(response.usage)
        if usage is not None:
            out.append(WireEvent({**self._head, "choices": [], "usage": usage}))
        return out

    def _chunk(self, delta: dict[str, Any], finish: str | None = None, *, written: str | None = None) -> WireEvent:
        """One chunk holding `delta` (`written`: `dumps(delta)`, when the caller wrote it faster)."""
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        if self._head_text is None:  # the fields every chunk repeats, written once
            self._head_text = dumps(self._head)[:-1] + ',"choices":[{"index":0,"delta":'
        ending = _UNFINISHED if finish is None else f',"logprobs":null,"finish_reason":{dumps(finish)}}}]}}'
        text = f"{self._head_text}{written if written is not None else dumps(delta)}{ending}"
        return WireEvent({**self._head, "choices": [choice]}, None, text)
