"""Reading one toolwire turn out of a CLI session's event stream.

A toolwire turn ends when the CLI asks for the tools the model called (every
`external_tool.requested` of one `assistant.message`: parallel calls arrive together before
any answer) or when the session goes idle (`session.idle`, the "done"
signal; after a `session.error` it is a failed request). Events of sub-agents
(`agentId`) and event types toolwire does not know are ignored.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from toolwire.codecs.common.wire import dumps
from toolwire.copilot._rpc import Closed
from toolwire.errors import AuthenticationError, ProviderError, RateLimitError, TimeoutError, ToolwireError
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
    Usage,
)

__all__ = ["SEPARATOR", "TurnReader", "session_error"]

logger = logging.getLogger("toolwire.copilot")

SEPARATOR = "\n\n"
"""Put between the texts of two assistant messages of one turn (the CLI's own tool turns)."""

_AUTH_WORDS = ("authenticat", "oauth token", "hmac key", "not logged in", "unauthorized")


def session_error(data: dict[str, Any]) -> ToolwireError:
    """The typed error for a `session.error` event (`errorType`, `message`, `statusCode?`)."""
    kind = str(data.get("errorType") or "unknown")
    text = str(data.get("message") or "no message")
    status = data.get("statusCode") if isinstance(data.get("statusCode"), int) else None
    message = f"The Copilot CLI reported a {kind!r} error: {text!r}"
    if kind == "authentication" or any(word in text.lower() for word in _AUTH_WORDS):
        fix = "; sign in with `copilot login`, or pass token=... to connect()."
        return AuthenticationError(message + fix, provider="copilot", status=status, body=data)
    if kind in ("rate_limit", "quota") or status == 429:
        return RateLimitError(
            message + "; wait and retry, or check your Copilot quota.", provider="copilot", status=status, body=data
        )
    return ProviderError(message + "; retry, or check the CLI's logs.", provider="copilot", status=status, body=data)


@dataclass(slots=True)
class _Calls:
    """The calls of the current assistant message and the CLI request ids received for them."""

    expected: dict[str, ToolCall] = field(default_factory=dict)
    requested: dict[str, str] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return bool(self.expected) and all(call_id in self.requested for call_id in self.expected)


class TurnReader:
    """Consumes a session's queue until the turn ends; yields neutral events ending in `Done`.

    Args:
        queue: The session's events (from `RpcConnection.subscribe`).
        pending: Where the request ids of calls handed to toolwire are recorded
            (`toolCallId -> requestId`), so they are always answered later.
        timeout: Seconds to wait for the next event; `None` waits forever.
        on_permission: Answers a `permission.requested` event.
        model: The model name to report when the CLI names none.
    """

    def __init__(
        self,
        queue: asyncio.Queue[dict[str, Any] | Closed],
        pending: dict[str, str],
        *,
        timeout: float | None,
        on_permission: Callable[[dict[str, Any]], Awaitable[None]],
        model: str,
    ) -> None:
        self.queue = queue
        self.pending = pending
        self.timeout = timeout
        self.on_permission = on_permission
        self.model = model
        self.text = ""
        self.usage = Usage()
        self.calls = _Calls()
        self.error: dict[str, Any] | None = None
        self.message_id: str | None = None
        self._current: str | None = None
        self._seen: dict[str, str] = {}

    async def events(self) -> AsyncIterator[StreamEvent]:
        """Yield text deltas as they come, then the tool-call deltas, then `Done`."""
        while True:
            event = await self._next()
            kind, data = event.get("type"), event.get("data")
            if event.get("agentId") is not None or not isinstance(data, dict):
                continue  # sub-agent events belong to the CLI's own loop
            for out in self._text_events(kind, data):
                yield out
            response = await self._handle(kind, data)
            if response is not None:
                for index, call in enumerate(response.tool_calls):
                    yield ToolCallDelta(index, call.id, call.name, dumps(call.arguments))
                yield Done(response)
                return

    async def _next(self) -> dict[str, Any]:
        try:
            async with asyncio.timeout(self.timeout):
                item = await self.queue.get()
        except builtins.TimeoutError:
            raise TimeoutError(
                f"The Copilot CLI sent no event for {self.timeout} s; raise timeout=... in connect().",
                provider="copilot",
            ) from None
        if isinstance(item, Closed):
            self.queue.put_nowait(item)  # later readers of this session see the end too
            raise item.error
        return item

    def _text_events(self, kind: Any, data: dict[str, Any]) -> list[StreamEvent]:
        message_id = str(data.get("messageId") or "")
        if kind == "assistant.message_delta" and isinstance(data.get("deltaContent"), str):
            return self._append(message_id, data["deltaContent"])
        if kind == "assistant.message" and isinstance(data.get("content"), str):
            self.message_id = message_id or self.message_id
            streamed = self._seen.get(message_id, "")
            if data["content"].startswith(streamed):
                return self._append(message_id, data["content"][len(streamed) :])
            logger.debug("Copilot message %r differs from its deltas; keeping the deltas.", message_id)
        return []

    def _append(self, message_id: str, piece: str) -> list[StreamEvent]:
        if not piece:
            return []
        events: list[StreamEvent] = []
        if self._current != message_id:
            if self.text:
                self.text += SEPARATOR
                events.append(TextDelta(SEPARATOR))
            self._current = message_id
        self._seen[message_id] = self._seen.get(message_id, "") + piece
        self.text += piece
        events.append(TextDelta(piece))
        return events

    async def _handle(self, kind: Any, data: dict[str, Any]) -> Response | None:
        match kind:
            case "assistant.message":
                self._expect(data.get("toolRequests"))
            case "assistant.usage":
                self._add_usage(data)
            case "external_tool.requested":
                return self._requested(data)
            case "tool.execution_complete":
                # A call the CLI settled itself (denied by its permission gate): not ours to run.
                call_id = data.get("toolCallId")
                if call_id in self.calls.expected and call_id not in self.calls.requested:
                    del self.calls.expected[call_id]
                    return (
                        self._response(StopReason.TOOL_USE, "external_tool.requested") if self.calls.complete else None
                    )
            case "permission.requested":
                await self.on_permission(data)
            case "session.error":
                self.error = data
            case "session.idle":
                return self._idle(data)
        return None

    def _expect(self, requests: Any) -> None:
        self.calls = _Calls()
        for request in requests if isinstance(requests, list) else []:
            if isinstance(request, dict) and isinstance(request.get("toolCallId"), str):
                self.calls.expected[request["toolCallId"]] = _call(request, "name")

    def _requested(self, data: dict[str, Any]) -> Response | None:
        call_id, request_id = data.get("toolCallId"), data.get("requestId")
        if not isinstance(call_id, str) or not isinstance(request_id, str):
            return None
        if call_id not in self.calls.expected:
            self.calls.expected[call_id] = _call(data, "toolName")
        self.calls.requested[call_id] = request_id
        self.pending[call_id] = request_id
        return self._response(StopReason.TOOL_USE, "external_tool.requested") if self.calls.complete else None

    def _idle(self, data: dict[str, Any]) -> Response:
        if self.error is not None:
            raise session_error(self.error)
        if data.get("aborted"):
            return self._response(StopReason.OTHER, "aborted")
        self.calls = _Calls()
        return self._response(StopReason.END_TURN, "session.idle")

    def _add_usage(self, data: dict[str, Any]) -> None:
        for name, key in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens")):
            value = data.get(key)
            if isinstance(value, int):
                setattr(self.usage, name, (getattr(self.usage, name) or 0) + value)
        cached = data.get("cacheReadTokens")
        if isinstance(cached, int):
            self.usage.cache_read_tokens = (self.usage.cache_read_tokens or 0) + cached
        if isinstance(data.get("model"), str):
            self.model = data["model"]

    def _response(self, stop: StopReason, raw: str) -> Response:
        parts: list[TextPart | ToolCall] = [TextPart(text=self.text)] if self.text else []
        if stop == StopReason.TOOL_USE:
            parts.extend(c for i, c in self.calls.expected.items() if i in self.calls.requested)
        has_usage = self.usage.input_tokens is not None or self.usage.output_tokens is not None
        return Response(
            message=AssistantMessage(parts=list(parts)),
            stop_reason=stop,
            raw_stop_reason=raw,
            usage=self.usage if has_usage else None,
            model=self.model,
            id=self.message_id,
        )


def _call(data: dict[str, Any], name_key: str) -> ToolCall:
    arguments = data.get("arguments")
    return ToolCall(
        id=str(data["toolCallId"]),
        name=str(data.get(name_key) or ""),
        arguments=arguments if isinstance(arguments, dict) else {},
    )
