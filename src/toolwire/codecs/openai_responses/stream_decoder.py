"""Responses API stream events read into neutral events; `response.completed` ends the stream."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from toolwire.codecs.common.accumulator import StreamAccumulator
from toolwire.codecs.common.wire import require_dict
from toolwire.codecs.openai_responses.items import (
    NAME,
    SUMMARY_SEPARATOR,
    as_str,
    content_text,
    decode_call,
    reasoning_metadata,
    reasoning_text,
    text_metadata,
)
from toolwire.codecs.openai_responses.replies import (
    decode_usage,
    neutral_stop_reason,
)
from toolwire.errors import ProviderError
from toolwire.types import (
    Done,
    Response,
    StreamEvent,
    TextDelta,
    Usage,
)

__all__ = ["ResponsesStreamDecoder"]


class ResponsesStreamDecoder:
    """Reads Responses stream events; everything is keyed by item id (docs/wire-formats.md, OpenAI Responses).

    Argument deltas name their call by `item_id`, never `call_id`. Completed items in
    `response.output_item.done` are authoritative: they carry the full `encrypted_content`
    (the copy in `output_item.added` may be incomplete, SDK docstring) and fill in any text
    whose deltas went missing.
    """

    def __init__(self) -> None:
        self._acc = StreamAccumulator()
        self._keys: dict[int, Hashable] = {}
        self._messages: dict[Hashable, dict[str, Any]] = {}
        self._texts: dict[Hashable, str] = {}
        self._summary_index: dict[Hashable, int] = {}
        self._status: Any = None
        self._incomplete: Any = None
        self._usage: Usage | None = None
        self._id: str | None = None
        self._model: str | None = None
        self._items_seen = False

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one parsed SSE `data` object; emits `Done` on `response.completed`/`.incomplete`."""
        event = require_dict(event, NAME, "stream event")
        handler = _HANDLERS.get(str(event.get("type")))
        return handler(self, event) if handler is not None else []

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (`StreamAccumulator.plain`)."""
        return self._acc.plain()

    def finish(self) -> Response:
        """The reply accumulated so far."""
        message = self._acc.message()
        stop, raw = neutral_stop_reason(self._status, self._incomplete, self._acc.has_calls)
        return Response(
            message=message, stop_reason=stop, raw_stop_reason=raw, usage=self._usage, model=self._model, id=self._id
        )

    # keys

    def _item_key(self, event: dict[str, Any]) -> Hashable:
        item_id = event.get("item_id")
        if isinstance(item_id, str) and item_id:
            return item_id
        index = event.get("output_index")
        return self._keys.get(index, ("output", index)) if isinstance(index, int) else None

    def _new_item_key(self, event: dict[str, Any], item: dict[str, Any]) -> Hashable:
        index = event.get("output_index")
        key: Hashable = item.get("id") or ("output", index)
        if isinstance(index, int):
            self._keys[index] = key
        return key

    # events

    def _on_response(self, event: dict[str, Any]) -> list[StreamEvent]:
        response = event.get("response")
        if isinstance(response, dict):
            self._id = as_str(response.get("id")) or self._id
            self._model = as_str(response.get("model")) or self._model
        return []

    def _on_end(self, event: dict[str, Any]) -> list[StreamEvent]:
        self._on_response(event)
        response = require_dict(event.get("response"), NAME, "final response")
        self._status = response.get("status") or event["type"].removeprefix("response.")
        self._incomplete = response.get("incomplete_details")
        self._usage = decode_usage(response.get("usage"))
        events: list[StreamEvent] = []
        if not self._items_seen and isinstance(response.get("output"), list):
            # Some proxies send no item events, only the final response: read its items.
            for index, item in enumerate(response["output"]):
                if isinstance(item, dict):
                    events.extend(self._on_item_done({"output_index": index, "item": item}))
        return [*events, Done(self.finish())]

    def _on_failed(self, event: dict[str, Any]) -> list[StreamEvent]:
        response = event.get("response")
        error = response.get("error") if isinstance(response, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        raise ProviderError(
            f"The OpenAI Responses stream failed: {message!r}; retry the request.", provider=NAME, body=event
        )

    def _on_error(self, event: dict[str, Any]) -> list[StreamEvent]:
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else event.get("message", error)
        raise ProviderError(
            f"The OpenAI Responses stream sent an error: {message!r}; retry the request.", provider=NAME, body=event
        )

    def _on_item_added(self, event: dict[str, Any]) -> list[StreamEvent]:
        item = require_dict(event.get("item"), NAME, "output item")
        self._items_seen = True
        key = self._new_item_key(event, item)
        if item.get("type") == "function_call":
            return self._start_call(key, item, event.get("output_index"))
        if item.get("type") == "reasoning":
            self._acc.thinking("", key, provider=NAME, metadata=reasoning_metadata(item))
        elif item.get("type") == "message":
            self._messages[key] = item
        return []

    def _start_call(self, key: Hashable, item: dict[str, Any], index: Any) -> list[StreamEvent]:
        call = decode_call(item, self._id or "", index if isinstance(index, int) else 0)
        metadata = {NAME: call.metadata[NAME]} if NAME in call.metadata else {}
        events: list[StreamEvent] = [self._acc.start_call(key, call.id, call.name, metadata)]
        arguments = item.get("arguments")
        if isinstance(arguments, str) and arguments:
            events.extend(d for d in [self._acc.call_arguments(key, arguments)] if d is not None)
        return events

    def _on_arguments_delta(self, event: dict[str, Any]) -> list[StreamEvent]:
        delta = self._acc.call_arguments(self._item_key(event), str(event.get("delta", "")))
        return [delta] if delta is not None else []

    def _on_arguments_done(self, event: dict[str, Any]) -> list[StreamEvent]:
        if isinstance(event.get("arguments"), str):
            self._acc.set_call_arguments(self._item_key(event), event["arguments"])
        return []

    def _text(self, item_key: Hashable, index: Any, text: str, refusal: bool) -> TextDelta:
        key = ("text", item_key, index)
        self._texts[key] = self._texts.get(key, "") + text
        item = self._messages.get(item_key) or ({"id": item_key} if isinstance(item_key, str) else {})
        return self._acc.text(text, key, metadata=text_metadata(item, refusal))

    def _on_content_part(self, event: dict[str, Any]) -> list[StreamEvent]:
        part = event.get("part")
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("output_text", "refusal"):
            self._text(self._item_key(event), event.get("content_index"), "", kind == "refusal")
        return []

    def _on_text_delta(self, event: dict[str, Any]) -> list[StreamEvent]:
        refusal = event.get("type") == "response.refusal.delta"
        delta = str(event.get("delta", ""))
        return [self._text(self._item_key(event), event.get("content_index"), delta, refusal)]

    def _on_summary(self, event: dict[str, Any]) -> list[StreamEvent]:
        key = self._item_key(event)
        index = event.get("summary_index", 0)
        text = str(event.get("delta", ""))
        previous = self._summary_index.setdefault(key, index)
        if previous != index:
            self._summary_index[key] = index
            text = SUMMARY_SEPARATOR + text  # the neutral text joins summary parts with a blank line
        return self._thinking(key, text)

    def _thinking(self, key: Hashable, text: str, **fields: Any) -> list[StreamEvent]:
        self._texts[("thinking", key)] = self._texts.get(("thinking", key), "") + text
        delta = self._acc.thinking(text, key, provider=NAME, **fields)
        return [delta] if delta is not None else []

    def _on_item_done(self, event: dict[str, Any]) -> list[StreamEvent]:
        item = require_dict(event.get("item"), NAME, "output item")
        self._items_seen = True
        key = self._item_key({"item_id": item.get("id"), "output_index": event.get("output_index")})
        match item.get("type"):
            case "function_call":
                return self._finish_call(key, item, event.get("output_index"))
            case "reasoning":
                return self._finish_reasoning(key, item)
            case "message":
                self._messages[key] = item
                return self._finish_message(key, item)
        return []

    def _finish_call(self, key: Hashable, item: dict[str, Any], index: Any) -> list[StreamEvent]:
        if self._acc.call_id(key) is None:
            return self._start_call(key, item, index)
        if isinstance(item.get("arguments"), str):
            self._acc.set_call_arguments(key, item["arguments"])
        return []

    def _finish_reasoning(self, key: Hashable, item: dict[str, Any]) -> list[StreamEvent]:
        final, so_far = reasoning_text(item), self._texts.get(("thinking", key), "")
        missing = final[len(so_far) :] if final.startswith(so_far) else ""
        # Only the completed item's encrypted_content is whole (SDK docstring); set it once.
        return self._thinking(
            key, missing, signature=as_str(item.get("encrypted_content")), metadata=reasoning_metadata(item)
        )

    def _finish_message(self, key: Hashable, item: dict[str, Any]) -> list[StreamEvent]:
        content = item.get("content")
        events: list[StreamEvent] = []
        for index, entry in enumerate(content if isinstance(content, list) else []):
            found = content_text(entry)
            if found is None:
                continue
            so_far = self._texts.get(("text", key, index), "")
            missing = found[0][len(so_far) :] if found[0].startswith(so_far) else ""
            delta = self._text(key, index, missing, found[1])
            events.extend([delta] if missing else [])
        return events


_Handler = Callable[[ResponsesStreamDecoder, dict[str, Any]], list[StreamEvent]]


_HANDLERS: dict[str, _Handler] = {
    "response.created": ResponsesStreamDecoder._on_response,
    "response.in_progress": ResponsesStreamDecoder._on_response,
    "response.completed": ResponsesStreamDecoder._on_end,
    "response.incomplete": ResponsesStreamDecoder._on_end,
    "response.failed": ResponsesStreamDecoder._on_failed,
    "error": ResponsesStreamDecoder._on_error,
    "response.output_item.added": ResponsesStreamDecoder._on_item_added,
    "response.output_item.done": ResponsesStreamDecoder._on_item_done,
    "response.content_part.added": ResponsesStreamDecoder._on_content_part,
    "response.output_text.delta": ResponsesStreamDecoder._on_text_delta,
    "response.refusal.delta": ResponsesStreamDecoder._on_text_delta,
    "response.reasoning_summary_part.added": ResponsesStreamDecoder._on_summary,
    "response.reasoning_summary_text.delta": ResponsesStreamDecoder._on_summary,
    "response.function_call_arguments.delta": ResponsesStreamDecoder._on_arguments_delta,
    "response.function_call_arguments.done": ResponsesStreamDecoder._on_arguments_done,
}
