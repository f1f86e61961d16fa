"""Codec for the OpenAI Responses API (`POST /v1/responses`), as typed by openai-python 3.x.

Owns request bodies both ways; output items, replies and stream events live in
`_openai_responses_replies` (same codec family). Imports only `toolwire.types`,
`toolwire.errors`, `toolwire.schema` and `toolwire.codecs._shared`; never another codec.

Shapes (openai-python `types/responses/*`):
- leading system messages become `instructions` (joined with a blank line), later ones
  `developer` messages in place; the rest become `input` items: user `message`s with
  `input_text`/`input_image` content, assistant `message`s with `output_text` content,
  `reasoning`, `function_call` and `function_call_output` items.
- Function tools grouped in a `namespace` tool become flat definitions named `ns__name`
  (`namespaced`), and so do calls that name a namespace; the namespace goes back apart.
  Hosted tools (`web_search`, `mcp`, `custom`...) have no neutral form: a tool list that does
  not come back identically stays in `Request.extra` for Responses, and each hosted tool is
  logged once. Unknown input items are skipped, logged once by type.
- Reasoning is replayed statelessly: a `ThinkingPart` from this codec goes back as the
  `reasoning` item it came from (id, summary, `encrypted_content`) in its original position,
  because the API pairs each reasoning item with the item that followed it (PROVIDERS bug 16).
  Asking for that content is the caller's choice, through `Request.extra`:
  `{"store": False, "include": ["reasoning.encrypted_content"]}`.
- Item ids (`msg_…`, `fc_…`, `rs_…`) are kept in metadata and sent back only when known,
  as in OpenAI's "append `response.output` to the next input" pattern. A `function_call`'s
  `call_id` is the neutral `ToolCall.id`; its item `id` lives in
  `metadata["openai-responses"]["item_id"]` — the two are never joined (pydantic-ai #3136).
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import TYPE_CHECKING, Any, assert_never

from toolwire.codecs._openai_responses_replies import (
    NAME,
    ResponsesStreamDecoder,
    as_int,
    as_str,
    decode_call,
    decode_message,
    decode_reasoning,
    decode_response,
    encode_parts,
    encode_response,
    namespaced,
    warned,
)
from toolwire.codecs._shared import (
    dumps,
    error_payload,
    read_error_payload,
    require_dict,
    sniff_image_type,
    split_leading_system,
    warn_missing_options,
    warn_once,
)
from toolwire.errors import CodecError
from toolwire.schema import openai_strict_schema
from toolwire.types import (
    AssistantMessage,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    Response,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

if TYPE_CHECKING:
    from toolwire.codecs import StreamEncoder

__all__ = ["CODEC", "OpenAIResponsesCodec"]

_log = logging.getLogger(__name__)

# Tables

_STRING_CHOICES = ("auto", "none", "required")
_REQUEST_KEYS = frozenset(
    {"model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls", "max_output_tokens"}
    | {"temperature", "top_p", "user", "stream"}
)

# Encode


def _encode_request(request: Request) -> dict[str, Any]:
    body: dict[str, Any] = {"model": request.model}
    # Leading system messages form `instructions`; later ones stay in place as developer messages.
    system, messages = split_leading_system(request.messages)
    if system:
        body["instructions"] = "\n\n".join(system)
    body["input"] = _encode_input(messages)
    if request.tools:
        body["tools"] = [_encode_tool(tool) for tool in request.tools]
    if request.tool_choice is not None:
        body["tool_choice"] = _encode_tool_choice(request.tool_choice)
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    if request.max_tokens is not None:
        body["max_output_tokens"] = request.max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.user is not None:
        body["user"] = request.user
    warn_missing_options(_log, warned, NAME, request, ("stop", "seed"))
    if request.stream:
        body["stream"] = True
    body.update(request.extra)
    return body


def _encode_input(messages: list[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for message in messages:
        match message:
            case SystemMessage():
                developer = [{"type": "input_text", "text": message.content}]
                items.append({"type": "message", "role": "developer", "content": developer})
            case UserMessage():
                content = [TextPart(text=message.content)] if isinstance(message.content, str) else message.content
                items.append({"type": "message", "role": "user", "content": [_encode_content(p) for p in content]})
            case AssistantMessage():
                items.extend(encode_parts(message.parts, None))
            case ToolResult():
                items.append(
                    {"type": "function_call_output", "call_id": message.tool_call_id, "output": _output(message)}
                )
            case _:
                assert_never(message)
    return items


def _output(result: ToolResult) -> str | list[dict[str, Any]]:
    match result.kind:
        case "text":
            return str(result.value)
        case "data":
            return dumps(result.value)
        case "error":
            return error_payload(result.value)
        case "multimodal":
            # Unlike Chat Completions, a function_call_output may hold images (PROVIDERS §2.2).
            return [_encode_content(p) for p in result.value]
        case _:
            assert_never(result.kind)


def _encode_content(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    # `detail` is Required on a message's input_image (ResponseInputImageParam).
    return {"type": "input_image", "image_url": _image_url(part), "detail": "auto"}


def _image_url(part: ImagePart) -> str:
    if part.url is not None:
        return part.url
    data = part.data or b""
    media_type = part.media_type or sniff_image_type(data) or "image/png"
    return f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"


def _encode_tool(tool: ToolDefinition) -> dict[str, Any]:
    body: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description is not None:
        body["description"] = tool.description
    if tool.strict:
        body["parameters"] = openai_strict_schema(tool.parameters)
    else:
        body["parameters"] = tool.parameters if tool.parameters is not None else {"type": "object", "properties": {}}
    # An omitted `strict` now means strict (OpenAI docs, 2026-04): opt out explicitly.
    body["strict"] = bool(tool.strict)
    return body


def _encode_tool_choice(choice: ToolChoice) -> str | dict[str, Any]:
    if isinstance(choice, NamedToolChoice):
        return {"type": "function", "name": choice.name}
    return choice


# Decode


def _decode_image(url: str) -> ImagePart:
    header, sep, data = url.partition(",")
    if url.startswith("data:") and sep and header.endswith(";base64"):
        try:
            return ImagePart(data=base64.b64decode(data, validate=True), media_type=header[5:-7] or None)
        except (binascii.Error, ValueError):
            pass  # not valid base64: keep the URL as given
    return ImagePart(url=url)


def _decode_content_list(content: list[Any]) -> list[TextPart | ImagePart]:
    parts: list[TextPart | ImagePart] = []
    for entry in content:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind in ("input_text", "output_text"):
            parts.append(TextPart(text=str(entry.get("text", ""))))
        elif kind == "input_image" and isinstance(entry.get("image_url"), str):
            parts.append(_decode_image(entry["image_url"]))
        else:
            warn_once(
                _log,
                warned,
                f"content-{kind}",
                f"openai-responses: skipped input content of type {kind!r}; toolwire reads text and images.",
            )
    return parts


class _InputReader:
    """Rebuilds neutral messages from `input` items; consecutive model items form one turn."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self._names: dict[str, str] = {}
        self._turn: AssistantMessage | None = None

    def read(self, item: Any) -> None:
        item = require_dict(item, NAME, "input item")
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            self._message(item)
        elif kind == "reasoning":
            self._parts().append(decode_reasoning(item))
        elif kind == "function_call":
            call = decode_call(item, "", len(self.messages))
            self._names[call.id] = call.name
            self._parts().append(call)
        elif kind == "function_call_output":
            self._add(self._result(item))
        else:
            warn_once(
                _log,
                warned,
                f"item-{kind}",
                f"openai-responses: skipped input item of type {kind!r}; it has no neutral form.",
            )

    def _parts(self) -> list[TextPart | ThinkingPart | ToolCall]:
        if self._turn is None:
            self._turn = AssistantMessage()
            self.messages.append(self._turn)
        return self._turn.parts

    def _add(self, message: Message) -> None:
        self._turn = None
        self.messages.append(message)

    def _message(self, item: dict[str, Any]) -> None:
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            self._parts().extend(decode_message(item))
            return
        parts = _decode_content_list(content) if isinstance(content, list) else []
        text = content if isinstance(content, str) else "".join(p.text for p in parts if isinstance(p, TextPart))
        if role in ("system", "developer"):
            self._add(SystemMessage(content=text))
        elif isinstance(content, str) or (len(parts) == 1 and isinstance(parts[0], TextPart)):
            self._add(UserMessage(content=text))
        else:
            self._add(UserMessage(content=parts))

    def _result(self, item: dict[str, Any]) -> ToolResult:
        call_id = str(item.get("call_id", ""))
        name = self._names.get(call_id, str(item.get("name", "")))
        output = item.get("output")
        if isinstance(output, list):
            return ToolResult(tool_call_id=call_id, name=name, kind="multimodal", value=_decode_content_list(output))
        text = output if isinstance(output, str) else ""
        error = read_error_payload(text)
        if error is not None:
            return ToolResult(tool_call_id=call_id, name=name, kind="error", value=error)
        return ToolResult(tool_call_id=call_id, name=name, kind="text", value=text)


