r"""XML-ish formats whose argument values are raw text: Qwen3-Coder and GLM-4.5.

Shapes (docs/tool-modes.md, text):

- Qwen3-Coder / Seed-OSS: `<tool_call><function=name><parameter=p>value</parameter></function></tool_call>`.
  As in vLLM's `qwen3coder_tool_parser`, one newline on each side of a value belongs to the
  markup; closing tags may be missing. Llama 3.1's `<function=name>{...}</function>` shares the
  opening tag and carries JSON instead.
- GLM-4.5/4.7: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>...</tool_call>`; older GLM
  writes `name\n{json}`.

Values are strings on the wire; they are converted to the types in the tool's schema when the
caller passed tools (`coerce`), and kept as strings otherwise.
"""

from __future__ import annotations

import re
from typing import Any

from toolwire.textcalls._detection import Context, Found, RawCall, coerce, rstrip_end, valid_name
from toolwire.textcalls._scan import Finder

__all__ = ["find_functions", "parse_tag_body"]

_FUNCTION = "<function="
_FUNCTION_OPEN = re.compile(re.escape(_FUNCTION))
_FUNCTION_CLOSE = "</function>"
_PARAMETER = "<parameter="
_PARAMETER_CLOSE = "</parameter>"
_ARG_KEY, _ARG_KEY_CLOSE = "<arg_key>", "</arg_key>"
_ARG_VALUE, _ARG_VALUE_CLOSE = "<arg_value>", "</arg_value>"
_MAX_TAG_NAME = 200


def _tag_name(text: str, start: int, end: int) -> tuple[str, int]:
    """The `name` in `<tag=name>` whose name starts at `start`; returns it and the index after `>`."""
    close = text.find(">", start, min(end, start + _MAX_TAG_NAME))
    if close < 0:
        return "", -1
    return text[start:close].strip().strip("\"'"), close + 1


def _trim_newlines(value: str) -> str:
    value = value.removeprefix("\n")
    return value.removesuffix("\n")


def _parameters(ctx: Context, name: str, start: int, end: int) -> dict[str, Any]:
    text, arguments = ctx.text, {}
    at = text.find(_PARAMETER, start, end)
    while at >= 0:
        key, value_start = _tag_name(text, at + len(_PARAMETER), end)
        if value_start < 0:
            break
        following = text.find(_PARAMETER, value_start, end)
        stop = following if following >= 0 else end
        close = text.find(_PARAMETER_CLOSE, value_start, stop)
        raw = _trim_newlines(text[value_start : close if close >= 0 else stop])
        arguments[key] = coerce(raw, ctx.param_schema(name, key), ctx.budget)
        at = following
    return arguments


def _function(ctx: Context, start: int, end: int) -> RawCall | None:
    """One `<function=name>...` whose body ends at `end` (its closing tag excluded)."""
    text = ctx.text
    name, body_start = _tag_name(text, start + len(_FUNCTION), end)
    if not valid_name(name):
        return None
    body = text[body_start:end].strip()
    if body.startswith("{"):
        return RawCall(name, body, "llama3-function")
    return RawCall(name, _parameters(ctx, name, body_start, end), "qwen3-coder")


def _functions(ctx: Context, start: int, end: int) -> list[RawCall]:
    text, calls = ctx.text, []
    at = text.find(_FUNCTION, start, end)
    while at >= 0:
        following = text.find(_FUNCTION, at + len(_FUNCTION), end)
        stop = following if following >= 0 else end
        close = text.find(_FUNCTION_CLOSE, at, stop)
        call = _function(ctx, at, close if close >= 0 else stop)
        if call is None:
            return []
        calls.append(call)
        at = following
    return calls


def _glm_pairs(ctx: Context, name: str, start: int, end: int) -> dict[str, Any]:
    text, arguments = ctx.text, {}
    at = text.find(_ARG_KEY, start, end)
    while at >= 0:
        following = text.find(_ARG_KEY, at + len(_ARG_KEY), end)
        stop = following if following >= 0 else end
        key_end = text.find(_ARG_KEY_CLOSE, at, stop)
        value_at = text.find(_ARG_VALUE, key_end, stop) if key_end >= 0 else -1
        if value_at >= 0:
            key = text[at + len(_ARG_KEY) : key_end].strip()
            close = text.find(_ARG_VALUE_CLOSE, value_at, stop)
            raw = text[value_at + len(_ARG_VALUE) : close if close >= 0 else rstrip_end(text, value_at, stop)]
            arguments[key] = coerce(raw, ctx.param_schema(name, key), ctx.budget)
        at = following
    return arguments


def _glm(ctx: Context, start: int, end: int) -> list[RawCall]:
    text = ctx.text
    first_key = text.find(_ARG_KEY, start, end)
    head = text[start : first_key if first_key >= 0 else end].strip()
    name, _, rest = head.partition("\n")
    name = name.strip()
    if not valid_name(name):
        return []
    if first_key >= 0:
        return [RawCall(name, _glm_pairs(ctx, name, first_key, end), "glm")]
    # GLM-4 (before 4.5) wrote `name\n{json arguments}`.
    return [RawCall(name, rest.strip() or None, "glm")]


def parse_tag_body(ctx: Context, start: int, end: int) -> list[RawCall]:
    """The calls in a non-JSON `<tool_call>` body: Qwen3-Coder functions or a GLM call."""
    if ctx.text.find(_FUNCTION, start, end) >= 0:
        return _functions(ctx, start, end)
    return _glm(ctx, start, end)


def find_functions(ctx: Context) -> list[Found]:
    """`<function=name>...</function>` written without a `<tool_call>` wrapper."""
    text, found = ctx.text, []
    if _FUNCTION not in text:
        return []
    opens = [m.start() for m in _FUNCTION_OPEN.finditer(text)]
    closer = Finder(text, _FUNCTION_CLOSE)
    for i, start in enumerate(opens):
        limit = opens[i + 1] if i + 1 < len(opens) else len(text)
        close_at, close_end = closer.next(start)
        closed = 0 <= close_at < limit
        call = _function(ctx, start, close_at if closed else limit)
        if call is not None:
            found.append(Found(start, close_end if closed else rstrip_end(text, start, limit), [call]))
    return found
