"""One client request forwarded upstream: passed through as bytes, or translated through the neutral format.

Both paths are async generators of `Start` (status and headers, exactly once, first) and then
body bytes (a translated stream's last piece marked `Last`), so the HTTP layer sends the status
only once the upstream has answered (an upstream 429 becomes the client's 429) and every later
piece as soon as it exists.

- Passthrough (client protocol = upstream protocol, `tool_mode = "native"`, no packed
  context in the body): the body goes upstream with only the model replaced, and the reply's
  bytes come back untouched, so fields toolwire does not model survive.
- Translation, read in order: the client's codec decodes the body, packed context is restored
  (`_packed_context`) and what the target cannot carry is dropped and named; the route's
  target is picked (`forward`, with fallback); the tool-mode engine (`toolwire.toolmodes`)
  asks the target's client in the target's mode (a call read out of the reply's text that was
  cut, or names a tool the client never offered, reaches the client as text, never as a call
  it would run); the reply (or each stream event, through the
  client codec's `stream_encoder()`) is encoded in the client's protocol.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from toolwire import toolmodes
from toolwire.client import Client
from toolwire.codecs import StreamDecoder, get_codec
from toolwire.codecs.common.degradations import collect_degradations
from toolwire.codecs.common.wire import dumps
from toolwire.errors import CodecError, ProviderError, ToolwireError
from toolwire.gateway._errors import GatewayError, classify
from toolwire.gateway._namespaces import namespaced_tools, with_namespaces
from toolwire.gateway._packed_context import MARK, SIGNATURE_MARK, pack_response, unpack_request
from toolwire.gateway._protocols import Protocol, frame, usage_of
from toolwire.gateway._relay import OpeningAhead, Relay, client_view
from toolwire.gateway._routing import Route, RouteConfigError, Target
from toolwire.http import parse_retry_after
from toolwire.types import Done, Request, Response, StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta

__all__ = ["ClientRequest", "Last", "Start", "forward"]

logger = logging.getLogger("toolwire.gateway")
_warned: set[tuple[str, str, str]] = set()
_WIRE_ONLY = frozenset({"stream", "stream_options"})  # how a reply is framed, not what it says
# Fields a codec decodes into the neutral request yet also keeps in `extra` for an exact round
# trip (Gemini keeps its own spelling of contents and tool schemas, Anthropic cached system blocks and tool
# lists with server tools, Responses tool lists with hosted and namespace tools): their neutral
# part crosses protocols, and what does not is named by the codec's own degradation warnings.
_MODELED = {
    "gemini": frozenset({"contents", "tools", "toolConfig"}),
    "anthropic": frozenset({"system", "tools"}),
    "openai-responses": frozenset({"tools"}),
    "openai": frozenset({"tools", "max_tokens", "max_completion_tokens"}),  # the caller's spelling of max_tokens
    "bedrock": frozenset({"system", "toolConfig"}),
}
# Fields whose `extra` value holds only what the neutral form left out of them (name those parts).
_PARTIAL = {"gemini": frozenset({"generationConfig"})}
_MARKS = (MARK.encode(), SIGNATURE_MARK.encode())


@dataclass(slots=True)
class Start:
    """The reply's status and headers; always the first thing an exchange yields."""

    status: int
    headers: dict[str, str]


class Last(bytes):
    """A stream's last body piece: it goes out with the end of the body, in one write."""

    __slots__ = ()