def _decode_tools(tools: Any) -> list[ToolDefinition]:
    definitions: list[ToolDefinition] = []
    for tool in tools if isinstance(tools, list) else []:
        kind = tool.get("type") if isinstance(tool, dict) else tool
        if kind == "function":
            definitions.extend(_decode_function(tool, None))
        elif kind == "namespace":
            for inner in tool.get("tools") or []:
                if isinstance(inner, dict) and inner.get("type") == "function":
                    definitions.extend(_decode_function(inner, str(tool.get("name", ""))))
                else:
                    kind = inner.get("type") if isinstance(inner, dict) else inner
                    _skipped("tool in a namespace", kind, f"{tool.get('name')}.")
        else:  # web_search, file_search, code_interpreter, mcp, custom...: kept in extra for Responses
            _skipped("tool", kind)
    return definitions


def _decode_function(tool: dict[str, Any], namespace: str | None) -> list[ToolDefinition]:
    name = str(tool.get("name", ""))
    try:
        return [
            ToolDefinition(
                name=namespaced(namespace, name),
                description=as_str(tool.get("description")),
                parameters=tool.get("parameters") if isinstance(tool.get("parameters"), dict) else None,
                strict=tool.get("strict") if isinstance(tool.get("strict"), bool) else None,
            )
        ]
    except ValueError:  # a name no other provider takes; the tool still goes back to Responses (extra)
        _skipped("tool named", namespaced(namespace, name))
        return []


