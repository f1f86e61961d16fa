"""Anthropic Messages request bodies read back into the neutral form (part of the `anthropic` codec).

`_anthropic` assembles the `Request` and encodes; this module reads `system`, `messages`,
`tools` and `tool_choice`, and the content blocks replies share. Imports only
`toolwire.types`, `toolwire.errors` and `toolwire.codecs._shared`; never another codec.

Coding agents send what the API shipped last (anthropic-sdk-python 2.x `types/`), and a
gateway must not choke on it. What is kept, and where, so that a body decoded and encoded
again for Anthropic comes back the same:

- `role: "system"` messages inside `messages` (Claude Opus 4.8+) become a `SystemMessage`
  where they stand; `_anthropic` sends them back in place.
- Fields of `text`, `tool_use`, `tool_result` and thinking blocks beyond what the neutral
  part holds (`cache_control`, `citations`, `caller`, `is_error` on a multimodal result) go
  to the part's `metadata["anthropic"]` and are merged back into the block; other codecs
  ignore them, as they ignore every foreign opaque value.
- Content blocks with no neutral form (`document`, `search_result`, `server_tool_use`,
  `web_search_tool_result`, `container_upload`, and any type added later) are dropped, as
  are server tools (`web_search_20250305`...) for other targets, each logged once by type.
- Top-level fields (`thinking`, `context_management`, `output_config`, `cache_control`...)
  are `_anthropic`'s business: they stay in `Request.extra`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from typing import Any

from toolwire.codecs._shared import dumps, new_call_id, parse_arguments, require_dict, warn_once
from toolwire.errors import CodecError
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    ImagePart,
    Message,
    NamedToolChoice,
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
    "NAME",
    "call_id",
    "decode_assistant_blocks",
    "decode_messages",
    "decode_system",
    "decode_tool",
    "decode_tool_choice",
    "own_fields",
]

NAME = "anthropic"

_logger = logging.getLogger("toolwire.codecs._anthropic")
_warned: set[str] = set()

_LONG_NAME = re.compile(r"[a-zA-Z0-9_-]{65,128}")
_NEUTRAL_TOOL_CHOICES: dict[str, ToolChoice] = {"auto": "auto", "none": "none", "any": "required"}
# The keys of each block that its neutral part holds; any other key is kept in the part's metadata.
_MODELED: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
}


def own_fields(metadata: dict[str, Any], kind: str) -> dict[str, Any]:
    """The block fields kept in `metadata["anthropic"]` to merge into a `kind` block (never its own keys)."""
    own = metadata.get(NAME)
    if not isinstance(own, dict):
        return {}
    modeled = _MODELED[kind]
    return {k: v for k, v in own.items() if k not in modeled}


def _kept(block: dict[str, Any], kind: str) -> dict[str, Any]:
    fields = {k: v for k, v in block.items() if k not in _MODELED[kind]}
    return {NAME: fields} if fields else {}


def dropped(what: str, value: Any, where: str = "") -> None:
    """Log once that a `what` named `value` has no neutral form (SPEC §2: degrade visibly).

    The key (`anthropic:document`, `anthropic:image.cache_control`) is what a gateway names in
    its `x-toolwire-dropped` header.
    """
    message = f"anthropic: {what} {value!r} has no neutral form and is dropped when decoding a request."
    warn_once(_logger, _warned, f"{NAME}:{where}{value}", message)


# Assistant blocks (requests and replies)


def decode_assistant_blocks(content: Any, *, request: bool = False) -> list[AssistantPart]:
    """A turn's blocks as neutral parts; in a request, extra block fields are kept and drops logged."""
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[AssistantPart] = []
    for block in _blocks(content):
        if not isinstance(block, dict):
            continue
        part = _decode_assistant_block(block)
        if part is None:
            if request:
                dropped("content block type", block.get("type"))
            continue
        if request and (kept := _kept(block, block["type"])):
            part.metadata.update(kept)
        parts.append(part)
    return parts


def _decode_assistant_block(block: dict[str, Any]) -> AssistantPart | None:
    match block.get("type"):
        case "text":
            return TextPart(text=block.get("text") or "")
        case "thinking":
            return ThinkingPart(
                text=block.get("thinking") or "", signature=block.get("signature") or None, provider=NAME
            )
        case "redacted_thinking":
            return ThinkingPart(text="", signature=block.get("data") or None, redacted=True, provider=NAME)
        case "tool_use":
            arguments, metadata = parse_arguments(block.get("input"))
            return ToolCall(
                id=call_id(block.get("id")), name=block.get("name") or "", arguments=arguments, metadata=metadata
            )
        case _:
            return None  # server tool blocks (web search, code execution) have no neutral form


def call_id(value: Any) -> str:
    """The block's call id, or a fresh one when the block has none."""
    return value if isinstance(value, str) and value else new_call_id("toolu_")


def _blocks(content: Any) -> list[Any]:
    if not isinstance(content, list):
        raise CodecError(f"anthropic content {content!r} is neither a string nor a list of blocks.", provider=NAME)
    return content


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
    blocks = [b for b in _blocks(content) if isinstance(b, dict)]
    for key in sorted({k for b in blocks for k in b} - _MODELED["text"]):
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
    for block in _blocks(content):
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
        return TextPart(text=block.get("text") or "", metadata=_kept(block, "text"))
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
    kept = _kept(block, "tool_result")
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
