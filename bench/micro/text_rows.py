"""Text fallback (`parse_tool_calls` throughput and linearity) and the tool-output cache grep.

Text rows parse a whole document once per run; the MB/s column is size / median time, and the
"vs 1 MB" column divides it by the same input's MB/s at 1 MB: ≈ 1.0 means linear time.
Cache rows search one 100 MB output; peak RSS above the already-loaded text is measured in a
fresh child process.
"""

from __future__ import annotations

import re
from typing import Any

from bench.harness import RowSpec
from bench.micro import payloads

MB = 1_000_000
SIZES = (1, 4, 10, 16)
ADVERSARIAL_SIZES = (1, 4, 16)
CACHE_MB = 100
NEEDLE = "needle-42"


def _parse(size: int, adversarial: bool) -> Any:
    def make() -> tuple[Any, Any]:
        from toolwire.textcalls import parse_tool_calls

        names = payloads._tool_names()
        tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in names]
        tools_arg: Any = {t["function"]["name"]: t for t in tools}
        text = payloads.adversarial_text(size * MB) if adversarial else payloads.text_corpus(size * MB)

        def run(_: Any) -> tuple[int, int]:
            rest, calls = parse_tool_calls(text, tools_arg)
            return len(rest), len(calls)

        return None, run

    return make


def _scan_floor(size: int) -> Any:
    def make() -> tuple[Any, Any]:
        text = payloads.text_corpus(size * MB)
        markers = re.compile(r"TOOL_CALL:|<tool_call>|\[TOOL_CALLS\]|```")
        return None, lambda _: sum(1 for _ in markers.finditer(text))

    return make


def text_rows() -> list[RowSpec]:
    """Corpus at 1, 4, 10, 16 MB; adversarial at 1, 4, 16 MB; a marker-scan floor at 10 MB."""
    rows = [
        RowSpec(
            "floor 10 MB",
            "floor",
            "one `re.finditer` pass over the corpus for the call markers (no parsing)",
            _scan_floor(10),
        )
    ]
    rows += [
        RowSpec(
            f"corpus {n} MB",
            "toolwire",
            f"`toolwire.textcalls.parse_tool_calls(text, tools)` on {n} MB of prose, code and calls in 4 formats",
            _parse(n, False),
        )
        for n in SIZES
    ]
    rows += [
        RowSpec(
            f"adversarial {n} MB",
            "toolwire",
            f"`parse_tool_calls` on {n} MB of unclosed markers, braces and brackets (quadratic bait)",
            _parse(n, True),
        )
        for n in ADVERSARIAL_SIZES
    ]
    return rows


def text_sizes(name: str) -> float:
    return float(name.split()[-2])


# cache


def _cache_text() -> str:
    return payloads.cache_output(CACHE_MB * MB)


def _grep(regex: bool) -> Any:
    def make() -> tuple[Any, Any]:
        from toolwire.cache import ToolOutputCache

        cache = ToolOutputCache()
        ref = cache.put(_cache_text())
        pattern = r"needle-4\d disk" if regex else NEEDLE
        return None, lambda _: cache.grep(ref, pattern, regex=regex, before=1, after=1, max_matches=1000)

    return make


def _grep_floor() -> tuple[Any, Any]:
    text = _cache_text()

    def run(_: Any) -> int:
        found, position = 0, text.find(NEEDLE)
        while position >= 0:
            found += 1
            position = text.find(NEEDLE, position + 1)
        return found

    return None, run


def cache_rows() -> list[RowSpec]:
    """grep over a 100 MB output, literal and regex, against a bare `str.find` loop."""
    return [
        RowSpec("floor", "floor", f"a `str.find` loop over the {CACHE_MB} MB text counting every needle", _grep_floor),
        RowSpec(
            "toolwire",
            "toolwire",
            "`ToolOutputCache().grep(ref, 'needle-42', before=1, after=1, max_matches=1000)`",
            _grep(False),
        ),
        RowSpec("toolwire regex", "toolwire", "the same with `regex=True` (`needle-4\\d disk`)", _grep(True)),
    ]
