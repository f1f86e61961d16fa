"""Calls a model wrote in its text, read as native calls: whole replies and streams (text and auto modes).

Streamed, text that cannot be part of a call goes out as it arrives; from the first thing that
looks like the start of a call (a `TOOL_CALL:` marker, a tag, a fence, a line opening with `{`
or `[`), text is held until the reply ends and is read then.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from toolwire.codecs.common.wire import dumps
from toolwire.textcalls import calls_from_text
from toolwire.types import Done, Response, StreamEvent, TextDelta, ToolCallDelta, ToolDefinition

__all__ = ["CallFilter", "read_written_calls"]

# Where a written call may begin, in any format `toolwire.textcalls` reads.
_START = re.compile(r"TOOL_CALL|\[TOOL_CALLS\]|<tool_call|<function|<\||<\uff5c|```|~~~|(?:^|\n)[ \t]*[\[{]")
_TAIL = len("[TOOL_CALLS]")  # unsent text kept back in case a marker is split across deltas


def read_written_calls(response: Response, tools: Sequence[ToolDefinition], path: str) -> Response:
    """The reply with the calls written in its text turned into native calls (none, or native ones: unchanged)."""
    if not tools or response.tool_calls:
        return response
    return calls_from_text(response, tools, path)


class CallFilter:
    """Rewrites one reply's stream events so that written calls come out as native ones.

    Args:
        tools: The tools offered (calls naming others stay text when marker-less).
        path: `text` or `auto-text`, recorded in each parsed call's metadata.
    """

    def __init__(self, tools: Sequence[ToolDefinition], path: str) -> None:
        self.tools = list(tools)
        self.path = path
        self._text: list[str] = []
        self._sent = 0
        self._holding = False
        self._native = 0

    def feed(self, event: StreamEvent) -> list[StreamEvent]:
        """The events to pass on for one upstream event."""
        match event:
            case TextDelta(text=text) if text:
                return self._on_text(text)
            case ToolCallDelta():
                self._native += 1 if event.id is not None else 0
                return [event]
            case Done(response=response):
                return self._on_done(response)
            case _:  # an empty TextDelta opens a stream: it goes out at once
                return [event]

    def _on_text(self, text: str) -> list[StreamEvent]:
        self._text.append(text)
        if self._holding:
            return []
        whole = "".join(self._text)
        self._text = [whole]
        found = _START.search(whole, max(0, self._sent - _TAIL))
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
        parsed = response if self._native else read_written_calls(response, self.tools, self.path)
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
