"""JSON values as wire formats write them: compact text, checked objects, error payloads, images."""

from __future__ import annotations

import json
from typing import Any

from toolwire.errors import CodecError

__all__ = [
    "dumps",
    "error_payload",
    "list_or_empty",
    "object_or_empty",
    "read_error_payload",
    "require_dict",
    "sniff_image_type",
    "stop_list",
]


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(value: Any) -> str:
    """Compact JSON text with unicode kept readable: what codecs send as JSON strings."""
    return _compact.encode(value)


_IMAGE_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


def sniff_image_type(data: bytes) -> str | None:
    """The media type of PNG, JPEG, GIF or WebP bytes, for wires that require one; else `None`."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_SIGNATURES if data.startswith(magic)), None)


def error_payload(message: str) -> str:
    """How an `error` result travels where the wire has no error flag: `{"error": message}` as JSON."""
    return dumps({"error": message})


def read_error_payload(content: str) -> str | None:
    """The message of content that is exactly an `error_payload`, else `None` (then it is text)."""
    if not content.startswith('{"error":'):
        return None
    try:
        value = json.loads(content)
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) and len(value) == 1 else None
    return error if isinstance(error, str) and error_payload(error) == content else None


def require_dict(body: Any, codec: str, what: str = "body") -> dict[str, Any]:
    """Return `body` if it is a JSON object, else raise a `CodecError` naming the codec."""
    if not isinstance(body, dict):
        raise CodecError(f"The {codec} {what} must be a JSON object, got {type(body).__name__}.", provider=codec)
    return body


def stop_list(value: Any) -> list[str] | None:
    """Stop sequences as a list (OpenAI also takes one string); `None` for anything else."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def object_or_empty(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object, else `{}`: for optional sub-objects a reader may skip."""
    return value if isinstance(value, dict) else {}


def list_or_empty(value: Any) -> list[Any]:
    """`value` if it is a JSON array, else `[]`."""
    return value if isinstance(value, list) else []
