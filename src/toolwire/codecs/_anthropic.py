"""Anthropic Messages API codec (`POST /v1/messages`, `anthropic-version: 2023-06-01`).

Owns every Anthropic quirk (PROVIDERS.md §2.3): top-level `system`, required `max_tokens`, tool
results first in the next user message, thinking replayed with its signature, ids limited to
`^[a-zA-Z0-9_-]+$`, the block-indexed stream. Imports only `toolwire.types`, `toolwire.errors`,
`toolwire.schema` and `toolwire.codecs._shared`; never another codec.

Round trips: `decode_request` always sets `Request.max_tokens` from the body, so a request
encoded with the default (`DEFAULT_MAX_TOKENS`) comes back with it explicit — re-encoding gives
the identical body. A `data` result comes back as a `text` result holding the same JSON text.
Call ids are made unique across the conversation (servers that reuse `call_0` would otherwise be
rejected), results rewritten to match.

System messages: the leading ones form the top-level `system`; a `SystemMessage` later in the
conversation goes in place as a `role: "system"` message when the model takes them (Claude Opus
4.8 and later, right after a user turn), and otherwise joins the top-level `system`, logged once. Request bodies are
read by `_anthropic_requests`, which says what is kept of each newer field and what is dropped.

`temperature` is sent only when `Request.temperature` is set. API version 2023-06-01, which the
transport pins, accepts it; 2026-10-21 rejects every sampling parameter, and some newer models
reject a non-default temperature even under 2023-06-01 — leave it unset for those.
"""

from __future__ import annotations

import base64
import logging
import re
from typing import TYPE_CHECKING, Any, assert_never

from toolwire.codecs._anthropic_requests import (
    NAME,
    call_id,
    decode_assistant_blocks,
    decode_messages,
    decode_system,
    decode_tool,
    decode_tool_choice,
    own_fields,
)
from toolwire.codecs._shared import (
    StreamAccumulator,
    dumps,
    require_dict,
    sanitize_id,
    sniff_image_type,
    split_leading_system,
    stop_list,
    unique_call_ids,
    warn_missing_options,
    warn_once,
)
from toolwire.errors import CodecError, ProviderError
from toolwire.schema import anthropic_input_schema
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Done,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    Response,
    StopReason,
    StreamEvent,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)

if TYPE_CHECKING:
    from toolwire.codecs import StreamEncoder

__all__ = ["CODEC", "DEFAULT_MAX_TOKENS", "AnthropicCodec", "AnthropicStreamDecoder"]

DEFAULT_MAX_TOKENS = 4096
"""Sent when `Request.max_tokens` is None: the Messages API rejects a body without it."""

_logger = logging.getLogger(__name__)
_warned: set[str] = set()

# Tables

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": StopReason.END_TURN,
    "stop_sequence": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
    "refusal": StopReason.CONTENT_FILTER,
    "pause_turn": StopReason.OTHER,  # a long-running server tool paused; the caller sends the turn back
}
# For rendering a reply without a raw value: the first wire word of each reason (OTHER/ERROR: end_turn).
_WIRE_STOP_REASONS: dict[StopReason, str] = {
    v: k for k, v in reversed(_STOP_REASONS.items()) if v is not StopReason.OTHER
}
_TOOL_CHOICES: dict[str, str] = {"auto": "auto", "none": "none", "required": "any"}
# `claude-opus-4-8`, `claude-sonnet-5`, `us.anthropic.claude-opus-4-8-v1:0`; a date is no minor version.
_MODEL_VERSION = re.compile(r"claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?!\d)")
_REQUEST_KEYS = frozenset("model max_tokens system messages tools tool_choice temperature top_p stream".split())

# Encode


def _encode_request(request: Request) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS,
    }
    system, messages = _split_system(request.model, request.messages)
    if system:
        body["system"] = "\n\n".join(system)
    # Ids must match ^[a-zA-Z0-9_-]+$ and be unique across the conversation (PROVIDERS.md §2.3).
    body["messages"] = _encode_messages(unique_call_ids(messages, _wire_id))
    if request.tools:
        body["tools"] = [_encode_tool(t) for t in request.tools]
    tool_choice = _encode_tool_choice(request)
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stream:
        body["stream"] = True
    body.update(request.extra)
    _encode_options(request, body)  # after extra: a `metadata` kept there gains the user id
    return body


def _encode_options(request: Request, body: dict[str, Any]) -> None:
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.stop is not None:
        body["stop_sequences"] = request.stop
    if request.user is not None:
        body["metadata"] = {**body.get("metadata", {}), "user_id": request.user}
    warn_missing_options(_logger, _warned, NAME, request, ("seed",))


