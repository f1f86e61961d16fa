"""Ollama native chat codec (`POST /api/chat`, the NDJSON API of ollama/ollama `api/types.go`).

Owns the Ollama quirks (PROVIDERS.md §2.5): `stream` defaults to true on the server, so it is
always sent; there is no `tool_choice` and no parallel switch (degraded with one warning per
codec instance); tool results link back by `tool_name`, not by id; arguments are objects; tool
calls arrive whole in a stream; a tool turn ends with `done_reason: "stop"`. Imports only
`toolwire.types`, `toolwire.errors` and `toolwire.codecs._shared`; never another codec.

Call ids: the server's `id` (`call_` + 8 characters, current builds) is kept as the call id and
recorded in `metadata["ollama"]["id"]`; only such ids are sent back. Older servers send no id:
the codec then derives one from the reply's `model` and `created_at` and the call's position
(`_shared.derived_call_id`), so identical calls get different ids and decoding the same reply
twice gives the same ids. In a stream the seed is the `created_at` of the stream's first line
(known before any call arrives), which is what a non-streamed body's `created_at` stands for;
the seed is kept in `message.metadata["ollama"]["created_at"]` so the reply can be re-rendered.
Without a `created_at` the id is random.

Round trips: `decode_request` reads every tool message as a `text` result (or `multimodal`
when it has images), except an `error` result, recognised by its exact JSON form
`{"error":"..."}`; re-encoding gives the identical body.
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import TYPE_CHECKING, Any, assert_never

from toolwire.codecs._shared import (
    StreamAccumulator,
    derived_call_id,
    dumps,
    error_payload,
    new_call_id,
    parse_arguments,
    read_error_payload,
    require_dict,
    results_in_call_order,
    sniff_image_type,
    stop_list,
    warn_missing_options,
    warn_once,
)
from toolwire.errors import CodecError, ProviderError
from toolwire.schema import inline_refs
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

__all__ = ["CODEC", "OllamaCodec", "OllamaStreamDecoder"]

NAME = "ollama"

_logger = logging.getLogger(__name__)

# Tables

# `done_reason` (server/routes.go): "stop" also ends tool turns, so calls are found by presence.
_STOP_REASONS: dict[str, StopReason] = {"stop": StopReason.END_TURN, "length": StopReason.MAX_TOKENS}
_WIRE_STOP_REASONS: dict[StopReason, str] = {
    StopReason.END_TURN: "stop",
    StopReason.TOOL_USE: "stop",
    StopReason.MAX_TOKENS: "length",
}
_REQUEST_KEYS = frozenset({"model", "messages", "tools", "stream", "options"})
_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


# Encode


def _encode_request(request: Request, warned: set[str]) -> dict[str, Any]:
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
    extra = dict(request.extra)
    if isinstance(extra.get("options"), dict):
        options.update(extra.pop("options"))
    if options:
        body["options"] = options
    body.update(extra)
    return body


def _select_tools(request: Request, warned: set[str]) -> list[ToolDefinition]:
    """Apply the SPEC tool-choice table: Ollama has no `tool_choice` at all."""
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
            raise ValueError(
                f"ollama tool_choice names {choice.name!r}, which is not among the request's tools; add it to tools."
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
    # Ollama's server drops nested `$ref`s while decoding the schema (PROVIDERS.md §2.5): inline them.
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
                calls.append(_encode_call(part))
            case _:
                assert_never(part)
    wire: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if any(thoughts):
        wire["thinking"] = "".join(thoughts)
    if calls:
        wire["tool_calls"] = calls
    return wire


def _encode_call(call: ToolCall) -> dict[str, Any]:
    wire: dict[str, Any] = {}
    if _issued_id(call) == call.id:
        wire["id"] = call.id
    wire["function"] = {"name": call.name, "arguments": call.arguments}
    return wire


def _issued_id(call: ToolCall) -> Any:
    own = call.metadata.get(NAME)
    return own.get("id") if isinstance(own, dict) else None


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


# Encode: replies (for test servers and proxies)


def _seed(model: Any, created_at: Any) -> str | None:
    return f"{model or ''}\x00{created_at}" if isinstance(created_at, str) and created_at else None


def _reply_created_at(response: Response) -> str:
    own = response.message.metadata.get(NAME)
    created_at = own.get("created_at") if isinstance(own, dict) else None
    return created_at if isinstance(created_at, str) and created_at else "1970-01-01T00:00:00Z"


def _reply_calls(response: Response, created_at: str) -> list[dict[str, Any]]:
    """Calls as the server renders them; an id is left out only where decoding re-derives it."""
    seed = _seed(response.model, created_at)
    calls = []
    for position, call in enumerate(response.tool_calls):
        wire: dict[str, Any] = {}
        if seed is None or call.id != derived_call_id(seed, position):
            wire["id"] = call.id
        # Arguments that came as a (broken) string go back as that string, as older servers send them.
        raw = call.metadata.get("raw_arguments")
        arguments = raw if isinstance(raw, str) else call.arguments
        wire["function"] = {"index": position, "name": call.name, "arguments": arguments}
        calls.append(wire)
    return calls


def _reply_line(response: Response, created_at: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"model": response.model or "", "created_at": created_at, "message": {"role": "assistant", **message}}


def _done_fields(response: Response) -> dict[str, Any]:
    fields: dict[str, Any] = {"done": True}
    reason = response.raw_stop_reason or _WIRE_STOP_REASONS.get(response.stop_reason)
    if reason is not None:
        fields["done_reason"] = reason
    usage = response.usage
    if usage is not None and usage.input_tokens is not None:
        fields["prompt_eval_count"] = usage.input_tokens
    if usage is not None and usage.output_tokens is not None:
        fields["eval_count"] = usage.output_tokens
    return fields


def _encode_response(response: Response) -> dict[str, Any]:
    created_at = _reply_created_at(response)
    message: dict[str, Any] = {"content": response.text}
    thinking = _reply_thinking(response)
    if thinking:
        message["thinking"] = thinking
    if response.tool_calls:
        message["tool_calls"] = _reply_calls(response, created_at)
    return {**_reply_line(response, created_at, message), **_done_fields(response)}


def _reply_thinking(response: Response) -> str:
    return "".join(p.text for p in response.message.parts if isinstance(p, ThinkingPart) and not p.redacted)


# Decode


def _provider_error(payload: dict[str, Any]) -> ProviderError:
    error = payload.get("error")
    message = error if isinstance(error, str) else f"ollama returned an error payload: {error!r}"
    return ProviderError(message, provider=NAME, body=payload)


def _stop_reason(raw: Any, has_calls: bool) -> StopReason:
    if raw is None or raw == "stop":
        # Older servers omit done_reason on a normal end.
        return StopReason.TOOL_USE if has_calls else StopReason.END_TURN
    return _STOP_REASONS.get(raw, StopReason.OTHER)


def _decode_usage(body: dict[str, Any]) -> Usage | None:
    prompt, generated = body.get("prompt_eval_count"), body.get("eval_count")
    if prompt is None and generated is None:
        return None
    return Usage(input_tokens=prompt, output_tokens=generated)


def _decode_call(raw: Any, seed: str | None, position: int) -> ToolCall | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        return None
    function = raw["function"]
    # Current servers send an object; older ones (and some proxies) a JSON string.
    arguments, metadata = parse_arguments(function.get("arguments"))
    call_id = raw.get("id")
    if isinstance(call_id, str) and call_id:
        metadata[NAME] = {"id": call_id}
    else:
        call_id = derived_call_id(seed, position) if seed is not None else new_call_id()
    return ToolCall(id=call_id, name=str(function.get("name") or ""), arguments=arguments, metadata=metadata)


def _message_metadata(seed_created_at: Any, calls: list[ToolCall]) -> dict[str, Any]:
    """Keep the id seed only when some id was derived from it (needed to re-render the reply)."""
    if any(_issued_id(c) != c.id for c in calls) and isinstance(seed_created_at, str) and seed_created_at:
        return {NAME: {"created_at": seed_created_at}}
    return {}


def _decode_response(body: dict[str, Any]) -> Response:
    body = require_dict(body, NAME)
    if "error" in body:
        raise _provider_error(body)
    message = body.get("message")
    if not isinstance(message, dict):
        raise CodecError(f"The ollama reply has no 'message' object: {body!r}.", provider=NAME)
    parts: list[AssistantPart] = []
    if isinstance(message.get("thinking"), str) and message["thinking"]:
        parts.append(ThinkingPart(text=message["thinking"], provider=NAME))
    if isinstance(message.get("content"), str) and message["content"]:
        parts.append(TextPart(text=message["content"]))
    seed = _seed(body.get("model"), body.get("created_at"))
    raw_calls = _list(message.get("tool_calls"))
    calls = [c for c in (_decode_call(raw, seed, i) for i, raw in enumerate(raw_calls)) if c is not None]
    parts.extend(calls)
    raw_stop = body.get("done_reason")
    return Response(
        message=AssistantMessage(parts=parts, metadata=_message_metadata(body.get("created_at"), calls)),
        stop_reason=_stop_reason(raw_stop, bool(calls)),
        raw_stop_reason=raw_stop,
        usage=_decode_usage(body),
        model=body.get("model"),
    )


# Decode: requests


def _decode_request(body: dict[str, Any]) -> Request:
    body = require_dict(body, NAME, "request body")
    if not isinstance(body.get("messages"), list):
        raise CodecError(f"The ollama request body has no 'messages' list: {body!r}.", provider=NAME)
    extra = {k: v for k, v in body.items() if k not in _REQUEST_KEYS}
    options = dict(body["options"]) if isinstance(body.get("options"), dict) else {}
    temperature = options.pop("temperature", None)
    max_tokens = options.pop("num_predict", None)
    top_p, stop, seed = options.pop("top_p", None), stop_list(options.pop("stop", None)), options.pop("seed", None)
    if options:
        extra["options"] = options
    tools = _list(body.get("tools"))
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
    images = _list(wire.get("images"))
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
        raw_calls = _list(wire.get("tool_calls"))
        # Calls sent without an id get one derived from their place in the conversation.
        seed = f"request\x00{self._index}"
        calls = [c for c in (_decode_call(raw, seed, i) for i, raw in enumerate(raw_calls)) if c is not None]
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


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


# Stream decoder


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
            raise _provider_error(event)
        if not self._started:
            self._started = True
            self._model, self._created_at = event.get("model"), event.get("created_at")
        message = _dict(event.get("message"))
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

    def finish(self) -> Response:
        """The reply accumulated so far (the `Done` one once the `done: true` line arrived)."""
        return self._final if self._final is not None else self._build()

    def _tool_calls(self, raw_calls: Any) -> list[StreamEvent]:
        seed = _seed(self._model, self._created_at)
        out: list[StreamEvent] = []
        for raw in raw_calls if isinstance(raw_calls, list) else []:
            call = _decode_call(raw, seed, len(self._calls))
            if call is not None:
                self._calls.append(call)
                out.append(self._parts.whole_call(call))
        return out

    def _build(self) -> Response:
        raw_stop = self._final_line.get("done_reason")
        model = self._final_line.get("model", self._model)
        return Response(
            message=self._parts.message(_message_metadata(self._created_at, self._calls)),
            stop_reason=_stop_reason(raw_stop, bool(self._calls)),
            raw_stop_reason=raw_stop,
            usage=_decode_usage(self._final_line),
            model=model,
        )


class OllamaCodec:
    """The `ollama` codec: `/api/chat` bodies and NDJSON lines to and from neutral types.

    Degradations (tool choice, parallel switch, image URLs) are logged once per codec instance.
    """

    name: str = NAME

    def __init__(self) -> None:
        self._warned: set[str] = set()

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact `/api/chat` body; `stream` is always explicit (the server defaults to true)."""
        return _encode_request(request, self._warned)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a non-streamed reply; an `{"error": ...}` body raises `ProviderError`."""
        return _decode_response(body)

    def stream_decoder(self) -> OllamaStreamDecoder:
        """Return a fresh decoder for one streamed reply."""
        return OllamaStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read an `/api/chat` body back; tool messages pair with calls by `tool_name` and order."""
        return _decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a non-streamed `/api/chat` body."""
        return _encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> StreamEncoder:
        """A fresh encoder turning neutral stream events into Ollama NDJSON lines as they come."""
        from toolwire.codecs._ollama_encoder import OllamaStreamEncoder

        return OllamaStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as NDJSON lines: thinking, content, whole calls, then the `done` line."""
        from toolwire.codecs._ollama_encoder import OllamaStreamEncoder
        from toolwire.codecs._stream_encoding import replay

        return replay(OllamaStreamEncoder(reply=response), response)


CODEC = OllamaCodec()
