"""Linear-time scanning helpers: where a JSON (or Python) value ends, and cheap marker lookups.

Every detector in this package finds its markers with `str.find` or a simple regex and then
asks this module where the value after a marker ends. The scanner never backtracks: runs of
characters that cannot change the nesting depth (including whole string literals) are skipped
by one possessive regex match, and runs of brackets are counted in C, so a megabyte of `{`
costs a handful of Python steps. It tracks depth only, not bracket kinds; `json.loads`
validates the slice afterwards.

Imports only the standard library and the linear JSON repairer of `codecs.common.repair`
(`json_repair` lazily, behind size guards, for what that one cannot read: it is much slower
than linear on unclosed brackets).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from toolwire.codecs.common.repair import repair_json

__all__ = [
    "Finder",
    "RepairBudget",
    "balanced_values",
    "load_json",
    "value_end",
]

# A token is a stretch of filler (plain characters and complete strings: nothing that changes the
# depth) followed by a run of openers (group 1) or closers (group 2). Possessive quantifiers make
# each match one forward pass; no match means the text ran out, or a string never closed.
_JSON_TOKEN = re.compile(r'(?:[^{}\[\]"]++|"(?:[^"\\]++|\\.)*+")*+(?:([{\[]++)|([}\]]++))', re.S)
_PY_TOKEN = re.compile(
    r"""(?:[^{}\[\]()"'\n]++|\n|"(?:[^"\\\n]++|\\.)*+"|'(?:[^'\\\n]++|\\.)*+')*+(?:([{\[(]++)|([}\])]++))""", re.S
)

# json_repair takes seconds on a few thousand unclosed braces and is quadratic on long
# unclosed strings, so it only ever sees small inputs, a bounded number of times per reply,
# and only those the linear `repair_json` could not read (the order parse_arguments keeps).
# The same bounds hold for both: a reply's text is not worth more repairs than that.
_REPAIR_MAX_CHARS = 32_000
_REPAIR_MAX_BRACKETS = 64
_REPAIR_MAX_CALLS = 16


def _scan(
    text: str, start: int, stop: int, token: re.Pattern[str], targets: Sequence[int], ti: int
) -> tuple[int, int, dict[int, int]]:
    """Scan the value opening at `start`; return `(end or -1, open depth, ends of targets)`.

    Also reports where each opener in `targets[ti:]` closes; targets that the scan sees inside
    a string, or that never close, are absent from the result.
    """
    ends: dict[int, int] = {}
    open_targets: list[tuple[int, int]] = []  # (position, depth just after its opener)
    depth, pos, count = 0, start, len(targets)
    match = token.match
    while (found := match(text, pos, stop)) is not None:
        pos = found.end()
        if found.lastindex == 1:
            run_start = found.start(1)
            while ti < count and targets[ti] < pos:
                if targets[ti] >= run_start:
                    open_targets.append((targets[ti], depth + targets[ti] - run_start + 1))
                ti += 1
            depth += pos - run_start
            continue
        run_start = found.start(2)
        floor = depth - (pos - run_start)
        while open_targets and open_targets[-1][1] > floor:
            target, level = open_targets.pop()
            ends[target] = run_start + depth - level + 1
        if floor <= 0:
            return run_start + depth, 0, ends
        depth = floor
    return -1, depth, ends


def value_end(text: str, start: int, stop: int, *, python: bool = False) -> tuple[int, int]:
    """Return `(end, depth)` for the value opening at `text[start]`, scanning no further than `stop`.

    `end` is the index just after the matching close, or -1 when the value does not close
    before `stop`; `depth` is then how many brackets were left open (0 on success).
    """
    end, depth, _ = _scan(text, start, stop, _PY_TOKEN if python else _JSON_TOKEN, (), 0)
    return end, depth


def balanced_values(text: str, candidates: Sequence[int], *, python: bool = False) -> Iterator[tuple[int, int]]:
    """Yield `(start, end)` for each candidate opener whose value closes, never nested in another.

    `candidates` must be sorted. Values never overlap: after a value closes, candidates inside it
    are skipped. When a candidate never closes, its single scan to the end of the text also
    tells where every later candidate closes, so no region is scanned twice (linear overall).
    """
    token = _PY_TOKEN if python else _JSON_TOKEN
    resume = 0
    known: dict[int, int] | None = None
    for index, start in enumerate(candidates):
        if start < resume:
            continue
        if known is None:
            end, _, ends = _scan(text, start, len(text), token, candidates, index)
            if end < 0:
                known = ends
                continue
        else:
            end = known.get(start, -1)
            if end < 0:
                continue
        yield start, end
        resume = end


class Finder:
    """Finds a token (a fixed string or a regex) at or after increasing positions, in linear time.

    Queries must come with non-decreasing `start` values; each character is examined at most
    once, and a token that is absent is searched for only once.
    """

    __slots__ = ("_at", "_end", "_text", "_token")

    def __init__(self, text: str, token: str | re.Pattern[str]) -> None:
        self._text = text
        self._token = token
        self._at = -2  # -2: not searched yet; -1: absent from here on
        self._end = -1

    def next(self, start: int) -> tuple[int, int]:
        """`(start, end)` of the first occurrence at or after `start`, or `(-1, -1)`."""
        if self._at == -1 or self._at >= start:
            return self._at, self._end
        if isinstance(self._token, str):
            self._at = self._text.find(self._token, start)
            self._end = self._at + len(self._token) if self._at >= 0 else -1
        else:
            match = self._token.search(self._text, start)
            self._at, self._end = (match.start(), match.end()) if match else (-1, -1)
        return self._at, self._end


class RepairBudget:
    """How much `json_repair` work one parse may still do (it is far slower than linear)."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        self.calls = _REPAIR_MAX_CALLS

    def allows(self, source: str) -> bool:
        """Whether `source` is small enough to repair, and spend one repair if so."""
        if self.calls <= 0 or len(source) > _REPAIR_MAX_CHARS:
            return False
        if source.count("{") + source.count("[") > _REPAIR_MAX_BRACKETS:
            return False
        self.calls -= 1
        return True


def load_json(source: str, budget: RepairBudget | None, *, closed: bool = True) -> tuple[Any, bool] | None:
    """Parse JSON text, repairing it when `budget` allows; return `(value, repaired)` or `None`.

    `closed=False` says the value is known to be cut short, so only a repair can read it.
    """
    if closed:
        try:
            return json.loads(source), False
        except (ValueError, RecursionError):
            pass
    if budget is None or not budget.allows(source):
        return None
    repaired = repair_json(source)  # linear; a completed (cut) value only where the source is known cut
    if repaired is not None and repaired.value is not None and not (repaired.cut and closed):
        return repaired.value, True
    import json_repair  # rare path: keeps import time low

    try:
        value = json_repair.loads(source)
    except Exception:  # the repairer must never break parsing
        return None
    if value == "" or value is None:  # json_repair's answer for "nothing usable"
        return None
    return value, True
