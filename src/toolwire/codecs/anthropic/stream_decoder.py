"""Messages API stream events read into neutral events; `message_stop` ends the stream."""

from __future__ import annotations

from typing import Any

from toolwire.codecs.anthropic.blocks import (
    NAME,
    call_id,
)
from toolwire.codecs.anthropic.replies import build_response, provider_error
from toolwire.codecs.common.accumulator import StreamAccumulator
from toolwire.codecs.common.wire import object_or_empty, require_dict
from toolwire.types import (
    Done,
    Response,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)

__all__ = ["AnthropicStreamDecoder"]


class AnthropicStreamDecoder:
    """Reads Messages API stream events; `message_stop` ends the stream with `Done`.

    Block `index` counts every content block (thinking, text, tool_use); the accumulator keys
    parts by it, so `ToolCallDelta.index` stays dense over calls.
    """

    def __init__(self) -> None:
        self._parts = StreamAccumulator()
        self._id: str | None = None
        self._model: str | None = None
        self._usage: dict[str, Any] | None = None
        self._stop_reason: str | None = None
        self._start_inputs: dict[Any, Any] = {}  # tool_use index -> `input` of its content_block_start
        self._final: Response | None = None
        self._sinks: dict[int, tuple[list[str], int]] = {}  # open text or tool_use block -> its live pieces

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one parsed SSE `data` object; returns the neutral events it yields."""
        fast = self.checked_fast(event)
        if fast is not None:
            return fast
        event = require_dict(event, NAME, "stream event")
        match event.get("type"):
            case "message_start":
                message = object_or_empty(event.get("message"))
                self._id, self._model = message.get("id"), message.get("model")
                self._stop_reason = message.get("stop_reason")
                self._merge_usage(message.get("usage"))
            case "content_block_start":
                out = self._block_start(event.get("index"), object_or_empty(event.get("content_block")))
                self._sink(event.get("index"))
                return out
            case "content_block_delta":
                out = self._block_delta(event.get("index"), object_or_empty(event.get("delta")))
                self._sink(event.get("index"))  # a delta of another kind may have put a new part there
                return out
            case "content_block_stop":
                self._block_stop(event.get("index"))
                self._sink(event.get("index"))
            case "message_delta":
                self._stop_reason = object_or_empty(event.get("delta")).get("stop_reason") or self._stop_reason
                self._merge_usage(event.get("usage"))
            case "message_stop":
                self._final = self._build()
                return [Done(self._final)]
            case "error":
                raise provider_error(event)
            case _:
                pass  # `ping`, and event types added after this codec was written
        return []

    def checked_fast(self, event: dict[str, Any]) -> list[StreamEvent] | None:
        """The shape nearly every event has: a text piece or an argument fragment of an open block.

        What `_block_delta` would do, without its dispatch; `None` for anything else (or anything
        unusual), which then takes the full path. What it returns is checked (a piece that is a
        string, of a block that is open), so the codec boundary passes it on as it is.
        """
        if event.__class__ is not dict or event.get("type") != "content_block_delta":
            return None
        index, delta = event.get("index"), event.get("delta")
        sink = self._sinks.get(index) if index.__class__ is int else None
        if sink is None or delta.__class__ is not dict:
            return None
        pieces, call = sink
        piece = delta.get("text" if call < 0 else "partial_json")
        if delta.get("type") != ("text_delta" if call < 0 else "input_json_delta") or piece.__class__ is not str:
            return None
        if call >= 0:
            self._start_inputs.pop(index, None)  # streamed JSON, even none, replaces the placeholder `{}`
        if not piece:
            return []
        pieces.append(piece)
        return [TextDelta(piece)] if call < 0 else [ToolCallDelta(call, None, None, piece)]

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (`StreamAccumulator.plain`)."""
        return self._parts.plain()

    def finish(self) -> Response:
        """The reply accumulated so far (the `Done` one once `message_stop` arrived)."""
        return self._final if self._final is not None else self._build()

    def _merge_usage(self, usage: Any) -> None:
        # message_delta usage is cumulative; fields it leaves null keep message_start's values.
        if isinstance(usage, dict):
            self._usage = (self._usage or {}) | {k: v for k, v in usage.items() if v is not None}

    def _block_start(self, index: Any, block: dict[str, Any]) -> list[StreamEvent]:
        match block.get("type"):
            case "text":
                text = self._parts.text(block.get("text") or "", key=index)
                return [text] if text.text else []
            case "thinking":
                signature = block.get("signature") or None
                thinking = self._parts.thinking(
                    block.get("thinking") or "", key=index, provider=NAME, signature=signature
                )
                return [thinking] if thinking else []
            case "redacted_thinking":
                self._parts.thinking(key=index, provider=NAME, signature=block.get("data") or None, redacted=True)
            case "tool_use":
                self._start_inputs[index] = block.get("input")
                return [self._parts.start_call(index, call_id(block.get("id")), block.get("name") or "")]
        return []

    def _sink(self, index: Any) -> None:
        """The fast path's view of the part under `index`, after the full path may have changed it."""
        if isinstance(index, int):  # `True` is key 1 too
            sink = self._parts.sink(index)
            if sink is None:
                self._sinks.pop(index, None)
            else:
                self._sinks[index] = sink

    def _block_delta(self, index: Any, delta: dict[str, Any]) -> list[StreamEvent]:
        out: StreamEvent | None = None
        match delta.get("type"):
            case "text_delta" if delta.get("text"):
                out = self._parts.text(delta["text"], key=index)
            case "thinking_delta":
                out = self._parts.thinking(delta.get("thinking") or "", key=index, provider=NAME)
            case "signature_delta":
                self._parts.thinking(key=index, provider=NAME, signature=delta.get("signature") or None)
            case "input_json_delta":
                self._start_inputs.pop(index, None)  # streamed JSON replaces the placeholder `{}`
                if delta.get("partial_json"):
                    out = self._parts.call_arguments(index, delta["partial_json"])
        return [out] if out is not None else []

    def _block_stop(self, index: Any) -> None:
        # A no-argument tool may stream no partial_json at all; its start `input` ({}) is the answer.
        start_input = self._start_inputs.pop(index, None)
        if isinstance(start_input, dict) and start_input:
            self._parts.set_call_arguments(index, start_input)

    def _build(self) -> Response:
        return build_response(self._parts.message(), self._stop_reason, self._usage, self._model, self._id)
