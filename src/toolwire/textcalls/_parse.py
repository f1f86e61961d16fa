"""`parse_tool_calls`: run every detector, keep the calls, and take them out of the text.

Explicit-marker formats (`TOOL_CALL:`, `<tool_call>`, `[TOOL_CALLS]`, special tokens) are
trusted: the marker shows the model meant to call, so a call there is kept even when it names a
tool the caller did not offer (the agent then answers with an "unknown tool" error the model
can learn from). Marker-less calls (bare JSON, fenced JSON, pythonic lines) must name one of
`tools` when tools are given; otherwise they stay text. When spans overlap, the one that starts
first wins, and explicit spans beat marker-less ones. Calls inside `<think>…</think>` reasoning
stay text: the model was weighing them, not making them.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.ids import new_call_id
from toolwire.textcalls._detection import Context, Found, RawCall, ToolLike, definitions
from toolwire.textcalls._json_formats import find_granite, find_hermes, find_mistral, find_python_tag, find_toolwire
from toolwire.textcalls._markerless_formats import find_bare_json, find_fences, find_pythonic_lines
from toolwire.textcalls._pythonic import find_pythonic_tags
from toolwire.textcalls._token_formats import find_deepseek, find_harmony, find_kimi
from toolwire.textcalls._xml_formats import find_functions
from toolwire.types import ToolCall

__all__ = ["parse_tool_calls"]

logger = logging.getLogger("toolwire.textcalls")

_Detector = Callable[[Context], list[Found]]
_EXPLICIT: tuple[_Detector, ...] = (
    find_toolwire,
    find_hermes,
    find_functions,
    find_mistral,
    find_python_tag,
    find_granite,
    find_deepseek,
    find_kimi,
    find_harmony,
    find_pythonic_tags,
)
_LOOSE: tuple[_Detector, ...] = (find_fences, find_bare_json, find_pythonic_lines)
_SEPARATORS = " \t\r\n;,"
_FENCE_LINE = re.compile(r"[ \t]*+(`{3,}+|~{3,}+)[\w.+-]*+[ \t]*+")
_KEEPS_NATIVE_ID = frozenset({"kimi-k2"})  # its ids (`functions.name:0`) are what the model refers to


def parse_tool_calls(
    text: str, tools: Iterable[ToolLike] | Mapping[str, ToolLike] | None = None
) -> tuple[str, list[ToolCall]]:
    """Find the tool calls a model wrote as text; return the text without them, and the calls.

    Reads toolwire's `TOOL_CALL: {...}` lines and the formats open models emit (Hermes/Qwen,
    Mistral, Llama 3, fenced JSON, pythonic lists, Qwen3-Coder, GLM, DeepSeek, Kimi K2, Granite,
    gpt-oss Harmony). Each call gets a fresh id (Kimi K2 keeps its own) and
    `metadata["textcalls"]["format"]` naming the format that matched. Arguments that cannot be
    parsed become `{}` with `metadata["arguments_error"]`. Never raises; runs in linear time.

    Args:
        text: The model's reply.
        tools: The tools offered to the model. When given, a call without a marker (bare or
            fenced JSON, a pythonic list) counts only if it names one of them, and XML-style
            argument values are converted to the types in the tools' schemas.

    Returns:
        The reply with the calls removed (surrounding prose kept) and the calls in order.
    """
    if not text:
        return text, []
    ctx = Context(text, {d.name: d for d in definitions(tools)} if tools is not None else None)
    explicit = _resolve(_run(_EXPLICIT, ctx))
    loose = [f for f in _resolve([_known_only(f, ctx) for f in _run(_LOOSE, ctx)]) if f.calls]
    found = _outside_thinking(_merge(explicit, loose), text)
    if not found:
        return text, []
    calls = [_tool_call(raw, ctx) for span in found for raw in span.calls]
    return _remove_spans(text, [(span.start, span.end) for span in found]), calls


def _thinking_regions(text: str) -> list[tuple[int, int]]:
    """Spans of `<think>…</think>` reasoning; a `</think>` with no opening tag closes a region from the start.

    Reasoning models (Qwen3, DeepSeek-R1 and their distills) think before they answer, and may
    write a call there while weighing it; only calls in the answer are meant to run.
    """
    regions: list[tuple[int, int]] = []
    first_close = text.find("</think>")
    first_open = text.find("<think>")
    if first_close >= 0 and (first_open < 0 or first_close < first_open):
        regions.append((0, first_close))
    start = first_open
    while start >= 0:
        end = text.find("</think>", start)
        regions.append((start, len(text) if end < 0 else end))
        start = text.find("<think>", end) if end >= 0 else -1
    return regions


def _outside_thinking(found: list[Found], text: str) -> list[Found]:
    if "think>" not in text:
        return found
    # A `<think>` inside a call's own arguments (a string value) is data, not a reasoning tag.
    masked = text
    for span in found:
        masked = masked[: span.start] + " " * (span.end - span.start) + masked[span.end :]
    regions = _thinking_regions(masked)
    if not regions:
        return found
    return [f for f in found if not any(start <= f.start < end for start, end in regions)]


def _run(detectors: tuple[_Detector, ...], ctx: Context) -> list[Found]:
    found: list[Found] = []
    for detector in detectors:
        try:
            found += detector(ctx)
        except Exception:  # one faulty detector must not cost the calls the others found
            logger.warning("textcalls: detector %s failed; its calls are ignored", detector.__name__, exc_info=True)
    return found


def _known_only(found: Found, ctx: Context) -> Found:
    if ctx.tools is not None and any(call.name not in ctx.tools for call in found.calls):
        return Found(found.start, found.end, [], explicit=False)
    return found


def _resolve(found: list[Found]) -> list[Found]:
    """Drop overlapping spans: the earliest start wins, then the longest."""
    kept: list[Found] = []
    for span in sorted(found, key=lambda f: (f.start, -f.end)):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept


def _merge(explicit: list[Found], loose: list[Found]) -> list[Found]:
    """All explicit spans plus the marker-less spans that overlap none of them, in order."""
    kept, i = list(explicit), 0
    for span in loose:
        while i < len(explicit) and explicit[i].end <= span.start:
            i += 1
        if i == len(explicit) or explicit[i].start >= span.end:
            kept.append(span)
    return sorted(kept, key=lambda f: f.start)


def _arguments(raw: Any, ctx: Context) -> tuple[dict[str, Any], dict[str, Any]]:
    if isinstance(raw, str) and raw.strip():
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            if ctx.budget.allows(raw):
                return parse_arguments(raw, repair_cut=True)  # text is sloppier than native calls
            return {}, {"raw_arguments": raw, "arguments_error": f"the arguments are not valid JSON: {raw[:200]!r}"}
        if isinstance(value, dict):
            return value, {}
    return parse_arguments(raw if raw != "" else None)


def _tool_call(raw: RawCall, ctx: Context) -> ToolCall:
    arguments, extra = _arguments(raw.arguments, ctx)
    metadata: dict[str, Any] = {"textcalls": {"format": raw.format}, **raw.metadata, **extra}
    keep_id = raw.format in _KEEPS_NATIVE_ID and raw.native_id
    return ToolCall(
        id=raw.native_id if keep_id and raw.native_id else new_call_id(),
        name=raw.name,
        arguments=arguments,
        metadata=metadata,
    )


# Removing the spans: prose on both sides is kept, and the seam is tidied so a call on its own
# line leaves no blank line behind and a call inside a sentence leaves a single space.


def _merged_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join spans separated only by whitespace, `;` or `,` (parallel calls)."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and not text[merged[-1][1] : start].strip(_SEPARATORS):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _drop_empty_fence(left: str, right: str) -> tuple[str, str]:
    """Remove a code fence whose only content was the removed calls."""
    left_core = left.rstrip()
    line_start = left_core.rfind("\n") + 1
    opening = _FENCE_LINE.fullmatch(left_core, line_start)
    if opening is None:
        return left, right
    right_core = right.lstrip()
    newline = right_core.find("\n")
    first_line = right_core[: newline if newline >= 0 else len(right_core)].strip()
    fence = opening.group(1)[0]
    if len(first_line) >= 3 and first_line == fence * len(first_line):
        return left_core[:line_start], right_core[right_core.find(first_line) + len(first_line) :]
    return left, right


def _seam(left: str, right: str, at_start: bool, at_end: bool) -> tuple[str, str]:
    left, right = _drop_empty_fence(left, right)
    left_core, right_core = left.rstrip(), right.lstrip()
    if at_start or at_end:
        return left_core if not at_start else "", right_core if not at_end else ""
    left_ws, right_ws = left[len(left_core) :], right[: len(right) - len(right_core)]
    newlines = min(2, max(left_ws.count("\n"), right_ws.count("\n")))
    indent = right_ws[right_ws.rfind("\n") + 1 :] if "\n" in right_ws else ""
    separator = "\n" * newlines if newlines else (" " if left_ws or right_ws else "")
    return left_core + separator, indent + right_core


def _remove_spans(text: str, spans: list[tuple[int, int]]) -> str:
    merged = _merged_spans(text, spans)
    cuts = [0, *(edge for span in merged for edge in span), len(text)]
    pieces = [text[cuts[i] : cuts[i + 1]] for i in range(0, len(cuts), 2)]
    last = len(pieces) - 1
    for i in range(last):
        # Text before the first call stays unless it is only whitespace: a lone `;` line is prose.
        at_start = i == 0 and not pieces[0].strip()
        at_end = i + 1 == last and not pieces[last].strip(_SEPARATORS)
        pieces[i], pieces[i + 1] = _seam(pieces[i], pieces[i + 1], at_start, at_end)
    return "".join(pieces)
