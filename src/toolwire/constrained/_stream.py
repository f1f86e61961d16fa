"""The answer text of a constrained reply, as its JSON streams in.

In constrained mode the model writes `{"answer": "..."}` or `{"tool_calls": [...]}`. A final
answer should reach the user as it is written, not when the JSON closes: `AnswerStream` is fed
the reply's text deltas and returns the answer's new characters, JSON escapes decoded (an escape
or a surrogate pair split across deltas is held back until whole). A reply that turns out to be
calls yields nothing; its calls are read whole at the end (`parse_reply`). Pure: no I/O.
"""

from __future__ import annotations

import json
import re

__all__ = ["AnswerStream"]

# The opening a streamed answer has, token by token; whitespace may sit between any two.
_OPENING = ("{", '"answer"', ":", '"')
_WS = " \t\r\n"
# A tail that may be an unfinished escape: a backslash, `\u` with up to 3 hex digits, or a whole
# high surrogate (`\ud800`-`\udbff`) whose low half may follow in the next delta.
_UNFINISHED_ESCAPE = re.compile(r"(?:\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u?[0-9a-fA-F]{0,3})?|\\u[0-9a-fA-F]{0,3}|\\)$")


class AnswerStream:
    """Feed it text deltas; it returns the answer's text as it arrives, and nothing for calls."""

    __slots__ = ("_pending", "_state", "_token", "_token_pos")

    def __init__(self) -> None:
        self._state = "opening"  # opening -> answer -> done, or opening -> other
        self._token = 0
        self._token_pos = 0
        self._pending = ""

    @property
    def is_answer(self) -> bool:
        """The reply has been seen to be an answer (its opening arrived whole)."""
        return self._state in ("answer", "done")

    def feed(self, delta: str) -> str:
        """The answer text in `delta` (decoded), given everything fed before."""
        if self._state == "opening":
            delta = self._open(delta)
        if self._state != "answer":
            return ""
        return self._decode(self._pending + delta)

    def _open(self, delta: str) -> str:
        """Consume the opening `{"answer": "`; return what follows it (or "" while not yet there)."""
        for i, char in enumerate(delta):
            token = _OPENING[self._token]
            if self._token_pos == 0 and char in _WS:
                continue
            if char != token[self._token_pos]:
                self._state = "other"
                return ""
            self._token_pos += 1
            if self._token_pos == len(token):
                self._token, self._token_pos = self._token + 1, 0
                if self._token == len(_OPENING):
                    self._state = "answer"
                    return delta[i + 1 :]
        return ""

    def _decode(self, raw: str) -> str:
        end = _string_end(raw)
        if end >= 0:
            self._state, self._pending = "done", ""
            return _unescape(raw[:end])
        held = _UNFINISHED_ESCAPE.search(raw)
        cut = held.start() if held else len(raw)
        if raw[:cut].endswith("\\") and _odd_backslashes(raw[:cut]):
            cut -= 1
        self._pending = raw[cut:]
        return _unescape(raw[:cut])


def _odd_backslashes(text: str) -> bool:
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def _string_end(raw: str) -> int:
    """The index of the first unescaped `"` in `raw`, or -1."""
    i = 0
    while True:
        i = raw.find('"', i)
        if i < 0:
            return -1
        if not _odd_backslashes(raw[:i]):
            return i
        i += 1


def _unescape(raw: str) -> str:
    try:
        return str(json.loads(f'"{raw}"'))
    except ValueError:
        return raw  # not JSON string content (a server that ignored the schema): shown as written
