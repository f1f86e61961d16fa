"""Anthropic Messages request bodies, both ways (the content blocks replies share: `blocks`).

Encoding puts the leading system messages in `system`, results first in the next user
message, thinking with its signature, and ids the API accepts. Decoding reads `system`,
`messages`, `tools` and `tool_choice`.

Coding agents send what the API shipped last (anthropic-sdk-python 2.x `types/`), and a
gateway must not choke on it. What is kept, and where, so that a body decoded and encoded
again for Anthropic comes back the same:

- `role: "system"` messages inside `messages` (Claude Opus 4.8+) become a `SystemMessage`
  where they stand, and go back in place.
- Fields of `text`, `tool_use`, `tool_result` and thinking blocks beyond what the neutral
  part holds (`cache_control`, `citations`, `caller`, `is_error` on a multimodal result) go
  to the part's `metadata["anthropic"]` and are merged back into the block; other codecs
  ignore them, as they ignore every foreign opaque value.
- Content blocks with no neutral form (`document`, `search_result`, `server_tool_use`,
  `web_search_tool_result`, `container_upload`, and any type added later) are dropped, as
  are server tools (`web_search_20250305`...) for other targets, each logged once by type.
- Top-level fields (`thinking`, `context_management`, `output_config`, `cache_control`...)
  stay in `Request.extra`.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, assert_never

from toolwire.codecs.anthropic.blocks import (
    MODELED,
    NAME,
    content_blocks,
    decode_assistant_blocks,
    dropped,
    kept_fields,
    logger,
    own_fields,
    warned,
)
from toolwire.codecs.common.checks import sendable_schema
from toolwire.codecs.common.conversation import split_leading_system, unique_call_ids
from toolwire.codecs.common.degradations import warn_missing_options, warn_once
from toolwire.codecs.common.ids import sanitize_id
from toolwire.codecs.common.wire import dumps, require_dict, sniff_image_type, stop_list
from toolwire.errors import CodecError
from toolwire.schema import anthropic_input_schema
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    ImagePart,
    Message,
    NamedToolChoice,
    Request,
    ResponseFormat,
    ResultKind,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "NAME",
    "decode_messages",
    "decode_request",
    "decode_system",
    "decode_tool",
    "decode_tool_choice",
    "encode_request",
]

_LONG_NAME = re.compile(r"[a-zA-Z0-9_-]{65,128}")
_NEUTRAL_TOOL_CHOICES: dict[str, ToolChoice] = {"auto": "auto", "none": "none", "any": "required"}


# System prompts


def decode_system(system: Any) -> tuple[list[Message], dict[str, Any]]:
    """The top-level `system` as `SystemMessage`s, plus what `Request.extra` keeps of it."""
    if system is None:
        return [], {}
    if isinstance(system, str):
        return [SystemMessage(content=system)], {}
    if isinstance(system, list) and all(
        isinstance(b, dict) and b.get("type") == "text" and set(b) == {"type", "text"} for b in system
    ):
        return [SystemMessage(content=b["text"]) for b in system], {}
    # cache_control and friends: the blocks go back as they are to Anthropic (merged last); the
    # text reaches every other provider as system prompts.
    return [SystemMessage(content=t) for t in _texts(system)], {"system": system}


def _texts(blocks: Any) -> list[str]:
    if not isinstance(blocks, list):
        return []
    return [b["text"] for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _decode_system_message(content: Any) -> list[Message]:
    # A mid-conversation system message (Claude Opus 4.8+): `content` is a string or text blocks.
    if isinstance(content, str):
        return [SystemMessage(content=content)]
    blocks = [b for b in content_blocks(content) if isinstance(b, dict)]
    for key in sorted({k for b in blocks for k in b} - MODELED["text"]):
        dropped("field of a system message block", key, "system.")  # SystemMessage holds text only
    return [SystemMessage(content=text) for text in _texts(blocks)]


# Messages


def decode_messages(wire_messages: list[Any]) -> list[Message]:
    """`messages` as neutral messages: grouped results split, system messages kept in place."""
    names: dict[str, str] = {}  # tool_use id -> tool name, since tool_result blocks carry no name
    messages: list[Message] = []
    for index, item in enumerate(wire_messages):
        item = require_dict(item, NAME, f"messages[{index}]")
        role, content = item.get("role"), item.get("content")
        if role == "assistant":
            parts = decode_assistant_blocks(content, request=True)
            names.update((p.id, p.name) for p in parts if isinstance(p, ToolCall))
            messages.append(AssistantMessage(parts=parts))
        elif role == "user":
            messages.extend(_decode_user_content(content, names))
        elif role == "system":
            messages.extend(_decode_system_message(content))
        else:
            raise CodecError(
                f"anthropic messages[{index}] has role {role!r}; use 'user', 'assistant' or 'system'.",
                provider=NAME,
            )
    return messages


def _decode_user_content(content: Any, names: dict[str, str]) -> list[Message]:
    if isinstance(content, str):
        return [UserMessage(content=content)]
    messages: list[Message] = []
    pending: list[TextPart | ImagePart] = []
    for block in content_blocks(content):
        block = require_dict(block, NAME, "content block")
        if block.get("type") == "tool_result":
            if pending:
                messages.append(UserMessage(content=pending))
                pending = []
            messages.append(_decode_result(block, names))
        elif (part := _decode_media(block)) is not None:
            pending.append(part)
    if pending or not messages:
        messages.append(UserMessage(content=pending))
    return messages


def _decode_media(block: dict[str, Any]) -> TextPart | ImagePart | None:
    kind = block.get("type")
    if kind == "text":
        return TextPart(text=block.get("text") or "", metadata=kept_fields(block, "text"))
    if kind == "image":
        image = _decode_image(block.get("source"))
        if image is not None:
            if "cache_control" in block:
                dropped("field of an image block", "cache_control", "image.")
            return image
    dropped("content block type", kind)
    return None


def _decode_image(source: Any) -> ImagePart | None:
    if not isinstance(source, dict):
        return None
    if source.get("type") == "base64":
        try:
            data = base64.b64decode(source.get("data") or "", validate=True)
        except (binascii.Error, ValueError):
            raise CodecError(f"anthropic image data {source.get('data')!r:.40} is not base64.", provider=NAME) from None
        return ImagePart(data=data, media_type=source.get("media_type"))
    if source.get("type") == "url":
        return ImagePart(url=source.get("url") or "")
    return None  # a `file` source (Files API) has no neutral form


def _decode_result(block: dict[str, Any], names: dict[str, str]) -> ToolResult:
    tool_call_id = str(block.get("tool_use_id") or "")
    name = names.get(tool_call_id, "")
    content = block.get("content")
    kept = kept_fields(block, "tool_result")
    if isinstance(content, list):
        parts = [p for b in content if isinstance(b, dict) and (p := _decode_media(b)) is not None]
        if block.get("is_error") is True:  # a multimodal result has no error kind: the flag is kept
            kept = {NAME: kept.get(NAME, {}) | {"is_error": True}}
        return ToolResult(tool_call_id=tool_call_id, name=name, kind="multimodal", value=parts, metadata=kept)
    # `data` results are JSON text on the wire, indistinguishable from text; text re-encodes identically.
    text = content if isinstance(content, str) else ("" if content is None else dumps(content))
    kind: ResultKind = "error" if block.get("is_error") is True else "text"
    return ToolResult(tool_call_id=tool_call_id, name=name, kind=kind, value=text, metadata=kept)


# Tools


def decode_tool(tool: Any) -> ToolDefinition | None:
    """A custom tool as a `ToolDefinition`; a server tool (`web_search_20250305`...) is dropped, logged."""
    tool = require_dict(tool, NAME, "tool")
    if tool.get("type", "custom") != "custom" or "input_schema" not in tool:
        dropped("tool type", tool.get("type"))
        return None
    name, description, strict = tool.get("name"), tool.get("description"), tool.get("strict")
    try:  # ToolDefinition checks the name and the schema's type itself
        return ToolDefinition(name=name, description=description, parameters=tool["input_schema"], strict=strict)
    except ValueError as exc:
        if isinstance(name, str) and _LONG_NAME.fullmatch(name) and isinstance(tool["input_schema"], dict):
            # Anthropic takes 128 characters (MCP tools run long), other providers 64: the tool
            # goes back to Anthropic only (the list stays in Request.extra).
            dropped("tool named", name)
            return None
        raise CodecError(f"anthropic tools entry {tool.get('name')!r} is not usable: {exc}", provider=NAME) from None


def decode_tool_choice(wire: Any) -> tuple[ToolChoice | None, bool | None]:
    """`tool_choice` as the neutral choice and `parallel_tool_calls`; `(None, None)` for an unknown kind."""
    if wire is None:
        return None, None
    wire = require_dict(wire, NAME, "tool_choice")
    disable = wire.get("disable_parallel_tool_use")
    parallel = None if disable is None else not disable
    kind = wire.get("type")
    if kind == "tool" and isinstance(wire.get("name"), str):
        return NamedToolChoice(wire["name"]), parallel
    if isinstance(kind, str) and kind in _NEUTRAL_TOOL_CHOICES:
        return _NEUTRAL_TOOL_CHOICES[kind], parallel
    if isinstance(kind, str) and kind != "tool":  # a kind added later: kept in Request.extra for Anthropic
        dropped("tool_choice type", kind)
        return None, None
    raise CodecError(f"anthropic tool_choice {wire!r} is not one of auto, any, none or tool (named).", provider=NAME)


DEFAULT_MAX_TOKENS = 4096
"""Sent when `Request.max_tokens` is None: the Messages API rejects a body without it."""


_TOOL_CHOICES: dict[str, str] = {"auto": "auto", "none": "none", "required": "any"}


# `claude-opus-4-8`, `claude-sonnet-5`, `us.anthropic.claude-opus-4-8-v1:0`; a date is no minor version.
_MODEL_VERSION = re.compile(r"claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?!\d)")


_REQUEST_KEYS = frozenset("model max_tokens system messages tools tool_choice temperature top_p stream".split())


def encode_request(request: Request) -> dict[str, Any]:
    """The exact `/v1/messages` body; `max_tokens` defaults to `DEFAULT_MAX_TOKENS`."""
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens if request.max_tokens is not None else DEFAULT_MAX_TOKENS,
    }
    system, messages = _split_system(request.model, request.messages)
    if system:
        body["system"] = "\n\n".join(system)
    # Ids must match ^[a-zA-Z0-9_-]+$ and be unique across the conversation (docs/wire-formats.md, Anthropic).
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
    warn_missing_options(logger, warned, NAME, request, ("seed",))
    wanted = request.response_format
    if wanted is not None and wanted.schema is None:
        message = "anthropic takes JSON output only with a schema; toolwire leaves response_format out."
        warn_once(logger, warned, f"{NAME}:response_format", message)
    elif wanted is not None:  # structured outputs: output_config.format (beside an `effort` kept in extra)
        format_ = {"type": "json_schema", "schema": wanted.schema}
        body["output_config"] = {**body.get("output_config", {}), "format": format_}


def _decode_options(body: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """The sampling options of a body; what else `metadata` holds stays in `extra`."""
    options: dict[str, Any] = {"top_p": body.get("top_p"), "stop": stop_list(extra.pop("stop_sequences", None))}
    metadata = extra.pop("metadata", None)
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        options["user"] = metadata["user_id"]
        metadata = {k: v for k, v in metadata.items() if k != "user_id"}
    if metadata:
        extra["metadata"] = metadata
    config = extra.get("output_config")
    format_ = config.get("format") if isinstance(config, dict) else None
    if isinstance(format_, dict) and format_.get("type") == "json_schema" and isinstance(format_.get("schema"), dict):
        options["response_format"] = ResponseFormat(schema=format_["schema"])
        rest = {k: v for k, v in config.items() if k != "format"}  # type: ignore[union-attr]
        if rest:
            extra["output_config"] = rest
        else:
            del extra["output_config"]
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
        logger,
        warned,
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
    # must come first in the very next user message (docs/wire-formats.md, Anthropic): results join only results.
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
    wire["input_schema"] = sendable_schema(NAME, tool, anthropic_input_schema)
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


def decode_request(body: dict[str, Any]) -> Request:
    """Read a `/v1/messages` body back; grouped results split into `ToolResult`s then user text."""
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
