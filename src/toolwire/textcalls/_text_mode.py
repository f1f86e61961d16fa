"""Tool modes over a neutral conversation: what a model without native tool calling sees.

In text mode the model never gets a `tools` parameter: the tools are described in the system
prompt, its calls are parsed from the reply text, and results go back as plain user text. The
history itself stays neutral (real `ToolCall`s and `ToolResult`s); only what is sent changes.
Used by the session and the agent alike.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

from toolwire.codecs.common.wire import dumps
from toolwire.textcalls._parse import parse_tool_calls
from toolwire.textcalls._render import TOOL_CALL_PREFIX, render_tool_prompt
from toolwire.textcalls._token_formats import split_harmony_channels
from toolwire.types import (
    AssistantMessage,
    Message,
    Response,
    StopReason,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)

__all__ = [
    "TOOL_MODES",
    "ToolMode",
    "append_result_text",
    "calls_from_text",
    "result_message_text",
    "result_text",
    "to_text_messages",
]

ToolMode = Literal["native", "text", "auto", "constrained"]
TOOL_MODES: tuple[ToolMode, ...] = ("native", "text", "auto", "constrained")
RESULT_PREFIX = "TOOL_RESULT"

logger = logging.getLogger("toolwire.textcalls")


def result_text(result: ToolResult) -> str:
    """The text a result puts in front of the model (images are left out)."""
    if result.kind in ("text", "error"):
        return str(result.value)
    if result.kind == "data":
        return dumps(result.value)
    return "\n".join(p.text for p in result.value if isinstance(p, TextPart))


def to_text_messages(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> list[Message]:
    """The conversation as a model without native tool calling should see it."""
    prompt = render_tool_prompt(list(tools)) if tools else ""
    out: list[Message] = []
    system_done = False
    for message in messages:
        if isinstance(message, SystemMessage) and not system_done:
            out.append(SystemMessage(content=f"{message.content}\n\n{prompt}".strip()))
            system_done = True
        elif isinstance(message, AssistantMessage):
            out.append(_assistant_as_text(message))
        elif isinstance(message, ToolResult):
            append_result_text(out, result_message_text(message))
        else:
            out.append(message)
    if not system_done and prompt:
        out.insert(0, SystemMessage(content=prompt))
    return out


def _assistant_as_text(message: AssistantMessage) -> AssistantMessage:
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ToolCall):
            pieces.append("\n" + TOOL_CALL_PREFIX + dumps({"name": part.name, "args": part.arguments}))
    text = "".join(pieces).strip()
    return AssistantMessage(parts=[TextPart(text=text)] if text else [])


def result_message_text(result: ToolResult) -> str:
    """A result as the user text that carries it back (`TOOL_RESULT (result) for name [id]:`)."""
    label = "error" if result.kind == "error" else "result"
    return f"{RESULT_PREFIX} ({label}) for {result.name} [{result.tool_call_id}]:\n{result_text(result)}"


def append_result_text(out: list[Message], text: str) -> None:
    """Append a result's text to `out`: results of one turn go back as one user message."""
    last = out[-1] if out else None
    if isinstance(last, UserMessage) and isinstance(last.content, str) and last.content.startswith(RESULT_PREFIX):
        out[-1] = UserMessage(content=f"{last.content}\n\n{text}")
    else:
        out.append(UserMessage(content=text))


def calls_from_text(response: Response, tools: Sequence[ToolDefinition], path: str) -> Response:
    """The reply with tool calls parsed out of its text (text and auto modes).

    Each call's `metadata["textcalls"]["path"]` says which mode found it (for `--debug`).
    """
    remaining, calls = parse_tool_calls(response.text, list(tools))
    channels = split_harmony_channels(remaining)
    if not calls and channels is None:
        return response
    thinking: list[ThinkingPart] = []
    if channels is not None:
        reasoning, remaining = channels
        thinking = [ThinkingPart(text=reasoning)] if reasoning else []
    for call in calls:
        call.metadata.setdefault("textcalls", {})["path"] = path
        logger.debug("tool call %s found by %s parsing (%s)", call.name, path, call.metadata["textcalls"])
    others = [p for p in response.message.parts if not isinstance(p, TextPart | ToolCall)]
    text = [TextPart(text=remaining)] if remaining.strip() else []
    parts: list[TextPart | ThinkingPart | ToolCall] = [*others, *thinking, *text, *calls]
    message = AssistantMessage(parts=parts, metadata=response.message.metadata)
    end_turn = response.stop_reason == StopReason.END_TURN
    stop = StopReason.TOOL_USE if end_turn and calls else response.stop_reason
    return Response(
        message=message,
        stop_reason=stop,
        raw_stop_reason=response.raw_stop_reason if stop == response.stop_reason else None,
        usage=response.usage,
        model=response.model,
        id=response.id,
    )