def _decode_options(body: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The sampling options of a body; what else `metadata` holds stays in `extra`."""
    options: dict[str, Any] = {"top_p": body.get("top_p"), "stop": stop_list(extra.pop("stop_sequences", None))}
    metadata = extra.pop("metadata", None)
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        options["user"] = metadata["user_id"]
        metadata = {k: v for k, v in metadata.items() if k != "user_id"}
    if metadata:
        extra["metadata"] = metadata
    return options


def _split_system(model: str, messages: list[Message]) -> tuple[list[str], list[Message]]:
    """The top-level `system` texts, and the messages with the system messages that stay in place.

    Leading system messages form `system`. Later ones stay in place for models that take
    `role: "system"` messages (Claude Opus 4.8 and later); for older models and unknown names
    (other servers speaking the Messages API) they join `system`, in order, logged once.
    """
    system, rest = split_leading_system(messages)
    if _takes_inner_system(model) or not any(isinstance(m, SystemMessage) for m in rest):
        return system, rest
    warn_once(
        _logger,
        _warned,
        f"{NAME}:system-message-position",
        f"anthropic: {model!r} is not known to take system messages in the middle of a conversation "
        "(Claude Opus 4.8 and later do); they are sent at the end of the top-level system prompt.",
    )
    system += [m.content for m in rest if isinstance(m, SystemMessage)]
    return system, [m for m in rest if not isinstance(m, SystemMessage)]


def _takes_inner_system(model: str) -> bool:
    found = _MODEL_VERSION.search(model)
    return found is not None and (int(found[1]), int(found[2] or 0)) >= (4, 8)


def _encode_messages(messages: list[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case SystemMessage():
                _append(wire, "system", message.content)
            case ToolResult():
                _append(wire, "user", [_encode_result(message)], result=True)
            case UserMessage():
                content = message.content
                _append(wire, "user", content if isinstance(content, str) else [_encode_media(p) for p in content])
            case AssistantMessage():
                blocks = [b for p in message.parts if (b := _encode_assistant_part(p)) is not None]
                if blocks:
                    _append(wire, "assistant", blocks)
            case _:
                assert_never(message)
    return wire


def _append(
    wire: list[dict[str, Any]], role: str, content: str | list[dict[str, Any]], *, result: bool = False
) -> None:
    # Roles alternate, so content of the same role joins the last message; but every tool_result
    # must come first in the very next user message (PROVIDERS.md §2.3): results join only results.
    last = wire[-1] if wire else None
    if last is None or last["role"] != role or (result and not _only_results(last["content"])):
        wire.append({"role": role, "content": content})
    else:
        last["content"] = _as_blocks(last["content"]) + _as_blocks(content)


def _only_results(content: str | list[dict[str, Any]]) -> bool:
    return isinstance(content, list) and all(b["type"] == "tool_result" for b in content)


def _as_blocks(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _encode_assistant_part(part: AssistantPart) -> dict[str, Any] | None:
    match part:
        case TextPart():
            # The API rejects empty text blocks ("text content blocks must be non-empty").
            return _encode_text(part) if part.text else None
        case ThinkingPart():
            return _encode_thinking(part)
        case ToolCall():
            block = {"type": "tool_use", "id": part.id, "name": part.name, "input": part.arguments}
            return block | own_fields(part.metadata, "tool_use")
        case _:
            assert_never(part)


def _encode_thinking(part: ThinkingPart) -> dict[str, Any] | None:
    # Foreign or unsigned thinking is rejected: "Invalid 'signature' in 'thinking' block" (pi #9048).
    if part.provider != NAME or not part.signature:
        return None
    if part.redacted:
        return {"type": "redacted_thinking", "data": part.signature} | own_fields(part.metadata, "redacted_thinking")
    block = {"type": "thinking", "thinking": part.text, "signature": part.signature}
    return block | own_fields(part.metadata, "thinking")


def _encode_text(part: TextPart) -> dict[str, Any]:
    # Fields a request's block had beyond its text (cache_control, citations) go back with it.
    return {"type": "text", "text": part.text} | own_fields(part.metadata, "text")


def _encode_media(part: TextPart | ImagePart) -> dict[str, Any]:
    match part:
        case TextPart():
            return _encode_text(part)
        case ImagePart():
            return _encode_image(part)
        case _:
            assert_never(part)


def _encode_image(part: ImagePart) -> dict[str, Any]:
    if part.url is not None:
        return {"type": "image", "source": {"type": "url", "url": part.url}}
    data = part.data or b""
    media_type = part.media_type or sniff_image_type(data) or "image/png"  # a base64 source needs one
    source = {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}
    return {"type": "image", "source": source}


def _encode_result(result: ToolResult) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.tool_call_id}
    match result.kind:
        case "text":
            block["content"] = result.value
        case "data":
            block["content"] = dumps(result.value)
        case "error":
            block["content"] = result.value
            block["is_error"] = True
        case "multimodal":
            block["content"] = [_encode_media(p) for p in result.value]
            own = result.metadata.get(NAME)
            if isinstance(own, dict) and own.get("is_error") is True:
                block["is_error"] = True
        case _:
            assert_never(result.kind)
    return block | own_fields(result.metadata, "tool_result")


def _wire_id(call_id: str) -> str:
    # Ids from other providers (`fc_1|call_2`, `functions.f:0`) fail `^[a-zA-Z0-9_-]+$`
    # (openai-agents-python #237, #1147); results get the same rewrite, so pairs stay paired.
    return sanitize_id(call_id, prefix="toolu_")


def _encode_tool(tool: ToolDefinition) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        wire["description"] = tool.description
    wire["input_schema"] = anthropic_input_schema(tool.parameters)
    if tool.strict is not None:
        wire["strict"] = tool.strict
    return wire


def _encode_tool_choice(request: Request) -> dict[str, Any] | None:
    choice, parallel = request.tool_choice, request.parallel_tool_calls
    if choice is None:
        # `disable_parallel_tool_use` lives inside tool_choice; `auto` is what the API assumes anyway.
        return {"type": "auto", "disable_parallel_tool_use": True} if parallel is False and request.tools else None
    if isinstance(choice, NamedToolChoice):
        wire: dict[str, Any] = {"type": "tool", "name": choice.name}
    else:
        wire = {"type": _TOOL_CHOICES[choice]}
    if parallel is not None and wire["type"] != "none":  # ToolChoiceNoneParam has no such field
        wire["disable_parallel_tool_use"] = not parallel
    return wire


def _wire_stop_reason(response: Response) -> str | None:
    if response.raw_stop_reason is not None:
        return response.raw_stop_reason
    return _WIRE_STOP_REASONS.get(response.stop_reason, "end_turn")


def _encode_response(response: Response) -> dict[str, Any]:
    body: dict[str, Any] = {} if response.id is None else {"id": response.id}
    body.update(type="message", role="assistant")
    if response.model is not None:
        body["model"] = response.model
    body["content"] = [_encode_reply_part(p) for p in response.message.parts]
    body["stop_reason"] = _wire_stop_reason(response)
    body["stop_sequence"] = None
    if response.usage is not None:
        body["usage"] = _encode_usage(response.usage)
    return body


def _encode_reply_part(part: AssistantPart) -> dict[str, Any]:
    match part:
        case TextPart():
            return {"type": "text", "text": part.text}
        case ThinkingPart() if part.redacted:
            return {"type": "redacted_thinking", "data": part.signature or ""}
        case ThinkingPart():
            return {"type": "thinking", "thinking": part.text, "signature": part.signature or ""}
        case ToolCall():
            return {"type": "tool_use", "id": part.id, "name": part.name, "input": _reply_input(part)}
        case _:
            assert_never(part)


def _reply_input(call: ToolCall) -> Any:
    # A call decoded from broken JSON keeps its raw text; sending that text back makes the
    # decoder reach the same arguments and metadata (only a test server ever renders this).
    raw = call.metadata.get("raw_arguments")
    return raw if isinstance(raw, str) else call.arguments


def _encode_usage(usage: Usage) -> dict[str, Any]:
    wire: dict[str, Any] = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
    wire["cache_read_input_tokens"] = usage.cache_read_tokens
    if usage.reasoning_tokens is not None:
        wire["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return wire


# Decode


def _decode_response(body: dict[str, Any]) -> Response:
    body = require_dict(body, NAME, "response body")
    if body.get("type") == "error":
        raise _provider_error(body)
    content = body.get("content")
    message = AssistantMessage(parts=decode_assistant_blocks(content if isinstance(content, list) else None))
    return _response(message, body.get("stop_reason"), body.get("usage"), body.get("model"), body.get("id"))


def _response(message: AssistantMessage, raw: Any, usage: Any, model: Any, response_id: Any) -> Response:
    stop_reason = _stop_reason(raw, bool(message.tool_calls))
    usage = _decode_usage(usage)
    return Response(
        message=message, stop_reason=stop_reason, raw_stop_reason=raw, usage=usage, model=model, id=response_id
    )


def _stop_reason(raw: Any, has_calls: bool) -> StopReason:
    reason = _STOP_REASONS.get(raw, StopReason.OTHER) if isinstance(raw, str) else StopReason.OTHER
    # Calls are recognised by presence (SPEC §2), but a truncated or refused turn stays visible.
    if has_calls and reason in (StopReason.END_TURN, StopReason.OTHER):
        return StopReason.TOOL_USE
    return reason


def _decode_usage(usage: Any) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    details = usage.get("output_tokens_details")
    return Usage(
        input_tokens=usage.get("input_tokens"),
        output_tokens=usage.get("output_tokens"),
        cache_read_tokens=usage.get("cache_read_input_tokens"),
        reasoning_tokens=details.get("thinking_tokens") if isinstance(details, dict) else None,
    )


def _provider_error(payload: dict[str, Any]) -> ProviderError:
    error = _dict(payload.get("error"))
    message = f"Anthropic reported an error of type {error.get('type')!r}: {error.get('message') or 'no message'}"
    return ProviderError(message, provider=NAME, body=payload)


def _decode_request(body: dict[str, Any]) -> Request:
    body = require_dict(body, NAME, "request body")
    model, wire_messages = body.get("model"), body.get("messages")
    if not isinstance(model, str) or not isinstance(wire_messages, list):
        raise CodecError(
            f"The anthropic request body needs a model string and a messages list: {body!r:.200}", provider=NAME
        )
    messages, extra = decode_system(body.get("system"))
    messages += decode_messages(wire_messages)
    tool_choice, parallel = decode_tool_choice(body.get("tool_choice"))
    if tool_choice is None and body.get("tool_choice") is not None:
        extra["tool_choice"] = body["tool_choice"]
    stream = body.get("stream") is True  # an explicit `false` stays in `extra`, so it survives the round trip
    extra.update((k, v) for k, v in body.items() if k not in _REQUEST_KEYS or (k == "stream" and not stream))
    wire_tools = body.get("tools") or []
    tools = [t for t in map(decode_tool, wire_tools) if t is not None]
    if [_encode_tool(t) for t in tools] != wire_tools:
        # Server tools, cache_control, defer_loading, input_examples: the list goes back as it is
        # to Anthropic (merged last); other providers get the neutral definitions.
        extra["tools"] = wire_tools
    return Request(
        model=model,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel,
        max_tokens=body.get("max_tokens"),
        temperature=body.get("temperature"),
        stream=stream,
        extra=extra,
        **_decode_options(body, extra),
    )


# Stream decoder


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

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """Take one parsed SSE `data` object; returns the neutral events it yields."""
        event = require_dict(event, NAME, "stream event")
        match event.get("type"):
            case "message_start":
                message = _dict(event.get("message"))
                self._id, self._model = message.get("id"), message.get("model")
                self._stop_reason = message.get("stop_reason")
                self._merge_usage(message.get("usage"))
            case "content_block_start":
                return self._block_start(event.get("index"), _dict(event.get("content_block")))
            case "content_block_delta":
                return self._block_delta(event.get("index"), _dict(event.get("delta")))
            case "content_block_stop":
                self._block_stop(event.get("index"))
            case "message_delta":
                self._stop_reason = _dict(event.get("delta")).get("stop_reason") or self._stop_reason
                self._merge_usage(event.get("usage"))
            case "message_stop":
                self._final = self._build()
                return [Done(self._final)]
            case "error":
                raise _provider_error(event)
            case _:
                pass  # `ping`, and event types added after this codec was written
        return []

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
        return _response(self._parts.message(), self._stop_reason, self._usage, self._model, self._id)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class AnthropicCodec:
    """The `anthropic` codec: Messages API bodies and stream events to and from neutral types."""

    name: str = NAME

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact `/v1/messages` body; `max_tokens` defaults to `DEFAULT_MAX_TOKENS`."""
        return _encode_request(request)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a Message body; an `{"type": "error"}` body raises `ProviderError`."""
        return _decode_response(body)

    def stream_decoder(self) -> AnthropicStreamDecoder:
        """Return a fresh decoder for one streamed reply."""
        return AnthropicStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a `/v1/messages` body back; grouped results split into `ToolResult`s then user text."""
        return _decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a Message body."""
        return _encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> StreamEncoder:
        """A fresh encoder turning neutral stream events into Anthropic Messages stream events as they come."""
        from toolwire.codecs._anthropic_encoder import AnthropicStreamEncoder

        return AnthropicStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as stream event data objects, `message_start` to `message_stop`."""
        from toolwire.codecs._anthropic_encoder import AnthropicStreamEncoder
        from toolwire.codecs._stream_encoding import replay

        return replay(AnthropicStreamEncoder(reply=response), response)


CODEC = AnthropicCodec()
