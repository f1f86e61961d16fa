"""An MCP tool's result capped like other tool output: the start goes to the model, the whole to the cache.

A result over the cap is stored whole in the run's tool-output cache (`toolwire.cache`) and the
model gets its first characters with a note naming the reference and the line to read on from,
so `tool_output_cache` / `tool_output_cache_grep` reach the rest (the agent offers them when
`output_budget_chars` is set; the CLI whenever an MCP server is configured). Data results over
the cap become text: indented JSON, so the cache can show it line by line. Images are kept.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.cache import ToolOutputCache
from toolwire.types import ImagePart, TextPart

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "cap_result", "cap_text"]

DEFAULT_MAX_RESULT_CHARS = 30_000
"""The characters of one MCP tool result the model sees (as `exec`'s output cap)."""


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
    return text[:limit] + _note(text, limit, cache)


def _cap_parts(parts: list[TextPart | ImagePart], limit: int, cache: ToolOutputCache) -> list[TextPart | ImagePart]:
    text = "\n".join(part.text for part in parts if isinstance(part, TextPart))
    if len(text) <= limit:
        return parts
    capped: list[TextPart | ImagePart] = []
    left = limit
    for part in parts:
        if isinstance(part, ImagePart):
            capped.append(part)
        elif left > 0:
            capped.append(TextPart(text=part.text[:left]))
            left -= len(part.text) + 1  # the newline that joins it to the next part
    capped.append(TextPart(text=_note(text, limit, cache).lstrip("\n")))
    return capped


def _note(text: str, limit: int, cache: ToolOutputCache) -> str:
    ref_id = cache.put(text)
    line = text.count("\n", 0, limit) + 1  # the line the shown start ends in
    lines = text.count("\n") + 1
    return (
        f"\n[result clipped: the first {limit} of {len(text)} characters are shown; the whole result "
        f"({lines} lines) is {ref_id} in the tool output cache: tool_output_cache(ref_id={ref_id!r}, "
        f"offset={line}) reads on from line {line}, tool_output_cache_grep(ref_id={ref_id!r}, pattern=...) "
        "searches it]"
    )