@dataclass(slots=True, kw_only=True)
class ClientRequest:
    """One inbound request and what the log line says about it.

    Attributes:
        protocol: The client's protocol.
        body: The parsed request body.
        raw: The body's bytes (searched for packed context without parsing anything again).
        model: The model the client asked for.
        stream: Whether the client asked for a stream.
        route: The route serving it.
        headers: Request headers to hand to a same-protocol upstream (`anthropic-beta`).
        target: The route's target trying it now (the first one until `forward` picks).
        fallback_left: Another target would take the request if this one failed now.
        fallbacks: The targets that failed before any byte went out, in order.
        failures: Every upstream failure while serving it: (target, status for the client).
    """

    protocol: Protocol
    body: dict[str, Any]
    raw: bytes
    model: str
    stream: bool
    route: Route
    headers: dict[str, str] = field(default_factory=dict)
    target: Target = field(init=False)
    fallback_left: bool = False
    fallbacks: list[str] = field(default_factory=list)
    failures: list[tuple[str, int]] = field(default_factory=list)
    mode: str = "-"
    tokens: tuple[int | None, int | None] = (None, None)
    dropped: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.target = self.route.targets[0]

    def upstream(self) -> Client:
        """The client of the target trying the request now."""
        return self.target.client(self.route.model)

    @property
    def foreign(self) -> bool:
        """Whether the upstream speaks another protocol than the client."""
        return self.upstream().codec.name != self.protocol.name

    @property
    def passthrough(self) -> bool:
        """Whether the body can go upstream as it is (not to a server whose quirks need applying)."""
        upstream = self.upstream()
        return (
            upstream.codec.name == self.protocol.name
            and getattr(upstream.codec, "verbatim", True)
            and self.target.tool_mode == "native"
            and not any(mark in self.raw for mark in _MARKS)
            and not (_asks_format(self.body) and upstream.output_strategies[0] != "native")
        )


def _asks_format(body: dict[str, Any]) -> bool:
    """Whether a body asks for JSON output, in any protocol's field (a strategy may have to carry it)."""
    config = body.get("generationConfig")
    text = body.get("text")
    return (
        any(body.get(key) for key in ("response_format", "format", "output_config"))
        or (isinstance(text, dict) and "format" in text)
        or (isinstance(config, dict) and any(k in config for k in ("responseJsonSchema", "responseSchema")))
    )


async def forward(ex: ClientRequest) -> AsyncGenerator[Start | bytes, None]:
    """The reply to one request: `Start`, then body bytes, from the first target that answers.

    One rule for both paths: a target that gave no reply (unreachable, a timeout, a 429 or a
    5xx, a 200 whose body is not JSON, a stream cut before its first text or call) hands the
    request to the next candidate of the route, with its own tool mode and translation; the
    last candidate's failure reaches the client. A reply the decoder refuses was still a reply
    (and billed): it is a 502, never asked of a second target. Once the status is out, the
    reply is that target's, errors included. `x-toolwire-target` names who served it.
    """
    candidates = ex.route.candidates()
    for number, target in enumerate(candidates):
        ex.target, ex.fallback_left = target, number < len(candidates) - 1
        target.in_flight += 1
        started = False
        try:
            pieces = _passthrough(ex) if ex.passthrough else _translate(ex)
            async with aclosing(pieces):
                start = await anext(pieces)  # upstream errors are raised before it
                assert isinstance(start, Start)
                started = True
                target.succeeded()
                start.headers["x-toolwire-target"] = target.target
                yield start
                async for piece in pieces:
                    yield piece
                return
        except (ToolwireError, RouteConfigError) as exc:  # the upstream's failure; a bug here is not one
            if started:
                raise
            error = classify(exc)
            if not _worth_another_target(error.status) or isinstance(exc, CodecError):
                raise
            ex.failures.append((target.target, error.status))
            target.failed(ex.route.cooldown, _seconds(error.retry_after))
            if number == len(candidates) - 1:
                raise
            ex.fallbacks.append(target.target)
            ex.dropped.clear()  # the next target names what it drops
            logger.warning(
                "route %r: %s failed (%s); trying the next target", ex.route.model, target.target, error.message
            )
        finally:
            target.in_flight -= 1
    raise AssertionError("a route has at least one target")  # pragma: no cover


def _worth_another_target(status: int) -> bool:
    """Failures another upstream may not have: rate limits, upstream faults, timeouts, unreachable."""
    return status == 429 or status >= 500


def _seconds(retry_after: str | None) -> float | None:
    """The upstream's wish in seconds, bounded as the transport reads it (None: the cool-down applies)."""
    return parse_retry_after({"retry-after": retry_after}) if retry_after else None


# passthrough


