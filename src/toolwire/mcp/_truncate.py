"""An MCP tool's result capped like other tool output: the start goes to the model, the whole to the cache.

A result over the cap is stored whole in the run's tool-output cache (`toolwire.cache`) and the
model gets its first characters with a note naming the reference and the line to read on from,
so `tool_output_cache` / `tool_output_cache_grep` reach the rest (the agent offers them when
`output_budget_chars` is set; the CLI whenever an MCP server is configured). The cache reads
by lines, so lines longer than `CACHE_LINE` are wrapped before they are stored (a one-line
16 MB result would otherwise come back whole); data results over the cap become text, indented
JSON. Images are kept.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.cache import ToolOutputCache
from toolwire.types import ImagePart, TextPart

__all__ = ["CACHE_LINE", "DEFAULT_MAX_RESULT_CHARS", "cap_result", "cap_text"]

DEFAULT_MAX_RESULT_CHARS = 30_000
"""The characters of one MCP tool result the model sees (as `exec`'s output cap)."""

CACHE_LINE = 2000
"""The longest line a clipped result keeps in the cache (as the `read` tool's longest line)."""


def cap_result(value: Any, limit: int | None, cache: ToolOutputCache) -> Any:
    """`value` (a `result_value`) within `limit` characters of text; the whole kept in `cache`."""
    if limit is None:
        return value
    if isinstance(value, str):
        return cap_text(value, limit, cache)
    if isinstance(value, list) and all(isinstance(part, TextPart | ImagePart) for part in value):
        return _cap_parts(value, limit, cache)
    if len(json.dumps(value, ensure_ascii=False)) <= limit:
        return value
    return cap_text(json.dumps(value, ensure_ascii=False, indent=1), limit, cache)


def cap_text(text: str, limit: int, cache: ToolOutputCache) -> str:
    """`text` itself, or its first `limit` characters and a note on where the rest is."""
    if len(text) <= limit:
        return text
    stored = _wrapped(text)
    return stored[:limit] + _note(stored, limit, cache)


def _wrapped(text: str) -> str:
    """`text` with every line longer than `CACHE_LINE` cut into lines of that length."""
    lines = text.split("\n")
    if max(map(len, lines)) <= CACHE_LINE:
        return text
    return "\n".join(line[i : i + CACHE_LINE] for line in lines for i in range(0, len(line) or 1, CACHE_LINE))


def _cap_parts(parts: list[TextPart | ImagePart], limit: int, cache: ToolOutputCache) -> list[TextPart | ImagePart]:
    if len("\n".join(part.text for part in parts if isinstance(part, TextPart))) <= limit:
        return parts
    parts = [TextPart(text=_wrapped(part.text)) if isinstance(part, TextPart) else part for part in parts]
    note = _note("\n".join(part.text for part in parts if isinstance(part, TextPart)), limit, cache)
    capped: list[TextPart | ImagePart] = []
    left = limit
    for part in parts:
        if isinstance(part, ImagePart):
            capped.append(part)
        elif left > 0:
            capped.append(TextPart(text=part.text[:left]))
            left -= len(part.text) + 1  # the newline that joins it to the next part
    capped.append(TextPart(text=note.lstrip("\n")))
    return capped


def _note(text: str, limit: int, cache: ToolOutputCache) -> str:
    ref_id = cache.put(text)
    line = text.count("\n", 0, limit) + 1  # the line the shown start ends in
    lines = text.count("\n") + 1
    return (
        f"\n[result clipped: the first {limit} of {len(text)} characters are shown; the whole result "
        f"({lines} lines of at most {CACHE_LINE} characters) is {ref_id} in the tool output cache: "
        f"tool_output_cache(ref_id={ref_id!r}, offset={line}) reads on from line {line}, "
        f"tool_output_cache_grep(ref_id={ref_id!r}, pattern=...) searches it]"
    )
