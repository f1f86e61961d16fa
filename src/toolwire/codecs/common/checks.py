"""What a decoded request or reply must hold so that every encoder can write it again.

A decoder reads what a wire format sends; the gateway then hands the neutral value to another
codec's encoder. A value of the wrong type that a decoder let through (a tool name that is a
list, a text that is a number, a negative token count, a tool schema that describes a string)
would crash that encoder or be sent on as nonsense, so the boundary (`guard`) checks the
neutral value and refuses it with a `CodecError` naming what is wrong. Each function returns
the first problem as text (`messages[2] tool call 't1': name should be a string, got list`),
or None when everything fits. `sendable_schema` is the encoders' side: a schema that a user
built and the target cannot take is a `CodecError` naming the tool, as a decoder's would be.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from toolwire.errors import CodecError
from toolwire.types import (
    AssistantMessage,
    ImagePart,
    NamedToolChoice,
    Request,
    Response,
    ResponseFormat,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)

__all__ = [
    "message_problem",
    "request_problem",
    "response_problem",
    "schema_root_problem",
    "sendable_schema",
    "usage_problem",
]

_CHOICES = ("auto", "none", "required")


def _kind(value: Any) -> str:
    return type(value).__name__


def _not(what: str, value: Any, expected: str) -> str:
    return f"{what} should be {expected}, got {_kind(value)}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def usage_problem(usage: Usage | None) -> str | None:
    """Token counts are whole numbers, never negative."""
    if usage is None:
        return None
    if not isinstance(usage, Usage):
        return _not("usage", usage, "token counts")
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens", "cache_write_tokens"):
        value = getattr(usage, name)
        if value is None:
            continue
        if not _is_int(value):
            return _not(f"usage {name}", value, "an integer")
        if value < 0:
            return f"usage {name} should be 0 or more, got {value}"
    return None


def message_problem(message: AssistantMessage, where: str = "the reply") -> str | None:
    """Text, thinking and calls of an assistant turn have the types their fields declare."""
    if not isinstance(message.parts, list):
        return _not(f"{where} parts", message.parts, "a list")
    for part in message.parts:
        match part:
            case ToolCall():
                problem = _call_problem(part, where)
            case TextPart(text=text) | ThinkingPart(text=text):
                problem = None if isinstance(text, str) else _not(f"{where} text", text, "a string")
                if problem is None and isinstance(part, ThinkingPart) and not isinstance(part.signature, str | None):
                    problem = _not(f"{where} thinking signature", part.signature, "a string")
            case _:
                problem = f"{where} has a part of type {_kind(part)}"
        if problem is not None:
            return problem
    return None


def _call_problem(call: ToolCall, where: str) -> str | None:
    if not isinstance(call.id, str):
        return _not(f"{where} tool call id", call.id, "a string")
    label = f"{where} tool call {call.id!r}"
    if not isinstance(call.name, str):
        return _not(f"{label}: name", call.name, "a string")
    if not isinstance(call.arguments, dict):
        return _not(f"{label}: arguments", call.arguments, "an object")
    return None if isinstance(call.metadata, dict) else _not(f"{label}: metadata", call.metadata, "an object")


def response_problem(response: Response) -> str | None:
    """The first field of a decoded reply that no encoder could write, or None."""
    if not isinstance(response.id, str | None):
        return _not("the reply id", response.id, "a string")
    if not isinstance(response.model, str | None):
        return _not("the reply model", response.model, "a string")
    return message_problem(response.message) or usage_problem(response.usage)


def schema_root_problem(tool: ToolDefinition) -> str | None:
    """Every provider takes only object schemas for tool parameters (no encoder can send another)."""
    schema = tool.parameters
    if schema is None:
        return None
    kind = schema.get("type")
    if kind is None or kind == "object" or (isinstance(kind, list) and "object" in kind):
        return None
    return (
        f"tool {tool.name!r}: parameters should describe an object (type 'object'), got type {kind!r}; "
        "wrap the value in an object property"
    )


def sendable_schema(
    codec: str, tool: ToolDefinition, convert: Callable[[dict[str, Any] | None], dict[str, Any]]
) -> dict[str, Any]:
    """`convert(tool.parameters)` (a `toolwire.schema` function); its `ValueError` becomes a `CodecError`."""
    try:
        return convert(tool.parameters)
    except CodecError:
        raise
    except ValueError as exc:
        raise CodecError(f"{codec} cannot send tool {tool.name!r}: {exc}", provider=codec) from None


def request_problem(request: Request) -> str | None:
    """The first field of a decoded request that no encoder could write, or None."""
    if not isinstance(request.model, str):
        return _not("model", request.model, "a string")
    if not isinstance(request.messages, list):
        return _not("messages", request.messages, "a list")
    for index, message in enumerate(request.messages):
        if problem := _message_problem(message, f"messages[{index}]"):
            return problem
    if not isinstance(request.tools, list):
        return _not("tools", request.tools, "a list")
    for tool in request.tools:
        if problem := _tool_problem(tool):
            return problem
    return _choice_problem(request) or _options_problem(request)


def _message_problem(message: Any, where: str) -> str | None:
    match message:
        case SystemMessage(content=content):
            return None if isinstance(content, str) else _not(f"{where} (system) content", content, "a string")
        case UserMessage(content=content):
            return _user_content_problem(content, f"{where} (user)")
        case AssistantMessage():
            return message_problem(message, f"{where} (assistant)")
        case ToolResult():
            return _result_problem(message, f"{where} (tool result)")
        case _:
            return f"{where} is a {_kind(message)}, not a message"


def _user_content_problem(content: Any, where: str) -> str | None:
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return _not(f"{where} content", content, "a string or a list of parts")
    for part in content:
        if problem := _media_problem(part, where):
            return problem
    return None


def _media_problem(part: Any, where: str) -> str | None:
    match part:
        case TextPart(text=text):
            return None if isinstance(text, str) else _not(f"{where} text", text, "a string")
        case ImagePart(data=data, url=url, media_type=media_type):
            if not isinstance(data, bytes | None) or not isinstance(url, str | None):
                return f"{where} image should have bytes or a URL string"
            return None if isinstance(media_type, str | None) else _not(f"{where} image type", media_type, "a string")
        case _:
            return f"{where} has a part of type {_kind(part)}"


def _result_problem(result: ToolResult, where: str) -> str | None:
    if not isinstance(result.tool_call_id, str):
        return _not(f"{where} call id", result.tool_call_id, "a string")
    if not isinstance(result.name, str):
        return _not(f"{where} {result.tool_call_id!r}: name", result.name, "a string")
    if result.kind == "multimodal":
        return next((p for part in result.value if (p := _media_problem(part, where))), None)
    return None  # text and error values are checked by ToolResult itself; data is any JSON


def _tool_problem(tool: Any) -> str | None:
    if not isinstance(tool, ToolDefinition):
        return f"tools holds a {_kind(tool)}, not a tool definition"
    if not isinstance(tool.description, str | None):
        return _not(f"tool {tool.name!r}: description", tool.description, "a string")
    if not isinstance(tool.strict, bool | None):
        return _not(f"tool {tool.name!r}: strict", tool.strict, "a boolean")
    return schema_root_problem(tool)


def _choice_problem(request: Request) -> str | None:
    choice = request.tool_choice
    if choice is None or choice in _CHOICES:
        return None
    if isinstance(choice, NamedToolChoice):
        return None if isinstance(choice.name, str) else _not("tool_choice name", choice.name, "a string")
    return f"tool_choice should be one of {', '.join(_CHOICES)} or a named tool, got {choice!r:.80}"


def _options_problem(request: Request) -> str | None:
    for name in ("temperature", "top_p"):
        value = getattr(request, name)
        if value is not None and not _is_number(value):
            return _not(name, value, "a finite number")
    for name in ("max_tokens", "seed"):
        value = getattr(request, name)
        if value is not None and not _is_int(value):
            return _not(name, value, "an integer")
    if request.stop is not None and not (
        isinstance(request.stop, list) and all(isinstance(s, str) for s in request.stop)
    ):
        return _not("stop", request.stop, "a list of strings")
    if not isinstance(request.user, str | None):
        return _not("user", request.user, "a string")
    for name in ("parallel_tool_calls", "stream"):
        value = getattr(request, name)
        if not isinstance(value, bool | None):
            return _not(name, value, "a boolean")
    if not isinstance(request.extra, dict):
        return _not("extra", request.extra, "an object")
    return _format_problem(request.response_format)


def _format_problem(wanted: ResponseFormat | None) -> str | None:
    if wanted is None:
        return None
    if not isinstance(wanted, ResponseFormat):
        return _not("response_format", wanted, "a response format")
    if not isinstance(wanted.schema, dict | None):
        return _not("response_format schema", wanted.schema, "an object")
    if not isinstance(wanted.name, str | None):
        return _not("response_format name", wanted.name, "a string")
    if not isinstance(wanted.strict, bool | None):
        return _not("response_format strict", wanted.strict, "a boolean")
    return None
