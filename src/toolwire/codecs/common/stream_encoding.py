"""The shared half of every stream encoder: neutral events in, one protocol's events out.

A gateway relays a reply while it is being generated, so an encoder must emit each piece as
it arrives and cannot look ahead. `SegmentedEncoder` groups the incoming events into
segments (a run of text, a run of thinking, one tool call), asks its protocol subclass for the
wire events that open, extend and close each one, and at `Done` lines the final `Response` up
with what was streamed: text that never came as a delta, a thinking signature, arguments a
call received only at the end, and parts that produced no delta at all are sent then.
"""

from __future__ import annotations

import json
import os
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire.codecs.common.arguments import parse_arguments
from toolwire.codecs.common.wire import dumps
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Done,
    Response,
    StopReason,
    StreamEvent,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
)

__all__ = ["Segment", "SegmentedEncoder", "WireEvent", "missing_text", "new_id", "pieces", "replay"]

Kind = Literal["text", "thinking", "call"]
# The last character of any value `json.loads` takes: objects, arrays, strings, numbers, true,
# false, null, and Python's NaN and Infinity.
_VALUE_ENDS = frozenset('}]"0123456789elNy')
_CLOSERS = {"{": "}", "[": "]", '"': '"'}  # how a value that opens so must end


@dataclass(slots=True)
class WireEvent:
    """One event of a protocol's stream: the JSON `data` and, where the protocol names events, `event`.

    `text`, when an encoder sets it, is `data` already written as `dumps` writes it: an encoder
    that repeats the same fields in every event writes them once, and a relay frames the text.
    Read-only by convention, not frozen: a frozen dataclass's `__init__` cost 0.3 us more per
    event written (a fifth of writing an OpenAI chunk).
    """

    data: dict[str, Any]
    event: str | None = None
    text: str | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Segment:
    """What has been streamed of one assistant part so far.

    Attributes:
        kind: Which kind of part it becomes.
        position: Its place among all segments (Anthropic's block index, Responses' output index).
        text: The text, thinking or raw argument JSON streamed so far.
        call_index: The dense index among calls (calls only).
        call_id: The call's id (calls only).
        name: The tool's name (calls only).
        closed: Whether its closing events were sent.
        state: Room for the protocol's own bookkeeping (an item id, whether a call was sent).
        part: The final part, when the sender knew it before streaming it (see `expect`).
    """

    kind: Kind
    position: int
    call_index: int = -1
    call_id: str = ""
    name: str = ""
    closed: bool = False
    state: dict[str, Any] = field(default_factory=dict)
    part: AssistantPart | None = None
    _pieces: list[str] = field(default_factory=list, repr=False)

    @property
    def text(self) -> str:
        """The text, thinking or raw argument JSON streamed so far (joined when asked, not per delta)."""
        pieces = self._pieces
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]
        return pieces[0] if pieces else ""

    def add(self, text: str) -> None:
        """One more piece of the text.

        Kept as pieces: `text += piece` copied the whole text each time (a 400 KB argument in
        40,000 fragments took 1.8 s to relay, 75 ms now).
        """
        self._pieces.append(text)


def new_id(prefix: str) -> str:
    """A fresh response id for a stream whose upstream id is not known yet."""
    return prefix + os.urandom(12).hex()  # what `uuid4().hex[:24]` gave, at a third of the cost


def _kind(part: AssistantPart) -> Kind:
    if isinstance(part, TextPart):
        return "text"
    return "thinking" if isinstance(part, ThinkingPart) else "call"


