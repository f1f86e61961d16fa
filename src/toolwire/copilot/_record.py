"""A record of the JSON-RPC traffic with the Copilot CLI, for debugging and bug reports.

One JSON object per line: `{"time": <unix seconds>, "dir": "out" | "in", "message": {...}}`,
written as each message is sent or read. Secrets (the connection token, BYOK keys, GitHub
tokens) are replaced by `"[redacted]"`, so a record can be shared.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

__all__ = ["REDACTED", "TrafficRecord", "redact"]

REDACTED = "[redacted]"
_SECRET_KEYS = frozenset({"token", "apiKey", "bearerToken", "gitHubToken", "authorization"})


def redact(value: Any) -> Any:
    """`value` with every secret-named key's value replaced, at any depth."""
    if isinstance(value, dict):
        return {k: REDACTED if k in _SECRET_KEYS and v is not None else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


class TrafficRecord:
    """Appends each message to `path` (JSON Lines), flushed at once so a crash loses nothing.

    Args:
        path: The file; created if missing, appended to otherwise.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self._file = open(self.path, "a", encoding="utf-8")  # closed by close()

    def __call__(self, direction: str, message: dict[str, Any]) -> None:
        """Write one message (`direction` is `out` for what toolwire sent, `in` for what it read)."""
        if self._file.closed:
            return
        entry = {"time": round(time.time(), 3), "dir": direction, "message": redact(message)}
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Stop recording."""
        self._file.close()
