"""`POST /v1/messages/count_tokens`: an estimate, not a tokenizer's count.

Upstreams count tokens with their own tokenizers, and most offer no counting endpoint, so
the gateway estimates: about four characters of JSON text per token over the system
prompt, the messages and the tool definitions, rounded up. Clients use the figure to decide
when to compact a conversation; an estimate within a few tens of percent serves that.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["CHARS_PER_TOKEN", "estimate_tokens"]

CHARS_PER_TOKEN = 4.0
_PER_MESSAGE = 4  # role markers and separators the tokenizers add around each message


def _text_size(value: Any) -> int:
    """Characters of the text a model reads in a JSON value (strings whole, the rest as JSON)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, list):
        return sum(_text_size(v) for v in value)
    if isinstance(value, dict):
        return sum(_text_size(v) for k, v in value.items() if k not in ("type", "cache_control", "signature"))
    return len(json.dumps(value))


def estimate_tokens(body: dict[str, Any]) -> int:
    """Estimated input tokens of an Anthropic Messages request body."""
    messages = body.get("messages") or []
    chars = _text_size(body.get("system") or "") + _text_size(messages)
    chars += len(json.dumps(body.get("tools") or [], separators=(",", ":")))
    count = len(messages) if isinstance(messages, list) else 0
    return math.ceil(chars / CHARS_PER_TOKEN) + _PER_MESSAGE * count
