"""MCP tools and results in toolwire's terms: one MCP tool becomes one ordinary `Tool`.

The mapping: `inputSchema` becomes the tool's parameters (the codecs adapt it per
provider through `toolwire.schema`, as for any tool); `readOnlyHint: true` gives risk `low`,
anything else `high`; a `CallToolResult` becomes a `text`, `data`, `multimodal` or `error`
result, capped by `_truncate` (the whole kept in the run's tool-output cache). Names that clash
get the server's name as a prefix (`fs__read_file`). Imports the `mcp` SDK's types,
`toolwire.tools` and `toolwire.cache`, never a codec or the transport.
"""

from __future__ import annotations

import base64
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolwire.cache import CACHE, ToolOutputCache
from toolwire.mcp._truncate import cap_result, cap_text
from toolwire.tools import Depends, Tool, ToolError
from toolwire.tools._signature import execute_plan
from toolwire.types import ImagePart, TextPart, ToolDefinition

__all__ = [
    "CallFn",
    "ToolPage",
    "ToolSpec",
    "build_tool",
    "prefixed_names",
    "result_value",
    "safe_name",
    "tool_risk",
    "usable_tools",
]

PREFIX_SEPARATOR = "__"

CallFn = Callable[[str, dict[str, Any]], Awaitable[types.CallToolResult]]
"""Sends one `tools/call` (the MCP tool's own name, the arguments) and returns the server's result."""

_BAD_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class _Arguments(BaseModel):
    """Any JSON object: the MCP server validates the arguments against its own schema."""

    model_config = ConfigDict(extra="allow")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One MCP tool as listed by its server, with the name the model will call it by."""

    server: str
    tool: types.Tool
    name: str


def safe_name(name: str) -> str:
    """`name` in the alphabet every provider accepts (`^[a-zA-Z0-9_-]{1,64}$`)."""
    return (_BAD_NAME.sub("_", name) or "tool")[:64]


def tool_risk(tool: types.Tool) -> str:
    """`low` only when the server says the tool is read-only; a missing hint means side effects."""
    annotations = tool.annotations
    return "low" if annotations is not None and annotations.read_only_hint is True else "high"


def prefixed_names(specs: Iterable[tuple[str, types.Tool]], reserved: Iterable[str] = ()) -> list[ToolSpec]:
    """Name each `(server, tool)`; names that clash across servers or with `reserved` get a prefix.

    Every holder of a clashing name is prefixed (`fs__read_file`, `git__read_file`), so no server's
    tool silently shadows another's; a name still taken after that gets a counter.
    """
    pairs = list(specs)
    taken = set(reserved)
    counts = Counter(safe_name(tool.name) for _, tool in pairs)
    named: list[ToolSpec] = []
    for server, tool in pairs:
        base = safe_name(tool.name)
        name = base
        if counts[base] > 1 or base in taken:
            name = safe_name(f"{server}{PREFIX_SEPARATOR}{base}")
        unique, n = name, 2
        while unique in taken:
            unique, n = safe_name(f"{name}_{n}"), n + 1
        taken.add(unique)
        named.append(ToolSpec(server=server, tool=tool, name=unique))
    return named


class ToolPage(BaseModel):
    """One `tools/list` page read leniently: each tool is checked on its own by `usable_tools`."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    tools: list[Any]
    next_cursor: str | None = Field(default=None, alias="nextCursor")


