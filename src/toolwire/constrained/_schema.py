"""One JSON Schema for a whole reply: a list of calls, empty when no tool fits.

    [{"name": "<a tool>", "arguments": {<its parameters>}}, ...]
    []

Why this shape (measured on SmolLM2-135M-Instruct, bench/bfcl/README.md "The model's own tool
format"):

- It is the format small open models were tuned on for function calling (APIGen's, which
  SmolLM2's own chat template asks for): a JSON list of `{"name", "arguments"}` calls, `[]` when
  no function fits. The model decides whether to call where it learned to, right after `[`.
  Against the shapes tried before it (a call count written first, a `no_tool_fits` pseudo-tool
  among the tools) it leaves the list empty where no tool fits twice as often, and gets parallel
  questions right; wrapped in an object it loses both.
- A list carries no answer, so `[]` is the model's "no call": the answer then comes from a plain
  request without the schema (`answer_request`), and streams as the model writes it.
- Within a call, `name` is a constant written before `arguments`, so the model picks the tool
  first and its arguments are then held to that tool's schema.
- At most `max_calls` calls (4): a grammar that lets a list go on lets a small model repeat its
  last call; identical calls are kept once when the reply is read.

`tool_choice` narrows it: `none` sends no schema at all, `required` asks for at least one call, a
named tool leaves only that tool; `parallel_tool_calls=False` allows one call.

Imports only `toolwire.types`, this package's `_loosen` and the standard library.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolwire.constrained._loosen import PORTABLE, SchemaSupport, loosen
from toolwire.types import NamedToolChoice, ToolChoice, ToolDefinition

__all__ = ["MAX_CALLS", "ReplySchema", "reply_schema"]

MAX_CALLS = 4
"""The most calls one reply may hold unless the caller says otherwise."""

logger = logging.getLogger("toolwire.constrained")


@dataclass(frozen=True, slots=True)
class ReplySchema:
    """The schema a reply must match, and what it lets the model do.

    Attributes:
        schema: The JSON Schema, already cut to what the server's engine enforces.
        tools: The tools the model may call (one, with a named `tool_choice`).
        answer_allowed: Whether the model may call nothing (`[]`) and answer instead.
        max_calls: At most this many calls in one reply.
    """

    schema: dict[str, Any]
    tools: tuple[ToolDefinition, ...]
    answer_allowed: bool
    max_calls: int


def reply_schema(
    tools: Sequence[ToolDefinition],
    tool_choice: ToolChoice | None = None,
    *,
    parallel_tool_calls: bool | None = None,
    max_calls: int = MAX_CALLS,
    support: SchemaSupport = PORTABLE,
) -> ReplySchema | None:
    """The reply schema for a request's tools, or None when nothing is to be constrained.

    Raises:
        ValueError: `tool_choice` names a tool that is not among `tools`.
    """
    if not tools or tool_choice == "none":
        return None
    offered = _offered(tools, tool_choice)
    answer_allowed = tool_choice in (None, "auto")
    calls = [_call_schema(tool, support) for tool in offered]
    most = 1 if parallel_tool_calls is False else max(1, max_calls)
    schema = {
        "type": "array",
        "items": calls[0] if len(calls) == 1 else {"anyOf": calls},
        "minItems": 0 if answer_allowed else 1,
        "maxItems": most,
    }
    return ReplySchema(schema=schema, tools=tuple(offered), answer_allowed=answer_allowed, max_calls=most)


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
