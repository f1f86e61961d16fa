"""A translated stream: upstream neutral events in, the client protocol's framed bytes out.

Each list of upstream events that arrived together, as the tool-mode engine passes it on
(`toolwire.toolmodes`), has its neighbouring pieces joined (`coalesced`); each event gets its
provider context packed for the client (`_packed_context`), is encoded by the client codec's
`stream_encoder()`, and is framed at once; nothing waits for the end of the reply. Imports
codecs, the neutral types and the gateway's own tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from toolwire.codecs import StreamEncoder, WireEvent, get_codec
from toolwire.gateway._namespaces import Namespaces, split_names
from toolwire.gateway._packed_context import CARRIERS, pack_id, pack_stream_reply
from toolwire.gateway._protocols import Protocol as WireProtocol
from toolwire.gateway._protocols import frame
from toolwire.types import Done, Response, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["OpeningAhead", "Relay", "client_view", "coalesced"]


def client_view(response: Response, model: str, foreign: bool) -> Response:
    """The reply as the client should see it: its own model name, no other protocol's stop word.

    Encoders prefer `raw_stop_reason` (exact for a reply of their own protocol); another
    protocol's word (`tool_use` in an OpenAI reply) would be wrong, so it goes.
    """
    return replace(response, model=model, raw_stop_reason=None) if foreign else replace(response, model=model)


_PIECES = (TextDelta, ThinkingDelta)


def coalesced(events: Sequence[StreamEvent]) -> list[StreamEvent]:
    """Events that arrived together, with each run of pieces of one text or one call's arguments as one event.

    The client gets the same text and arguments in fewer chunks: what arrived in one network read
    goes out in one write anyway, so splitting it again would cost an encoding per piece and delay
    nothing. Only neighbours merge, so order (and interleaved calls) stay as they were.
    """
    out: list[StreamEvent] = []
    run: list[str] = []  # the pieces of the run `out[-1]` begins
    head: StreamEvent | None = None  # that event, as it came
    for event in events:  # one pass, no call per event: it runs for every event of every stream
        if isinstance(event, ToolCallDelta):
            fragment = event.id is None and event.name is None
            if fragment and isinstance(head, ToolCallDelta) and event.index == head.index:
                run.append(event.arguments_delta)
                continue
            piece = event.arguments_delta
        elif isinstance(event, _PIECES):
            if type(event) is type(head):
                run.append(event.text)
                continue
            piece = event.text
        else:
            piece = ""
        if len(run) > 1:
            out[-1] = _joined(out[-1], run)
        out.append(event)
        head, run = event, [piece]
    if len(run) > 1:
        out[-1] = _joined(out[-1], run)
    return out


def _joined(first: StreamEvent, pieces: list[str]) -> StreamEvent:
    text = "".join(pieces)
    if isinstance(first, ToolCallDelta):
        return ToolCallDelta(first.index, first.id, first.name, text)
    return ThinkingDelta(text) if isinstance(first, ThinkingDelta) else TextDelta(text)


class _Snapshot(Protocol):
    def finish(self) -> Response: ...

    def plain(self) -> bool: ...


class OpeningAhead:
    """The client stream's opening (`message_start`, the role chunk), encoded before it is due.

    It depends on nothing the upstream sends, so the gateway encodes it while it waits for the
    upstream (`encode` from `loop.call_soon` runs at the exchange's first wait: for a connection,
    or for the answer): ~0.03 ms off the client's first byte. On a fresh encoder, so a stream
    that begins otherwise is untouched.
    """

    def __init__(self, protocol: WireProtocol, model: str) -> None:
        self.protocol = protocol
        self.model = model
        self.encoded: tuple[StreamEncoder, bytes] | None = None

    def encode(self) -> None:
        encoder = get_codec(self.protocol.name).stream_encoder(self.model)
        opening = encoder.feed(TextDelta(""))
        self.encoded = encoder, b"".join(frame(self.protocol, e.data, e.event, e.text) for e in opening)


class Relay:
    """Turns one upstream stream into the client's stream, event by event.

    Args:
        protocol: The client's protocol.
        model: The model name the client asked for (what its stream reports).
        decoder: The upstream decoder, for the reply so far when a call's context is packed.
        foreign: Whether the upstream speaks another protocol (its stop words are then dropped).
        namespaces: The client's namespaced Responses tools, whose calls get their names split.
        ahead: The opening, if it was encoded ahead: sent as it is when the stream opens.
    """

    def __init__(
        self,
        protocol: WireProtocol,
        model: str,
        decoder: _Snapshot,
        *,
        foreign: bool,
        namespaces: Namespaces | None = None,
        ahead: OpeningAhead | None = None,
    ) -> None:
        self.protocol = protocol
        self.foreign = foreign
        self.model = model
        self.decoder = decoder
        self._encoder: StreamEncoder | None = None
        self.carrier = CARRIERS.get(protocol.name)
        self.ids: dict[str, str] = {}
        self.tokens: tuple[int | None, int | None] = (None, None)
        self.dropped: list[str] = []
        self._token: str | None = None
        self._blocks = 0
        self.namespaces = namespaces or {}
        self._ahead = ahead

    @property
    def encoder(self) -> StreamEncoder:
        """The client codec's stream encoder: the opening's when that was sent, else one made at first use."""
        if self._encoder is None:
            self._encoder = get_codec(self.protocol.name).stream_encoder(self.model)
        return self._encoder

    def feed(self, events: Sequence[StreamEvent]) -> bytes:
        """The bytes to send for upstream events that arrived together (one write)."""
        if self._ahead is not None:  # the first event: the stream begins with the opening encoded ahead
            ahead, self._ahead = self._ahead, None
            event = events[0]
            opening = isinstance(event, TextDelta) and not event.text
            if opening and ahead.encoded is not None and not self.namespaces:
                self._encoder, data = ahead.encoded
                return data + self.feed(events[1:]) if len(events) > 1 else data
        encoder = self._encoder if self._encoder is not None else self.encoder
        if len(events) == 1:  # often: one delta
            event = events[0]  # text has nothing of the relay's own to add: straight to the encoder
            return self._frames(encoder.feed(event) if type(event) is TextDelta else self._encode(event))
        wire: list[WireEvent] = []
        for event in coalesced(events):
            wire += encoder.feed(event) if type(event) is TextDelta else self._encode(event)
        return self._frames(wire)

    def finish(self) -> bytes:
        """The stream's closing bytes (and OpenAI's `[DONE]`)."""
        tail = self._frames(self.encoder.finish())
        return tail + (b"data: [DONE]\n\n" if self.protocol.done_marker else b"")

    def error(self, status: int, message: str) -> bytes:
        """The protocol's in-stream error event; the stream ends after it."""
        event, data = self.protocol.stream_error(status, message)
        return frame(self.protocol, data, event)

    def _encode(self, event: StreamEvent) -> list[WireEvent]:
        if isinstance(event, ToolCallDelta):
            if event.id is not None and self.carrier == "id":
                packed = self._packed_id(event.index, event.id)
                if packed != event.id:
                    event = ToolCallDelta(event.index, packed, event.name, event.arguments_delta)
        elif isinstance(event, Done):
            return self._done(event.response)
        return self.encoder.feed(event)

    def _packed_id(self, index: int, call_id: str) -> str:
        if self.decoder.plain():  # no thinking, no metadata so far: nothing to pack, no reply to build
            packed = call_id
        else:
            snapshot = self.decoder.finish().message
            call = next((c for c in snapshot.tool_calls if c.id == call_id), None)
            packed = call_id if call is None else pack_id(call, snapshot, self.protocol.name, index == 0)
        self.ids[call_id] = packed
        return packed

    def _done(self, response: Response) -> list[WireEvent]:
        if response.usage is not None:
            self.tokens = (response.usage.input_tokens, response.usage.output_tokens)
        view = client_view(response, self.model, self.foreign)
        reply, self._token, dropped = pack_stream_reply(view, self.protocol.name, self.ids)
        self.dropped.extend(dropped)
        return self.encoder.feed(Done(reply))

    def _frames(self, wire: list[WireEvent]) -> bytes:
        if self.carrier == "thinking":
            for w in wire:  # the blocks so far: the packed context's block goes after them
                if w.event == "content_block_start":
                    self._blocks = max(self._blocks, int(w.data.get("index", 0)) + 1)
            if self._token is not None:  # the reply's end, with context to pack
                wire = self._inject(wire)
        if self.namespaces:  # the names change: the events are written again
            wire = [WireEvent(split_names(w.data, self.namespaces), w.event) for w in wire]
        protocol = self.protocol
        if len(wire) == 1:  # nearly every event: one delta
            w = wire[0]
            return frame(protocol, w.data, w.event, w.text)
        return b"".join([frame(protocol, w.data, w.event, w.text) for w in wire])

    def _inject(self, wire: list[WireEvent]) -> list[WireEvent]:
        """Put the packed context in a last Anthropic content block, before `message_delta`."""
        out: list[WireEvent] = []
        for w in wire:
            if w.event == "message_delta" and self._token is not None:
                index = self._blocks
                block = {"type": "redacted_thinking", "data": self._token}
                start = {"type": "content_block_start", "index": index, "content_block": block}
                out.append(WireEvent(start, "content_block_start"))
                out.append(WireEvent({"type": "content_block_stop", "index": index}, "content_block_stop"))
                self._token = None
            out.append(w)
        return out
