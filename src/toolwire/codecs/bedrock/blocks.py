"""Converse content blocks as neutral parts: what request histories, replies and streams share.

A content block is a union with one key (`text`, `image`, `document`, `toolUse`, `toolResult`,
`reasoningContent`, `cachePoint`...), per the botocore service model `bedrock-runtime`
2023-09-30. Bytes travel as base64 in the JSON body. What has no neutral form is kept where it
can be (a `cachePoint` after a part, a document as a text part naming it) or dropped and
logged once (`dropped`).
"""

from __future__ import annotations

import base64
import binascii
import logging
from typing import Any, assert_never

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.degradations import warn_once
from toolwire.codecs.common.ids import new_call_id
from toolwire.codecs.common.wire import sniff_image_type
from toolwire.errors import CodecError
from toolwire.types import AssistantPart, ImagePart, TextPart, ThinkingPart, ToolCall

__all__ = [
    "NAME",
    "cache_point",
    "call_id",
    "decode_assistant_blocks",
    "decode_media",
    "dropped",
    "encode_assistant_part",
    "encode_media",
    "logger",
    "own",
    "reply_input",
    "warned",
]

NAME = "bedrock"

logger = logging.getLogger("toolwire.codecs.bedrock")
warned: set[str] = set()
"""The keys of the codec's degradation warnings already logged (each is logged once per process)."""

_FORMATS = ("png", "jpeg", "gif", "webp")  # ImageFormat in the service model


def dropped(what: str, value: Any) -> None:
    """Log once that a `what` named `value` has no neutral form and is dropped when decoding."""
    message = f"bedrock: {what} {value!r} has no neutral form and is dropped when decoding a request."
    warn_once(logger, warned, f"{NAME}:{value}", message)


def own(metadata: dict[str, Any]) -> dict[str, Any]:
    """What a part's `metadata["bedrock"]` holds (`{}` when nothing)."""
    value = metadata.get(NAME)
    return value if isinstance(value, dict) else {}


