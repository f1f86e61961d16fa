"""Neutral values to the Copilot CLI's JSON shapes: tools, tool results, prompts.

The CLI keeps the conversation itself, so toolwire sends it only new user text and tool
results. When a conversation has history the CLI never saw (another provider's, a restored
session), it is replayed once as a transcript in the first prompt. Imports only the neutral
types and the shared JSON helper.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = ["encode_result", "encode_tool", "prompt_for", "split_system", "user_text"]

logger = logging.getLogger("toolwire.copilot")

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        logger.warning(message)


def encode_tool(definition: ToolDefinition, *, skip_permission: bool) -> dict[str, Any]:
    """A tool for `session.create`: the schema goes in `parameters` (quorum `protocol.rs`, python SDK).

    `overridesBuiltInTool` lets names such as `grep`, `glob` or `edit` replace the CLI's own
    tools instead of failing with "conflicts with a built-in tool" (quorum #250/#251).
    """
    tool: dict[str, Any] = {
        "name": definition.name,
        "description": definition.description or "",
        "parameters": definition.parameters or dict(_EMPTY_SCHEMA),
        "overridesBuiltInTool": True,
    }
    if skip_permission:
        tool["skipPermission"] = True
    return tool


def encode_result(result: ToolResult) -> dict[str, Any]:
    """The `result` object of `session.tools.handlePendingToolCall`.

    Errors use the object form with `resultType: failure`: with the bare `error` field the model
    only sees "Tool execution failed" (probed on CLI 1.0.102).
    """
    match result.kind:
        case "text":
            return {"textResultForLlm": result.value, "resultType": "success"}
        case "data":
            return {"textResultForLlm": dumps(result.value), "resultType": "success"}
        case "error":
            # Reviewer rejections go back as failures too: with `resultType: rejected` CLI 1.0.102
            # ends its loop without showing the model the reason (tests/copilot/test_real_cli.py).
            return {"textResultForLlm": result.value, "resultType": "failure", "error": result.value}
        case "multimodal":
            return {"textResultForLlm": _parts_text(result.value), "resultType": "success"}
    raise ValueError(f"Unknown ToolResult kind {result.kind!r}.")  # pragma: no cover - checked by ToolResult


def _parts_text(parts: Sequence[TextPart | ImagePart]) -> str:
    if any(isinstance(p, ImagePart) for p in parts):
        _warn_once("images", "The Copilot provider sends tool and user images as '[image omitted]' placeholders.")
    return "\n".join(p.text if isinstance(p, TextPart) else "[image omitted]" for p in parts)


def user_text(message: UserMessage) -> str:
    """A user message as the prompt text the CLI takes."""
    return message.content if isinstance(message.content, str) else _parts_text(message.content)


def split_system(messages: Sequence[Message]) -> tuple[str | None, list[Message]]:
    """The system prompt (all system messages joined) and the rest of the conversation."""
    system = [m.content for m in messages if isinstance(m, SystemMessage)]
    rest: list[Message] = [m for m in messages if not isinstance(m, SystemMessage)]
    return ("\n\n".join(system) if system else None), rest


def prompt_for(messages: Sequence[Message]) -> str:
    """The first prompt of a new CLI session: trailing user text, after a transcript of anything earlier."""
    tail = len(messages)
    while tail > 0 and isinstance(messages[tail - 1], UserMessage):
        tail -= 1
    asked = "\n\n".join(user_text(m) for m in messages[tail:] if isinstance(m, UserMessage))
    if tail == 0:
        return asked
    _warn_once(
        "transcript",
        "The Copilot CLI did not see this conversation's earlier turns; toolwire replays them as a transcript.",
    )
    lines = [_transcript_line(m) for m in messages[:tail]]
    ask = asked or "Continue from where the conversation left off."
    return "Earlier conversation (replayed as a transcript):\n\n" + "\n".join(lines) + "\n\nNow: " + ask


def _transcript_line(message: Message) -> str:
    match message:
        case UserMessage():
            return f"[user] {user_text(message)}"
        case AssistantMessage():
            calls = " ".join(_call_text(c) for c in message.tool_calls)
            return f"[assistant] {message.text}{' ' if message.text and calls else ''}{calls}"
        case ToolResult():
            return f"[tool result {message.name} {message.tool_call_id}] {encode_result(message)['textResultForLlm']}"
        case SystemMessage():
            return f"[system] {message.content}"
    raise TypeError(f"Not a message: {message!r}")  # pragma: no cover - Message is closed


def _call_text(call: ToolCall) -> str:
    return f"[called {call.name} {call.id} with {dumps(call.arguments)}]"
