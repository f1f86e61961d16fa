"""Explicit-marker formats whose calls are JSON: toolwire's own, Hermes, Mistral, Llama 3, Granite.

Shapes (docs/tool-modes.md, text):

- toolwire: `TOOL_CALL: {"name": ..., "args": {...}}`, one per line (what `render_tool_prompt` asks for).
- Hermes / Qwen 2.5 / xLAM: `<tool_call>{"name": ..., "arguments": {...} or "<json>"}</tool_call>`; the
  same tag wraps Qwen3-Coder XML and GLM-4.5 bodies, handed to `_xml_formats`.
- Mistral before v11: `[TOOL_CALLS][{...}, ...]`; v11+: `[TOOL_CALLS]name[ARGS]{...}`, optionally
  `name[CALL_ID]id[ARGS]{...}` (Magistral), and `[TOOL_CALLS]name{...}` as servers write it when
  they decode with special tokens skipped (`[ARGS]` is one).
- Llama 3.1/3.2: `<|python_tag|>{"name": ..., "parameters": {...}}; {...}`, or a built-in call
  `<|python_tag|>brave_search.call(query="...")`.
- Granite 3.x/4: `<|tool_call|>[{...}]`.
"""

from __future__ import annotations

import re

from toolwire.textcalls._detection import (
    Context,
    Found,
    MarkerValues,
    RawCall,
    calls_from_value,
    marker_positions,
    rstrip_end,
    skip_ws,
)
from toolwire.textcalls._pythonic import parse_pythonic
from toolwire.textcalls._scan import Finder
from toolwire.textcalls._xml_formats import parse_tag_body

__all__ = ["find_granite", "find_hermes", "find_mistral", "find_python_tag", "find_toolwire"]

_TOOLWIRE = re.compile(r"TOOL_CALL[ \t]*:")
_GRANITE = re.compile(re.escape("<|tool_call|>"))
_HERMES_OPEN = re.compile(r"<(?:seed:)?tool_call>")
_HERMES_CLOSE = re.compile(r"</(?:seed:)?tool_call>")
_HERMES_CLOSE_AFTER = re.compile(r"\s*+</(?:seed:)?tool_call>")
_MISTRAL = re.compile(re.escape("[TOOL_CALLS]"))
# `[ARGS]` is a special token too: servers that decode with special tokens skipped (vLLM's
# Mistral parser input) write `[TOOL_CALLS]add{"a": 1}` with nothing between name and JSON.
_MISTRAL_V11 = re.compile(r"\s*([\w.:-]{1,128})(?:\[CALL_ID\]\s*([\w-]{1,64})\s*)?(?:\[ARGS\])?", re.ASCII)
_PYTHON_TAG = re.compile(re.escape("<|python_tag|>"))
_PYTHON_CALL = re.compile(r"[\[A-Za-z_][\w.]*+\s*+[(\[]")
_LLAMA_END = re.compile(r"<\|eom_id\|>|<\|eot_id\|>|\n")


def _mark_repaired(calls: list[RawCall], raw: str | None) -> list[RawCall]:
    if raw is not None:
        for call in calls:
            call.metadata["raw_arguments"] = raw
    return calls


def _json_after_markers(ctx: Context, pattern: re.Pattern[str], fmt: str) -> list[Found]:
    """Calls written as one JSON value (object or array) right after each marker."""
    text, found = ctx.text, []
    markers = marker_positions(text, pattern)
    values = MarkerValues(ctx)
    resume = 0
    for i, (start, marker_end) in enumerate(markers):
        if start < resume:
            continue
        value_start = skip_ws(text, marker_end)
        if value_start >= len(text) or text[value_start] not in "{[":
            continue
        limit = markers[i + 1][0] if i + 1 < len(markers) else len(text)
        value, resume, raw = values.load(value_start, limit)
        calls = calls_from_value(value, fmt)
        if calls:
            found.append(Found(start, resume, _mark_repaired(calls, raw)))
    return found


def find_toolwire(ctx: Context) -> list[Found]:
    """`TOOL_CALL: {...}` lines, the format `render_tool_prompt` teaches."""
    if "TOOL_CALL" not in ctx.text:
        return []
    return _json_after_markers(ctx, _TOOLWIRE, "toolwire")


def find_granite(ctx: Context) -> list[Found]:
    """Granite's `<|tool_call|>[...]`."""
    if "<|tool_call|>" not in ctx.text:
        return []
    return _json_after_markers(ctx, _GRANITE, "granite")