def cache_point(metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The `cachePoint` block that followed this part on the wire, to write after it again."""
    point = own(metadata).get("cachePoint")
    return [{"cachePoint": point}] if isinstance(point, dict) else []


def _b64decode(value: Any, what: str) -> bytes:
    try:
        return base64.b64decode(value if isinstance(value, str) else "", validate=True)
    except (binascii.Error, ValueError):
        raise CodecError(f"bedrock {what} {value!r:.40} is not base64.", provider=NAME) from None


def _b64encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# user content: text, images, documents


def decode_media(block: dict[str, Any]) -> TextPart | ImagePart | None:
    """A `text`, `image` or `document` block as a part; `None` for what has no neutral form."""
    if "text" in block:
        text = block["text"]
        return TextPart(text=text if isinstance(text, str) else "")
    if isinstance(block.get("image"), dict):
        return _decode_image(block["image"])
    if isinstance(block.get("document"), dict):
        return _decode_document(block["document"])
    dropped("content block", next(iter(block), None))
    return None


def _decode_image(image: dict[str, Any]) -> ImagePart | None:
    source = image.get("source")
    kind = image.get("format")
    media_type = f"image/{kind}" if isinstance(kind, str) else None
    if isinstance(source, dict) and "bytes" in source:
        return ImagePart(data=_b64decode(source["bytes"], "image bytes"), media_type=media_type)
    location = source.get("s3Location") if isinstance(source, dict) else None
    if isinstance(location, dict) and isinstance(location.get("uri"), str):
        return ImagePart(url=location["uri"], media_type=media_type)
    dropped("image source", "image")
    return None


def _decode_document(document: dict[str, Any]) -> TextPart:
    # The neutral form has no documents: other providers read a text part naming it (or its
    # text, for a text document); Bedrock gets the very block back from the part's metadata.
    source = document.get("source")
    text = source.get("text") if isinstance(source, dict) else None
    shown = text if isinstance(text, str) else f"[document: {document.get('name')}]"
    return TextPart(text=shown, metadata={NAME: {"document": document}})


def encode_media(part: TextPart | ImagePart) -> list[dict[str, Any]]:
    """A user (or tool result) part as its blocks: the block, then a cache point that followed it."""
    match part:
        case TextPart():
            document = own(part.metadata).get("document")
            block = {"document": document} if isinstance(document, dict) else {"text": part.text}
            return [block, *cache_point(part.metadata)]
        case ImagePart():
            return [_encode_image(part)]
        case _:
            assert_never(part)


def _encode_image(part: ImagePart) -> dict[str, Any]:
    kind = (part.media_type or "").removeprefix("image/")
    if part.url is not None and part.url.startswith("s3://"):
        return {"image": {"format": kind if kind in _FORMATS else "png", "source": {"s3Location": {"uri": part.url}}}}
    if part.url is not None:
        message = (
            "bedrock takes images as bytes or s3:// locations only; other image URLs are sent as text. "
            "Download the image and pass ImagePart(data=...) instead."
        )
        warn_once(logger, warned, f"{NAME}:image_url", message)
        return {"text": f"[image: {part.url}]"}
    data = part.data or b""
    if kind not in _FORMATS:
        kind = (sniff_image_type(data) or "image/png").removeprefix("image/")
    return {"image": {"format": kind, "source": {"bytes": _b64encode(data)}}}


# assistant content: text, reasoning, tool calls


def decode_assistant_blocks(content: Any, *, request: bool = False) -> list[AssistantPart]:
    """An assistant message's blocks as neutral parts; a `cachePoint` goes on the part before it."""
    if not isinstance(content, list):
        raise CodecError(f"bedrock message content {content!r:.80} is not a list of blocks.", provider=NAME)
    parts: list[AssistantPart] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if isinstance(block.get("cachePoint"), dict) and parts:
            parts[-1].metadata.setdefault(NAME, {})["cachePoint"] = block["cachePoint"]
            continue
        part = _decode_assistant_block(block)
        if part is not None:
            parts.append(part)
        elif request:
            dropped("content block", next(iter(block), None))
    return parts


def _decode_assistant_block(block: dict[str, Any]) -> AssistantPart | None:
    if "text" in block:
        return TextPart(text=block["text"] if isinstance(block["text"], str) else "")
    if isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        arguments, metadata = parse_arguments(use.get("input"))
        return ToolCall(
            id=call_id(use.get("toolUseId")), name=use.get("name") or "", arguments=arguments, metadata=metadata
        )
    if isinstance(block.get("reasoningContent"), dict):
        return _decode_reasoning(block["reasoningContent"])
    return None


def _decode_reasoning(reasoning: dict[str, Any]) -> ThinkingPart | None:
    if "redactedContent" in reasoning:
        redacted = reasoning["redactedContent"]
        return ThinkingPart(
            text="", signature=redacted if isinstance(redacted, str) else None, redacted=True, provider=NAME
        )
    text = reasoning.get("reasoningText")
    if not isinstance(text, dict):
        return None
    signature = text.get("signature")
    return ThinkingPart(
        text=text.get("text") or "", signature=signature if isinstance(signature, str) else None, provider=NAME
    )


def call_id(value: Any) -> str:
    """The block's call id, or a fresh one when it has none."""
    return value if isinstance(value, str) and value else new_call_id("tooluse_")


def encode_assistant_part(part: AssistantPart, *, reply: bool = False) -> list[dict[str, Any]]:
    """An assistant part as its blocks (none for empty text or foreign reasoning)."""
    match part:
        case TextPart():
            # Bedrock rejects blank text blocks; a reply renders what it got.
            return [{"text": part.text}, *cache_point(part.metadata)] if part.text or reply else []
        case ThinkingPart():
            return _encode_reasoning(part, reply=reply)
        case ToolCall():
            use = {"toolUseId": part.id, "name": part.name, "input": reply_input(part) if reply else part.arguments}
            return [{"toolUse": use}, *cache_point(part.metadata)]
        case _:
            assert_never(part)


def _encode_reasoning(part: ThinkingPart, *, reply: bool) -> list[dict[str, Any]]:
    # Reasoning goes back only to Bedrock, which checks its signature; another provider's is dropped.
    if not reply and part.provider != NAME:
        return []
    if part.redacted:
        return [{"reasoningContent": {"redactedContent": part.signature or ""}}]
    text: dict[str, Any] = {"text": part.text}
    if part.signature is not None:
        text["signature"] = part.signature
    return [{"reasoningContent": {"reasoningText": text}}]


def reply_input(call: ToolCall) -> Any:
    """A call's `input` as a reply renders it: the raw text of broken arguments, so decoding reaches them again."""
    raw = call.metadata.get("raw_arguments")
    return raw if isinstance(raw, str) else call.arguments
