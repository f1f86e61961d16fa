"""The codec boundary: decoding succeeds or raises `CodecError` naming the bad field.

Codecs are written for what providers send; a body mutated in transit, a buggy server or a
proxy can send anything. Rather than a check before every field access, `GuardedCodec` wraps a
codec's decoding entry points: a stray `TypeError`, `KeyError`, `RecursionError`,
`UnicodeError`... becomes a `CodecError` whose message names the first field that does not fit
the wire format's shape (`shapes`). A decoded request or reply is also checked for what would
otherwise pass silently and fail later in an encoder (`checks`: a tool name that is a list, a
negative token count, a tool schema that is no object), and duplicate call ids in one reply are
made unique the same way for every codec. Encoding passes through, except that a value no
provider accepts (a schema strict mode cannot express) raises `CodecError` too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from toolwire.codecs.common.checks import request_problem, response_problem
from toolwire.codecs.common.degradations import warn_once
from toolwire.codecs.common.shapes import SHAPES, find_bad_field
from toolwire.errors import CodecError, ToolwireError
from toolwire.types import (
    Done,
    Request,
    Response,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
)

if TYPE_CHECKING:
    from toolwire.codecs.common.protocols import StreamEncoder

__all__ = ["GuardedCodec", "GuardedDecoder", "unique_reply_ids"]

_log = logging.getLogger("toolwire.codecs")
_warned: set[str] = set()
_STRAY = (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError, UnicodeError, OverflowError)


@contextlib.contextmanager
def _boundary(codec: str, what: str, body: Any) -> Iterator[None]:
    try:
        yield
    except ToolwireError:
        raise  # CodecError, or a ProviderError for an error payload: already what callers expect
    except _STRAY as exc:
        raise _explain(codec, what, body, exc) from None


def _explain(codec: str, what: str, body: Any, exc: BaseException | None, problem: str | None = None) -> CodecError:
    shape = SHAPES.get(codec, {}).get(what)
    try:
        found = find_bad_field(body, shape) if shape is not None else None
    except RecursionError:
        found = None
    if found is not None:
        path, expected = found
        message = f"The {codec} {what} cannot be read: {path} should be {expected}"
    elif problem is not None:
        message = f"The {codec} {what} cannot be read: {problem}"
    elif isinstance(exc, RecursionError):
        message = f"The {codec} {what} cannot be read: it is nested too deeply"
    elif exc is not None:
        message = f"The {codec} {what} cannot be read: {type(exc).__name__}: {str(exc)[:200]}"
    else:
        message = f"The {codec} {what} cannot be read: a field has the wrong type"
    return CodecError(message + ".", provider=codec)


class GuardedDecoder:
    """A stream decoder whose events and final reply pass the boundary checks.

    A decoder may offer `checked_fast(event)`: the events of a frame of the shape nearly every
    frame has (a text piece, an argument fragment of a known call), which it checked itself while
    reading them, or None. Those pass on as they are; every other frame goes through `feed` and
    the checks here.
    """

    __slots__ = ("_checked_fast", "_codec", "_decoder")

    def __init__(self, codec: str, decoder: Any) -> None:
        self._codec = codec
        self._decoder = decoder
        self._checked_fast: Callable[[dict[str, Any]], list[StreamEvent] | None] | None = getattr(
            decoder, "checked_fast", None
        )

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        """See `StreamDecoder.feed`."""
        # Inline rather than `_boundary`: this runs once per chunk, on the streaming fast path.
        fast = self._checked_fast
        try:
            if fast is not None and (checked := fast(event)) is not None:
                return checked
            events: list[StreamEvent] = self._decoder.feed(event)
        except ToolwireError:
            raise
        except _STRAY as exc:
            raise _explain(self._codec, "event", event, exc) from None
        for index, item in enumerate(events):
            if isinstance(item, _TEXTS):
                fits = type(item.text) is str
            elif isinstance(item, ToolCallDelta):
                fits = _call_delta_fits(item)
            else:
                if type(item) is Done:
                    events[index] = Done(_checked(self._codec, "event", event, item.response))
                continue
            if not fits:
                raise _explain(self._codec, "event", event, None)
        return events

    def finish(self) -> Response:
        """See `StreamDecoder.finish`."""
        with _boundary(self._codec, "stream", None):
            return _checked(self._codec, "stream", None, self._decoder.finish())

    def so_far(self) -> Response:
        """The reply so far, for a look while the stream goes on: `finish` without the final checks.

        A relay packing a call's context into its id looks once per call; the reply is checked
        whole at its end. What the codec cannot build is `finish`'s error.
        """
        try:
            response: Response = self._decoder.finish()
        except Exception:
            return self.finish()
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self._decoder, name)


class GuardedCodec:
    """A codec with its decoding entry points behind the boundary; encoding is passed through."""

    def __init__(self, codec: Any, respelled: Callable[[str], frozenset[str]] | None = None) -> None:
        self._codec = codec
        self.name: str = codec.name
        self._respelled = respelled or (lambda name: frozenset())

    def encode_request(self, request: Request) -> dict[str, Any]:
        """See `Codec.encode_request`; another codec's `extra` options are left out (logged once).

        Keys the other codec kept only for its caller's spelling of a neutral field (`respelled`)
        are left out unnamed: their value travels in that field.
        """
        if request.extra and request.extra_codec not in (None, self.name):
            spellings = self._respelled(request.extra_codec)
            dropped = ", ".join(sorted(k for k in request.extra if k not in spellings))
            if dropped:
                warn_once(
                    _log,
                    _warned,
                    f"{self.name}:{request.extra_codec}:{dropped}",
                    f"{self.name}: left out {request.extra_codec} options it has no equivalent for: {dropped}.",
                )
            request = dataclasses.replace(request, extra={}, extra_codec=None)
        body: dict[str, Any] = self._codec.encode_request(request)
        return body

    def decode_response(self, body: dict[str, Any]) -> Response:
        """See `Codec.decode_response`; bad input raises `CodecError` naming the field."""
        with _boundary(self.name, "response", body):
            response = _checked(self.name, "response", body, self._codec.decode_response(body))
        shape = SHAPES.get(self.name, {}).get("response")
        if shape is not None and find_bad_field(body, shape) is not None:  # a field the decoder skipped
            raise _explain(self.name, "response", body, None)
        return response

    def stream_decoder(self) -> GuardedDecoder:
        """See `Codec.stream_decoder`."""
        return GuardedDecoder(self.name, self._codec.stream_decoder())

    def decode_request(self, body: dict[str, Any]) -> Request:
        """See `Codec.decode_request`; bad input raises `CodecError` naming the field."""
        with _boundary(self.name, "request", body):
            request: Request = self._codec.decode_request(body)
        shape = SHAPES.get(self.name, {}).get("request")
        if shape is not None and find_bad_field(body, shape) is not None:  # e.g. "temperature": "hot"
            raise _explain(self.name, "request", body, None)
        if (problem := request_problem(request)) is not None:  # e.g. a tool_use name that is a list
            raise _explain(self.name, "request", body, None, problem)
        if request.extra and request.extra_codec is None:
            request.extra_codec = self.name
        return request

    def encode_response(self, response: Response) -> dict[str, Any]:
        """See `Codec.encode_response`."""
        body: dict[str, Any] = self._codec.encode_response(response)
        return body

    def stream_encoder(self, model: str | None = None, response_id: str | None = None) -> StreamEncoder:
        """See `Codec.stream_encoder`."""
        encoder: StreamEncoder = self._codec.stream_encoder(model, response_id)
        return encoder

    def encode_stream(self, response: Response) -> list[dict[str, Any]]:
        """See `Codec.encode_stream`."""
        events: list[dict[str, Any]] = self._codec.encode_stream(response)
        return events

    def __getattr__(self, name: str) -> Any:
        return getattr(self._codec, name)

    def __repr__(self) -> str:
        return f"GuardedCodec({self._codec!r})"


_STR_OR_NONE = (str, type(None))
_TEXTS = (TextDelta, ThinkingDelta)  # a tuple: isinstance checks it faster than a union


def _call_delta_fits(delta: ToolCallDelta) -> bool:
    return (
        type(delta.arguments_delta) in _STR_OR_NONE
        and type(delta.id) in _STR_OR_NONE
        and type(delta.name) in _STR_OR_NONE
    )


def _checked(codec: str, what: str, body: Any, response: Response) -> Response:
    if (problem := response_problem(response)) is not None:
        raise _explain(codec, what, body, None, problem)
    return unique_reply_ids(response)


def unique_reply_ids(response: Response) -> Response:
    """Give repeated call ids in one reply a suffix (`call_0`, `call_0_2`), the same in every codec.

    Results are matched to calls by id, so two calls sharing one id would have their results
    crossed or merged by whichever provider receives them next.
    """
    parts = response.message.parts
    taken = {p.id for p in parts if isinstance(p, ToolCall)}
    if len(taken) == sum(isinstance(p, ToolCall) for p in parts):
        return response
    seen: set[str] = set()
    renamed: list[Any] = []
    for part in parts:
        if isinstance(part, ToolCall):
            if part.id in seen:
                n = 2
                while f"{part.id}_{n}" in taken or f"{part.id}_{n}" in seen:
                    n += 1
                part = dataclasses.replace(part, id=f"{part.id}_{n}")
            seen.add(part.id)
        renamed.append(part)
    message = dataclasses.replace(response.message, parts=renamed)
    return dataclasses.replace(response, message=message)