class SegmentedEncoder(ABC):
    """Base of the protocol stream encoders; see the module docstring.

    Args:
        model: The model name the stream reports (known before the reply is).
        response_id: The reply's id; one is made up when not given.
        reply: The whole reply, when it is known before streaming (a test server rendering
            it): the stream then reports its id, model and usage exactly, `None`s included.
    """

    id_prefix = "resp_"

    def __init__(
        self, model: str | None = None, response_id: str | None = None, *, reply: Response | None = None
    ) -> None:
        self.reply = reply
        self.model = reply.model if reply is not None else model
        self.response_id = reply.id if reply is not None else (response_id or new_id(self.id_prefix))
        self.segments: list[Segment] = []
        self._calls: dict[int, Segment] = {}  # neutral ToolCallDelta.index -> its segment
        self._current: Segment | None = None
        self._upcoming: AssistantPart | None = None
        self._held_calls: list[ToolCallDelta] = []  # later calls' deltas, until the open call is whole
        self._started = False
        self._ended = False

    # the neutral side

    def feed(self, event: StreamEvent) -> list[WireEvent]:
        """The wire events for one neutral event, to be sent at once."""
        if self._ended:
            return []
        if self._started and not self._held_calls:  # nearly every event: a text or argument delta
            if isinstance(event, TextDelta):
                return self._extend("text", event.text) if event.text else []
            if isinstance(event, ToolCallDelta):
                return self._fragment(event)
        out: list[WireEvent] = [] if self._started else self.start()
        self._started = True
        match event:
            case TextDelta(text=text) if text:
                out += self._release() + self._extend("text", text)
            case ThinkingDelta(text=text) if text:
                out += self._release() + self._extend("thinking", text)
            case ToolCallDelta():
                out += self._on_call(event)
            case Done(response=response):
                out += self._release() + self._done(response)
        return out

    def finish(self) -> list[WireEvent]:
        """Close a stream that ended without `Done` (the events so far make the reply)."""
        if self._ended:
            return []
        return self.feed(Done(self._so_far()))

    # what protocols implement

    def start(self) -> list[WireEvent]:
        """Events that open the stream (Anthropic `message_start`); none by default."""
        return []

    @abstractmethod
    def open(self, segment: Segment) -> list[WireEvent]:
        """Events that start a segment."""

    @abstractmethod
    def delta(self, segment: Segment, text: str) -> list[WireEvent]:
        """Events that carry one more piece of a segment (text, thinking or argument JSON)."""

    @abstractmethod
    def close(self, segment: Segment) -> list[WireEvent]:
        """Events that end a segment (its text is complete)."""

    @abstractmethod
    def complete(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        """Events that bring a streamed segment up to its final `part` (a signature, say)."""

    def whole(self, segment: Segment, part: AssistantPart) -> list[WireEvent]:
        """Events for a part that streamed nothing, in a fresh segment (closed afterwards)."""
        return self.open(segment) + self.complete(segment, part)

    @abstractmethod
    def end(self, response: Response) -> list[WireEvent]:
        """Events that end the stream: the stop reason and usage."""

    def more(self, segment: Segment, text: str) -> list[WireEvent]:
        """Extend a segment by `text` (for `complete`); nothing when `text` is empty."""
        if not text:
            return []
        segment.add(text)
        return self.delta(segment, text)

    # segments

    def _switch(self, kind: Kind) -> tuple[Segment, list[WireEvent]]:
        out = self._close_current()
        segment = Segment(kind, len(self.segments), part=self._upcoming)
        self._upcoming = None
        self.segments.append(segment)
        self._current = segment
        return segment, out

    def _close_current(self) -> list[WireEvent]:
        current, self._current = self._current, None
        if current is None or current.closed:
            return []
        current.closed = True
        return self.close(current)

    def _extend(self, kind: Kind, text: str) -> list[WireEvent]:
        segment = self._current
        if segment is not None and segment.kind == kind:
            segment._pieces.append(text)  # `add`, inline: every text delta comes here
            return self.delta(segment, text)
        segment, out = self._switch(kind)
        out += self.open(segment)
        segment.add(text)
        return out + self.delta(segment, text)

    def _fragment(self, event: ToolCallDelta) -> list[WireEvent]:
        """A call delta while no call waits: the open call's next fragment goes on as `_on_call` would send it."""
        segment = self._current
        if event.id is None and segment is not None and self._calls.get(event.index) is segment:
            if not event.arguments_delta:
                return []
            segment.add(event.arguments_delta)
            return self.delta(segment, event.arguments_delta)
        return self._on_call(event)

    def _on_call(self, event: ToolCallDelta, *, hold: bool = True) -> list[WireEvent]:
        """One call delta; another call's while the open call's arguments are unfinished waits.

        Deltas are keyed by index, not ordered: a server may start call 1 before call 0's
        arguments are complete. Protocols whose calls are blocks or items that close (Anthropic,
        Responses) cannot take more for a closed one, so the later call is held back until the
        open call's JSON is whole, or text, thinking or the end of the reply comes.
        """
        current = self._current if self._current is not None and self._current.kind == "call" else None
        own = event.id is None and self._calls.get(event.index) is current
        if hold and current is not None and not own and (self._held_calls or not _whole_json(current.text)):
            self._held_calls.append(event)
            return []
        out = self._call_delta(event)
        if self._held_calls and current is not None and own and _whole_json(current.text):
            out += self._release(hold=True)
        return out

    def _release(self, *, hold: bool = False) -> list[WireEvent]:
        """Send the held deltas now (`hold`: those of calls still behind an unfinished one wait again)."""
        if not self._held_calls:  # nearly always: this runs before every text and thinking delta
            return []
        held, self._held_calls = _by_call(self._held_calls), []
        out: list[WireEvent] = []
        for event in held:
            out += self._on_call(event, hold=hold)
        return out

    def _call_delta(self, event: ToolCallDelta) -> list[WireEvent]:
        out: list[WireEvent] = []
        segment = self._calls.get(event.index)
        if event.id is not None or segment is None:  # a new id on a used index starts a new call
            segment, out = self._switch("call")
            segment.call_index = self._calls_so_far() - 1
            segment.call_id = event.id or f"call_{uuid.uuid4().hex[:24]}"
            segment.name = event.name or ""
            self._calls[event.index] = segment
            out += self.open(segment)
        if event.arguments_delta:
            segment.add(event.arguments_delta)
            out += self.delta(segment, event.arguments_delta)
        return out

    # the end

    def _done(self, response: Response) -> list[WireEvent]:
        out: list[WireEvent] = []
        unmatched: list[AssistantPart] = []
        for part, segment in self._line_up(response.message.parts):
            if segment is None:
                unmatched.append(part)
            elif not segment.state.get("whole"):  # a part sent whole is complete already
                out += self.complete(segment, part)
        out += self._close_current()
        for part in unmatched:
            out += self._whole(part)
        self._ended = True
        return out + self.end(response)

    def _line_up(self, parts: list[AssistantPart]) -> list[tuple[AssistantPart, Segment | None]]:
        """Pair each final part with the streamed segment it came from, in order."""
        pairs: list[tuple[AssistantPart, Segment | None]] = []
        segments = self.segments
        next_free = 0
        for part in parts:
            kind = _kind(part)
            redacted = isinstance(part, ThinkingPart) and part.redacted  # never streamed: sent whole
            found = None
            for position in range(next_free, len(segments)):  # a segment's position is its place in the list
                segment = segments[position]
                if segment.kind == kind and segment.state.get("redacted", False) == redacted:
                    found, next_free = segment, position + 1
                    break
            pairs.append((part, found))
        return pairs

    def part(self, part: AssistantPart) -> list[WireEvent]:
        """Send a whole part now, as a segment of its own (a part no delta can carry)."""
        out: list[WireEvent] = [] if self._started else self.start()
        self._started = True
        return out + self._whole(part)

    def expect(self, part: AssistantPart) -> None:
        """Say which part the next deltas make (a sender that knows the reply), for its metadata."""
        self._upcoming = part

    def settle(self, part: AssistantPart) -> list[WireEvent]:
        """Bring the segment being streamed up to its final `part` now, not at `Done`.

        For a sender that knows the whole reply: a signature then goes before the part's end.
        """
        segment = self._current
        if segment is None or segment.kind != _kind(part) or segment.state.get("whole"):
            return []
        segment.state["whole"] = True
        return self.complete(segment, part)

    def _whole(self, part: AssistantPart) -> list[WireEvent]:
        segment, out = self._switch(_kind(part))
        segment.state["redacted"] = isinstance(part, ThinkingPart) and part.redacted
        segment.state["whole"] = True
        if isinstance(part, ToolCall):
            segment.call_index = self._calls_so_far() - 1
            segment.call_id, segment.name = part.id, part.name
        out += self.whole(segment, part)
        return out + self._close_current()

    def _calls_so_far(self) -> int:
        return sum(1 for s in self.segments if s.kind == "call")

    def _so_far(self) -> Response:
        parts: list[AssistantPart] = []
        for segment in self.segments:
            if segment.kind == "text":
                parts.append(TextPart(text=segment.text))
            elif segment.kind == "thinking":
                parts.append(ThinkingPart(text=segment.text))
            else:
                arguments, metadata = parse_arguments(segment.text)
                parts.append(ToolCall(id=segment.call_id, name=segment.name, arguments=arguments, metadata=metadata))
        stop = StopReason.TOOL_USE if self._calls_so_far() else StopReason.END_TURN
        return Response(message=AssistantMessage(parts=parts), stop_reason=stop, model=self.model, id=self.response_id)


def _by_call(events: list[ToolCallDelta]) -> list[ToolCallDelta]:
    """Held deltas grouped call by call, each call's own order kept.

    So one call's pieces never follow the opening of the next: first those continuing calls
    already open, then each new call in the order its header came.
    """
    groups: dict[tuple[str, int], list[ToolCallDelta]] = {}
    latest: dict[int, tuple[str, int]] = {}  # neutral index -> the held call it means now
    for event in events:
        if event.id is not None:
            key = latest[event.index] = ("new", len(groups))
        else:
            key = latest.get(event.index, ("open", event.index))
        groups.setdefault(key, []).append(event)
    order = sorted(groups, key=lambda key: (key[0] == "new", list(groups).index(key)))
    return [event for key in order for event in groups[key]]


def _whole_json(text: str) -> bool:
    """Whether a call's argument text so far is a complete JSON value (then nothing more is due).

    Asked at every delta while calls interleave: a text whose ends cannot be one value's
    (`{"city":`, or `{"city": "Paris"`: an object ends with `}`) is answered without parsing it
    (and raising).
    """
    stripped = text.strip()
    last = stripped[-1:]
    if last != _CLOSERS.get(stripped[:1], last) or last not in _VALUE_ENDS:
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # a `[[[[...` nested past the parser's stack is no value either
        return False
    return True


def missing_text(segment: Segment, final: str) -> str:
    """What `final` has beyond what the segment streamed ('' when they disagree)."""
    return final[len(segment.text) :] if final.startswith(segment.text) else ""


def replay(encoder: SegmentedEncoder, response: Response, count: int = 3) -> list[dict[str, Any]]:
    """A whole reply as the stream events `encoder` sends for it (test servers render replies so).

    Each part streams in about `count` deltas; one no delta can carry (redacted reasoning, or
    a part right after one of its own kind, whose deltas would run into it) is sent whole.
    """
    wire: list[WireEvent] = []
    previous: type | None = None
    calls = 0
    for part in response.message.parts:
        events: list[StreamEvent] = []
        match part:
            case TextPart() | ThinkingPart() if previous is type(part) or getattr(part, "redacted", False):
                wire += encoder.part(part)
            case TextPart():
                events = [TextDelta(piece) for piece in pieces(part.text, count)]
            case ThinkingPart():
                events = [ThinkingDelta(piece) for piece in pieces(part.text, count)]
            case ToolCall():
                raw = part.metadata.get("raw_arguments")
                arguments = raw if isinstance(raw, str) else (dumps(part.arguments) if part.arguments else "")
                events.append(ToolCallDelta(calls, part.id, part.name, ""))
                events += [ToolCallDelta(calls, None, None, piece) for piece in pieces(arguments, count)]
                calls += 1
        if events:
            encoder.expect(part)
        wire += [w for event in events for w in encoder.feed(event)]
        if events:
            wire += encoder.settle(part)
        previous = type(part)
    wire += encoder.feed(Done(response))
    return [w.data for w in wire]


def pieces(text: str, count: int = 3) -> list[str]:
    """`text` cut into about `count` pieces of equal length (none for "")."""
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]
