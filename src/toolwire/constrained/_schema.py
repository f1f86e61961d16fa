"""One JSON Schema for a whole reply: how many calls, then the calls; "no tool fits" is one of them.

    {"call_count": 2, "tool_calls": [{"name": "<a tool>", "arguments": {<its parameters>}}, {...}]}
    {"call_count": 1, "tool_calls": [{"name": "no_tool_fits", "arguments": {"reply": "..."}}]}

Why this shape (measured on SmolLM2-135M-Instruct, bench/README.md "Constrained mode"):

- The count comes first, and each count is its own alternative holding exactly that many calls.
  A small model under a grammar that lets a list go on repeats its last call instead of closing
  the list; asked for the count first, it decides how many things the user asked for while it
  still reads the question, and the grammar then closes the list on time.
- A final answer is a call of the pseudo-tool `no_tool_fits`, listed with the tools. Offered a
  separate `{"answer": ...}` object, a small model takes it for nearly every question (it is
  what chat replies look like); choosing among tool names it matches the question to a name.
- Within a call, `name` is a constant written before `arguments`, so the model picks the tool
  first and its arguments are then held to that tool's schema.
- The call alternatives are written once, as `$defs.call`, and every count refers to them
  (where the engine resolves `$ref`, `SchemaSupport.refs`): repeated per count, the tools'
  schemas made the grammar four times their size for no change in what the model may write.

`tool_choice` narrows it: `none` sends no schema at all, `required` drops `no_tool_fits`, a named
tool leaves only that tool; `parallel_tool_calls=False` leaves only the count 1.

Imports only `toolwire.types`, this package's `_loosen` and the standard library.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolwire.constrained._loosen import PORTABLE, SchemaSupport, loosen
from toolwire.types import NamedToolChoice, ToolChoice, ToolDefinition

__all__ = [
    "ANSWER_ARGUMENT",
    "CALLS_KEY",
    "COUNT_KEY",
    "MAX_CALLS",
    "NO_TOOL",
    "ReplySchema",
    "no_tool_definition",
    "reply_schema",
]

COUNT_KEY = "call_count"
CALL_DEF = "call"
CALLS_KEY = "tool_calls"
NO_TOOL = "no_tool_fits"
ANSWER_ARGUMENT = "reply"
MAX_CALLS = 4
"""The most calls one reply may hold unless the caller says otherwise."""

logger = logging.getLogger("toolwire.constrained")


@dataclass(frozen=True, slots=True)
class ReplySchema:
    """The schema a reply must match, and what it lets the model do.

    Attributes:
        schema: The JSON Schema, already cut to what the server's engine enforces.
        tools: The tools the model may call (one, with a named `tool_choice`).
        answer_allowed: Whether a final answer without calls is allowed (`no_tool` is offered).
        max_calls: At most this many calls in one reply.
        no_tool: The name of the pseudo-tool that carries a final answer (`no_tool_fits`, unless
            a real tool has that name).
    """

    schema: dict[str, Any]
    tools: tuple[ToolDefinition, ...]
    answer_allowed: bool
    max_calls: int
    no_tool: str


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
    no_tool = _free_name(NO_TOOL, {tool.name for tool in tools})
    alternatives = [_call_schema(tool, support) for tool in offered]
    if answer_allowed:
        alternatives.append(_call_schema(no_tool_definition(no_tool), support))
    items = alternatives[0] if len(alternatives) == 1 else {"anyOf": alternatives}
    most = 1 if parallel_tool_calls is False else max(1, max_calls)
    shared = most > 1 and support.refs
    call = {"$ref": f"#/$defs/{CALL_DEF}"} if shared else items
    counts = [_counted(count, call) for count in range(1, most + 1)]
    schema = counts[0] if len(counts) == 1 else {"anyOf": counts}
    return ReplySchema(
        schema={"$defs": {CALL_DEF: items}, **schema} if shared else schema,
        tools=tuple(offered),
        answer_allowed=answer_allowed,
        max_calls=most,
        no_tool=no_tool,
    )


def no_tool_definition(name: str = NO_TOOL) -> ToolDefinition:
    """The pseudo-tool whose call is a final answer."""
    return ToolDefinition(
        name=name,
        description="use this when none of the other tools fits the request",
        parameters={
            "type": "object",
            "properties": {ANSWER_ARGUMENT: {"type": "string"}},
            "required": [ANSWER_ARGUMENT],
        },
    )


def _free_name(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    return name


def _counted(count: int, items: dict[str, Any]) -> dict[str, Any]:
    calls = {"type": "array", "items": items, "minItems": count, "maxItems": count}
    return {
        "type": "object",
        "properties": {COUNT_KEY: {"const": count}, CALLS_KEY: calls},
        "required": [COUNT_KEY, CALLS_KEY],
        "additionalProperties": False,
    }


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