def _skipped(what: str, kind: Any, where: str = "") -> None:
    message = f"openai-responses: skipped {what} {kind!r}; it has no neutral form (kept for Responses only)."
    warn_once(_log, warned, f"{NAME}:{where}{kind}", message)


def _decode_tool_choice(value: Any) -> ToolChoice | None:
    if value in _STRING_CHOICES:
        choice: ToolChoice = value
        return choice
    if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("name"), str):
        return NamedToolChoice(value["name"])
    return None


def _decode_request(body: dict[str, Any]) -> Request:
    body = require_dict(body, NAME, "request body")
    model = body.get("model")
    if not isinstance(model, str):
        raise CodecError(f"An openai-responses request needs a string 'model', got {model!r}.", provider=NAME)
    extra = {k: v for k, v in body.items() if k not in _REQUEST_KEYS}
    reader = _InputReader()
    instructions = body.get("instructions")
    if isinstance(instructions, str):
        reader.messages.append(SystemMessage(content=instructions))
    elif instructions is not None:
        extra["instructions"] = instructions
    items = body.get("input", [])
    for item in [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items:
        reader.read(item)
    tool_choice = _decode_tool_choice(body.get("tool_choice"))
    if tool_choice is None and body.get("tool_choice") is not None:
        extra["tool_choice"] = body["tool_choice"]  # allowed_tools and hosted choices pass through
    tools = _decode_tools(body.get("tools"))
    if "tools" in body and [_encode_tool(t) for t in tools] != body["tools"]:
        # Hosted tools, namespaces, defer_loading, an omitted `strict`: the list goes back as it
        # is to Responses (merged last); other providers get the neutral function tools.
        extra["tools"] = body["tools"]
    return Request(
        model=model,
        messages=reader.messages,
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=body.get("parallel_tool_calls"),
        max_tokens=as_int(body.get("max_output_tokens")),
        temperature=body.get("temperature"),
        top_p=body.get("top_p"),
        user=as_str(body.get("user")),
        stream=body.get("stream") is True,
        extra=extra,
    )


class OpenAIResponsesCodec:
    """The `openai-responses` codec: the Responses API's bodies, output items and stream events."""

    name = NAME

    def encode_request(self, request: Request) -> dict[str, Any]:
        """Return the exact `POST /v1/responses` body for `request`."""
        return _encode_request(request)

    def decode_response(self, body: dict[str, Any]) -> Response:
        """Read a Response object; an `{"error": ...}` body raises `ProviderError`."""
        return decode_response(body)

    def stream_decoder(self) -> ResponsesStreamDecoder:
        """Return a fresh decoder for one Responses event stream."""
        return ResponsesStreamDecoder()

    def decode_request(self, body: dict[str, Any]) -> Request:
        """Read a request body back into a neutral `Request`; unknown keys go to `extra`."""
        return _decode_request(body)

    def encode_response(self, response: Response) -> dict[str, Any]:
        """Render a reply as a Response object, deriving item ids the reply does not carry."""
        return encode_response(response)

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> StreamEncoder:
        """A fresh encoder turning neutral stream events into Responses stream events as they come."""
        from toolwire.codecs._openai_responses_encoder import ResponsesStreamEncoder

        return ResponsesStreamEncoder(model, response_id)

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """Render a reply as the stream events the API sends, `sequence_number`s included."""
        from toolwire.codecs._openai_responses_encoder import ResponsesStreamEncoder
        from toolwire.codecs._stream_encoding import replay

        return replay(ResponsesStreamEncoder(reply=response), response)


CODEC = OpenAIResponsesCodec()
