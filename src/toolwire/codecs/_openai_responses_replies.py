"""Output items, replies and stream events of the OpenAI Responses API (the `openai-responses` codec).

Item-level translation used both ways: assistant parts to output items (request history and
rendered replies) and output items to parts (replies and request history), plus the stream
decoder and the reply renderers. Part of the `openai-responses` codec family; imports only
`toolwire.types`, `toolwire.errors` and `toolwire.codecs._shared`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Any, assert_never

from toolwire.codecs._shared import StreamAccumulator, derived_call_id, dumps, parse_arguments, require_dict, warn_once
from toolwire.errors import CodecError, ProviderError
from toolwire.types import (
    AssistantMessage,
    Done,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCall,
    Usage,
)

__all__ = [
    "NAME",
    "ResponsesStreamDecoder",
    "as_int",
    "as_str",
    "decode_call",
    "decode_message",
    "decode_reasoning",
    "decode_response",
    "encode_parts",
    "encode_response",
    "namespaced",
    "warned",
]

NAME = "openai-responses"
_log = logging.getLogger(__name__)
warned: set[str] = set()

# Tables

_INCOMPLETE_STOP = {"max_output_tokens": StopReason.MAX_TOKENS, "content_filter": StopReason.CONTENT_FILTER}
_STOP_STATUS = {
    StopReason.END_TURN: ("completed", None),
    StopReason.TOOL_USE: ("completed", None),
    StopReason.MAX_TOKENS: ("incomplete", "max_output_tokens"),
    StopReason.CONTENT_FILTER: ("incomplete", "content_filter"),
    StopReason.ERROR: ("failed", None),
    StopReason.OTHER: ("cancelled", None),
}
_SUMMARY_SEPARATOR = "\n\n"


# Assistant parts to output items


def _own(metadata: dict[str, Any]) -> dict[str, Any]:
    """The opaque values this codec keeps in a part's metadata (never another codec's)."""
    value = metadata.get(NAME)
    return value if isinstance(value, dict) else {}


def encode_parts(parts: list[TextPart | ThinkingPart | ToolCall], seed: str | None) -> list[dict[str, Any]]:
    """Assistant parts as output items; with a `seed` (rendering a reply) missing ids are derived."""
    items: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case TextPart():
                _append_text(items, part, seed)
            case ThinkingPart():
                items.extend(_encode_thinking(part, seed, len(items)))
            case ToolCall():
                items.append(_encode_call(part, seed, len(items)))
            case _:
                assert_never(part)
    for item in items:
        item.pop("_key", None)
    return items


def _append_text(items: list[dict[str, Any]], part: TextPart, seed: str | None) -> None:
    own = _own(part.metadata)
    content = (
        {"type": "refusal", "refusal": part.text}
        if own.get("refusal")
        else {"type": "output_text", "text": part.text, "annotations": []}
    )
    item_id, phase = own.get("item_id"), own.get("phase")
    if item_id is None and seed is None and not own.get("refusal"):
        # Text with no Responses item id (another provider's, or built by hand) goes as an easy input
        # message: the SDK types an id-less `output_text` message as ResponseOutputMessageParam, whose
        # `id` and `status` are required.
        easy: dict[str, Any] = {"type": "message", "role": "assistant", "content": part.text}
        if isinstance(phase, str):
            easy["phase"] = phase
        items.append(easy)
        return
    last = items[-1] if items else None
    if last is not None and last["type"] == "message" and last.get("_key") == (item_id, phase):
        last["content"].append(content)
        return
    item: dict[str, Any] = {"type": "message", "role": "assistant", "content": [content], "_key": (item_id, phase)}
    if item_id is None and seed is not None:
        item_id = derived_call_id(seed, len(items), "msg_")
    if isinstance(item_id, str):
        # With an id the item is a ResponseOutputMessageParam, whose `status` is required.
        item.update(id=item_id, status="completed")
    if isinstance(phase, str):
        item["phase"] = phase  # gpt-5.3-codex+: "preserve and resend phase" (SDK docstring)
    items.append(item)


def _encode_thinking(part: ThinkingPart, seed: str | None, position: int) -> list[dict[str, Any]]:
    foreign = part.provider != NAME
    if foreign and seed is None:
        return []  # foreign reasoning cannot be replayed to the Responses API
    # Rendering a reply (a test server, a proxy): any reasoning text shows as a summary.
    item_id = part.metadata.get("id")
    if not isinstance(item_id, str):
        if seed is None:
            warn_once(
                _log,
                warned,
                "reasoning-id",
                "openai-responses: dropped a reasoning part with no item id in metadata['id']; only reasoning "
                "decoded from the Responses API can be replayed.",
            )
            return []
        item_id = derived_call_id(seed, position, "rs_")
    item: dict[str, Any] = {"type": "reasoning", "id": item_id, "summary": _summary(part)}
    if part.metadata.get("content"):
        item["content"] = part.metadata["content"]
    if part.signature is not None and not foreign:
        item["encrypted_content"] = part.signature
    return [item]


def _summary(part: ThinkingPart) -> list[dict[str, str]]:
    stored = part.metadata.get("summary")
    if isinstance(stored, list) and _SUMMARY_SEPARATOR.join(map(str, stored)) == part.text:
        texts = [str(t) for t in stored]
    else:
        texts = [part.text] if part.text else []
    return [{"type": "summary_text", "text": t} for t in texts]


def _encode_call(call: ToolCall, seed: str | None, position: int) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": dumps(call.arguments),
    }
    namespace = _own(call.metadata).get("namespace")
    if isinstance(namespace, str) and call.name.startswith(prefix := namespaced(namespace, "")):
        item.update(name=call.name.removeprefix(prefix), namespace=namespace)
    item_id = _own(call.metadata).get("item_id")
    if item_id is None and seed is not None:
        item_id = derived_call_id(seed, position, "fc_")
    if isinstance(item_id, str):
        item["id"] = item_id
    return item


# Output items to parts


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _raise_for_error(body: dict[str, Any]) -> None:
    error = body.get("error")
    if error and "output" not in body:
        message = error.get("message") if isinstance(error, dict) else error
        raise ProviderError(
            f"The OpenAI Responses API returned an error: {message!r}; fix the request or retry later.",
            provider=NAME,
            body=body,
        )


def decode_response(body: dict[str, Any]) -> Response:
    body = require_dict(body, NAME)
    _raise_for_error(body)
    output = body.get("output")
    if not isinstance(output, list):
        raise CodecError(
            f"An openai-responses body needs an 'output' list, got {output!r}; pass the whole response object.",
            provider=NAME,
        )
    seed = as_str(body.get("id")) or ""
    parts = [part for index, item in enumerate(output) for part in _decode_item(item, seed, index)]
    message = AssistantMessage(parts=parts)
    stop, raw = _stop_reason(body.get("status"), body.get("incomplete_details"), bool(message.tool_calls))
    return Response(
        message=message,
        stop_reason=stop,
        raw_stop_reason=raw,
        usage=_decode_usage(body.get("usage")),
        model=as_str(body.get("model")) or None,
        id=as_str(body.get("id")),
    )


def _decode_item(item: Any, seed: str, index: int) -> list[TextPart | ThinkingPart | ToolCall]:
    if not isinstance(item, dict):
        return []
    match item.get("type"):
        case "reasoning":
            return [decode_reasoning(item)]
        case "message":
            return list(decode_message(item))
        case "function_call":
            return [decode_call(item, seed, index)]
    return []  # hosted-tool items (web_search_call, ...) have no neutral form


def _reasoning_text(item: dict[str, Any]) -> str:
    return _SUMMARY_SEPARATOR.join(_summary_texts(item))


def _summary_texts(item: dict[str, Any]) -> list[str]:
    summary = item.get("summary")
    return [str(s.get("text", "")) for s in summary if isinstance(s, dict)] if isinstance(summary, list) else []


def _reasoning_metadata(item: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if isinstance(item.get("id"), str):
        metadata["id"] = item["id"]
    texts = _summary_texts(item)
    if len(texts) > 1:
        metadata["summary"] = texts
    if item.get("content"):
        metadata["content"] = item["content"]  # raw reasoning_text (open-weight models), replayed as is
    return metadata


def decode_reasoning(item: dict[str, Any]) -> ThinkingPart:
    return ThinkingPart(
        text=_reasoning_text(item),
        signature=as_str(item.get("encrypted_content")),
        provider=NAME,
        metadata=_reasoning_metadata(item),
    )


def _text_metadata(item: dict[str, Any], refusal: bool) -> dict[str, Any]:
    own: dict[str, Any] = {}
    if isinstance(item.get("id"), str):
        own["item_id"] = item["id"]
    if isinstance(item.get("phase"), str):
        own["phase"] = item["phase"]
    if refusal:
        own["refusal"] = True
    return {NAME: own} if own else {}


def _content_text(content: Any) -> tuple[str, bool] | None:
    """A message content entry as `(text, is_refusal)`, or `None` if it holds no text."""
    if not isinstance(content, dict):
        return None
    if content.get("type") == "refusal":
        return str(content.get("refusal", "")), True
    if content.get("type") in ("output_text", "input_text"):
        return str(content.get("text", "")), False
    return None


def decode_message(item: dict[str, Any]) -> list[TextPart]:
    content = item.get("content")
    if isinstance(content, str):
        return [TextPart(text=content, metadata=_text_metadata(item, False))]
    entries = [_content_text(c) for c in content] if isinstance(content, list) else []
    return [TextPart(text=e[0], metadata=_text_metadata(item, e[1])) for e in entries if e is not None]


def namespaced(namespace: str | None, name: str) -> str:
    """The neutral name of a function in a `namespace` tool: `crm` + `lookup` is `crm__lookup`.

    Function calls name such a function by `name` and `namespace` apart (openai-python
    `ResponseFunctionToolCall.namespace`); other providers know one flat name, and `__` is the
    separator Codex has long used for MCP tools (`mcp__server__tool`).
    """
    return f"{namespace}__{name}" if namespace else name


def decode_call(item: dict[str, Any], seed: str, index: int) -> ToolCall:
    arguments, metadata = parse_arguments(item.get("arguments"))
    own: dict[str, Any] = {}
    if isinstance(item.get("id"), str):
        own["item_id"] = item["id"]
    namespace = as_str(item.get("namespace"))
    if namespace:
        own["namespace"] = namespace
    if own:
        metadata[NAME] = own
    call_id = as_str(item.get("call_id")) or as_str(item.get("id")) or derived_call_id(seed, index)
    name = namespaced(namespace, str(item.get("name", "")))
    return ToolCall(id=call_id, name=name, arguments=arguments, metadata=metadata)


def _stop_reason(status: Any, incomplete: Any, has_calls: bool) -> tuple[StopReason, str | None]:
    # Failure states come first: a call cut off by max_output_tokens is not a tool turn
    # (vllm #53269: `tool_calls` hiding `length`).
    reason = as_str(incomplete.get("reason")) if isinstance(incomplete, dict) else None
    if status == "incomplete":
        return _INCOMPLETE_STOP.get(reason or "", StopReason.OTHER), reason or "incomplete"
    if status == "failed":
        return StopReason.ERROR, "failed"
    if has_calls:
        return StopReason.TOOL_USE, as_str(status)
    if status == "completed":
        return StopReason.END_TURN, "completed"
    return StopReason.OTHER, as_str(status)


def _decode_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    inputs = usage.get("input_tokens_details")
    outputs = usage.get("output_tokens_details")
    return Usage(
        input_tokens=as_int(usage.get("input_tokens")),
        output_tokens=as_int(usage.get("output_tokens")),
        cache_read_tokens=as_int(inputs.get("cached_tokens")) if isinstance(inputs, dict) else None,
        reasoning_tokens=as_int(outputs.get("reasoning_tokens")) if isinstance(outputs, dict) else None,
    )


# Stream decoder


class ResponsesStreamDecoder:
    """Reads Responses stream events; everything is keyed by item id (PROVIDERS §2.2).

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

    def finish(self) -> Response:
        """The reply accumulated so far."""
        message = self._acc.message()
        stop, raw = _stop_reason(self._status, self._incomplete, self._acc.has_calls)
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
        self._usage = _decode_usage(response.get("usage"))
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
            self._acc.thinking("", key, provider=NAME, metadata=_reasoning_metadata(item))
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
        return self._acc.text(text, key, metadata=_text_metadata(item, refusal))

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
            text = _SUMMARY_SEPARATOR + text  # the neutral text joins summary parts with a blank line
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
        final, so_far = _reasoning_text(item), self._texts.get(("thinking", key), "")
        missing = final[len(so_far) :] if final.startswith(so_far) else ""
        # Only the completed item's encrypted_content is whole (SDK docstring); set it once.
        return self._thinking(
            key, missing, signature=as_str(item.get("encrypted_content")), metadata=_reasoning_metadata(item)
        )

    def _finish_message(self, key: Hashable, item: dict[str, Any]) -> list[StreamEvent]:
        content = item.get("content")
        events: list[StreamEvent] = []
        for index, entry in enumerate(content if isinstance(content, list) else []):
            found = _content_text(entry)
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


# Rendering replies (test servers, proxies)


def encode_response(response: Response) -> dict[str, Any]:
    seed = response.id or "resp_toolwire"
    output = encode_parts(response.message.parts, seed)
    for item in output:
        if item["type"] == "function_call":
            item["status"] = "completed"
    status, reason = _STOP_STATUS[response.stop_reason]
    if response.stop_reason is StopReason.OTHER and response.raw_stop_reason in ("cancelled", "in_progress", "queued"):
        status = response.raw_stop_reason
    error = {"code": "server_error", "message": "The model failed to complete the response."}
    return {
        "id": seed,
        "object": "response",
        "created_at": 1_700_000_000,
        "status": status,
        "error": error if status == "failed" else None,
        "incomplete_details": {"reason": reason} if reason else None,
        "model": response.model or "",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": _encode_usage(response.usage),
    }


def _encode_usage(usage: Usage | None) -> dict[str, Any] | None:
    if usage is None:
        return None
    inputs, outputs = usage.input_tokens or 0, usage.output_tokens or 0
    return {
        "input_tokens": inputs,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens or 0, "cache_write_tokens": 0},
        "output_tokens": outputs,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens or 0},
        "total_tokens": inputs + outputs,
    }
