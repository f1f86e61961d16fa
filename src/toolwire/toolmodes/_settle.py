"""Which calls read out of a reply's text may run: one rule for the text, auto and constrained modes.

A call is whole, or it never runs: one cut inside a string (or left open at the token limit)
gets `metadata["arguments_error"]` (`cut_off_error`, the rule native arguments follow too), so
the agent answers the model with an error result instead of running it. A caller that hands
calls on to someone else to run (the gateway) asks for `runnable_only`: a cut call, and a call
of a tool the request never offered, then come back as text naming the call, not as a call, so
no client runs what it never offered or what was cut. Calls the server returned natively are
the server's: they pass untouched. Imports the neutral types and `toolwire.codecs.common`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from toolwire.codecs.common.arguments import cut_off_error
from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    AssistantMessage,
    Done,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
)

__all__ = ["settle", "settle_events"]


def _written(call: ToolCall) -> bool:
    """Whether the call was read out of the reply's text (not returned natively by the server)."""
    return "textcalls" in call.metadata or "constrained" in call.metadata


def settle(response: Response, tools: Sequence[ToolDefinition], *, runnable_only: bool = False) -> Response:
    """`response` with its cut written calls marked, and (`runnable_only`) unrunnable ones as text."""
    offered = {tool.name for tool in tools}
    at_limit = response.stop_reason == StopReason.MAX_TOKENS
    unrunnable: list[ToolCall] = []
    for call in response.tool_calls:
        if not _written(call):
            continue
        raw = call.metadata.get("raw_arguments")
        cut = cut_off_error(raw, at_limit=at_limit) if isinstance(raw, str) else None
        if cut is not None:
            call.metadata["arguments_error"] = cut
        if runnable_only and (cut is not None or call.name not in offered):
            unrunnable.append(call)
    if not unrunnable:
        return response
    return _as_text(response, unrunnable, offered)


def _as_text(response: Response, unrunnable: list[ToolCall], offered: set[str]) -> Response:
    gone = {id(call) for call in unrunnable}
    parts = [p for p in response.message.parts if id(p) not in gone]
    parts.append(TextPart(text=_note(unrunnable, offered)))
    calls_left = any(isinstance(p, ToolCall) for p in parts)
    stop = response.stop_reason
    if stop == StopReason.TOOL_USE and not calls_left:
        stop = StopReason.END_TURN
    message = AssistantMessage(parts=parts, metadata=response.message.metadata)
    return dataclasses.replace(response, message=message, stop_reason=stop)


def _note(unrunnable: list[ToolCall], offered: set[str]) -> str:
    lines = []
    for call in unrunnable:
        why = "it was cut off before its end" if call.name in offered else "no tool of that name was offered"
        lines.append(f"[toolwire: a call of {call.name!r} was not passed on ({why}): {dumps(call.arguments)[:500]}]")
    return "\n" + "\n".join(lines)


def settle_events(
    events: Sequence[StreamEvent], tools: Sequence[ToolDefinition], *, runnable_only: bool = False
) -> Sequence[StreamEvent]:
    """One batch of a stream's events (written calls go out whole, with the `Done` that ends it), settled."""
    done = next((e for e in events if isinstance(e, Done)), None)
    if done is None:
        return events
    settled = settle(done.response, tools, runnable_only=runnable_only)
    if settled is done.response:
        return events
    kept = {call.id for call in settled.tool_calls}
    note = settled.message.parts[-1]  # what `_as_text` wrote
    assert isinstance(note, TextPart)
    out: list[StreamEvent] = []
    noted = False
    index = 0
    for event in events:
        if isinstance(event, ToolCallDelta | Done) and not noted:
            out.append(TextDelta(note.text))
            noted = True
        if isinstance(event, ToolCallDelta):
            if event.id in kept:
                out.append(dataclasses.replace(event, index=index))
                index += 1
            continue
        out.append(Done(settled) if event is done else event)
    return out
