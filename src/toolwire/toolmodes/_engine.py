"""One model call in a tool mode, whole or streamed: the one place the four modes are decided.

- `native` sends the request as it is.
- `text` sends it with the tools in the prompt and reads the calls written in the reply.
- `auto` is native; a reply without native calls has its text read for written ones, and a
  server that refuses the tools parameter (`refuses_tools`) moves the caller's `ModeState` to
  text for good and is asked again in text mode.
- `constrained` sends the reply schema built from the tools (`toolwire.constrained`), in the
  form the client's server takes, and turns the JSON reply into calls; when the model called
  nothing, the answer's request follows.

Calls read out of a reply's text, in every mode, meet one rule (`_settle`): a cut call never
runs, and a caller that hands calls on (`runnable_only`, the gateway) gets a cut call, or one of
a tool it never offered, as text instead.

Streamed, every error a server sends before its first event is raised before the first event
here too, so a caller (the gateway) can still answer with that error's status.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolwire.constrained import ConstrainedReply, ReplyFilter, SchemaSupport, calls_from_reply, with_usage_of
from toolwire.errors import BadRequestError, StreamError
from toolwire.toolmodes._refusal import refuses_tools
from toolwire.toolmodes._requests import answer_sent, constrained_sent, text_sent
from toolwire.toolmodes._settle import settle, settle_events
from toolwire.toolmodes._written import CallFilter, read_written_calls
from toolwire.types import Done, Request, Response, StreamEvent

if TYPE_CHECKING:
    from toolwire.contract import ModelClient
    from toolwire.toolmodes._state import ModeState

__all__ = ["BatchOpener", "Opener", "Written", "complete", "regrouped", "stream", "stream_batches"]

Opener = Callable[[Request], AsyncIterator[StreamEvent]]
"""Starts one upstream stream for a request (the client's `stream_request`, or the gateway's own)."""

BatchOpener = Callable[[Request], AsyncIterator[list[StreamEvent]]]
"""Starts one upstream stream whose events come in the lists that arrived together (`Client.stream_batches`)."""


@dataclass(slots=True)
class Written:
    """What the model wrote before its tool mode read calls out of it (for evaluations and logs).

    Attributes:
        text: The reply's text as written (constrained mode: the JSON, up to a repeated call).
        constrained: In constrained mode, what reading that JSON found.
    """

    text: str = ""
    constrained: ConstrainedReply | None = None


async def complete(
    client: ModelClient,
    request: Request,
    state: ModeState,
    *,
    written: Written | None = None,
    support: SchemaSupport | None = None,
    runnable_only: bool = False,
) -> Response:
    """One whole reply to `request` in `state`'s mode (which `auto` may turn to `text`).

    Args:
        client: The model.
        request: The whole request.
        state: The caller's tool mode; `auto` turns to `text` when the server refuses tools.
        written: Filled with what the model wrote.
        support: What the server's schema engine enforces, for constrained mode (default: the client's).
        runnable_only: Written calls that are cut, or of a tool the request did not offer, come
            back as text rather than as calls carrying an error (for a caller that runs nothing).
    """
    response = await _complete(client, request, state, written if written is not None else Written(), support)
    return settle(response, request.tools, runnable_only=runnable_only)


async def _complete(
    client: ModelClient, request: Request, state: ModeState, written: Written, support: SchemaSupport | None
) -> Response:
    mode = state.mode
    if mode == "constrained" and request.tools:
        return await _complete_constrained(client, request, written, support or client.schema_support)
    if mode in ("text", "constrained"):
        raw = await client.complete_request(text_sent(request))
        written.text = raw.text
        return read_written_calls(raw, request.tools, "text")
    try:
        raw = await client.complete_request(request)
    except BadRequestError as exc:
        if not _refused(mode, request, exc):
            raise
        state.tools_refused(exc)
        return await _complete(client, request, state, written, support)
    written.text = raw.text
    return read_written_calls(raw, request.tools, "auto-text") if mode == "auto" else raw


async def _complete_constrained(
    client: ModelClient, request: Request, written: Written, support: SchemaSupport
) -> Response:
    sent, reply = constrained_sent(request, support)
    raw = await client.complete_request(sent)
    written.text = raw.text
    if reply is None:  # tool_choice "none": nothing to constrain
        return raw
    response, written.constrained = calls_from_reply(raw, reply)
    if not written.constrained.answer_due:
        return response
    return with_usage_of(await client.complete_request(answer_sent(request)), raw.usage)


def stream(
    client: ModelClient,
    request: Request,
    state: ModeState,
    *,
    written: Written | None = None,
    support: SchemaSupport | None = None,
    opener: Opener | None = None,
    runnable_only: bool = False,
) -> AsyncGenerator[StreamEvent, None]:
    """One reply to `request` as events in `state`'s mode, ending with exactly one `Done`.

    Args:
        client: The model.
        request: The whole request (sent streamed).
        state: The caller's tool mode; `auto` turns to `text` when the server refuses tools.
        written: Filled with what the model wrote, once the stream is over.
        support: What the server's schema engine enforces, for constrained mode (default: the client's).
        opener: Starts each upstream stream instead of `client.stream_request`.
        runnable_only: As for `complete`.
    """
    written = written if written is not None else Written()
    open_stream = opener if opener is not None else client.stream_request
    if state.mode == "constrained" and request.tools:
        return _stream_constrained(open_stream, request, support or client.schema_support, written, runnable_only)
    return _stream(open_stream, request, state, written, runnable_only)


def stream_batches(
    client: ModelClient,
    request: Request,
    state: ModeState,
    *,
    opener: BatchOpener,
    written: Written | None = None,
    support: SchemaSupport | None = None,
    runnable_only: bool = False,
) -> AsyncGenerator[list[StreamEvent], None]:
    """`stream`'s events in lists (none empty): those that came out of one list of the upstream's.

    For a relay, which writes each list at once. Native mode passes the upstream's lists on as
    they are, with no step per event; the other modes read the events one by one, as `stream`.
    """
    written = written if written is not None else Written()
    if state.mode == "native":
        return _native_batches(opener, request, written)
    return regrouped(
        lambda flat: stream(
            client, request, state, written=written, support=support, opener=flat, runnable_only=runnable_only
        ),
        opener,
    )


def regrouped(
    events_of: Callable[[Opener], AsyncGenerator[StreamEvent, None]], opener: BatchOpener
) -> AsyncGenerator[list[StreamEvent], None]:
    """The events `events_of` gives from the upstream's events one by one, in lists again.

    Each list ends where an upstream list ended: for the modes and strategies that read events
    one by one, under a relay that writes each list at once.
    """
    flat = _Flattened(opener)
    return _regrouped(events_of(flat), flat)


async def _native_batches(
    open_batches: BatchOpener, request: Request, written: Written
) -> AsyncGenerator[list[StreamEvent], None]:
    batches = open_batches(request)
    try:
        async for batch in batches:
            if not batch:
                continue
            done = batch[-1] if isinstance(batch[-1], Done) else None  # a `Done` is the last of its list
            if done is not None:
                written.text = done.response.text
            yield batch
            if done is not None:
                return
    finally:
        await _close(batches)
    raise _cut()


class _Flattened:
    """A batch opener as an event opener; `more`: the list of the event just passed on has more."""

    def __init__(self, open_batches: BatchOpener) -> None:
        self._open = open_batches
        self.more = False

    def __call__(self, request: Request) -> AsyncIterator[StreamEvent]:
        return self._events(self._open(request))

    async def _events(self, batches: AsyncIterator[list[StreamEvent]]) -> AsyncGenerator[StreamEvent, None]:
        try:
            async for batch in batches:
                last = len(batch) - 1
                for number, event in enumerate(batch):
                    self.more = number < last
                    yield event
        finally:
            self.more = False
            await _close(batches)


async def _regrouped(
    events: AsyncGenerator[StreamEvent, None], flat: _Flattened
) -> AsyncGenerator[list[StreamEvent], None]:
    """The events a mode passed on, in lists again: each ends where an upstream list ended."""
    batch: list[StreamEvent] = []
    try:
        async for event in events:
            batch.append(event)
            if not flat.more or isinstance(event, Done):
                yield batch
                batch = []
    finally:
        await events.aclose()
    if batch:
        yield batch


async def _stream(
    open_stream: Opener, request: Request, state: ModeState, written: Written, runnable_only: bool
) -> AsyncGenerator[StreamEvent, None]:
    """The native, text and auto modes streamed (constrained mode without tools is text mode)."""
    mode = state.mode
    text = mode in ("text", "constrained")
    try:
        upstream, first = await _open(open_stream, text_sent(request) if text else request)
    except BadRequestError as exc:
        if text or not _refused(mode, request, exc):
            raise
        state.tools_refused(exc)
        async for event in _stream(open_stream, request, state, written, runnable_only):
            yield event
        return
    reader = _reader(request, mode)
    try:
        for out in _read(first, reader, written, runnable_only):
            yield out
        if isinstance(first, Done):
            return
        async for event in upstream:
            for out in _read(event, reader, written, runnable_only):
                yield out
            if isinstance(event, Done):
                return
        raise _cut()
    finally:
        await _close(upstream)


def _reader(request: Request, mode: str) -> CallFilter | None:
    """What reads written calls out of a streamed reply: none in native mode, or without tools."""
    if not request.tools or mode == "native":
        return None
    return CallFilter(request.tools, "auto-text" if mode == "auto" else "text")


def _refused(mode: str, request: Request, exc: BadRequestError) -> bool:
    return mode == "auto" and bool(request.tools) and refuses_tools(exc)


def _read(
    event: StreamEvent, reader: CallFilter | None, written: Written, runnable_only: bool
) -> Sequence[StreamEvent]:
    """What to pass on for one upstream event (the reader turns written calls into native ones)."""
    if isinstance(event, Done):
        written.text = event.response.text
    if reader is None:
        return (event,)
    return settle_events(reader.feed(event), reader.tools, runnable_only=runnable_only)


async def _open(open_stream: Opener, request: Request) -> tuple[AsyncIterator[StreamEvent], StreamEvent]:
    """The upstream stream and its first event: every error the server sends first is raised here."""
    events = open_stream(request)
    try:
        return events, await anext(events)
    except StopAsyncIteration:
        await _close(events)
        raise _cut() from None
    except BaseException:
        await _close(events)
        raise


def _cut() -> StreamError:
    return StreamError("The model's stream ended without its reply's end (no Done event); retry the request.")


async def _opened(open_stream: Opener, request: Request) -> AsyncIterator[StreamEvent]:
    """The upstream's events up to `Done`, closed when the caller stops early; one that ends without `Done` is cut."""
    events = open_stream(request)
    try:
        async for event in events:
            yield event
            if isinstance(event, Done):
                return
    finally:
        await _close(events)
    raise _cut()


async def _stream_constrained(
    open_stream: Opener, request: Request, support: SchemaSupport, written: Written, runnable_only: bool
) -> AsyncGenerator[StreamEvent, None]:
    """The constrained reply's calls, whole once its JSON closes; or, when it called nothing, the answer's stream.

    The upstream stream is closed as soon as the reply is over, which stops a model that began
    to repeat a call (its server stops generating when the stream is closed).
    """
    sent, reply = constrained_sent(request, support)
    if reply is None:  # tool_choice "none": nothing to constrain
        async for event in _opened(open_stream, sent):
            yield event
        return
    held = ReplyFilter(reply)
    events = _opened(open_stream, sent)
    try:
        async for event in events:
            for out in settle_events(held.feed(event), request.tools, runnable_only=runnable_only):
                yield out
            if held.ended:
                break
    finally:
        await _close(events)
    written.text, written.constrained = held.text, held.found
    if held.answer_due:
        async for event in _opened(open_stream, answer_sent(request)):
            yield held.answer_event(event)


async def _close(events: AsyncIterator[Any]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
