"""`render_tool_prompt`: the system-prompt section that teaches a model toolwire's text call format.

Used when a server cannot take a `tools` parameter: the tools are described in the prompt and
the model answers with `TOOL_CALL: {...}` lines, which `parse_tool_calls` reads back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from toolwire.codecs.common.wire import dumps
from toolwire.textcalls._detection import ToolLike, definitions
from toolwire.types import ToolDefinition

__all__ = ["TOOL_CALL_PREFIX", "example_arguments", "render_tool_prompt"]

TOOL_CALL_PREFIX = "TOOL_CALL: "

_INSTRUCTIONS = """\
## Calling tools

To call a tool, write a line that starts with `TOOL_CALL: ` followed by a JSON object with the
tool's "name" and its "args":

TOOL_CALL: {"name": "<tool name>", "args": {<arguments as a JSON object>}}

- Write one call per line; to call several tools at once, write several lines.
- Parameters marked with `?` are optional; the others are required.
- After your calls, stop and wait: the results arrive in the next message.
- When you need no tool, answer normally, without any TOOL_CALL line."""

_PLACEHOLDERS: dict[str, Any] = {
    "string": "example",
    "integer": 1,
    "number": 1,
    "boolean": True,
    "array": [],
    "object": {},
    "null": None,
}


def _schema(definition: ToolDefinition) -> tuple[dict[str, Any], list[str]]:
    parameters = definition.parameters or {}
    properties = parameters.get("properties")
    required = parameters.get("required")
    return (
        properties if isinstance(properties, dict) else {},
        [name for name in required if isinstance(name, str)] if isinstance(required, list) else [],
    )


def _tool_line(definition: ToolDefinition) -> str:
    properties, required = _schema(definition)
    params = ", ".join(name if name in required else f"{name}?" for name in properties)
    line = f"- **{definition.name}({params})**"
    description = " ".join((definition.description or "").split())
    return f"{line}: {description}" if description else line


def _example_value(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "example"
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    for key in ("enum", "examples"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return options[0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return _PLACEHOLDERS.get(kind, "example") if isinstance(kind, str) else "example"


def example_arguments(definition: ToolDefinition) -> dict[str, Any]:
    """Arguments that fit a tool: each required parameter with a placeholder of its type."""
    properties, required = _schema(definition)
    return {name: _example_value(properties.get(name)) for name in required if name in properties}


def _example(definition: ToolDefinition) -> str:
    return TOOL_CALL_PREFIX + dumps({"name": definition.name, "args": example_arguments(definition)})


def render_tool_prompt(tools: Iterable[ToolLike] | Mapping[str, ToolLike]) -> str:
    """Describe `tools` and the `TOOL_CALL:` format, for a system prompt.

    One line per tool (`- **name(param, optional?)**: description`), the call format with its
    rules, and an example call of the first tool. Returns `""` when there are no tools.

    Args:
        tools: `ToolDefinition`s, objects with a `.definition` (such as `toolwire.tools` tools),
            or a mapping of names to either.
    """
    found = definitions(tools)
    if not found:
        return ""
    lines = ["## Available tools", "", *(_tool_line(d) for d in found), "", _INSTRUCTIONS, "", "Example:", ""]
    lines.append(_example(found[0]))
    return "\n".join(lines) + "\n"
