"""A constrained reply's stream events rewritten into what a caller of any tool mode expects.

The model streams a JSON list of calls; a caller expects tool calls. `ReplyFilter` holds the
reply's text and at the end reads it whole: its calls go out as whole `ToolCallDelta`s (one per
call) before the final `Done`, whose response holds the `ToolCall`s (`calls_from_reply`). When
the model called nothing (`[]`), nothing goes out and `answer_due` is set: the caller streams
`answer_request` next, whose text reaches the user as it is written. When the model starts to
repeat a call it already wrote, the reply ends there (`_repeats`): the calls before the repeat go
out with a `Done` of its own, `ended` is set, and the caller closes the upstream stream, which
stops the model. Shared by sessions, the agent and the gateway. Pure: no I/O.
"""

from __future__ import annotations

from toolwire.codecs.common.wire import dumps
from toolwire.constrained._conversation import calls_from_reply, with_usage_of
from toolwire.constrained._repeats import RepeatWatch
from toolwire.constrained._reply import ConstrainedReply
from toolwire.constrained._schema import ReplySchema
from toolwire.types import (
    AssistantMessage,
    Done,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCallDelta,
    Usage,
)

__all__ = ["ReplyFilter"]


class ReplyFilter:
    """Rewrites one constrained reply's stream events: its calls whole at the end.

    Attributes:
        found: What reading the whole reply found (set once `Done` passed through).
        answer_due: The model called nothing; the answer is to be asked for (`answer_request`).
        ended: The reply is over: its `Done` went out, or the model began to repeat a call and
            the upstream stream is to be closed (nothing more it sends is passed on).
        text: The reply's text as the model wrote it (up to the repeat, when stopped there);
            set once the reply is over.
    """

    def __init__(self, reply: ReplySchema) -> None:
        self.reply = reply
        self.found: ConstrainedReply | None = None
        self.ended = False
        self.text = ""
        self._spent: Usage | None = None
        self._watch = RepeatWatch()

    @property
    def answer_due(self) -> bool:
        return self.found is not None and self.found.answer_due

    def feed(self, event: StreamEvent) -> list[StreamEvent]:
        """The events to pass on for one upstream event."""
        if self.ended:
            return []
        match event:
            case TextDelta(text=text):
                if self._watch.feed(text) is None:
                    return []
                return self._on_done(_cut_reply(self._watch))
            case Done(response=response):
                return self._on_done(response)
            case _:
                return [event]

    def answer_event(self, event: StreamEvent) -> StreamEvent:
        """One event of the answer's stream, its `Done` counting this reply's tokens too."""
        if isinstance(event, Done) and self.found is not None:
            return Done(with_usage_of(event.response, self._spent))
        return event

    def _on_done(self, raw: Response) -> list[StreamEvent]:
        self.ended = True
        self.text = raw.text
        self._spent = raw.usage
        response, self.found = calls_from_reply(raw, self.reply)
        if self.answer_due:
            return []
        out: list[StreamEvent] = [TextDelta(response.text)] if response.text else []  # a reply that was no JSON
        for index, call in enumerate(response.tool_calls):
            out.append(ToolCallDelta(index, call.id, call.name, dumps(call.arguments)))
        out.append(Done(response))
        return out


def _cut_reply(watch: RepeatWatch) -> Response:
    """The reply as written up to its repeated call: the model was stopped, so no usage came."""
    return Response(message=AssistantMessage(parts=[TextPart(text=watch.text)]), stop_reason=StopReason.END_TURN)
