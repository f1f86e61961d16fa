"""The tool-output cache: old tool outputs leave the history but stay retrievable.

When the tool outputs in a conversation exceed a character budget, the oldest are replaced by a
short stub carrying a reference id; the full text stays here, and the two cache tools
(`tool_output_cache`, `tool_output_cache_grep`) let the model read or search it. Memory is
bounded by the outputs themselves: each is stored once, as the string it already was.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolwire.textcalls import result_text
from toolwire.tools import Dependency, Depends, ToolError
from toolwire.tools._regex import InvalidPattern, compile_linear
from toolwire.types import Message, ToolResult

if TYPE_CHECKING:
    from toolwire.tools import Tool

__all__ = [
    "CACHE",
    "CacheLookupError",
    "ToolOutputCache",
    "cache_tools",
    "output_text",
    "trim_history",
]

STUB_KEY = "tool_output_cache_ref"
_STUB_SIZE = 120  # about the length of a stub


class CacheLookupError(ToolError, ValueError):
    """A cache tool was asked for something the cache cannot give (unknown id, bad pattern)."""


@dataclass(slots=True)
class _Entry:
    text: str
    lines: int


class ToolOutputCache:
    """Full tool outputs by reference id; one instance per agent run or session."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}
        self._ids = itertools.count(1)

    def put(self, text: str) -> str:
        """Store `text` and return its new reference id."""
        ref_id = f"out_{next(self._ids)}"
        self._entries[ref_id] = _Entry(text, text.count("\n") + (0 if text.endswith("\n") or not text else 1))
        return ref_id

    def get(self, ref_id: str) -> str:
        """The full text stored under `ref_id`."""
        return self._entry(ref_id).text

    def __contains__(self, ref_id: object) -> bool:
        return ref_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def read(self, ref_id: str, offset: int = 1, limit: int = 200) -> str:
        """Lines `offset`.. (1-based) of an output, numbered like `cat -n`, at most `limit` of them."""
        entry = self._entry(ref_id)
        if offset < 1 or limit < 1:
            raise CacheLookupError(f"offset and limit must be at least 1, got offset={offset}, limit={limit}.")
        if entry.lines and offset > entry.lines:
            raise CacheLookupError(f"{ref_id} has {entry.lines} lines; offset {offset} is past the end.")
        lines = itertools.islice(_iter_lines(entry.text), offset - 1, offset - 1 + limit)
        body = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=offset))
        last = min(entry.lines, offset + limit - 1)
        more = (
            f"\n[lines {offset}-{last} of {entry.lines}; use offset={last + 1} for more]" if last < entry.lines else ""
        )
        return body + more

    def grep(
        self,
        ref_id: str,
        pattern: str,
        *,
        regex: bool = False,
        before: int = 0,
        after: int = 0,
        max_matches: int = 50,
    ) -> str:
        """Matching lines of an output with `before`/`after` lines of context, numbered."""
        entry = self._entry(ref_id)
        if before < 0 or after < 0 or max_matches < 1:
            raise CacheLookupError("before and after must be >= 0 and max_matches >= 1.")
        matches = list(itertools.islice(_matching_lines(entry.text, pattern, regex), max_matches + 1))
        if not matches:
            return f"No lines of {ref_id} match {pattern!r}."
        text = _render_matches(entry.text, matches[:max_matches], before, after)
        if len(matches) > max_matches:
            text += f"\n[stopped after {max_matches} matching lines; raise max_matches or narrow the pattern]"
        return text

    def _entry(self, ref_id: str) -> _Entry:
        entry = self._entries.get(ref_id)
        if entry is None:
            known = ", ".join(self._entries) or "none yet"
            raise CacheLookupError(f"Unknown output reference {ref_id!r}; known references: {known}.")
        return entry


def _iter_lines(text: str) -> Iterator[str]:
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _matching_lines(text: str, pattern: str, regex: bool) -> Iterator[tuple[int, int]]:
    """`(line number, line start offset)` of each line holding a match, once each, in one pass."""
    if regex:
        yield from _regex_matching_lines(text, pattern)
        return
    if not pattern:
        raise CacheLookupError("The search pattern is empty; give the text to look for.")
    positions = _find_all(text, pattern)
    line, counted_to, last_line = 1, 0, 0
    for position in positions:
        line += text.count("\n", counted_to, position)
        counted_to = position
        if line != last_line:
            last_line = line
            yield line, text.rfind("\n", 0, position) + 1


def _regex_matching_lines(text: str, pattern: str) -> Iterator[tuple[int, int]]:
    """Like `_matching_lines`, with RE2 line by line: linear time, as the `grep` tool."""
    try:
        compiled = compile_linear(pattern)
    except InvalidPattern as exc:
        raise CacheLookupError(
            f"Invalid regular expression {pattern!r}: {exc}; use RE2 syntax (Python-like, without "
            "backreferences or lookaround)."
        ) from None
    start = 0
    for number, line in enumerate(_iter_lines(text), start=1):
        if compiled.search(line.encode("utf-8", "surrogatepass")) is not None:
            yield number, start
        start += len(line) + 1


