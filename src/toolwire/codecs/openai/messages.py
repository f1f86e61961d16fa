"""Conversation history as OpenAI Chat Completions `messages`, in both directions.

Shared by the `openai` codec's request and reply rooms. Targets the Chat Completions API as
typed by openai-python 3.x (`types/chat/chat_completion_*_message_param.py`).

Two facts shape this module:

- Tool messages carry text only (`ChatCompletionToolMessageParam`), so the images of a
  multimodal result go in ONE `user` message after the run of tool messages, each group led
  by a marker text naming the call; `decode_messages` folds them back into the result.
- The wire has no tool name on a tool message; it is recovered from the assistant call with
  the same id earlier in the conversation.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from typing import Any, assert_never

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.common.wire import dumps, error_payload, read_error_payload, require_dict, sniff_image_type
from toolwire.errors import CodecError
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolResult,
    UserMessage,
)

__all__ = [
    "NAME",
    "REASONING_FIELDS",
    "REFUSAL",
    "decode_assistant",
    "decode_messages",
    "encode_assistant",
    "encode_messages",
    "is_refusal",
]

NAME = "openai"
# Compat servers put reasoning here: vLLM < 0.11 and llama.cpp `reasoning_content`, vLLM's
# current name `reasoning` (vLLM PR #27752). Read in this order; written back under the name
# it came in, kept in `ThinkingPart.metadata["openai"]["field"]`.
REASONING_FIELDS = ("reasoning_content", "reasoning")
# `message.refusal` (openai-python `ChatCompletionMessage.refusal`) is kept as a text part
# flagged with this metadata, so a refusal is never an empty reply.
REFUSAL: dict[str, Any] = {NAME: {"refusal": True}}

_MARKER = "Images from tool call {id} ({name}):"
_MARKER_RE = re.compile(r"Images from tool call (.+) \(([A-Za-z0-9_-]*)\):", re.DOTALL)
# Tool content cannot be empty; a result of images only gets this text in its tool message.
_IMAGES_ONLY = "(The images of this result follow in the next user message.)"
_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)
# A data URL needs a media type; sniff the formats OpenAI accepts when the part has none.


def is_refusal(part: TextPart) -> bool:
    """Whether a text part holds an OpenAI refusal rather than reply text."""
    opaque = part.metadata.get(NAME)
    return isinstance(opaque, dict) and opaque.get("refusal") is True


# encode


def _same(call_id: str) -> str:
    return call_id


def encode_messages(
    messages: list[Message],
    reasoning_field: str | None,
    wire_id: Callable[[str], str] = _same,
    *,
    foreign_reasoning: bool = False,
) -> list[dict[str, Any]]:
    """Return the `messages` array.

    `reasoning_field` names the field for this codec's thinking whose field is unknown (and, with
    `foreign_reasoning`, for every other provider's); `wire_id` rewrites call ids the server would
    refuse, the same way in calls and results.
    """
    wire: list[dict[str, Any]] = []
    images: list[dict[str, Any]] = []  # image parts owed after the current run of tool messages
    for message in messages:
        if images and not isinstance(message, ToolResult):
            wire.append({"role": "user", "content": images})
            images = []
        match message:
            case SystemMessage():
                wire.append({"role": "system", "content": message.content})
            case UserMessage():
                content = message.content
                parts = content if isinstance(content, str) else [_encode_content_part(p) for p in content]
                wire.append({"role": "user", "content": parts})
            case AssistantMessage():
                wire.append(encode_assistant(message, reasoning_field, wire_id=wire_id, foreign=foreign_reasoning))
            case ToolResult():
                wire.append(_encode_result(message, images, wire_id))
            case _:
                assert_never(message)
    if images:
        wire.append({"role": "user", "content": images})
    return wire


def encode_assistant(
    message: AssistantMessage,
    reasoning_field: str | None,
    *,
    reply: bool = False,
    wire_id: Callable[[str], str] = _same,
    foreign: bool = False,
) -> dict[str, Any]:
    """Return an assistant message (a request's history turn, or with `reply` a response's message).

    A reply replays everything the model said: every thinking part and the raw argument text of
    calls whose arguments were broken. A history turn sends only thinking this codec produced,
    unless `foreign` (DeepSeek wants the reasoning back beside its calls, whoever wrote it).
    """
    text: list[str] = []
    refusal: list[str] = []
    reasoning: dict[str, list[str]] = {}
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        match part:
            case TextPart():
                (refusal if is_refusal(part) else text).append(part.text)
            case ThinkingPart():
                field = _reasoning_field(part, reasoning_field, reply=reply or foreign)
                if field is not None:
                    reasoning.setdefault(field, []).append(part.text)
            case ToolCall():
                calls.append(_encode_call(part, reply=reply, wire_id=wire_id))
            case _:
                assert_never(part)
    wire: dict[str, Any] = {"role": "assistant", "content": "".join(text) if text else None}
    if refusal:
        wire["refusal"] = "".join(refusal)
    wire.update((field, "".join(chunks)) for field, chunks in reasoning.items())
    if calls:
        wire["tool_calls"] = calls
    return wire


def _reasoning_field(part: ThinkingPart, default: str | None, *, reply: bool) -> str | None:
    if part.provider != NAME and not reply:
        return None  # foreign reasoning: OpenAI-compatible servers cannot check it
    if default is None and not reply:
        return None  # OpenAI's own API has no reasoning field in requests: only compatible servers do
    opaque = part.metadata.get(NAME)
    field = opaque.get("field") if isinstance(opaque, dict) else None
    return field if field in REASONING_FIELDS else default


def _encode_call(call: ToolCall, *, reply: bool, wire_id: Callable[[str], str]) -> dict[str, Any]:
    raw = call.metadata.get("raw_arguments")
    # Arguments that could not be read go back as the model wrote them, never as a made-up "{}".
    keep_raw = isinstance(raw, str) and (reply or "arguments_error" in call.metadata)
    opaque = call.metadata.get(NAME)
    arguments = raw if keep_raw else _written_arguments(call, opaque)
    function = {"name": call.name, "arguments": arguments}
    wire: dict[str, Any] = {"id": wire_id(call.id), "type": "function", "function": function}
    if isinstance(opaque, dict) and "extra_content" in opaque:
        # Gemini's OpenAI-compatible endpoint needs its thought signature back here.
        wire["extra_content"] = opaque["extra_content"]
    return wire


def _written_arguments(call: ToolCall, opaque: Any) -> str:
    """The arguments text as the caller wrote it, while it still says the same; else compact JSON."""
    written = opaque.get("arguments") if isinstance(opaque, dict) else None
    if isinstance(written, str):
        try:
            if json.loads(written) == call.arguments:
                return written
        except ValueError:
            pass
    return dumps(call.arguments)


def _encode_result(result: ToolResult, images: list[dict[str, Any]], wire_id: Callable[[str], str]) -> dict[str, Any]:
    call_id = wire_id(result.tool_call_id)
    match result.kind:
        case "text":
            content: Any = result.value
        case "data":
            content = dumps(result.value)
        case "error":
            content = error_payload(result.value)
        case "multimodal":
            content = [{"type": "text", "text": p.text} for p in result.value if isinstance(p, TextPart)]
            pictures = [_encode_content_part(p) for p in result.value if isinstance(p, ImagePart)]
            if pictures:
                marker = _MARKER.format(id=call_id, name=result.name)
                images.extend([{"type": "text", "text": marker}, *pictures])
                content = content or [{"type": "text", "text": _IMAGES_ONLY}]
        case _:
            assert_never(result.kind)
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def _encode_content_part(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if part.url is not None:
        return {"type": "image_url", "image_url": {"url": part.url}}
    data = part.data or b""
    media_type = part.media_type or sniff_image_type(data) or "application/octet-stream"
    return {"type": "image_url", "image_url": {"url": f"data:{media_type};base64,{base64.b64encode(data).decode()}"}}


# decode


def decode_messages(wire: Any) -> list[Message]:
    """Read a `messages` array back into neutral messages, re-merging multimodal results."""
    if not isinstance(wire, list):
        raise CodecError(f"The openai request needs a 'messages' list, got {wire!r}.", provider=NAME)
    messages: list[Message] = []
    names: dict[str, str] = {}  # call id -> tool name, for tool messages that lack it
    run: dict[str, ToolResult] = {}  # the current run of tool results, by call id
    for item in wire:
        item = require_dict(item, NAME, "message")
        role = item.get("role")
        if role == "tool":
            result = _decode_result(item, names)
            run[result.tool_call_id] = result
            messages.append(result)
            continue
        if not (role == "user" and run and _merge_images(item.get("content"), run)):
            message = _decode_message(item, role)
            messages.append(message)
            if isinstance(message, AssistantMessage):
                names.update((c.id, c.name) for c in message.tool_calls)
        run = {}
    return messages


def _decode_message(item: dict[str, Any], role: Any) -> Message:
    content = item.get("content")
    if role in ("system", "developer"):
        return SystemMessage(content=content if isinstance(content, str) else _join_text(content))
    if role == "user":
        if isinstance(content, str):
            return UserMessage(content=content)
        if isinstance(content, list):
            return UserMessage(content=[_decode_content_part(p) for p in content])
        raise CodecError(f"An openai user message needs str or list content, got {content!r}.", provider=NAME)
    if role == "assistant":
        return decode_assistant(item, seed="", keep_empty=True)
    raise CodecError(
        f"The openai codec cannot read a message with role {role!r}; use system, user, assistant or tool.",
        provider=NAME,
    )


def decode_assistant(wire: dict[str, Any], *, seed: str, keep_empty: bool) -> AssistantMessage:
    """Read an assistant message: reasoning, text, refusal, then calls (the wire keeps no other order).

    `keep_empty` keeps an empty `content` as a text part (exact request round trips); replies
    drop it, since servers send `""` where others send `null`. Calls without an id get one
    derived from `seed` and their position, so streamed and whole replies agree.
    """
    parts: list[AssistantPart] = []
    field = next((f for f in REASONING_FIELDS if isinstance(wire.get(f), str) and wire[f]), None)
    if field is not None:
        parts.append(ThinkingPart(text=wire[field], provider=NAME, metadata={NAME: {"field": field}}))
    content = wire.get("content")
    text = content if isinstance(content, str) else _join_text(content) if isinstance(content, list) else None
    if text is not None and (text or keep_empty):
        parts.append(TextPart(text=text))
    refusal = wire.get("refusal")
    if isinstance(refusal, str) and refusal:
        parts.append(TextPart(text=refusal, metadata={NAME: {"refusal": True}}))
    for position, call in enumerate(wire.get("tool_calls") or []):
        parts.append(_decode_call(call, seed, position, keep_written=keep_empty))
    return AssistantMessage(parts=parts)


def _decode_call(wire: Any, seed: str, position: int, *, keep_written: bool = False) -> ToolCall:
    """One call; with `keep_written` (a request), arguments text that compact JSON would respell is kept."""
    wire = require_dict(wire, NAME, "tool call")
    function = wire["function"] if isinstance(wire.get("function"), dict) else {}
    raw = function.get("arguments")
    arguments, metadata = parse_arguments(raw)
    opaque: dict[str, Any] = {}
    if "extra_content" in wire:
        opaque["extra_content"] = wire["extra_content"]
    if keep_written and isinstance(raw, str) and raw and not metadata and dumps(arguments) != raw:
        opaque["arguments"] = raw  # a same-codec round trip sends the caller's text again
    if opaque:
        metadata[NAME] = opaque
    call_id = wire.get("id")
    return ToolCall(
        id=call_id if isinstance(call_id, str) and call_id else derived_call_id(seed, position),
        name=str(function.get("name") or ""),
        arguments=arguments,
        metadata=metadata,
    )


def _decode_result(item: dict[str, Any], names: dict[str, str]) -> ToolResult:
    call_id = item.get("tool_call_id")
    content = item.get("content")
    if not isinstance(call_id, str):
        raise CodecError(f"An openai tool message needs a str 'tool_call_id', got {call_id!r}.", provider=NAME)
    name = names.get(call_id, "")
    if isinstance(content, list):
        parts: list[TextPart | ImagePart] = [_decode_content_part(p) for p in content]
        return ToolResult(tool_call_id=call_id, name=name, kind="multimodal", value=parts)
    if not isinstance(content, str):
        raise CodecError(f"An openai tool message needs str or list content, got {content!r}.", provider=NAME)
    error = read_error_payload(content)
    if error is not None:
        return ToolResult(tool_call_id=call_id, name=name, kind="error", value=error)
    return ToolResult(tool_call_id=call_id, name=name, kind="text", value=content)


def _merge_images(content: Any, run: dict[str, ToolResult]) -> bool:
    """Fold a follow-up image message back into the run's results; `False` if it is not one."""
    if not isinstance(content, list) or not content:
        return False
    groups: list[tuple[ToolResult, list[ImagePart]]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            match = _MARKER_RE.fullmatch(str(part.get("text")))
            result = run.get(match[1]) if match else None
            if result is None or result.kind != "multimodal":
                return False
            groups.append((result, []))
        elif kind == "image_url" and groups:
            groups[-1][1].append(_decode_image(part))
        else:
            return False
    for result, images in groups:
        texts = [p for p in result.value if not (isinstance(p, TextPart) and p.text == _IMAGES_ONLY)]
        result.value = [*texts, *images]
    return True


def _decode_content_part(part: Any) -> TextPart | ImagePart:
    part = require_dict(part, NAME, "content part")
    if part.get("type") == "text" and isinstance(part.get("text"), str):
        return TextPart(text=part["text"])
    if part.get("type") == "image_url":
        return _decode_image(part)
    raise CodecError(
        f"The openai codec reads text and image_url content parts only, got {part!r}; drop or convert it.",
        provider=NAME,
    )


def _decode_image(part: dict[str, Any]) -> ImagePart:
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    if not isinstance(url, str):
        raise CodecError(f"An openai image_url part needs a str url, got {part!r}.", provider=NAME)
    inline = _DATA_URL.fullmatch(url)
    if inline is None:
        return ImagePart(url=url)
    try:
        return ImagePart(data=base64.b64decode(inline[2], validate=True), media_type=inline[1])
    except binascii.Error:
        raise CodecError(f"The openai image data URL is not valid base64: {url[:60]!r}.", provider=NAME) from None


def _join_text(content: Any) -> str:
    parts = content if isinstance(content, list) else []
    return "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
