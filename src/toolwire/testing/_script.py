"""Scripted turns shared by the loopback server and the in-process model.

A script is a list of turns, consumed one per model call. A turn is a neutral `Response`
(or a plain `str`, a text reply), one of the failure turns below, or a callable that gets
the decoded `Request` and returns a turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from toolwire.codecs.common.stream_encoding import pieces
from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    AssistantMessage,
    Done,
    Request,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    Usage,
)

__all__ = ["Delay", "DropStream", "ErrorReply", "RawReply", "Turn", "reply", "resolve_turn", "stream_events"]


@dataclass(slots=True, kw_only=True)
class ErrorReply:
    """Answer with an HTTP error.

    Attributes:
        status: The HTTP status.
        message: The error text; rendered in the provider's own error shape when `body` is `None`.
        body: A body to send as is instead (a dict/list as JSON, a str as text).
        headers: Extra response headers, e.g. `{"retry-after": "0.1"}`.
    """

    status: int
    message: str = "scripted error"
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class DropStream:
    """Stream `response` but stop after `after` events.

    `clean=True` ends the HTTP body properly (a stream that simply stops before its end
    marker); `clean=False` closes the connection mid-body.
    """

    response: Response | str
    after: int
    clean: bool = False


@dataclass(slots=True, kw_only=True)
class Delay:
    """Wait `seconds` before answering with `then` (for timeout tests)."""

    seconds: float
    then: Turn


@dataclass(slots=True, kw_only=True)
class RawReply:
    """Send these exact bytes (for malformed streams and hand-written payloads)."""

    body: str | bytes
    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)


Turn: TypeAlias = (
    "Response | str | ErrorReply | DropStream | Delay | RawReply | BaseException | Callable[[Request], Turn]"
)


def reply(
    text: str = "",
    tool_calls: Sequence[ToolCall] = (),
    *,
    usage: Usage | None = None,
    id: str | None = None,
    model: str | None = None,
) -> Response:
    """A reply with some text and/or tool calls, with the stop reason that goes with them."""
    parts: list[TextPart | ThinkingPart | ToolCall] = [TextPart(text=text)] if text else []
    parts.extend(tool_calls)
    return Response(
        message=AssistantMessage(parts=parts),
        stop_reason=StopReason.TOOL_USE if tool_calls else StopReason.END_TURN,
        usage=usage,
        model=model,
        id=id,
    )


def resolve_turn(turn: Turn, request: Request) -> Turn:
    """Call callable turns until a plain one comes out; a `str` becomes a text `Response`."""
    while callable(turn) and not isinstance(turn, BaseException):
        turn = turn(request)
    if isinstance(turn, str):
        return reply(turn)
    return turn


def stream_events(response: Response) -> list[StreamEvent]:
    """The neutral events a streamed `response` produces: text in a few chunks, calls in fragments, `Done`."""
    events: list[StreamEvent] = []
    index = 0
    for part in response.message.parts:
        if isinstance(part, TextPart):
            events.extend(TextDelta(chunk) for chunk in pieces(part.text))
        elif isinstance(part, ThinkingPart):
            events.extend(ThinkingDelta(chunk) for chunk in pieces(part.text))
        else:
            events.append(ToolCallDelta(index, part.id, part.name, ""))
            events.extend(ToolCallDelta(index, None, None, chunk) for chunk in pieces(dumps(part.arguments), 2))
            index += 1
    events.append(Done(response))
    return events
