"""Calls to a Responses client's namespaced tools go back under their namespace.

Codex groups some function tools in `namespace` tools (its sub-agent tools, MCP servers).
The Responses codec gives other providers one flat name per function (`ns__name`), so a
reply from them calls the flat name; a Responses client dispatches on `name` and
`namespace` apart and answers "unsupported call" to a flat one. The gateway knows which
tools the client sent, so it splits the names of calls to those tools: through the call's
metadata for a whole reply (the codec's encoder writes the namespace), and in the wire
events of a stream (whose encoder sees only names). Imports the Responses codec's naming rule.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolwire.codecs.openai_responses.items import namespaced
from toolwire.types import Response, ToolCall

__all__ = ["Namespaces", "namespaced_tools", "split_names", "with_namespaces"]

_CLIENT = "openai-responses"
Namespaces = dict[str, tuple[str, str]]  # flat name -> (namespace, name)


def namespaced_tools(protocol: str, body: dict[str, Any]) -> Namespaces:
    """The client's namespaced functions by flat name (none for other protocols)."""
    tools = body.get("tools") if protocol == _CLIENT else None
    found: Namespaces = {}
    for tool in tools if isinstance(tools, list) else ():
        if not (isinstance(tool, dict) and tool.get("type") == "namespace" and isinstance(tool.get("name"), str)):
            continue
        inner = tool.get("tools")
        for function in inner if isinstance(inner, list) else ():
            if isinstance(function, dict) and isinstance(function.get("name"), str):
                found[namespaced(tool["name"], function["name"])] = (tool["name"], function["name"])
    return found


def with_namespaces(response: Response, names: Namespaces) -> Response:
    """A whole reply whose calls to namespaced tools say their namespace (for the encoder)."""
    if not names or not any(call.name in names for call in response.message.tool_calls):
        return response
    parts = [_tagged(part, names) if isinstance(part, ToolCall) else part for part in response.message.parts]
    return replace(response, message=replace(response.message, parts=parts))


def _tagged(call: ToolCall, names: Namespaces) -> ToolCall:
    if call.name not in names:
        return call
    own = dict(call.metadata.get(_CLIENT) or {}) | {"namespace": names[call.name][0]}
    return replace(call, metadata=call.metadata | {_CLIENT: own})


def split_names(data: dict[str, Any], names: Namespaces) -> dict[str, Any]:
    """One Responses stream event with its calls to namespaced tools split (in place)."""
    if not names:
        return data
    if data.get("type") == "response.function_call_arguments.done" and data.get("name") in names:
        data["name"] = names[data["name"]][1]
    _split_item(data.get("item"), names)
    response = data.get("response")
    output = response.get("output") if isinstance(response, dict) else None
    for item in output if isinstance(output, list) else ():
        _split_item(item, names)
    return data


def _split_item(item: Any, names: Namespaces) -> None:
    if isinstance(item, dict) and item.get("type") == "function_call" and item.get("name") in names:
        item["namespace"], item["name"] = names[item["name"]]
