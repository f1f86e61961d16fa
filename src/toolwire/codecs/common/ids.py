"""Call ids: fresh, derived from a reply identity, or rewritten to what a wire accepts."""

from __future__ import annotations

import hashlib
import re
import uuid

__all__ = ["derived_call_id", "new_call_id", "sanitize_id"]


def new_call_id(prefix: str = "call_") -> str:
    """A fresh random id, for calls whose wire format gives none and nothing to derive one from."""
    return prefix + uuid.uuid4().hex[:24]


def derived_call_id(seed: str, position: int, prefix: str = "call_") -> str:
    """A deterministic id for a call at `position` in a reply identified by `seed`.

    Used when the wire has no ids but the reply has an identity (a response id, a timestamp):
    streaming and non-streaming decodes of the same reply then agree, and identical calls in
    one reply still get different ids.
    """
    digest = hashlib.sha256(f"{seed}\x00{position}".encode("utf-8", "surrogatepass")).hexdigest()
    return prefix + digest[:24]


_UNSAFE_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize_id(call_id: str, prefix: str = "call_") -> str:
    """Rewrite an id to `^[a-zA-Z0-9_-]+$`, deterministically and without collisions.

    Safe ids come back unchanged; others get their unsafe characters replaced and a short
    hash of the original appended, so two different ids never map to the same one.
    """
    if call_id and not _UNSAFE_ID_CHARS.search(call_id):
        return call_id
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    cleaned = _UNSAFE_ID_CHARS.sub("_", call_id)
    return f"{cleaned}_{digest}" if cleaned else f"{prefix}{digest}"