async def _passthrough(ex: ClientRequest) -> AsyncGenerator[Start | bytes, None]:
    ex.mode = "passthrough"
    client = ex.upstream()
    body = ex.body | {"model": ex.target.target_model} if "model" in ex.body else ex.body
    url = client.stream_url if ex.stream else client.url
    async with client.transport.forward(url, dumps(body).encode(), stream=ex.stream, headers=ex.headers) as reply:
        headers = {"content-type": reply.content_type}
        if not ex.stream:
            data = await reply.read()
            ex.tokens = _tokens(_json_reply(data, client.provider, reply.status))
            yield Start(reply.status, headers)
            yield data
            return
        if not reply.content_type.startswith(ex.protocol.media_type):  # a stream that is none: no reply
            raise ProviderError(
                f"{client.provider} answered a stream request with {reply.content_type!r}, not a "
                f"{ex.protocol.media_type} stream; check base_url points at the provider's API.",
                provider=client.provider,
                status=reply.status,
            )
        chunks = reply.chunks()
        held = await _until_content(chunks, ex.protocol) if ex.fallback_left else []
        yield Start(reply.status, headers | {"cache-control": "no-cache"})
        try:
            for chunk in held:
                yield chunk
            async for chunk in chunks:
                yield chunk
        except ToolwireError as exc:
            error = classify(exc)
            ex.failures.append((ex.target.target, error.status))
            name, payload = ex.protocol.stream_error(error.status, error.message)
            # Ends an SSE event the upstream left half-written; binary frames need no separator.
            separator = b"" if ex.protocol.framing == "eventstream" else b"\n\n"
            yield separator + frame(ex.protocol, payload, name)


def _json_reply(data: bytes, provider: str, status: int) -> dict[str, Any]:
    """A passthrough reply's body, which must be a JSON object, as it must when translated."""
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        body = None
    if not isinstance(body, dict):
        raise ProviderError(
            f"{provider} answered with a body that is not a JSON object: {data[:200]!r}; "
            "check base_url points at the provider's API.",
            provider=provider,
            status=status,
        )
    return body


def _tokens(body: dict[str, Any]) -> tuple[int | None, int | None]:
    return usage_of(body)


_HOLD_BYTES = 256 * 1024  # a stream that says nothing for this long is passed on as it is


async def _until_content(chunks: AsyncIterator[bytes], protocol: Protocol) -> list[bytes]:
    """A passthrough stream's first chunks, held until its first text or call (or its end).

    With another target left, the client's stream begins only there, as a translated one does
    (`_Upstream`): an upstream that sends its opening frame and is cut hands the request on.
    """
    watch = _FirstContent(protocol)
    held: list[bytes] = []
    size = 0
    async for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        if watch.feed(chunk) or size > _HOLD_BYTES:
            break
    return held


class _FirstContent:
    """Reads a passthrough stream's frames with its codec's decoder until one carries content."""

    def __init__(self, protocol: Protocol) -> None:
        self._decoder = get_codec(protocol.name).stream_decoder()
        self._separator = b"\n" if protocol.framing == "ndjson" else b"\n\n"
        self._rest = b""

    def feed(self, chunk: bytes) -> bool:
        *frames, self._rest = (self._rest + chunk).replace(b"\r\n", b"\n").split(self._separator)
        return any(self._carries_content(frame) for frame in frames)

    def _carries_content(self, frame: bytes) -> bool:
        if self._separator == b"\n\n":
            frame = b"\n".join(line[5:].strip() for line in frame.split(b"\n") if line.startswith(b"data:"))
        if not frame.strip() or frame.strip() == b"[DONE]":
            return False
        try:
            events = self._decoder.feed(json.loads(frame))
        except Exception:  # not the upstream's protocol after all: the client sees it as it came
            return True
        return any(
            isinstance(e, ToolCallDelta | Done) or (isinstance(e, TextDelta | ThinkingDelta) and e.text) for e in events
        )


# translation


