"""A constrained reply's stream events rewritten into what a caller of any tool mode expects.

The model streams JSON (`{"call_count": ..., "tool_calls": [...]}`); a caller expects text
deltas and tool calls. `ReplyFilter` passes an answer's text on as it is written (through
`AnswerStream`), holds everything else, and at the end reads the whole reply: its calls go out
as whole `ToolCallDelta`s (one per call) before the final `Done`, whose response holds the
text and `ToolCall`s (`calls_from_reply`). Shared by sessions, the agent and the gateway.
Pure: no I/O.
"""

from __future__ import annotations

from toolwire.codecs.common.wire import dumps
from toolwire.constrained._conversation import calls_from_reply
from toolwire.constrained._reply import ConstrainedReply
from toolwire.constrained._schema import ReplySchema
from toolwire.constrained._stream import AnswerStream
from toolwire.types import Done, Response, StreamEvent, TextDelta, ToolCallDelta

__all__ = ["ReplyFilter"]


class ReplyFilter:
    """Rewrites one constrained reply's stream events: answer text as it comes, calls at the end.

    Attributes:
        found: What reading the whole reply found (set once `Done` passed through).
    """

    def __init__(self, reply: ReplySchema) -> None:
        self.reply = reply
        self.found: ConstrainedReply | None = None
        self._answer = AnswerStream(reply.no_tool)
        self._sent = ""

    def feed(self, event: StreamEvent) -> list[StreamEvent]:
        """The events to pass on for one upstream event."""
        match event:
            case TextDelta(text=text):
                piece = self._answer.feed(text)
                self._sent += piece
                return [TextDelta(piece)] if piece else []
            case Done(response=response):
                return self._on_done(response)
            case _:
                return [event]

    def _on_done(self, raw: Response) -> list[StreamEvent]:
        response, self.found = calls_from_reply(raw, self.reply)
        out: list[StreamEvent] = []
        text = response.text
        if text.startswith(self._sent) and len(text) > len(self._sent):
            out.append(TextDelta(text[len(self._sent) :]))  # an escape held back, or a reply that was no JSON
        for index, call in enumerate(response.tool_calls):
            out.append(ToolCallDelta(index, call.id, call.name, dumps(call.arguments)))
        out.append(Done(response))
        return out
