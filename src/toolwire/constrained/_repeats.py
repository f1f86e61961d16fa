"""Where a call list starts to repeat itself: the point at which a looping model is stopped.

At temperature 0 a small model that writes a call it already wrote has entered a loop: it
writes the same call again until `max_calls` or the token limit, and the repeats are dropped
when the reply is read anyway. So the list ends before its first repeated call: read from a whole
reply, that gives the same calls as dropping each repeat where every call after the first repeat
is one too; read while the reply streams, the model is stopped there (its server stops when the
stream is closed), the loop's tokens are never generated, and a reply the token limit would have
cut comes back whole. Measured on SmolLM2-135M (bench/bfcl/README.md "A call the model already
wrote"): one reply in four repeated a call, and ending the list there changed no BFCL verdict.

Imports only the standard library. Pure: no I/O.
"""

from __future__ import annotations

import json

__all__ = ["RepeatWatch", "close_at_repeat"]


class RepeatWatch:
    """Reads a reply as it is written and closes its list before the first repeated call.

    Only a reply that is a JSON list is watched (what constrained mode asks for); each item is
    compared, once whole, with the items before it (as JSON values: key order and spacing aside).

    Attributes:
        text: The reply as read so far.
        closed: The list up to the end of the last call before the repeat, closed with `]`;
            None until a call repeats.
    """

    __slots__ = ("_depth", "_escaped", "_in_string", "_item_start", "_last_end", "_off", "_seen", "closed", "text")

    def __init__(self) -> None:
        self.closed: str | None = None
        self.text = ""
        self._off = False  # not a list, or a repeat already found
        self._depth = 0
        self._in_string = False
        self._escaped = False
        self._item_start = -1
        self._last_end = -1
        self._seen: set[str] = set()

    def feed(self, chunk: str) -> str | None:
        """Read the next piece of the reply; the closed list once a call repeats (`closed`)."""
        if self._off:
            return self.closed
        start = len(self.text)
        self.text += chunk
        for index in range(start, len(self.text)):
            if self._step(self.text[index], index):
                self._off = True
                break
        return self.closed

    def _step(self, char: str, index: int) -> bool:
        """Advance over one character; True when watching is over."""
        if self._in_string:
            self._string_step(char)
        elif char == '"':
            self._in_string = True
        elif char in "[{":
            if self._depth == 0 and char != "[":
                return True  # not a list: nothing to watch
            self._depth += 1
            if self._depth == 2:
                self._item_start = index if char == "{" else -1  # only calls (objects) are compared
        elif char in "]}":
            self._depth -= 1
            if self._depth == 1 and self._item_start >= 0:
                return self._item_done(index + 1)
            return self._depth <= 0
        return self._depth == 0 and not char.isspace()

    def _string_step(self, char: str) -> None:
        if self._escaped:
            self._escaped = False
        elif char == "\\":
            self._escaped = True
        elif char == '"':
            self._in_string = False

    def _item_done(self, end: int) -> bool:
        try:
            key = json.dumps(json.loads(self.text[self._item_start : end]), sort_keys=True)
        except (ValueError, RecursionError):
            return True  # not JSON after all (or nested past the parser's stack): the reader will say what it is
        if key in self._seen:
            self.closed = self.text[: self._last_end] + "]"
            return True
        self._seen.add(key)
        self._last_end = end
        return False


def close_at_repeat(text: str) -> str | None:
    """`text`'s list closed before its first repeated call, or None when no call repeats."""
    return RepeatWatch().feed(text)