def find_hermes(ctx: Context) -> list[Found]:
    """`<tool_call>` blocks: JSON (Hermes, xLAM arrays) or XML-ish bodies (Qwen3-Coder, GLM)."""
    text, found = ctx.text, []
    if "tool_call>" not in text:
        return []
    markers = marker_positions(text, _HERMES_OPEN)
    values = MarkerValues(ctx)
    closer = Finder(text, _HERMES_CLOSE)
    resume = 0
    for i, (start, marker_end) in enumerate(markers):
        if start < resume:
            continue
        limit = markers[i + 1][0] if i + 1 < len(markers) else len(text)
        body_start = skip_ws(text, marker_end)
        if body_start >= limit:
            continue
        if text[body_start] in "{[":
            value, resume, raw = values.load(body_start, limit)
            calls = _mark_repaired(calls_from_value(value, "hermes"), raw)
            close = _HERMES_CLOSE_AFTER.match(text, resume)
            resume = close.end() if close else resume
        else:
            close_at, close_end = closer.next(body_start)
            body_end = close_at if 0 <= close_at < limit else rstrip_end(text, body_start, limit)
            resume = close_end if 0 <= close_at < limit else body_end
            calls = parse_tag_body(ctx, body_start, body_end)
        if calls:
            found.append(Found(start, resume, calls))
    return found


def _mistral_v11(ctx: Context, values: MarkerValues, pos: int, limit: int) -> tuple[list[RawCall], int]:
    """`name[ARGS]{...}` pairs (several may follow one marker); returns the calls and their end."""
    text, calls, end = ctx.text, [], pos
    while match := _MISTRAL_V11.match(text, end, limit):
        args_start = skip_ws(text, match.end())
        if args_start >= len(text) or text[args_start] != "{":
            break
        source, end, _closed = values.source(args_start, limit)
        calls.append(RawCall(match.group(1), source, "mistral-v11", match.group(2)))
    return calls, end


def find_mistral(ctx: Context) -> list[Found]:
    """`[TOOL_CALLS]` followed by a JSON array (before v11) or `name[ARGS]{...}` (v11+)."""
    text, found = ctx.text, []
    if "[TOOL_CALLS]" not in text:
        return []
    markers = marker_positions(text, _MISTRAL)
    values = MarkerValues(ctx)
    resume = 0
    for i, (start, marker_end) in enumerate(markers):
        if start < resume:
            continue
        limit = markers[i + 1][0] if i + 1 < len(markers) else len(text)
        value_start = skip_ws(text, marker_end)
        if value_start < len(text) and text[value_start] in "{[":
            value, resume, raw = values.load(value_start, limit)
            calls = _mark_repaired(calls_from_value(value, "mistral"), raw)
        else:
            calls, resume = _mistral_v11(ctx, values, marker_end, limit)
        if calls:
            found.append(Found(start, resume, calls))
    return found


def _llama_values(ctx: Context, values: MarkerValues, pos: int, limit: int) -> tuple[list[RawCall], int]:
    """JSON calls separated by `;`, as Llama 3.x writes parallel calls."""
    text, calls, end = ctx.text, [], pos
    while pos < len(text) and text[pos] in "{[":
        value, value_end, raw = values.load(pos, limit)
        more = _mark_repaired(calls_from_value(value, "llama3-json"), raw)
        if not more:
            break
        calls += more
        end = value_end
        after = skip_ws(text, value_end)
        if after >= len(text) or text[after] != ";":
            break
        pos = skip_ws(text, after + 1)
    return calls, end


def find_python_tag(ctx: Context) -> list[Found]:
    """Llama 3.x `<|python_tag|>` followed by JSON calls or a built-in `tool.call(...)`."""
    text, found = ctx.text, []
    if "<|python_tag|>" not in text:
        return []
    markers = marker_positions(text, _PYTHON_TAG)
    values = MarkerValues(ctx)
    resume = 0
    for i, (start, marker_end) in enumerate(markers):
        if start < resume:
            continue
        limit = markers[i + 1][0] if i + 1 < len(markers) else len(text)
        pos = skip_ws(text, marker_end)
        calls, resume = _llama_values(ctx, values, pos, limit)
        if not calls:
            line = _LLAMA_END.search(text, pos, limit)
            resume = line.start() if line else limit
            source = text[pos:resume]
            calls = parse_pythonic(source, "llama3-python", single=True) if _PYTHON_CALL.match(source) else []
        if calls:
            found.append(Found(start, resume, calls))
    return found
