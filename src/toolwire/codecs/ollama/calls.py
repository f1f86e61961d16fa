"""Tool calls both ways, and their ids: the server's own, or derived from the reply.

Only ids the server issued go back to it (`metadata["ollama"]["id"]`); older servers send
none, so an id is derived from the reply's `model` and `created_at` and the call's position.
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.ids import derived_call_id, new_call_id
from toolwire.types import (
    ToolCall,
)

__all__ = ["NAME", "decode_call", "encode_call", "issued_id", "message_metadata", "reply_seed"]


NAME = "ollama"


def reply_seed(model: Any, created_at: Any) -> str | None:
    """What derived call ids hang on: the reply's model and `created_at` (`None` without a time)."""
    return f"{model or ''}\x00{created_at}" if isinstance(created_at, str) and created_at else None


def decode_call(raw: Any, seed: str | None, position: int) -> ToolCall | None:
    """A wire call as a `ToolCall` (id issued, derived from `seed`, or random); `None` for junk."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        return None
    function = raw["function"]
    # Current servers send an object; older ones (and some proxies) a JSON string.
    arguments, metadata = parse_arguments(function.get("arguments"))
    call_id = raw.get("id")
    if isinstance(call_id, str) and call_id:
        metadata[NAME] = {"id": call_id}
    else:
        call_id = derived_call_id(seed, position) if seed is not None else new_call_id()
    return ToolCall(id=call_id, name=str(function.get("name") or ""), arguments=arguments, metadata=metadata)


def message_metadata(seed_created_at: Any, calls: list[ToolCall]) -> dict[str, Any]:
    """Keep the id seed only when some id was derived from it (needed to re-render the reply)."""
    if any(issued_id(c) != c.id for c in calls) and isinstance(seed_created_at, str) and seed_created_at:
        return {NAME: {"created_at": seed_created_at}}
    return {}


def encode_call(call: ToolCall) -> dict[str, Any]:
    """A `ToolCall` as a wire call; only an id the server issued goes back."""
    wire: dict[str, Any] = {}
    if issued_id(call) == call.id:
        wire["id"] = call.id
    wire["function"] = {"name": call.name, "arguments": call.arguments}
    return wire


def issued_id(call: ToolCall) -> Any:
    """The id the server issued for this call, if any."""
    own = call.metadata.get(NAME)
    return own.get("id") if isinstance(own, dict) else None