def _inbound(ex: ClientRequest, target: str) -> Request:
    """The client's body as the neutral request the route's upstream gets."""
    if ex.protocol.name == "openai-responses" and ex.body.get("previous_response_id") is not None:
        raise GatewayError(
            400,
            "previous_response_id needs state a translating gateway does not keep; "
            "send the whole conversation as input (store: false).",
            field="previous_response_id",
        )
    try:
        request = get_codec(ex.protocol.name).decode_request(ex.body)
    except Exception as exc:  # a body the codec cannot read is the client's 400, whatever the decoder raised
        logger.debug("cannot decode a %s request", ex.protocol.name, exc_info=True)
        raise GatewayError(400, f"The {ex.protocol.name} request body cannot be read: {exc}") from None
    unpack_request(request, ex.protocol.name)
    extra = request.extra
    if target != ex.protocol.name and extra:
        for name in _lost_fields(ex.protocol.name, extra):
            ex.dropped.append(f"{ex.protocol.name}:{name}")
            if (ex.protocol.name, name, target) not in _warned:  # logged once per process, named every time
                _warned.add((ex.protocol.name, name, target))
                logger.warning("%s field %r has no equivalent in %s; dropped.", ex.protocol.name, name, target)
        extra = {}
    request.model, request.stream, request.extra = ex.target.target_model, ex.stream, extra  # decoded here: ours
    return request


def _lost_fields(protocol: str, extra: dict[str, Any]) -> list[str]:
    """The names of request fields the neutral form did not take in (nested ones dotted, one level)."""
    names: list[str] = []
    for key, value in extra.items():
        if key in _WIRE_ONLY or key in _MODELED.get(protocol, ()) or value in ({}, [], None):
            continue
        partial = isinstance(value, dict) and key in _PARTIAL.get(protocol, ())
        names.extend(f"{key}.{sub}" for sub in value) if partial else names.append(key)
    return names


async def _translate(ex: ClientRequest) -> AsyncGenerator[Start | bytes, None]:
    state = ex.target.modes
    ex.mode = "translate" if state.mode == "native" else f"translate+{state.mode}"
    client = ex.upstream()
    with collect_degradations() as degraded:
        request = _inbound(ex, client.codec.name)
        strategy = _output_strategy(ex, client, request)
        if not ex.stream:
            response = await (
                toolmodes.complete_formatted(client, request, state, strategy, runnable_only=True)
                if strategy is not None
                else toolmodes.complete(client, request, state, runnable_only=True)
            )
            ex.dropped.extend(degraded)
            async for piece in _whole_reply(ex, response):
                yield piece
            return
        ahead = OpeningAhead(ex.protocol, ex.model)
        asyncio.get_running_loop().call_soon(ahead.encode)  # runs while the upstream is asked
        upstream = _Upstream(client, opening=not ex.fallback_left)
        batches = (
            toolmodes.stream_formatted_batches(
                client, request, state, strategy, opener=upstream.open, runnable_only=True
            )
            if strategy is not None
            else toolmodes.stream_batches(client, request, state, opener=upstream.open, runnable_only=True)
        )
        first = await _first(batches)  # upstream errors are raised here, before any status goes out
        ex.dropped.extend(degraded)
    async with aclosing(batches):
        names = namespaced_tools(ex.protocol.name, ex.body)
        relay = Relay(ex.protocol, ex.model, upstream, foreign=ex.foreign, namespaces=names, ahead=ahead)
        headers = _headers(ex, ex.protocol.media_type) | {"cache-control": "no-cache"}
        yield Start(200, headers)
        data = b""  # what arrived together goes out in one write
        try:
            batch: list[StreamEvent] | None = first
            while batch is not None:
                data = relay.feed(batch)
                if isinstance(batch[-1], Done):
                    break  # the reply's last events go with the stream's closing bytes, in the body's last write
                if data:
                    yield data
                data, batch = b"", await anext(batches, None)
            yield Last(data + relay.finish())
        except (ToolwireError, ValueError) as exc:
            error = classify(exc) if isinstance(exc, ToolwireError) else _unsendable(ex, exc)
            ex.failures.append((ex.target.target, error.status))
            logger.warning("upstream failed mid-stream (%s): %s", ex.target.target, error.message)
            yield Last(data + relay.error(error.status, error.message))
        finally:
            ex.tokens = relay.tokens
            ex.dropped.extend(relay.dropped)


def _output_strategy(ex: ClientRequest, client: Client, request: Request) -> toolmodes.OutputStrategy | None:
    """How the client's response format reaches the upstream (None: in the upstream's own field)."""
    try:
        strategy = toolmodes.format_strategy(client, request)
    except ValueError as exc:
        raise GatewayError(400, f"The response format cannot be honoured: {exc}", field="response_format") from None
    if strategy is not None:
        ex.mode += f"+output-{strategy}"
    return strategy


