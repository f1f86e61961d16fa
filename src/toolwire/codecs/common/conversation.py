"""Rewrites of a whole conversation that several wires need before encoding."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from toolwire.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
)

__all__ = ["results_in_call_order", "split_leading_system", "unique_call_ids"]


def split_leading_system(messages: list[Message]) -> tuple[list[str], list[Message]]:
    """The texts of the system messages that open the conversation, and the messages after them.

    For wires with one top-level system prompt (Anthropic `system`, Responses `instructions`)
    that also take system messages later on, in place.
    """
    leading = next((i for i, m in enumerate(messages) if not isinstance(m, SystemMessage)), len(messages))
    return [m.content for m in messages[:leading] if isinstance(m, SystemMessage)], messages[leading:]


def results_in_call_order(messages: list[Message]) -> list[Message]:
    """The conversation with each run of tool results sorted into the order of the calls they answer.

    For wires that pair results with calls by position or by name (Ollama's `tool_name`): results
    given out of order would otherwise be attached to the wrong call. Results that answer no call
    of the turn keep their place after the others.
    """
    out: list[Message] = []
    order: dict[str, int] = {}
    run: list[ToolResult] = []

    def flush() -> None:
        ordered: list[ToolResult] = sorted(run, key=lambda r: order.get(r.tool_call_id, len(order)))
        out.extend(ordered)
        run.clear()

    for message in messages:
        if isinstance(message, ToolResult):
            run.append(message)
            continue
        flush()
        if isinstance(message, AssistantMessage):
            order = {c.id: i for i, c in enumerate(message.tool_calls)}
        out.append(message)
    flush()
    return out


def unique_call_ids(messages: list[Message], wire_id: Callable[[str], str]) -> list[Message]:
    """The conversation with call ids made acceptable (`wire_id`) and unique, results rewritten to match.

    Some servers reuse ids across responses (Bedrock Mantle's `call_0`, pydantic-ai #6536) or
    within one; providers that require unique ids (Anthropic: "tool_use ids must be unique")
    would reject such a history. A repeated id gets a deterministic `_t<message index>` suffix,
    and each result follows the call it answers in its turn. Unchanged messages are reused.
    """
    all_ids = [c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls]
    unique = set(all_ids)
    if len(unique) == len(all_ids) and all(wire_id(i) == i for i in unique) and _results_known(messages, unique):
        return messages  # the common case: nothing to rewrite
    seen: set[str] = set()
    turn: dict[str, list[str]] = {}
    out: list[Message] = []
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            turn = {}
            parts = [
                _unique_call(p, index, wire_id, seen, turn) if isinstance(p, ToolCall) else p for p in message.parts
            ]
            if any(a is not b for a, b in zip(parts, message.parts, strict=True)):
                message = dataclasses.replace(message, parts=parts)
        elif isinstance(message, ToolResult):
            ids = turn.get(message.tool_call_id)
            new = (ids.pop(0) if len(ids) > 1 else ids[0]) if ids else wire_id(message.tool_call_id)
            if new != message.tool_call_id:
                message = dataclasses.replace(message, tool_call_id=new)
        out.append(message)
    return out


def _results_known(messages: list[Message], ids: set[str]) -> bool:
    return all(m.tool_call_id in ids for m in messages if isinstance(m, ToolResult))


def _unique_call(
    call: ToolCall, index: int, wire_id: Callable[[str], str], seen: set[str], turn: dict[str, list[str]]
) -> ToolCall:
    new = wire_id(call.id)
    if new in seen:
        new = f"{new}_t{index}"
        while new in seen:
            new += "x"
    seen.add(new)
    turn.setdefault(call.id, []).append(new)
    return call if new == call.id else dataclasses.replace(call, id=new)
