"""Tool-call arguments as models write them: parsed, repaired when broken, bounded in depth.

Repair is linear (`repair`: quotes, Python literals, trailing commas, raw newlines, cuts), so
it can run on an event loop whatever the size; only what it cannot read, and only when small,
goes to json-repair.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.codecs.common.repair import repair_json

__all__ = ["MAX_ARGUMENT_DEPTH", "MAX_REPAIR_CHARS", "cut_off_error", "depth_exceeds", "parse_arguments"]


MAX_ARGUMENT_DEPTH = 64
"""Deeper argument objects are refused: no tool needs them, and recursion over them can crash."""


MAX_REPAIR_CHARS = 8 * 1024
"""Broken arguments that `repair_json` (linear) cannot read go to json-repair only up to this size:
it costs up to ~100 µs a character, on whatever loop decodes the reply (a gateway's, say)."""


def parse_arguments(raw: Any, *, repair_cut: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """Parse a model's tool arguments; return `(arguments, metadata)` and never raise.

    `""`/`None` mean `{}`. Invalid JSON is repaired when possible (`metadata["raw_arguments"]`
    keeps the original); otherwise the arguments are `{}` and `metadata["arguments_error"]`
    says why, so the agent can tell the model instead of calling the tool. Arguments cut off
    before their end (`{"x": 12`) are not repaired either: completing them would guess values
    the model did not send. `repair_cut=True` repairs them anyway, for calls found in free text.
    """
    if isinstance(raw, dict):
        return _bounded(raw, raw)
    if raw is None:
        return {}, {}
    if not isinstance(raw, str):
        return {}, {"raw_arguments": raw, "arguments_error": _not_object(raw)}
    if not raw or raw.isspace():
        return {}, {}
    try:
        value = json.loads(raw)
    except RecursionError:
        return {}, {"raw_arguments": raw, "arguments_error": _too_deep()}
    except json.JSONDecodeError as exc:
        if exc.pos >= len(raw.rstrip()) and not repair_cut:
            return {}, _cut_off(raw)
        return _repair_arguments(raw)
    if isinstance(value, dict):
        return _bounded(value, raw)
    return {}, {"raw_arguments": raw, "arguments_error": _not_object(value)}


def _bounded(value: dict[str, Any], raw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    # Each level of nesting takes two characters of JSON text: a short text cannot be too deep.
    short = isinstance(raw, str) and len(raw) <= 2 * MAX_ARGUMENT_DEPTH
    if not short and depth_exceeds(value, MAX_ARGUMENT_DEPTH):
        return {}, {"raw_arguments": raw, "arguments_error": _too_deep()}
    return value, {}


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether containers nest deeper than `limit` (iterative: deep input cannot crash it)."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(current, dict):
            current = current.values()
        elif not isinstance(current, list):
            continue
        stack.extend((v, depth + 1) for v in current if isinstance(v, _CONTAINERS))
    return False


_CONTAINERS = (dict, list)  # a tuple: isinstance checks it faster than `dict | list`


def cut_off_error(raw: str, *, at_limit: bool) -> str | None:
    r"""Why a call written as the JSON `raw` is not whole (it must not run), or None when it is.

    The one rule for calls read out of a reply's text (text, auto and constrained modes), as
    native mode's arguments follow it (`parse_arguments`): a string left open means the text was
    cut inside a value (`"content": "line1\nli`), and completing it would run a guess; so does
    any bracket left open when the reply stopped at its token limit (`at_limit`). Closing
    brackets missing at a natural end are a small model's slip and stay repaired. Linear.
    """
    depth, in_string, escaped = 0, False, False
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    if in_string or (at_limit and depth > 0):
        return str(_cut_off(raw)["arguments_error"])
    return None


def _too_deep() -> str:
    return f"the arguments nest deeper than {MAX_ARGUMENT_DEPTH} levels; send a flatter JSON object"


def _cut_off(raw: str) -> dict[str, Any]:
    return {
        "raw_arguments": raw,
        "arguments_error": f"the arguments were cut off before their end (...{raw[-80:]!r}); send the whole call again",
    }


def _repair_arguments(raw: str) -> tuple[dict[str, Any], dict[str, Any]]:
    # Linear: quotes, Python literals, trailing commas, raw newlines, cuts. Whether a cut may be
    # completed was decided before (the rule json-repair was held to: the error is at the end).
    repaired = repair_json(raw)
    if repaired is not None and isinstance(repaired.value, dict):
        arguments, metadata = _bounded(repaired.value, raw)
        return arguments, metadata or {"raw_arguments": raw}
    if repaired is not None:
        return {}, {"raw_arguments": raw, "arguments_error": _not_object(repaired.value)}
    if len(raw) > MAX_REPAIR_CHARS:
        return {}, {
            "raw_arguments": raw,
            "arguments_error": f"the arguments are not valid JSON ({len(raw)} characters, too long to repair): "
            f"{raw[:200]!r}",
        }
    import json_repair  # rare path, small inputs only: keeps import time low

    try:
        value = json_repair.loads(raw)
    except Exception:  # the repairer must never break decoding (RecursionError included)
        value = None
    if (
        isinstance(value, dict)
        and (value or raw.strip().startswith("{"))
        and not depth_exceeds(value, MAX_ARGUMENT_DEPTH)
    ):
        return value, {"raw_arguments": raw}
    return {}, {
        "raw_arguments": raw,
        "arguments_error": f"the arguments are not valid JSON and could not be repaired: {raw[:200]!r}",
    }


def _not_object(value: Any) -> str:
    return f"the arguments must be a JSON object, got {type(value).__name__}: {str(value)[:200]!r}"