def usable_tools(listed: Sequence[Any]) -> tuple[list[types.Tool], list[str]]:
    """The tools toolwire can offer, and one sentence for each it skips (named, with the reason).

    One tool with a broken `inputSchema` must not cost the server its other tools: the SDK
    would refuse the whole list, and a provider the whole request.
    """
    import jsonschema  # a toolwire dependency (constrained mode validates with it too)

    usable: list[types.Tool] = []
    skipped: list[str] = []
    for raw in listed:
        name = raw.get("name") if isinstance(raw, dict) else None
        try:
            tool = types.Tool.model_validate(raw)
            schema = dict(tool.input_schema)
            jsonschema.validators.validator_for(schema).check_schema(schema)
            if schema.get("type", "object") != "object":
                raise ValueError(f"its type is {schema.get('type')!r}, not 'object'")
        except (ValidationError, jsonschema.SchemaError, ValueError) as exc:
            reason = exc.message if isinstance(exc, jsonschema.SchemaError) else str(exc).splitlines()[0]
            skipped.append(f"tool {name!r} was skipped: its inputSchema is invalid ({reason})")
            continue
        usable.append(tool)
    return usable, skipped


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema as the tool's parameters; an MCP schema is always an object schema."""
    parameters = {key: value for key, value in schema.items() if key != "$schema"}
    parameters.setdefault("type", "object")
    if parameters.get("type") == "object":
        parameters.setdefault("properties", {})
    return parameters


def build_tool(spec: ToolSpec, call: CallFn, *, server_label: str, max_result_chars: int | None = None) -> Tool:
    """An ordinary `Tool` whose execution is one `tools/call` to the server.

    A result over `max_result_chars` characters reaches the model clipped, the whole of it in
    the run's tool-output cache (`None`: no cap).
    """
    remote = spec.tool.name

    async def execute(data: _Arguments, cache: ToolOutputCache = Depends(CACHE)) -> Any:
        result = await call(remote, dict(data.model_extra or {}))
        try:
            value = result_value(result, server_label, remote)
        except ToolError as exc:
            if max_result_chars is None:
                raise
            raise ToolError(cap_text(exc.message, max_result_chars, cache)) from None
        return cap_result(value, max_result_chars, cache)

    description = spec.tool.description
    if description is None and spec.tool.annotations is not None:
        description = spec.tool.annotations.title
    definition = ToolDefinition(
        name=spec.name, description=description, parameters=_parameters(dict(spec.tool.input_schema))
    )
    return Tool(
        definition=definition,
        risk="low" if tool_risk(spec.tool) == "low" else "high",
        input_model=_Arguments,
        function=execute,
        plan=execute_plan(execute, spec.name),
    )


# results


def result_value(result: types.CallToolResult, server: str, tool: str) -> Any:
    """What the tool returns: `str` (text), a JSON value (data) or parts (multimodal).

    Raises:
        ToolError: When the server flagged the result `isError`; its text is the message.
    """
    content = list(result.content)
    if result.is_error:
        text = "\n".join(_block_text(block) for block in content).strip()
        raise ToolError(text or f"MCP server {server} reported an error from tool {tool!r} without a message.")
    if any(isinstance(block, types.ImageContent) for block in content):
        return _parts(content)
    if result.structured_content is not None:
        return result.structured_content
    return "\n".join(_block_text(block) for block in content)


def _parts(content: Sequence[types.ContentBlock]) -> list[TextPart | ImagePart]:
    parts: list[TextPart | ImagePart] = []
    for block in content:
        if isinstance(block, types.ImageContent):
            parts.append(ImagePart(data=base64.b64decode(block.data), media_type=block.mime_type))
        else:
            parts.append(TextPart(text=_block_text(block)))
    return parts


def _block_text(block: types.ContentBlock) -> str:
    """A content block as text; what cannot be text is named (resources by their URI)."""
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ResourceLink):
        about = " — ".join(part for part in (block.name, block.description) if part)
        return f"[resource {block.uri}]" + (f" {about}" if about else "")
    if isinstance(block, types.EmbeddedResource):
        return _resource_text(block.resource)
    if isinstance(block, types.ImageContent):
        return f"[image {block.mime_type}, {_decoded_size(block.data)} bytes]"
    return f"[audio {block.mime_type}, {_decoded_size(block.data)} bytes]"


def _resource_text(resource: types.TextResourceContents | types.BlobResourceContents) -> str:
    mime = f" ({resource.mime_type})" if resource.mime_type else ""
    if isinstance(resource, types.TextResourceContents):
        return f"[resource {resource.uri}{mime}]\n{resource.text}"
    return f"[resource {resource.uri}{mime}, {_decoded_size(resource.blob)} bytes of binary data]"


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=")
