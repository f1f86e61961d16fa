"""ConverseStream events read into neutral events; `metadata` (the last event) ends the stream.

Each event comes in botocore's parsed form, one key naming its type: `{"contentBlockDelta":
{...}}`. A text or reasoning block may begin with a delta alone (no `contentBlockStart`); a
tool block starts with its id and name, then streams its input as JSON text fragments — or
none at all, or `""`, for a tool without arguments: that is `{}`. Exception events raise the
typed error they stand for.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.bedrock.blocks import NAME, call_id
from toolwire.codecs.bedrock.replies import EXCEPTIONS, build_response, stream_exception
from toolwire.codecs.common.accumulator import StreamAccumulator
from toolwire.codecs.common.wire import object_or_empty, require_dict
from toolwire.types import Done, Response, StreamEvent

__all__ = ["BedrockStreamDecoder"]


class BedrockStreamDecoder:
    """Reads ConverseStream events keyed by `contentBlockIndex`; `metadata` ends the stream with `Done`."""

    def __init__(self) -> None:
        self._parts = StreamAccumulator()
        self._stop_reason: str | None = None
        self._usage: Any = None
        self._final: Response | None = None

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one event in botocore's parsed form; returns the neutral events it yields."""
        event = require_dict(event, NAME, "stream event")
        for name, payload in event.items():
            if name in EXCEPTIONS or name.endswith("Exception"):
                raise stream_exception(name, payload)
            return self._event(name, object_or_empty(payload))
        return []

    def _event(self, name: str, payload: dict[str, Any]) -> list[StreamEvent]:
        index = payload.get("contentBlockIndex")
        match name:
            case "contentBlockStart":
                use = object_or_empty(object_or_empty(payload.get("start")).get("toolUse"))
                if use:
                    return [self._parts.start_call(index, call_id(use.get("toolUseId")), use.get("name") or "")]
            case "contentBlockDelta":
                return self._delta(index, object_or_empty(payload.get("delta")))
            case "messageStop":
                self._stop_reason = payload.get("stopReason")
            case "metadata":
                self._usage = payload.get("usage")
                self._final = self._build()
                return [Done(self._final)]
            case _:
                pass  # messageStart, contentBlockStop, and event types added after this codec was written
        return []

    def _delta(self, index: Any, delta: dict[str, Any]) -> list[StreamEvent]:
        if isinstance(delta.get("text"), str):
            return [self._parts.text(delta["text"], key=index)] if delta["text"] else []
        if isinstance(delta.get("toolUse"), dict):
            fragment = delta["toolUse"].get("input")
            found = self._parts.call_arguments(index, fragment) if isinstance(fragment, str) and fragment else None
            return [found] if found is not None else []
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            return self._reasoning(index, reasoning)
        return []

    def _reasoning(self, index: Any, reasoning: dict[str, Any]) -> list[StreamEvent]:
        if isinstance(reasoning.get("redactedContent"), str):
            self._parts.thinking(key=index, provider=NAME, signature=reasoning["redactedContent"], redacted=True)
            return []
        signature = reasoning.get("signature")
        text = reasoning.get("text")
        delta = self._parts.thinking(
            text if isinstance(text, str) else "",
            key=index,
            provider=NAME,
            signature=signature if isinstance(signature, str) else None,
        )
        return [delta] if delta is not None else []

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (`StreamAccumulator.plain`)."""
        return self._parts.plain()

    def finish(self) -> Response:
        """The reply accumulated so far (the `Done` one once `metadata` arrived)."""
        return self._final if self._final is not None else self._build()

    def _build(self) -> Response:
        return build_response(self._parts.message(), self._stop_reason, self._usage)
