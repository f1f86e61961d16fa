"""Newline-delimited messages out of byte chunks, in linear time and bounded memory.

Pure: `LineSplitter.feed(chunk)` returns the lines the chunk completed; no I/O. Each byte is
looked at a constant number of times, whatever the length of a line (the SDK's reader joins
its whole buffer with every chunk, which is quadratic on one long line). A line longer than
the cap is not kept: its bytes are counted and dropped up to its newline, and it comes out as
an `Oversize` holding only its first and last bytes (enough to find which request it answered).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Hashable
from dataclasses import dataclass

__all__ = ["EDGE_BYTES", "LineSplitter", "Oversize", "answered_id"]

EDGE_BYTES = 4096
"""How much of the start and the end of an over-long line is kept."""

# A top-level `"id": 7` or `"id": "a"`: inside a JSON string every quote is escaped, so this
# matches only structure. A nested object's "id" can match too; `answered_id` sorts that out.
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


@dataclass(slots=True)
class Oversize:
    """A line that was over the cap: its length, its first and its last `EDGE_BYTES` bytes."""

    size: int
    head: bytes
    tail: bytes


class LineSplitter:
    """Bytes in, complete lines (without their newline) or `Oversize` records out."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"the line limit must be at least 1 byte, got {limit!r}")
        self.limit = limit
        self._buffer = bytearray()
        self._dropping: Oversize | None = None

    def feed(self, chunk: bytes) -> list[bytes | Oversize]:
        """The lines `chunk` completes, in order; an unfinished line waits for the next chunk."""
        lines: list[bytes | Oversize] = []
        view = memoryview(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            self._take(view[start : len(chunk) if end < 0 else end])
            if end < 0:
                return lines
            lines.append(self._finish())
            start = end + 1

    def _take(self, piece: memoryview) -> None:
        dropping = self._dropping
        if dropping is None and len(self._buffer) + len(piece) <= self.limit:
            self._buffer += piece
            return
        if dropping is None:  # this piece takes the line over the cap: keep only its edges from now
            dropping = self._dropping = Oversize(0, bytes(self._buffer[:EDGE_BYTES]), b"")
            dropping.size = len(self._buffer)
            dropping.tail = bytes(self._buffer[-EDGE_BYTES:])
            self._buffer = bytearray()
        if len(dropping.head) < EDGE_BYTES:
            dropping.head += bytes(piece[: EDGE_BYTES - len(dropping.head)])
        dropping.tail = (dropping.tail + bytes(piece[-EDGE_BYTES:]))[-EDGE_BYTES:]
        dropping.size += len(piece)

    def _finish(self) -> bytes | Oversize:
        if self._dropping is not None:
            dropped, self._dropping = self._dropping, None
            return dropped
        line = bytes(self._buffer)
        self._buffer = bytearray()
        return line


def answered_id(oversize: Oversize, pending: Collection[Hashable]) -> Hashable | None:
    """Which of the `pending` request ids an over-long line answers, or `None` when it cannot tell.

    A response carries its `"id"` near one end (the Python SDK writes it first, the TypeScript
    SDK last), so the kept edges hold it; only ids of requests still waiting count. With one
    request waiting and no id found, the line can only answer that one.
    """
    found: set[Hashable] = set()
    for edge in (oversize.head, oversize.tail):
        for match in _ID.finditer(edge):
            try:
                value = json.loads(match.group(1))
            except ValueError:  # an edge cut through a string
                continue
            if value in pending:
                found.add(value)
    if len(found) == 1:
        return found.pop()
    if not found and len(pending) == 1:
        return next(iter(pending))
    return None
