"""The answer text of a constrained reply, as its JSON streams in.

In constrained mode a final answer is one call of the `no_tool_fits` pseudo-tool:
`{"call_count": 1, "tool_calls": [{"name": "no_tool_fits", "arguments": {"reply": "..."}}]}`.
It should reach the user as it is written, not when the JSON closes: `AnswerStream` is fed the
reply's text deltas and returns the reply's new characters, JSON escapes decoded (an escape or a
surrogate pair split across deltas is held back until whole). A reply that turns out to be
calls yields nothing; its calls are read whole at the end (`parse_reply`). Pure: no I/O.
"""

from __future__ import annotations

import json
import re

from toolwire.constrained._schema import ANSWER_ARGUMENT, CALLS_KEY, COUNT_KEY, NO_TOOL

__all__ = ["AnswerStream"]


def _opening(no_tool: str) -> tuple[str, ...]:
    """The tokens before a streamed answer's text; whitespace may sit between any two."""
    call = (
        "{",
        '"name"',
        ":",
        json.dumps(no_tool),
        ",",
        '"arguments"',
        ":",
        "{",
        json.dumps(ANSWER_ARGUMENT),
        ":",
        '"',
    )
    return ("{", json.dumps(COUNT_KEY), ":", "1", ",", json.dumps(CALLS_KEY), ":", "[", *call)


_WS = " \t\r\n"
# A tail that may be an unfinished escape: a backslash, `\u` with up to 3 hex digits, or a whole
# high surrogate (`\ud800`-`\udbff`) whose low half may follow in the next delta.
_UNFINISHED_ESCAPE = re.compile(r"(?:\\u[dD][89abAB][0-9a-fA-F]{2}(?:\\u?[0-9a-fA-F]{0,3})?|\\u[0-9a-fA-F]{0,3}|\\)$")


class AnswerStream:
    """Feed it text deltas; it returns the answer's text as it arrives, and nothing for calls."""

    __slots__ = ("_opening", "_pending", "_state", "_token", "_token_pos")

    def __init__(self, no_tool: str = NO_TOOL) -> None:
        self._opening = _opening(no_tool)
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
        """Consume the answer's opening; return what follows it (or "" while not yet there)."""
        for i, char in enumerate(delta):
            token = self._opening[self._token]
            if self._token_pos == 0 and char in _WS:
                continue
            if char != token[self._token_pos]:
                self._state = "other"
                return ""
            self._token_pos += 1
            if self._token_pos == len(token):
                self._token, self._token_pos = self._token + 1, 0
                if self._token == len(self._opening):
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
