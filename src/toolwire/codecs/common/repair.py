r"""A linear-time repairer for the JSON that models break, run before any slower general repairer.

What models really send wrong in tool arguments: single-quoted strings and Python literals
(`{'ok': True, 'x': None}`, a Python dict's repr), trailing commas (`[1, 2,]`), raw newlines
and tabs in strings, escapes JSON lacks (`\'`, `\x41`), bare keys (`{path: "a"}`) and text
cut off before its end (`{"x": [1, 2`). One forward pass over tokens (each matched by one
possessive regex, so no backtracking) rewrites them into JSON text that `json.loads` then reads
in linear time; a 60 KB argument string costs milliseconds, not the seconds a general repairer
takes on an event loop. Anything else (a missing comma, an unescaped quote inside a string,
prose around the value) is not guessed at: `repair_json` returns None, and the caller may hand
small inputs to `json_repair`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Repaired", "repair_json"]


@dataclass(frozen=True, slots=True)
class Repaired:
    """A repaired value; `cut` says the text ended early and closing brackets or quotes were added."""

    value: Any
    cut: bool


_TOKEN = re.compile(
    r"""
    \s*+
    (?:
      (?P<string>"(?:[^"\\]++|\\.)*+"|'(?:[^'\\]++|\\.)*+')
    | (?P<number>-?\d++(?:\.\d++)?+(?:[eE][+-]?\d++)?+(?![\w.]))
    | (?P<word>[A-Za-z_$][\w$]*+)
    | (?P<punct>[{}\[\]:,])
    | (?P<unclosed>["'](?:[^\\]++|\\.)*+)(?P<lone>\\)?+\Z
    | (?P<space>\Z)
    )
    """,
    re.S | re.X,
)
_ESCAPE = re.compile(r"""\\(u[0-9a-fA-F]{4}|["\\/bfnrt])|\\x([0-9a-fA-F]{2})|\\U([0-9a-fA-F]{8})|\\(.)|(")""", re.S)
_WORDS = {"true": "true", "false": "false", "null": "null", "True": "true", "False": "false", "None": "null"}
_NUMBERS = {"NaN", "Infinity"}  # json.loads reads these as Python does; kept as they were


def _fix_escape(found: re.Match[str]) -> str:
    valid, hex_byte, wide, other, quote = found.groups()
    if valid is not None:
        return "\\" + valid
    if hex_byte is not None:
        return "\\u00" + hex_byte  # Python's \xHH
    if wide is not None:  # Python's \UXXXXXXXX
        point = int(wide, 16)
        if point < 0x10000:
            return f"\\u{point:04x}"
        return chr(point) if point <= 0x10FFFF else "\\\\U" + wide  # above the BMP: never a quote or control
    if quote is not None:
        return '\\"'  # a double quote inside a single-quoted string
    return other if other == "'" else "\\\\" + other  # \' means a quote; other stray escapes are text


def _as_json_string(token: str) -> str:
    """A complete string token (either quote) as a JSON string literal."""
    body = token[1:-1]
    if "\\" not in body and (token[0] == '"' or '"' not in body):
        return '"' + body + '"'
    return '"' + _ESCAPE.sub(_fix_escape, body) + '"'


class _Writer:
    """The state of one pass: what was written, what is open, and what is expected next.

    Each `take_*` method takes one token and says whether it fits where it stands.
    """

    def __init__(self) -> None:
        self.out: list[str] = []
        self.open: list[str] = []  # "{" or "["
        self.expect = "value"  # value | key | colon | after | end
        self.comma = False  # a comma seen in `after` state, written only if a value follows
        self.member = 0  # where the current object member starts in `out` (to drop a cut one)

    def take_value(self, text: str) -> bool:
        if self.expect != "value":
            return False
        if self.comma:
            self.out.append(",")
            self.comma = False
        self.out.append(text)
        self.expect = "after" if self.open else "end"
        return True

    def take_string(self, token: str) -> bool:
        if self.expect != "key":
            return self.take_value(_as_json_string(token))
        self.member = len(self.out)
        if self.comma:
            self.out.append(",")
            self.comma = False
        self.out.append(_as_json_string(token))
        self.expect = "colon"
        return True

    def take_word(self, word: str) -> bool:
        if self.expect == "key":
            return self.take_string('"' + word + '"')  # a bare key, as JavaScript and Python kwargs write them
        if word in _WORDS:
            return self.take_value(_WORDS[word])
        return word in _NUMBERS and self.take_value(word)

    def take_punct(self, char: str) -> bool:
        if char == ",":
            if self.expect != "after" or not self.open:
                return False
            self.comma = True
            self.expect = "key" if self.open[-1] == "{" else "value"
            return True
        if char == ":":
            if self.expect != "colon":
                return False
            self.out.append(":")
            self.expect = "value"
            return True
        if char in "}]":
            return self._close(char)
        if not self.take_value(char):  # an opener
            return False
        self.open.append(char)
        self.expect = "key" if char == "{" else "value"
        return True

    def _close(self, char: str) -> bool:
        if not self.open or (self.open[-1] == "{") != (char == "}"):
            return False
        if self.expect != "after":
            # `{}`, `[]`, or a trailing comma (`[1,]`): anything else before a closer is broken
            allowed = "key" if char == "}" else "value"
            if self.expect != allowed or not (self.comma or self.out[-1] in ("{", "[")):
                return False
        self.comma = False  # a trailing comma is dropped
        self.out.append(char)
        self.open.pop()
        self.expect = "after" if self.open else "end"
        return True

    def finish(self) -> tuple[str, bool] | None:
        """The JSON text and whether the input was cut short (closers added); None if there is no value."""
        cut = bool(self.open)
        if self.expect in ("colon", "value") and self.open and self.open[-1] == "{":
            del self.out[self.member :]  # `{"a": 1, "b"` or `{"a": 1, "b":`: the cut member is left out
        elif self.expect == "value" and not self.open:
            return None
        self.comma = False
        self.out.extend("}" if o == "{" else "]" for o in reversed(self.open))
        return "".join(self.out), cut


def repair_json(text: str) -> Repaired | None:
    """Read JSON that a model broke in the usual ways, in linear time; None when it is broken otherwise.

    Valid JSON comes back as `json.loads` reads it (`cut` False). A value cut off before its
    end is completed (closing quotes and brackets; a member whose value never came is left
    out) with `cut` True: the caller decides whether completing it is acceptable.
    """
    writer = _Writer()
    take = {
        "string": writer.take_string,
        "number": writer.take_value,
        "word": writer.take_word,
        "punct": writer.take_punct,
    }
    cut = False
    pos, end = 0, len(text)
    match = _TOKEN.match
    while pos < end:
        found = match(text, pos)
        if found is None:
            return None
        pos = found.end()
        kind = found.lastgroup or "space"
        if kind in take:
            if not take[kind](found[kind]):
                return None
        elif kind != "space":  # a string cut off by the end of the text
            cut = True
            body = found["unclosed"]  # a lone backslash at the very end is left out
            if not writer.take_string(body + body[0]):
                return None
    finished = writer.finish()
    if finished is None:
        return None
    written, closed = finished
    try:
        return Repaired(json.loads(written, strict=False), cut or closed)
    except (ValueError, RecursionError):
        return None
