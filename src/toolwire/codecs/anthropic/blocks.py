"""Anthropic content blocks as neutral parts: what request histories and replies share.

The assistant's blocks (`text`, `thinking`, `redacted_thinking`, `tool_use`) read the same in a
request's history, a whole reply and a stream; fields of a block beyond what its neutral part
holds are kept in the part's `metadata["anthropic"]` and merged back when encoding. What has no
neutral form is dropped and logged once (`dropped`).
"""

from __future__ import annotations

import logging
from typing import Any

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.degradations import warn_once
from toolwire.codecs.common.ids import new_call_id
from toolwire.errors import CodecError
from toolwire.types import AssistantPart, TextPart, ThinkingPart, ToolCall

__all__ = [
    "MODELED",
    "NAME",
    "call_id",
    "content_blocks",
    "decode_assistant_blocks",
    "dropped",
    "kept_fields",
    "logger",
    "own_fields",
    "warned",
]

NAME = "anthropic"

logger = logging.getLogger("toolwire.codecs.anthropic")
warned: set[str] = set()
"""The keys of the codec's degradation warnings already logged (each is logged once per process)."""

# The keys of each block that its neutral part holds; any other key is kept in the part's metadata.
MODELED: dict[str, frozenset[str]] = {
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
    modeled = MODELED[kind]
    return {k: v for k, v in own.items() if k not in modeled}


def kept_fields(block: dict[str, Any], kind: str) -> dict[str, Any]:
    """The block's fields its neutral part does not hold, as metadata to keep (`{}` when none)."""
    fields = {k: v for k, v in block.items() if k not in MODELED[kind]}
    return {NAME: fields} if fields else {}


def dropped(what: str, value: Any, where: str = "") -> None:
    """Log once that a `what` named `value` has no neutral form: it degrades visibly (docs/wire-formats.md).

    The key (`anthropic:document`, `anthropic:image.cache_control`) is what a gateway names in
    its `x-toolwire-dropped` header.
    """
    message = f"anthropic: {what} {value!r} has no neutral form and is dropped when decoding a request."
    warn_once(logger, warned, f"{NAME}:{where}{value}", message)


# Assistant blocks (requests and replies)


def decode_assistant_blocks(content: Any, *, request: bool = False) -> list[AssistantPart]:
    """A turn's blocks as neutral parts; in a request, extra block fields are kept and drops logged."""
    if isinstance(content, str):
        return [TextPart(text=content)]
    parts: list[AssistantPart] = []
    for block in content_blocks(content):
        if not isinstance(block, dict):
            continue
        part = _decode_assistant_block(block)
        if part is None:
            if request:
                dropped("content block type", block.get("type"))
            continue
        if request and (kept := kept_fields(block, block["type"])):
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


def content_blocks(content: Any) -> list[Any]:
    """A message's `content` list (a str is no list of blocks: the caller reads it first)."""
    if not isinstance(content, list):
        raise CodecError(f"anthropic content {content!r} is neither a string nor a list of blocks.", provider=NAME)
    return content
