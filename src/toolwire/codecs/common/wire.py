"""JSON values as wire formats write them: compact text, checked objects, error payloads, images."""

from __future__ import annotations

import json
import re
from typing import Any

from toolwire.errors import CodecError

__all__ = [
    "dumps",
    "dumps_string",
    "error_payload",
    "list_or_empty",
    "object_or_empty",
    "read_error_payload",
    "require_dict",
    "sniff_image_type",
    "stop_list",
]


_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_SURROGATE = re.compile("[\ud800-\udfff]")
# The C encoder `_compact.encode` builds on every call, built once: a gateway writes one JSON
# object per stream event, and that per-call set-up was a third of writing a small one. Without
# the circular-reference markers (the JSON a codec writes comes from parsed JSON or dataclasses,
# never a cycle); a cycle still raises `_compact`'s own ValueError, through the fallback below.
_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_c_strings: Any = getattr(json.encoder, "c_encode_basestring", None)
_fast = (
    None
    if _c_encoder is None or _c_strings is None
    else _c_encoder(None, _compact.default, _c_strings, None, ":", ",", False, False, True)
)


def dumps(value: Any) -> str:
    r"""Compact JSON text with unicode kept readable: what codecs send as JSON strings.

    A lone surrogate (`"\ud800"` is valid JSON, and Python reads it into a `str`) is written
    as its `\uXXXX` escape, so the text always encodes as UTF-8 and the receiver reads back
    the very string that was decoded: nothing is lost, nothing is refused.
    """
    try:
        text = "".join(_fast(value, 0)) if _fast is not None else _compact.encode(value)
    except RecursionError:  # a cycle, or nesting past the stack: the encoder's own error, as before
        text = _compact.encode(value)
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)  # outside strings JSON text has no such character


def dumps_string(text: str) -> str:
    """`dumps(text)` for one string: what every stream delta writes, in a fifth of the time (no encoder set-up)."""
    written: str = _c_strings(text) if _c_strings is not None else _compact.encode(text)
    if written.isascii() or _SURROGATE.search(written) is None:
        return written
    return _SURROGATE.sub(_escape, written)


def _escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found[0]):04x}"


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
