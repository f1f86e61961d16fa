"""Ollama's NDJSON stream read into neutral events; the `done: true` line ends it."""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.accumulator import StreamAccumulator
from toolwire.codecs.common.wire import (
    object_or_empty,
    require_dict,
)
from toolwire.codecs.ollama.calls import NAME, decode_call, message_metadata, reply_seed
from toolwire.codecs.ollama.replies import (
    decode_usage,
    neutral_stop_reason,
    provider_error,
)
from toolwire.types import (
    Done,
    Response,
    StreamEvent,
    ToolCall,
)

__all__ = ["OllamaStreamDecoder"]


class OllamaStreamDecoder:
    """Reads `/api/chat` NDJSON lines; the `done: true` line ends the stream with `Done`.

    Content and thinking accumulate across lines into one part each; tool calls arrive whole and
    are appended in order. Ids missing on the wire are derived from the first line's `model` and
    `created_at` (see the module docstring).
    """

    def __init__(self) -> None:
        self._parts = StreamAccumulator()
        self._calls: list[ToolCall] = []
        self._model: Any = None
        self._created_at: Any = None
        self._started = False
        self._final_line: dict[str, Any] = {}
        self._final: Response | None = None

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one NDJSON line (parsed); returns the neutral events it yields."""
        event = require_dict(event, NAME, "stream line")
        if "error" in event:
            raise provider_error(event)
        if not self._started:
            self._started = True
            self._model, self._created_at = event.get("model"), event.get("created_at")
        message = object_or_empty(event.get("message"))
        out: list[StreamEvent] = []
        if isinstance(message.get("thinking"), str) and message["thinking"]:
            thinking = self._parts.thinking(message["thinking"], key="thinking", provider=NAME)
            out.extend([thinking] if thinking is not None else [])
        if isinstance(message.get("content"), str) and message["content"]:
            out.append(self._parts.text(message["content"], key="content"))
        out.extend(self._tool_calls(message.get("tool_calls")))
        if event.get("done") is True:
            self._final_line = event
            self._final = self._build()
            out.append(Done(self._final))
        return out

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (`StreamAccumulator.plain`)."""
        return self._parts.plain()

    def finish(self) -> Response:
        """The reply accumulated so far (the `Done` one once the `done: true` line arrived)."""
        return self._final if self._final is not None else self._build()

    def _tool_calls(self, raw_calls: Any) -> list[StreamEvent]:
        seed = reply_seed(self._model, self._created_at)
        out: list[StreamEvent] = []
        for raw in raw_calls if isinstance(raw_calls, list) else []:
            call = decode_call(raw, seed, len(self._calls))
            if call is not None:
                self._calls.append(call)
                out.append(self._parts.whole_call(call))
        return out

    def _build(self) -> Response:
        raw_stop = self._final_line.get("done_reason")
        model = self._final_line.get("model", self._model)
        return Response(
            message=self._parts.message(message_metadata(self._created_at, self._calls)),
            stop_reason=neutral_stop_reason(raw_stop, bool(self._calls)),
            raw_stop_reason=raw_stop,
            usage=decode_usage(self._final_line),
            model=model,
        )
