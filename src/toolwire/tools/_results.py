"""Map what a tool returned, or why it failed, to a `ToolResult` the model can act on.

Error texts are written for the model: they name the argument, what was expected and what
was received, so the next call can be corrected. Pydantic is imported where a result needs it,
not at import: `ToolError` and the agent's import stay light (a tool built with `@tool` has
loaded pydantic long before its first result).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolwire.errors import ToolwireError
from toolwire.tools._jsonschema import expected_type
from toolwire.types import ImagePart, TextPart, ToolResult

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["ToolError", "error_result", "to_result", "validation_message"]

_MAX_LISTED = 10
_MAX_INPUT = 80


class ToolError(ToolwireError):
    """Raise inside a tool to fail with exactly this message (no exception type prepended).

    For expected failures the model can fix — "old_text matches 3 times; give more context" —
    where any other exception's text would read as a crash.
    """


def error_result(call_id: str, name: str, message: str) -> ToolResult:
    """An `error` result for the call."""
    return ToolResult(tool_call_id=call_id, name=name, kind="error", value=message)


def _is_parts(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and bool(value)
        and all(isinstance(p, TextPart | ImagePart) for p in value)
    )


def to_result(value: Any, call_id: str, name: str) -> ToolResult:
    """Map a return value: str → text, ToolResult → itself (re-addressed), parts → multimodal, else data."""
    if isinstance(value, ToolResult):
        return dataclasses.replace(value, tool_call_id=call_id, name=name)
    if isinstance(value, str):
        return ToolResult(tool_call_id=call_id, name=name, kind="text", value=value)
    if isinstance(value, TextPart | ImagePart):
        return ToolResult(tool_call_id=call_id, name=name, kind="multimodal", value=[value])
    if _is_parts(value):
        return ToolResult(tool_call_id=call_id, name=name, kind="multimodal", value=list(value))
    from pydantic import BaseModel
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    if isinstance(value, BaseModel):
        return ToolResult(tool_call_id=call_id, name=name, kind="data", value=value.model_dump(mode="json"))
    try:
        data = to_jsonable_python(value)
    except PydanticSerializationError:
        return error_result(
            call_id,
            name,
            f"Tool {name!r} returned a {type(value).__name__}, which cannot be sent as JSON; "
            "this is a bug in the tool, not in your arguments.",
        )
    return ToolResult(tool_call_id=call_id, name=name, kind="data", value=data)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_INPUT else text[: _MAX_INPUT - 3] + "..."


def _location(loc: tuple[str | int, ...]) -> str:
    """`items[0].name`: how the model would point at a nested value."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _describe(error: Any, schema: dict[str, Any]) -> str:
    loc = _location(error["loc"])
    properties: dict[str, Any] = schema.get("properties", {})
    if error["type"] == "extra_forbidden":
        if len(error["loc"]) == 1:
            allowed = ", ".join(repr(p) for p in properties) or "none"
            return f"{loc!r}: unexpected argument; the accepted arguments are {allowed}"
        return f"{loc!r}: unexpected key; remove it"
    expected = None
    if len(error["loc"]) == 1:
        expected = expected_type(properties.get(str(error["loc"][0])), schema.get("$defs", {}))
    line = f"{loc or 'arguments'!r}: {error['msg']}"
    if expected:
        line += f" (expected {expected})"
    if error["type"] != "missing":
        line += f", got {_short(error['input'])}"
    return line


def validation_message(name: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """One line per problem, naming the argument, the expected type and what was received."""
    errors = exc.errors(include_url=False)
    lines = [f"- {_describe(e, schema)}" for e in errors[:_MAX_LISTED]]
    if len(errors) > _MAX_LISTED:
        lines.append(f"- ... and {len(errors) - _MAX_LISTED} more")
    return (
        f"Invalid arguments for tool {name!r}:\n" + "\n".join(lines) + "\nFix these arguments and call the tool again."
    )
