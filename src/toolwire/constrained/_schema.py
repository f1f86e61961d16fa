"""One JSON Schema for a whole reply: a final answer, or calls of the request's tools.

The reply is a JSON object with exactly one key, so the model's first real choice, right
after `{"`, is whether to answer or to call:

    {"answer": "..."}
    {"tool_calls": [{"name": "<a tool>", "arguments": {<that tool's parameters>}}, ...]}

Each call is one alternative per tool, with `name` a constant written before `arguments`, so
a model picks the tool first and its arguments are then held to that tool's schema. The call
list has at least one call (an empty list would be an answer in disguise) and at most one when
`parallel_tool_calls` is false. `tool_choice` narrows it: `none` sends no schema at all,
`required` removes the answer, a named tool leaves only that tool's calls.

Imports only `toolwire.types`, this package's `_loosen` and the standard library.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolwire.constrained._loosen import PORTABLE, SchemaSupport, loosen
from toolwire.types import NamedToolChoice, ToolChoice, ToolDefinition

__all__ = ["ANSWER_KEY", "CALLS_KEY", "ReplySchema", "reply_schema"]

ANSWER_KEY = "answer"
CALLS_KEY = "tool_calls"

logger = logging.getLogger("toolwire.constrained")


@dataclass(frozen=True, slots=True)
class ReplySchema:
    """The schema a reply must match, and what it lets the model do.

    Attributes:
        schema: The JSON Schema, already cut to what the server's engine enforces.
        tools: The tools the model may call (one, with a named `tool_choice`).
        answer_allowed: Whether a final answer without calls is allowed.
        max_calls: At most this many calls (None: no limit).
    """

    schema: dict[str, Any]
    tools: tuple[ToolDefinition, ...]
    answer_allowed: bool
    max_calls: int | None


def reply_schema(
    tools: Sequence[ToolDefinition],
    tool_choice: ToolChoice | None = None,
    *,
    parallel_tool_calls: bool | None = None,
    support: SchemaSupport = PORTABLE,
) -> ReplySchema | None:
    """The reply schema for a request's tools, or None when nothing is to be constrained.

    Raises:
        ValueError: `tool_choice` names a tool that is not among `tools`.
    """
    if not tools or tool_choice == "none":
        return None
    offered = _offered(tools, tool_choice)
    max_calls = 1 if parallel_tool_calls is False else None
    calls: dict[str, Any] = {"type": "array", "items": _call_items(offered, support), "minItems": 1}
    if max_calls is not None:
        calls["maxItems"] = max_calls
    calls_reply = _one_key(CALLS_KEY, calls)
    answer_allowed = tool_choice in (None, "auto")
    schema = {"anyOf": [_one_key(ANSWER_KEY, {"type": "string"}), calls_reply]} if answer_allowed else calls_reply
    return ReplySchema(schema=schema, tools=tuple(offered), answer_allowed=answer_allowed, max_calls=max_calls)


def _offered(tools: Sequence[ToolDefinition], tool_choice: ToolChoice | None) -> list[ToolDefinition]:
    if not isinstance(tool_choice, NamedToolChoice):
        return list(tools)
    chosen = [tool for tool in tools if tool.name == tool_choice.name]
    if not chosen:
        names = ", ".join(repr(tool.name) for tool in tools)
        raise ValueError(
            f"tool_choice names {tool_choice.name!r}, which is not among the tools ({names}); "
            "name one of them or pass 'auto'."
        )
    return chosen


def _call_items(tools: Sequence[ToolDefinition], support: SchemaSupport) -> dict[str, Any]:
    alternatives = [_call_schema(tool, support) for tool in tools]
    return alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}


def _call_schema(tool: ToolDefinition, support: SchemaSupport) -> dict[str, Any]:
    arguments, notes = loosen(tool.parameters or {"type": "object", "properties": {}}, support)
    for note in notes:
        logger.debug(
            "constrained mode: tool %r: %s (its calls are still validated against its own schema)", tool.name, note
        )
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": arguments},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _one_key(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {key: value}, "required": [key], "additionalProperties": False}
