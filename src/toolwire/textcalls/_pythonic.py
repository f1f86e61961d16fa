"""Pythonic calls: `[get_weather(city="SF"), get_time(tz="PT")]`, read with `ast`, never evaluated.

Used by Llama 3.2 small models and Llama 4 (`<|python_start|>...<|python_end|>`), ToolACE, and
Olmo 3 (`<function_calls>` with one call per line, JSON `true`/`false`/`null` allowed) — see
docs/tool-modes.md, text. Only keyword arguments with literal values are accepted; anything else
(a variable, an expression, a positional argument) means the text is code, not a call.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from toolwire.textcalls._detection import Context, Found, RawCall, rstrip_end, valid_name
from toolwire.textcalls._scan import Finder, value_end

__all__ = ["find_pythonic_tags", "parse_pythonic"]

_CALL_LINE = re.compile(r"[A-Za-z_][\w.]*+\s*+\(.*\)", re.S)
_JSON_NAMES = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
# (opening tag, closing tag) pairs that announce pythonic calls.
_TAGS = (("<|python_start|>", "<|python_end|>"), ("<function_calls>", "</function_calls>"))


class _NotLiteral(ValueError):
    pass


def _literal(node: ast.expr) -> Any:
    """A JSON-compatible literal, or `_NotLiteral`; recursion is bounded by the parser's nesting limit."""
    match node:
        case ast.Constant(value=constant) if constant is None or isinstance(constant, str | int | float):
            return constant
        case ast.Name(id=name) if name in _JSON_NAMES:
            return _JSON_NAMES[name]
        case ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=int() | float() as number)) if not isinstance(
            number, bool
        ):
            return -number
        case ast.List(elts=items) | ast.Tuple(elts=items):
            return [_literal(item) for item in items]
        case ast.Dict(keys=keys, values=items):
            result = {}
            for key_node, item in zip(keys, items, strict=True):
                key = _literal(key_node) if key_node is not None else None
                if not isinstance(key, str):
                    raise _NotLiteral
                result[key] = _literal(item)
            return result
    raise _NotLiteral


def _function_name(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    name = ".".join(reversed(parts))
    # Llama 3.1 built-in tools are written `brave_search.call(query=...)`.
    return name.removesuffix(".call")


def _call(node: ast.expr, fmt: str) -> RawCall | None:
    if not isinstance(node, ast.Call) or node.args:
        return None
    name = _function_name(node.func)
    if not valid_name(name) or any(keyword.arg is None for keyword in node.keywords):
        return None
    assert name is not None
    try:
        arguments = {keyword.arg: _literal(keyword.value) for keyword in node.keywords if keyword.arg}
    except _NotLiteral:
        return None
    return RawCall(name, arguments, fmt)


def _expression(source: str) -> ast.expr | None:
    try:
        return ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _looks_pythonic(source: str, lines: bool) -> bool:
    """A cheap check that spares `ast.parse` (and its exceptions) on text that cannot be calls."""
    if source.startswith("["):
        return value_end(source, 0, len(source), python=True)[0] == len(source)
    if lines:
        return all(_CALL_LINE.fullmatch(line.strip()) for line in source.splitlines() if line.strip())
    return _CALL_LINE.fullmatch(source) is not None


def parse_pythonic(source: str, fmt: str = "pythonic", *, single: bool = False, lines: bool = False) -> list[RawCall]:
    """The calls in `source`: a list of calls, or (`single`) one bare call, or (`lines`) one per line.

    Returns `[]` unless every element is a call with literal keyword arguments.
    """
    source = source.strip()
    if not _looks_pythonic(source, lines):
        return []
    node = _expression(source)
    if isinstance(node, ast.List | ast.Tuple) and node.elts:
        calls = [_call(item, fmt) for item in node.elts]
    elif isinstance(node, ast.Call) and (single or lines):
        calls = [_call(node, fmt)]
    elif node is None and lines:
        calls = [
            _call(item, fmt) if (item := _expression(line)) else None for line in source.splitlines() if line.strip()
        ]
    else:
        return []
    if not calls or any(call is None for call in calls):
        return []
    return [call for call in calls if call is not None]


def find_pythonic_tags(ctx: Context) -> list[Found]:
    """Pythonic calls inside Llama 4's `<|python_start|>` or Olmo 3's `<function_calls>`."""
    text, found = ctx.text, []
    for opening, closing in _TAGS:
        if opening not in text:
            continue
        opens = [m.start() for m in re.finditer(re.escape(opening), text)]
        closer = Finder(text, closing)
        for i, start in enumerate(opens):
            limit = opens[i + 1] if i + 1 < len(opens) else len(text)
            close_at, close_end = closer.next(start)
            closed = 0 <= close_at < limit
            body_end = close_at if closed else rstrip_end(text, start, limit)
            calls = parse_pythonic(text[start + len(opening) : body_end], lines=True)
            if calls:
                found.append(Found(start, close_end if closed else body_end, calls))
    return found
