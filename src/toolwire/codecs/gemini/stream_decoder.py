"""`streamGenerateContent?alt=sse` chunks read into neutral events.

Targets the Gemini API (`v1beta`) and Vertex AI (same body). Streamed call arguments
(`partialArgs`) are joined by `partial_arguments`.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.common.accumulator import StreamAccumulator
from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.ids import derived_call_id, new_call_id
from toolwire.codecs.common.wire import require_dict
from toolwire.codecs.gemini.fields import (
    NAME,
    call_metadata,
    decode_usage,
    first_candidate,
    provider_error,
    stop_reason,
)
from toolwire.codecs.gemini.partial_arguments import PartialArguments
from toolwire.types import (
    Response,
    StopReason,
    StreamEvent,
    ToolCall,
)

__all__ = ["GeminiStreamDecoder"]


# Tables


# Encode (rendering replies, for the loopback server)


# Decode


# Stream decoder


@dataclass(slots=True)
class _OpenPart:
    """The text or thought part later chunks continue, until a signature closes it."""

    key: Hashable
    thought: bool
    signed: bool = False


@dataclass(slots=True)
class _StreamedCall:
    key: Hashable
    arguments: PartialArguments


class GeminiStreamDecoder:
    """Reads `streamGenerateContent` chunks; the client emits `Done(finish())` at the stream's end.

    Text and thought pieces continue the open part of their kind until a piece carries a
    `thoughtSignature`: the signature attaches to that part and closes it, so a signed part is
    never merged with what follows (docs/wire-formats.md, Gemini). Calls arrive whole, except Vertex AI's
    `partialArgs` pieces, which are assembled by JSON Path.
    """

    def __init__(self) -> None:
        self._acc = StreamAccumulator()
        self._open: _OpenPart | None = None
        self._streamed: _StreamedCall | None = None
        self._parts = 0
        self._calls = 0
        self._finish: str | None = None
        self._block: str | None = None
        self._usage: dict[str, Any] | None = None
        self._model: str | None = None
        self._id: str | None = None

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one chunk (a whole `GenerateContentResponse`); raise `ProviderError` on an error payload."""
        body = require_dict(event, NAME, "stream chunk")
        if "error" in body:
            raise provider_error(body)
        self._read_meta(body)
        candidate = first_candidate(body)
        if candidate is None:
            return []
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        events: list[StreamEvent] = []
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict):
                events.extend(self._part(part))
        if isinstance(candidate.get("finishReason"), str):
            self._finish = candidate["finishReason"]
            if self._streamed is not None:  # the candidate is complete even if a call's closing marker never came
                events.extend(self._close_call())
        return events

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (`StreamAccumulator.plain`)."""
        return self._acc.plain()

    def finish(self) -> Response:
        """The reply so far; a `partialArgs` call whose closing marker never came keeps its arguments."""
        if self._streamed is not None:
            self._acc.set_call_arguments(self._streamed.key, copy.deepcopy(self._streamed.arguments.value))
        raw = self._finish or self._block
        if self._finish is None and self._block is not None:
            reason = StopReason.CONTENT_FILTER  # the prompt itself was blocked (promptFeedback)
        else:
            reason = stop_reason(self._finish, self._acc.has_calls)
        return Response(
            message=self._acc.message(),
            stop_reason=reason,
            raw_stop_reason=raw,
            usage=decode_usage(self._usage) if self._usage is not None else None,
            model=self._model,
            id=self._id,
        )

    def _read_meta(self, body: dict[str, Any]) -> None:
        if isinstance(body.get("usageMetadata"), dict):
            self._usage = body["usageMetadata"]  # every chunk may carry it; the last one is complete
        if isinstance(body.get("modelVersion"), str):
            self._model = body["modelVersion"]
        if isinstance(body.get("responseId"), str):
            self._id = body["responseId"]
        feedback = body.get("promptFeedback")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self._block = feedback["blockReason"]

    def _part(self, part: dict[str, Any]) -> list[StreamEvent]:
        signature = part.get("thoughtSignature") if isinstance(part.get("thoughtSignature"), str) else None
        if isinstance(part.get("functionCall"), dict):
            self._open = None
            return self._function_call(part["functionCall"], signature)
        text = part.get("text")
        if isinstance(text, str) or signature is not None:
            return self._text(text if isinstance(text, str) else "", part.get("thought") is True, signature)
        self._open = None  # a part toolwire does not model (inlineData, executableCode, ...) sits between
        return []

    def _text(self, text: str, thought: bool, signature: str | None) -> list[StreamEvent]:
        if not text and signature is None:
            return []
        open_ = self._open
        if open_ is None or open_.thought != thought or open_.signed:
            open_ = self._open = _OpenPart(key=("part", self._parts), thought=thought)
            self._parts += 1
        events: list[StreamEvent] = []
        if thought:
            delta = self._acc.thinking(text, open_.key, provider=NAME, signature=signature)
            events.extend([delta] if delta is not None else [])
        else:
            events.extend([self._acc.text(text, open_.key)] if text else [])
            if signature is not None:
                self._acc.text_metadata(open_.key)[NAME] = {"thought_signature": signature}
        open_.signed = signature is not None
        return events

    def _next_call_id(self, wire_id: Any) -> str:
        position, self._calls = self._calls, self._calls + 1
        if isinstance(wire_id, str) and wire_id:
            return wire_id
        # Derived from responseId so the streamed and the non-streamed decode agree.
        return derived_call_id(self._id, position) if self._id else new_call_id()

    def _function_call(self, call: dict[str, Any], signature: str | None) -> list[StreamEvent]:
        name = call.get("name")
        if self._streamed is not None and not name:
            return self._continue_call(call)
        events = self._close_call() if self._streamed is not None else []
        if not isinstance(name, str) or not name:
            return events  # a stray terminal marker with no call open
        call_id = self._next_call_id(call.get("id"))
        metadata = call_metadata(call.get("id"), signature)
        if call.get("willContinue") is True or "partialArgs" in call:
            key = ("call", self._calls)
            self._streamed = _StreamedCall(key=key, arguments=PartialArguments())
            events.append(self._acc.start_call(key, call_id, name, metadata))
            return events + self._continue_call(call)
        arguments, problems = parse_arguments(call.get("args"))  # no-arg calls may omit `args`
        events.append(
            self._acc.whole_call(ToolCall(id=call_id, name=name, arguments=arguments, metadata=metadata | problems))
        )
        return events

    def _continue_call(self, call: dict[str, Any]) -> list[StreamEvent]:
        streamed = self._streamed
        assert streamed is not None
        pieces = call.get("partialArgs")
        for piece in pieces if isinstance(pieces, list) else []:
            if isinstance(piece, dict):
                streamed.arguments.apply(piece)
        events: list[StreamEvent] = []
        fragment = streamed.arguments.fragment()
        delta = self._acc.call_arguments(streamed.key, fragment) if fragment else None
        events.extend([delta] if delta is not None else [])
        if call.get("willContinue") is not True:
            events.extend(self._close_call())
        return events

    def _close_call(self) -> list[StreamEvent]:
        streamed = self._streamed
        assert streamed is not None
        self._streamed = None
        closing = streamed.arguments.closing()
        delta = self._acc.call_arguments(streamed.key, closing) if closing else None
        self._acc.set_call_arguments(streamed.key, copy.deepcopy(streamed.arguments.value))
        return [delta] if delta is not None else []


# Vertex AI partialArgs: {jsonPath, stringValue|numberValue|boolValue|nullValue, willContinue}
