"""`/api/chat` request bodies, both ways: tools, history, images, options."""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, assert_never

from toolwire.codecs.common.conversation import results_in_call_order
from toolwire.codecs.common.degradations import warn_missing_options, warn_once
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.wire import (
    dumps,
    error_payload,
    list_or_empty,
    read_error_payload,
    require_dict,
    sniff_image_type,
    stop_list,
)
from toolwire.codecs.ollama.calls import NAME, decode_call, encode_call
from toolwire.errors import CodecError
from toolwire.schema import inline_refs
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    ResponseFormat,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = ["decode_request", "encode_request"]

_logger = logging.getLogger("toolwire.codecs.ollama")

_REQUEST_KEYS = frozenset({"model", "messages", "tools", "stream", "options"})


_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def encode_request(request: Request, warned: set[str]) -> dict[str, Any]:
    """The exact `/api/chat` body; `stream` is always explicit (the server defaults to true)."""
    body: dict[str, Any] = {
        "model": request.model,
        # Ollama pairs a result with a call by `tool_name` and position, so results go in call order.
        "messages": [
            m for message in results_in_call_order(request.messages) for m in _encode_message(message, warned)
        ],
    }
    tools = _select_tools(request, warned)
    if tools:
        body["tools"] = [_encode_tool(t) for t in tools]
    body["stream"] = request.stream  # the server streams unless told otherwise
    options: dict[str, Any] = {}
    if request.temperature is not None:
        options["temperature"] = request.temperature
    if request.max_tokens is not None:
        options["num_predict"] = request.max_tokens
    for option in ("top_p", "stop", "seed"):
        if (value := getattr(request, option)) is not None:
            options[option] = value
    warn_missing_options(_logger, warned, NAME, request, ("user",))
    if request.response_format is not None:  # `format`: "json", or the schema itself
        body["format"] = request.response_format.schema or "json"
    extra = dict(request.extra)
    if isinstance(extra.get("options"), dict):
        options.update(extra.pop("options"))
    if options:
        body["options"] = options
    body.update(extra)
    return body


def _select_tools(request: Request, warned: set[str]) -> list[ToolDefinition]:
    """The tools sent for the tool choice (docs/wire-formats.md, Ollama): Ollama has no `tool_choice` at all."""
    if request.parallel_tool_calls is False:
        warn_once(_logger, warned, "parallel", "ollama has no parallel_tool_calls switch; False is ignored.")
    choice = request.tool_choice
    if choice is None or choice == "auto":
        return request.tools
    if choice == "none":
        return []
    if choice == "required":
        warn_once(
            _logger,
            warned,
            "required",
            "ollama cannot force a tool call (tool_choice='required'); the tools are sent and the model may "
            "answer in text.",
        )
        return request.tools
    if isinstance(choice, NamedToolChoice):
        chosen = [t for t in request.tools if t.name == choice.name]
        if not chosen:
            raise CodecError(
                f"ollama tool_choice names {choice.name!r}, which is not among the request's tools; add it to tools.",
                provider=NAME,
            )
        warn_once(
            _logger,
            warned,
            "named",
            f"ollama cannot force a named tool; only {choice.name!r} is sent and the model may still answer in text.",
        )
        return chosen
    assert_never(choice)


def _encode_tool(tool: ToolDefinition) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    # Ollama's server drops nested `$ref`s while decoding the schema (docs/wire-formats.md, Ollama): inline them.
    function["parameters"] = inline_refs(tool.parameters) if tool.parameters is not None else dict(_EMPTY_PARAMETERS)
    return {"type": "function", "function": function}


def _encode_message(message: Message, warned: set[str]) -> list[dict[str, Any]]:
    match message:
        case SystemMessage():
            return [{"role": "system", "content": message.content}]
        case UserMessage():
            if isinstance(message.content, str):
                return [{"role": "user", "content": message.content}]
            return [{"role": "user", **_encode_media(message.content, warned)}]
        case AssistantMessage():
            return [_encode_assistant(message.parts)]
        case ToolResult():
            return [{"role": "tool", **_encode_result(message, warned), "tool_name": message.name}]
        case _:
            assert_never(message)


def _encode_media(parts: list[TextPart | ImagePart], warned: set[str]) -> dict[str, Any]:
    """Text joined into `content`, inline images as base64 in `images` (Ollama's only image form)."""
    texts: list[str] = []
    images: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            texts.append(part.text)
        elif part.data is not None:
            images.append(base64.b64encode(part.data).decode("ascii"))
        else:
            warn_once(
                _logger,
                warned,
                "image_url",
                "ollama accepts only inline (base64) images; image URLs are sent as text. "
                "Download the image and pass ImagePart(data=...) instead.",
            )
            texts.append(f"[image: {part.url}]")
    wire: dict[str, Any] = {"content": "\n".join(texts)}
    if images:
        wire["images"] = images
    return wire


def _encode_assistant(parts: list[AssistantPart]) -> dict[str, Any]:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    for part in parts:
        match part:
            case TextPart():
                texts.append(part.text)
            case ThinkingPart():
                # Another provider's reasoning is not Ollama's to replay.
                if part.provider in (None, NAME) and not part.redacted:
                    thoughts.append(part.text)
            case ToolCall():
                calls.append(encode_call(part))
            case _:
                assert_never(part)
    wire: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if any(thoughts):
        wire["thinking"] = "".join(thoughts)
    if calls:
        wire["tool_calls"] = calls
    return wire