async def _first(events: AsyncGenerator[list[StreamEvent], None]) -> list[StreamEvent]:
    try:
        return await anext(events)
    except BaseException:
        await events.aclose()
        raise


async def _whole_reply(ex: ClientRequest, response: Response) -> AsyncIterator[Start | bytes]:
    if response.usage is not None:
        ex.tokens = (response.usage.input_tokens, response.usage.output_tokens)
    response = with_namespaces(response, namespaced_tools(ex.protocol.name, ex.body))
    response, dropped = pack_response(client_view(response, ex.model, ex.foreign), ex.protocol.name)
    ex.dropped.extend(dropped)
    try:
        data = dumps(get_codec(ex.protocol.name).encode_response(response)).encode()
    except ValueError as exc:  # a lone surrogate, say: the upstream's fault, never the client's
        raise _unsendable(ex, exc) from None
    yield Start(200, _headers(ex, "application/json"))
    yield data


def _unsendable(ex: ClientRequest, exc: ValueError) -> GatewayError:
    return GatewayError(
        502, f"The upstream's reply cannot be sent as a {ex.protocol.name} reply ({exc}); retry, or ask the upstream."
    )


def _headers(ex: ClientRequest, media_type: str) -> dict[str, str]:
    headers = {"content-type": media_type}
    if ex.dropped:
        names = dict.fromkeys(ex.dropped)  # ordered, once each
        headers["x-toolwire-dropped"] = ", ".join(n.encode("ascii", "replace").decode() for n in names)
    return headers


class _Opening:
    """The upstream's decoder, with an empty `TextDelta` for a first frame that carries nothing yet.

    That frame is OpenAI's role chunk, Anthropic's `message_start`, Responses' `response.created`;
    every stream encoder opens its stream on that alone (`message_start`, the role chunk), so the
    client's stream begins when the upstream's does rather than with the first text or call.
    """

    def __init__(self, decoder: StreamDecoder) -> None:
        self._decoder = decoder

    def feed(self, event: dict[str, Any]) -> list[StreamEvent]:
        events = self._decoder.feed(event)
        self.feed = self._decoder.feed  # type: ignore[method-assign]  # opened: later frames go straight to the decoder
        return events or [TextDelta("")]

    def finish(self) -> Response:
        return self._decoder.finish()

    def so_far(self) -> Response:
        return _so_far(self._decoder)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._decoder, name)  # what else the decoder offers (`plain`)


def _so_far(decoder: StreamDecoder) -> Response:
    """The reply so far: unchecked where the decoder can (a guarded one), else `finish()`."""
    look = getattr(decoder, "so_far", None)
    return look() if callable(look) else decoder.finish()


class _Upstream:
    """Opens the upstream's streams for the tool-mode engine, keeping the decoder of the latest one.

    The relay reads the reply so far from it (`finish`) when it packs a call's context into its id.

    Args:
        client: The target's client.
        opening: Whether the client's stream opens with the upstream's first frame (`_Opening`);
            with another target left, it opens on the first text or call instead, so an upstream
            that fails right after its opening frame still hands the request on.
    """

    def __init__(self, client: Client, *, opening: bool) -> None:
        self.client = client
        self.opening = opening
        self.decoder: StreamDecoder | None = None

    def open(self, request: Request) -> AsyncGenerator[list[StreamEvent], None]:
        """The upstream's events in the lists that arrived together."""
        decoder = self.client.codec.stream_decoder()
        self.decoder = _Opening(decoder) if self.opening else decoder
        return self.client.stream_batches(request, self.decoder)

    def finish(self) -> Response:
        """The reply so far (unchecked: the relay only looks at it; the whole reply is checked at its end)."""
        assert self.decoder is not None  # the relay asks only once events arrived
        return _so_far(self.decoder)

    def plain(self) -> bool:
        """Whether the reply so far is text and calls without metadata (False when the decoder cannot tell)."""
        look = getattr(self.decoder, "plain", None)
        return bool(look()) if callable(look) else False
