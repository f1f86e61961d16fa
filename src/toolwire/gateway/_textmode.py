"""Tool modes `text`, `auto` and `constrained` behind the gateway: native tool calls for models without a tool API.

The request goes upstream with the tools described in the system prompt (and past calls and
results as text); the reply's text is parsed with `toolwire.textcalls`, and the calls found
reach the client as native tool calls. Streamed, text that cannot be part of a call goes out
as it arrives; from the first thing that looks like the start of a call (a `TOOL_CALL:`
marker, a tag, a fence, a line opening with `{` or `[`), text is held until the reply ends
and is parsed then.

`constrained` sends the request as `toolwire.constrained` builds it (tools in the prompt, the
reply schema as `response_format`, in the form the upstream's profile names) and turns the
JSON reply into native calls, whole at the end (`ReplyFilter`); when the model calls nothing, the
answer's request goes upstream next (`answer_upstream`). Imports the neutral types, `toolwire.textcalls` and
`toolwire.constrained` only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from toolwire.codecs.common.wire import dumps
from toolwire.constrained import ReplySchema, SchemaSupport, answer_request, constrained_request
from toolwire.textcalls import calls_from_text, to_text_messages
from toolwire.types import Done, Request, Response, StreamEvent, TextDelta, ToolCallDelta, ToolDefinition

__all__ = ["CallFilter", "EventFilter", "constrained_upstream", "parse_reply", "text_request"]

# Where a written call may begin, in any format `parse_tool_calls` reads.
_START = re.compile(r"TOOL_CALL|\[TOOL_CALLS\]|<tool_call|<function|<\||<\uff5c|```|~~~|(?:^|\n)[ \t]*[\[{]")
_TOOL_KEYS = frozenset({"tools", "tool_choice", "toolConfig"})
_PROMPT_KEYS = frozenset({"system", "systemInstruction", "instructions", "contents", "messages", "input"})
_FORMAT_KEYS = frozenset({"response_format", "format"})
_TAIL = len("[TOOL_CALLS]")  # unsent text kept back in case a marker is split across deltas


class EventFilter(Protocol):
    """Rewrites one reply's stream events for a tool mode (`CallFilter`, `ReplyFilter`)."""

    def feed(self, event: StreamEvent) -> list[StreamEvent]:
        """The events to pass on for one upstream event."""
        ...


def text_request(request: Request) -> Request:
    """`request` as a model without a tool API gets it: tools in the prompt, calls and results as text."""
    # `extra` may hold the client's own wire copy of what this rewrites (a tool list with hosted
    # tools, cached system blocks, Gemini contents); merged last, it would undo the rewrite.
    extra = {k: v for k, v in request.extra.items() if k not in _TOOL_KEYS}
    if not request.tools:
        return replace(request, extra=extra) if len(extra) != len(request.extra) else request
    extra = {k: v for k, v in extra.items() if k not in _PROMPT_KEYS}
    messages = to_text_messages(request.messages, request.tools)
    return replace(request, messages=messages, tools=[], tool_choice=None, parallel_tool_calls=None, extra=extra)


def constrained_upstream(request: Request, support: SchemaSupport) -> tuple[Request, ReplySchema | None]:
    """`request` as constrained mode sends it upstream, and the reply schema (None: nothing to constrain)."""
    if not request.tools:
        return text_request(request), None
    # As in text mode, the client's own wire copies of the tools and the prompt would undo the
    # rewrite; its own response format would replace the reply schema.
    extra = {k: v for k, v in request.extra.items() if k not in _TOOL_KEYS | _PROMPT_KEYS | _FORMAT_KEYS}
    return constrained_request(replace(request, extra=extra), support)


def answer_upstream(request: Request) -> Request:
    """`request` as constrained mode sends it upstream once the model called nothing: the answer's."""
    extra = {k: v for k, v in request.extra.items() if k not in _TOOL_KEYS | _PROMPT_KEYS | _FORMAT_KEYS}
    return answer_request(replace(request, extra=extra))


def parse_reply(response: Response, tools: Sequence[ToolDefinition], path: str) -> Response:
    """The reply with the calls written in its text turned into native calls (none: unchanged)."""
    if not tools or response.tool_calls:
        return response
    return calls_from_text(response, tools, path)


class CallFilter:
    """Rewrites one reply's stream events so that written calls come out as native ones.

    Args:
        tools: The tools the client offered (calls naming others stay text when marker-less).
        path: `text` or `auto-text`, recorded in each parsed call's metadata.
    """

    def __init__(self, tools: Sequence[ToolDefinition], path: str) -> None:
        self.tools = list(tools)
        self.path = path
        self._text: list[str] = []
        self._length = 0
        self._sent = 0
        self._holding = False
        self._native = 0

    def feed(self, event: StreamEvent) -> list[StreamEvent]:
        """The events to pass on for one upstream event."""
        match event:
            case TextDelta(text=text):
                return self._on_text(text)
            case ToolCallDelta():
                self._native += 1 if event.id is not None else 0
                return [event]
            case Done(response=response):
                return self._on_done(response)
            case _:
                return [event]

    def _on_text(self, text: str) -> list[StreamEvent]:
        self._text.append(text)
        self._length += len(text)
        if self._holding:
            return []
        whole = "".join(self._text)
        self._text = [whole]
        start = max(0, self._sent - _TAIL)
        found = _START.search(whole, start)
        if found is not None:
            self._holding = True
            until = found.start() + (1 if found.group().startswith("\n") else 0)
        else:
            until = len(whole) - _TAIL
        return self._send(whole, until)

    def _send(self, whole: str, until: int) -> list[StreamEvent]:
        if until <= self._sent:
            return []
        piece, self._sent = whole[self._sent : until], until
        return [TextDelta(piece)]

    def _on_done(self, response: Response) -> list[StreamEvent]:
        whole = "".join(self._text)
        parsed = response if self._native else parse_reply(response, self.tools, self.path)
        if parsed is response:
            return [*self._send(whole, len(whole)), Done(response)]
        remaining = parsed.text
        out: list[StreamEvent] = []
        if remaining.startswith(whole[: self._sent]):
            out.extend(self._send(remaining, len(remaining)))
        for index, call in enumerate(parsed.tool_calls):
            out.append(ToolCallDelta(index, call.id, call.name, dumps(call.arguments)))
        out.append(Done(parsed))
        return out