def _encode_result(result: ToolResult, warned: set[str]) -> dict[str, Any]:
    match result.kind:
        case "text":
            return {"content": result.value}
        case "data":
            return {"content": dumps(result.value)}
        case "error":
            return {"content": error_payload(result.value)}
        case "multimodal":
            return _encode_media(result.value, warned)
        case _:
            assert_never(result.kind)


def decode_request(body: dict[str, Any]) -> Request:
    """Read an `/api/chat` body back; tool messages pair with calls by `tool_name` and order."""
    body = require_dict(body, NAME, "request body")
    if not isinstance(body.get("messages"), list):
        raise CodecError(f"The ollama request body has no 'messages' list: {body!r}.", provider=NAME)
    extra = {k: v for k, v in body.items() if k not in _REQUEST_KEYS}
    options = dict(body["options"]) if isinstance(body.get("options"), dict) else {}
    temperature = options.pop("temperature", None)
    max_tokens = options.pop("num_predict", None)
    top_p, stop, seed = options.pop("top_p", None), stop_list(options.pop("stop", None)), options.pop("seed", None)
    wire_format = extra.pop("format", None)
    response_format = None
    if wire_format == "json" or isinstance(wire_format, dict):
        response_format = ResponseFormat(schema=wire_format if isinstance(wire_format, dict) else None)
    elif wire_format is not None:
        extra["format"] = wire_format
    if options:
        extra["options"] = options
    tools = list_or_empty(body.get("tools"))
    return Request(
        model=str(body.get("model") or ""),
        messages=_RequestReader().read(body["messages"]),
        tools=[_decode_tool(t) for t in tools],
        stream=bool(body.get("stream", True)),
        temperature=temperature,
        max_tokens=max_tokens,
        top_p=top_p,
        stop=stop,
        seed=seed,
        response_format=response_format,
        extra=extra,
    )


def _decode_tool(wire: Any) -> ToolDefinition:
    function = wire.get("function") if isinstance(wire, dict) else None
    if not isinstance(function, dict):
        raise CodecError(
            f"An ollama tool must be {{'type': 'function', 'function': {{...}}}}, got {wire!r}.", provider=NAME
        )
    return ToolDefinition(
        name=function.get("name", ""), description=function.get("description"), parameters=function.get("parameters")
    )


def _decode_images(wire: dict[str, Any]) -> list[ImagePart]:
    images = list_or_empty(wire.get("images"))
    parts = []
    for encoded in images:
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, TypeError, ValueError) as exc:
            raise CodecError(f"An ollama image is not valid base64: {str(encoded)[:40]!r}.", provider=NAME) from exc
        parts.append(ImagePart(data=data, media_type=sniff_image_type(data)))
    return parts


def _content(wire: dict[str, Any]) -> str:
    content = wire.get("content")
    return content if isinstance(content, str) else ""


class _RequestReader:
    """Reads wire messages in order, pairing each tool message with an unanswered call."""

    def __init__(self) -> None:
        self._pending: list[ToolCall] = []
        self._index = 0

    def read(self, wire_messages: list[Any]) -> list[Message]:
        messages: list[Message] = []
        for self._index, wire in enumerate(wire_messages):
            messages.append(self._message(require_dict(wire, NAME, "message")))
        return messages

    def _message(self, wire: dict[str, Any]) -> Message:
        match wire.get("role"):
            case "system":
                return SystemMessage(content=_content(wire))
            case "user":
                images = _decode_images(wire)
                if not images:
                    return UserMessage(content=_content(wire))
                text = [TextPart(text=_content(wire))] if _content(wire) else []
                return UserMessage(content=[*text, *images])
            case "assistant":
                return self._assistant(wire)
            case "tool":
                return self._result(wire)
            case role:
                raise CodecError(
                    f"ollama message role {role!r} is not one of system, user, assistant or tool.", provider=NAME
                )

    def _assistant(self, wire: dict[str, Any]) -> AssistantMessage:
        parts: list[AssistantPart] = []
        if isinstance(wire.get("thinking"), str) and wire["thinking"]:
            parts.append(ThinkingPart(text=wire["thinking"], provider=NAME))
        if _content(wire):
            parts.append(TextPart(text=_content(wire)))
        raw_calls = list_or_empty(wire.get("tool_calls"))
        # Calls sent without an id get one derived from their place in the conversation.
        seed = f"request\x00{self._index}"
        calls = [c for c in (decode_call(raw, seed, i) for i, raw in enumerate(raw_calls)) if c is not None]
        self._pending = list(calls)
        return AssistantMessage(parts=[*parts, *calls])

    def _result(self, wire: dict[str, Any]) -> ToolResult:
        name = wire.get("tool_name") if isinstance(wire.get("tool_name"), str) else None
        call = self._match(name, wire.get("tool_call_id"))
        call_id = call.id if call is not None else derived_call_id(f"result\x00{self._index}", 0)
        name = name if name is not None else (call.name if call is not None else "")
        images = _decode_images(wire)
        content = _content(wire)
        if images:
            text = [TextPart(text=content)] if content else []
            return ToolResult(tool_call_id=call_id, name=name, kind="multimodal", value=[*text, *images])
        error = read_error_payload(content)
        if error is not None:
            return ToolResult(tool_call_id=call_id, name=name, kind="error", value=error)
        return ToolResult(tool_call_id=call_id, name=name, kind="text", value=content)

    def _match(self, name: str | None, call_id: Any) -> ToolCall | None:
        """The first unanswered call with this id, else with this name (Ollama's documented link)."""
        found = next((c for c in self._pending if c.id == call_id), None)
        if found is None:
            found = next((c for c in self._pending if name is None or c.name == name), None)
        if found is not None:
            self._pending.remove(found)
        return found