def _find_all(text: str, pattern: str) -> Iterator[int]:
    """Positions of `pattern`, at most one per line (the rest of a matching line is skipped)."""
    position = text.find(pattern)
    while position >= 0:
        yield position
        newline = text.find("\n", position)
        if newline < 0:
            return
        position = text.find(pattern, newline + 1)


def _render_matches(text: str, matches: Sequence[tuple[int, int]], before: int, after: int) -> str:
    """Numbered lines around each match; `:` marks a match, `-` context, `--` a gap."""
    rendered: list[str] = []
    last_shown = 0
    match_lines = {line for line, _ in matches}
    for line, start in matches:
        lines = _lines_around(text, line, start, before, after)
        for number, content in lines:
            if number <= last_shown:
                continue
            if last_shown and number != last_shown + 1:
                rendered.append("--")
            rendered.append(f"{number:>6}{':' if number in match_lines else '-'}\t{content}")
            last_shown = number
    return "\n".join(rendered)


def _lines_around(text: str, line: int, start: int, before: int, after: int) -> list[tuple[int, str]]:
    """The matching line with its neighbours, found by walking from its offset (never the whole text)."""
    starts = [start]
    while len(starts) <= before and starts[0] > 0:
        starts.insert(0, text.rfind("\n", 0, starts[0] - 1) + 1)
    first_number = line - len(starts) + 1
    out: list[tuple[int, str]] = []
    position = starts[0]
    for offset in range(len(starts) + after):
        if position > len(text) or (position == len(text) and offset >= len(starts)):
            break
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        out.append((first_number + offset, text[position:end]))
        position = end + 1
    return out


output_text = result_text
"""The text a result puts in front of the model, as the budget counts it."""


def trim_history(messages: list[Message], cache: ToolOutputCache, budget_chars: int) -> int:
    """Replace the oldest tool outputs by stubs until the outputs fit `budget_chars`.

    Works in place; returns how many outputs were trimmed. The newest output is never trimmed
    (the model has not seen it yet), and stubs are never trimmed again.
    """
    results = [(i, m) for i, m in enumerate(messages) if isinstance(m, ToolResult) and STUB_KEY not in m.metadata]
    sizes = {i: len(output_text(m)) for i, m in results}
    total = sum(sizes.values())
    trimmed = 0
    for index, result in results[:-1]:
        if total <= budget_chars:
            break
        text = output_text(result)
        if len(text) <= _STUB_SIZE:
            continue  # a stub would not save anything
        ref_id = cache.put(text)
        stub = (
            f"[output {ref_id} trimmed: {text.count(chr(10)) + 1} lines, {len(text)} chars — "
            "use tool_output_cache or tool_output_cache_grep]"
        )
        messages[index] = ToolResult(
            tool_call_id=result.tool_call_id,
            name=result.name,
            kind="text",
            value=stub,
            metadata={**result.metadata, STUB_KEY: ref_id},
        )
        total -= sizes[index] - len(stub)
        trimmed += 1
    return trimmed


CACHE: Dependency[ToolOutputCache] = Dependency("toolwire.tool_output_cache", ToolOutputCache)
"""The run's cache; the agent supplies its own through `ToolContext.deps`."""


def _read_cached(ref_id: str, offset: int = 1, limit: int = 200, cache: ToolOutputCache = Depends(CACHE)) -> str:
    """Read a trimmed tool output back, with line numbers.

    Args:
        ref_id: The reference id from the trimmed-output stub, e.g. "out_3".
        offset: The first line to show (1-based).
        limit: How many lines to show at most.
        cache: The run's cache (injected, not shown to the model).
    """
    return cache.read(ref_id, offset=offset, limit=limit)


def _grep_cached(
    ref_id: str,
    pattern: str,
    regex: bool = False,
    before: int = 0,
    after: int = 0,
    max_matches: int = 50,
    cache: ToolOutputCache = Depends(CACHE),
) -> str:
    """Search a trimmed tool output; returns matching lines with line numbers and context.

    Args:
        ref_id: The reference id from the trimmed-output stub, e.g. "out_3".
        pattern: The text to look for (a regular expression in RE2 syntax when regex is true).
        regex: Treat pattern as a regular expression.
        before: Lines of context to show before each match.
        after: Lines of context to show after each match.
        max_matches: Stop after this many matching lines.
        cache: The run's cache (injected, not shown to the model).
    """
    return cache.grep(ref_id, pattern, regex=regex, before=before, after=after, max_matches=max_matches)


@functools.cache
def cache_tools() -> tuple[Tool, Tool]:
    """The two tools the agent offers when it trims outputs.

    Built on first use, not at import: each tool is a Pydantic model, and most runs never trim.
    """
    from toolwire.tools import tool

    return (
        tool(risk="low", name="tool_output_cache")(_read_cached),
        tool(risk="low", name="tool_output_cache_grep")(_grep_cached),
    )


def __getattr__(name: str) -> Tool:
    """`tool_output_cache` and `tool_output_cache_grep`, the `Tool`s, built on first access."""
    names = ("tool_output_cache", "tool_output_cache_grep")
    if name in names:
        return cache_tools()[names.index(name)]
    raise AttributeError(f"module 'toolwire.cache' has no attribute {name!r}")
