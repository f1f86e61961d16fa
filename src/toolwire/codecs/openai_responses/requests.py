"""Responses API request bodies (`POST /v1/responses`), both ways."""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, assert_never

from toolwire.codecs.common.checks import sendable_schema
from toolwire.codecs.common.conversation import split_leading_system
from toolwire.codecs.common.degradations import warn_missing_options, warn_once
from toolwire.codecs.common.wire import dumps, error_payload, read_error_payload, require_dict, sniff_image_type
from toolwire.codecs.openai_responses.items import (
    NAME,
    as_int,
    as_str,
    decode_call,
    decode_message,
    decode_reasoning,
    encode_parts,
    namespaced,
    warned,
)
from toolwire.errors import CodecError
from toolwire.schema import openai_strict_format, openai_strict_schema
from toolwire.types import (
    AssistantMessage,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    ResponseFormat,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = ["decode_request", "encode_request"]

_log = logging.getLogger("toolwire.codecs.openai_responses")

# Tables

_STRING_CHOICES = ("auto", "none", "required")
_REQUEST_KEYS = frozenset(
    {"model", "instructions", "input", "tools", "tool_choice", "parallel_tool_calls", "max_output_tokens"}
    | {"temperature", "top_p", "user", "stream"}
)

# Encode


def encode_request(request: Request) -> dict[str, Any]:
    """The exact `POST /v1/responses` body for `request`."""
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
    for option, key in (("max_tokens", "max_output_tokens"), ("temperature", "temperature"), ("top_p", "top_p")):
        if (value := getattr(request, option)) is not None:
            body[key] = value
    if request.user is not None:
        body["user"] = request.user
    warn_missing_options(_log, warned, NAME, request, ("stop", "seed"))
    if request.stream:
        body["stream"] = True
    body.update(request.extra)
    if request.response_format is not None:  # after extra: a `text` kept there (verbosity) gains the format
        body["text"] = {**body.get("text", {}), "format": _encode_format(request.response_format)}
    return body


def _encode_format(wanted: ResponseFormat, *, strict_form: bool = True) -> dict[str, Any]:
    """`text.format`: `json_object`, or `json_schema` with a name (required) and the schema (strict form if strict)."""
    if wanted.schema is None:
        return {"type": "json_object"}
    schema = openai_strict_format(wanted.schema) if wanted.strict and strict_form else wanted.schema
    wire: dict[str, Any] = {"type": "json_schema", "name": wanted.name or "response", "schema": schema}
    if wanted.strict is not None:
        wire["strict"] = wanted.strict
    return wire


def _decode_format(extra: dict[str, Any]) -> ResponseFormat | None:
    """The JSON output `text.format` asks for; what else `text` holds stays in `extra`."""
    text = extra.get("text")
    wire = text.get("format") if isinstance(text, dict) else None
    found: ResponseFormat | None = None
    if isinstance(wire, dict) and wire.get("type") == "json_object":
        found = ResponseFormat()
    elif isinstance(wire, dict) and wire.get("type") == "json_schema":
        schema = wire.get("schema") if isinstance(wire.get("schema"), dict) else {}
        found = ResponseFormat(schema=schema, name=as_str(wire.get("name")), strict=wire.get("strict"))
    if found is not None and isinstance(text, dict) and _encode_format(found, strict_form=False) == wire:
        rest = {k: v for k, v in text.items() if k != "format"}
        if rest:
            extra["text"] = rest
        else:
            del extra["text"]
    return found


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
            # Unlike Chat Completions, a function_call_output may hold images (docs/wire-formats.md, OpenAI Responses).
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
        body["parameters"] = sendable_schema(NAME, tool, openai_strict_schema)
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


def decode_request(body: dict[str, Any]) -> Request:
    """Read a request body back into a neutral `Request`; unknown keys go to `extra`."""
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
        response_format=_decode_format(extra),
        stream=body.get("stream") is True,
        extra=extra,
    )
