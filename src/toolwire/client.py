"""Clients: `connect("provider:model")`, the provider table, and the shared client interface.

A client pairs a codec (the wire format) with an `HttpTransport` (the HTTP) and a row of
the provider table (URLs, auth, stream framing). Everything a provider differs in is a
field of that table, not an `if` here. `BaseClient` (`toolwire._base_client`, re-exported
here) holds what every client shares — sync twins, sessions, context managers — so
`toolwire.testing.ScriptedModel` offers the same interface without a socket. Imports codecs
and the transport, never httpx2 itself.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AbstractContextManager, aclosing
from typing import Any, TypeVar, assert_never, cast

from toolwire._address import (
    PARAM_OPTIONS,
    api_root,
    auth_headers,
    check_target,
    resolve_address,
    secret_header_values,
)
from toolwire._base_client import BaseClient, build_request
from toolwire._definitions import ToolLike, as_definitions
from toolwire.codecs import Codec, StreamDecoder, codec_module, get_codec, guarded
from toolwire.codecs.common.wire import dumps
from toolwire.errors import CodecError, ModelFormatError, StreamError, ToolwireError
from toolwire.http import END_OF_STREAM, HttpTransport, RetryPolicy, scrub_error
from toolwire.providers import PROVIDERS, Provider
from toolwire.schema import PORTABLE, SchemaSupport
from toolwire.telemetry import ChatSpan, chat_span
from toolwire.textcalls import TOOL_MODES, ToolMode
from toolwire.toolmodes import OUTPUT_STRATEGIES, OutputStrategy
from toolwire.types import (
    AssistantMessage,
    AssistantPart,
    Done,
    Request,
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

logger = logging.getLogger("toolwire.client")

__all__ = [
    "PROVIDERS",
    "BaseClient",
    "Client",
    "Provider",
    "ToolLike",
    "api_root",
    "as_definitions",
    "build_request",
    "check_target",
    "connect_http",
]


_E = TypeVar("_E", bound=ToolwireError)


def _load_codec(provider: Provider) -> Codec:
    if provider.profile is None:
        return get_codec(provider.codec)

    # A codec with server profiles (capability flags) is built for this provider's profile.
    module = importlib.import_module(codec_module(provider.codec))
    profiles = getattr(module, "PROFILES", None)
    if profiles is None or provider.profile not in profiles:
        return get_codec(provider.codec)
    return guarded(type(module.CODEC)(profiles[provider.profile]))


def connect_http(
    target: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float | None = 60.0,
    max_retries: int = 2,
    **options: Any,
) -> Client:
    """Return an HTTP client for `"provider:model"`, e.g. `connect_http("vllm:qwen3")`.

    Args:
        target: `provider:model`; providers are the keys of `PROVIDERS`.
        api_key: The key (or Vertex bearer token); defaults to the provider's environment variable.
        base_url: Where the API lives; required for `openai-compatible`.
        timeout: Seconds for connecting and for each read; `None` waits forever.
        max_retries: Retries of transient failures (408/409/429/5xx, connection errors).
        **options: `max_tokens`, `temperature`, `parallel_tool_calls`, `extra` (defaults for every
            call), `headers` (extra HTTP headers), `retry_base_delay` / `retry_max_delay` (seconds),
            `deadline` (seconds for a whole request, retries and streaming included),
            `max_connections` (open at once, idle ones included; `None`: no cap; default 100),
            and provider options: Vertex `project`, `location`, `access_token`; Bedrock `region`,
            `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token` (SigV4, used when no
            Bedrock API key is given as `api_key` or `AWS_BEARER_TOKEN_BEDROCK`).

    Raises:
        ValueError: For an unknown provider, a missing model, base URL or option.
        AuthenticationError: When the provider needs a key and none was given or found.
    """
    address = resolve_address(target, api_key, base_url, options)
    provider, key = address.provider, address.key
    headers = auth_headers(provider, key, address.token) | dict(options.get("headers") or {})
    if provider.warn_without_key and key is None and address.token is None:
        variables = " or ".join(provider.key_env)
        logger.warning(
            "%s: no API key given and %s is not set, so no Authorization header is sent; pass api_key=... "
            "(api_key_env in a route or toolwire.toml) if the server wants one.",
            target,
            variables,
        )
    retry = RetryPolicy(
        max_retries=max_retries,
        base_delay=float(options.get("retry_base_delay", 0.5)),
        max_delay=float(options.get("retry_max_delay", 8.0)),
    )
    secrets = [key or "", address.token or "", *address.secrets, *secret_header_values(options.get("headers") or {})]
    deadline = options.get("deadline")
    transport = HttpTransport(
        provider=provider.name,
        headers=headers,
        secrets=secrets,
        timeout=timeout,
        retry=retry,
        deadline=float(deadline) if deadline is not None else None,
        max_connections=options.get("max_connections", 100),
        address_hint=provider.address_hint(),
        signer=address.signer,
    )
    return Client(
        provider=provider,
        model=address.model,
        codec=_load_codec(provider),
        transport=transport,
        url=address.url,
        stream_url=address.stream_url,
        defaults={k: options[k] for k in PARAM_OPTIONS if k in options},
    )


# the HTTP client


class Client(BaseClient):
    """A model behind an HTTP API: a codec for the body, a transport for the wire.

    Build one with `connect`; use it as an (async) context manager or close it when done.
    """

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        codec: Codec,
        transport: HttpTransport,
        url: str,
        stream_url: str,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.provider = provider.name
        self.model = model
        self.codec = codec
        self.spec = provider
        self.url = url
        self.stream_url = stream_url
        self.transport = transport
        self.defaults = dict(defaults or {})

    @property
    def schema_support(self) -> SchemaSupport:
        """What the server's constrained decoding enforces, as its codec (and server profile) says."""
        support = getattr(self.codec, "schema_support", PORTABLE)
        return support if isinstance(support, SchemaSupport) else PORTABLE

    @property
    def output_strategies(self) -> tuple[OutputStrategy, ...]:
        """How a typed reply can be asked of this server, the default first, as its codec (and profile) says."""
        named = getattr(self.codec, "output_strategies", ("prompted",))
        return _ordered(named) or ("prompted",)

    @property
    def preferred_tool_mode(self) -> ToolMode:
        """The tool mode an `Agent` or session takes unless told: the server profile's, else `native`."""
        mode = getattr(self.codec, "preferred_tool_mode", "native")
        return cast(ToolMode, mode) if mode in TOOL_MODES else "native"

    async def complete_request(self, request: Request) -> Response:
        """Send a neutral `Request` as it is (its `model` included) and decode the reply."""
        with self._span(request) as span:
            try:
                body, request_id = await self.transport.post_json(self.url, self.codec.encode_request(request))
            except ToolwireError as error:
                response = self._recover(error, request)
                span.record_response(response)
                return response
            try:
                response = self.codec.decode_response(body)
            except ToolwireError as error:
                error.provider, error.request_id = self.provider, error.request_id or request_id
                raise self._scrub(error) from None
            span.record_response(response)
            return response

    async def stream_request(
        self, request: Request, decoder: StreamDecoder | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream a neutral `Request` as it is; never retried once an event was yielded.

        Args:
            request: The whole request (sent with `stream=True` whatever it says).
            decoder: A fresh `codec.stream_decoder()` to use, so the caller can look at the reply
                accumulated so far (`decoder.finish()`) while events arrive; one is made if omitted.
        """
        async with aclosing(self.stream_batches(request, decoder)) as batches:
            async for batch in batches:
                for event in batch:
                    yield event

    async def stream_batches(
        self, request: Request, decoder: StreamDecoder | None = None
    ) -> AsyncGenerator[list[StreamEvent], None]:
        """`stream_request`'s events in lists: those that arrived in one piece of the body together.

        For a relay (the gateway): what came together goes on in one write, and the events pass
        the layers between here and the write once per piece rather than once each.
        """
        unstreamable = getattr(self.codec, "unstreamable", None)  # the openai codec's server profiles
        reason = unstreamable(request) if unstreamable is not None else None
        if reason is not None:
            logger.debug("Asking %s for a whole reply instead of a stream: %s.", self.provider, reason)
            response = await self.complete_request(dataclasses.replace(request, stream=False))
            yield _whole_reply_events(response)
            return
        if not request.stream:
            request = dataclasses.replace(request, stream=True)
        body = self.codec.encode_request(request)
        with self._span(request) as span:
            started = False
            try:
                async with self.transport.stream(self.stream_url, body, self.spec.framing) as reply:
                    started = True
                    reader = _StreamReader(self, reply.request_id, decoder, with_tools=bool(request.tools))
                    async with aclosing(reader.read(reply.frames)) as batches:
                        async for batch in batches:
                            if isinstance(batch[-1], Done):
                                span.record_response(batch[-1].response)
                                reply.ended()  # a caller may stop reading here: the connection stays
                            yield batch
            except ToolwireError as error:
                if started:
                    raise
                response = self._recover(error, request)  # refused before streaming: maybe a reply after all
                span.record_response(response)
                yield _whole_reply_events(response)

    def _recover(self, error: ToolwireError, request: Request) -> Response:
        """The reply hidden in a failed request (Groq's `tool_use_failed`), or the error, typed as the codec reads it.

        Raises:
            ModelFormatError: The server could not parse the model's call and no call could be read from its text.
            ToolwireError: `error`, or the more specific error the codec reads in its body.
        """
        failed = getattr(self.codec, "failed_generation", None)
        text = failed(error) if failed is not None else None
        if text is None:
            refine = getattr(self.codec, "refine_error", None)
            raise self._scrub(refine(error) if refine is not None else error) from None
        return self._reply_from_text(text, request, error)

    def _reply_from_text(self, text: str, request: Request, error: ToolwireError) -> Response:
        from toolwire.textcalls import parse_tool_calls  # the text-mode parsers, loaded when first needed

        rest, calls = parse_tool_calls(text, request.tools)
        if not calls:
            raise self._scrub(
                ModelFormatError(
                    f"{self.provider} could not parse the model's tool call and neither could toolwire "
                    f"({text[:200]!r}); retry the request (a new sample is usually well formed).",
                    provider=self.provider,
                    status=error.status,
                    request_id=error.request_id,
                    body=error.body,
                    text=text,
                )
            ) from None
        names = ", ".join(call.name for call in calls)
        logger.info("%s could not parse the model's tool call; toolwire read %s from its text.", self.provider, names)
        parts: list[AssistantPart] = [TextPart(text=rest.strip())] if rest.strip() else []
        return Response(
            message=AssistantMessage(parts=[*parts, *calls]),
            stop_reason=StopReason.TOOL_USE,
            raw_stop_reason="tool_calls",
            model=request.model,
            id=error.request_id,
        )

    def _span(self, request: Request) -> AbstractContextManager[ChatSpan]:
        return chat_span(
            provider=self.provider,
            model=request.model,
            url=self.url,
            messages=request.messages,
            tools=request.tools,
            max_tokens=request.max_tokens,
            temperature=request.temperature,
            stream=request.stream,
        )

    def _scrub(self, error: _E) -> _E:
        return scrub_error(error, self.transport.secrets)

    async def _aclose_resources(self) -> None:
        await self.transport.aclose()


def _whole_reply_events(response: Response) -> list[StreamEvent]:
    """A reply that arrived whole, as the events a stream of it would have given: one per part."""
    events: list[StreamEvent] = []
    calls = 0
    for part in response.message.parts:
        match part:
            case TextPart():
                events.append(TextDelta(part.text))
            case ThinkingPart():
                events.append(ThinkingDelta(part.text))
            case ToolCall():
                arguments = dumps(part.arguments) if part.arguments else ""
                events.append(ToolCallDelta(calls, part.id, part.name, arguments))
                calls += 1
            case _:
                assert_never(part)
    events.append(Done(response))
    return events


class _StreamReader:
    """Feeds frames to a fresh decoder and enforces the end-marker rule."""

    def __init__(
        self, client: Client, request_id: str | None, decoder: StreamDecoder | None = None, *, with_tools: bool = False
    ) -> None:
        self.client = client
        self.with_tools = with_tools
        self.request_id = request_id
        self.decoder = decoder if decoder is not None else client.codec.stream_decoder()
        self.events: list[StreamEvent] = []
        self.ended = False
        self._end = client.spec.stream_end

    async def read(self, frames: AsyncIterator[list[Any]]) -> AsyncGenerator[list[StreamEvent], None]:
        """The events of each list of frames (none empty); a `Done` is the last event of the last list."""
        try:
            async for batch in frames:
                out: list[StreamEvent] = []
                end = self._take(batch, out)
                if out:
                    yield out
                if end is not None:  # the decoder's `Done` (the reply is read), or the end marker
                    if end:
                        return
                    break
        except StreamError as error:
            error.partial = list(self.events)
            error.request_id = error.request_id or self.request_id
            raise
        yield [self._done()]

    def _take(self, batch: list[Any], out: list[StreamEvent]) -> bool | None:
        """Decode one list of frames into `out`: True at the decoder's `Done`, False at the end marker.

        One call per list, the frames decoded inline: this runs for every event of every stream.
        """
        stream_end, decoder, seen = self._end, self.decoder, self.events
        for frame in batch:
            if frame is END_OF_STREAM:
                self.ended = True
                return False
            if stream_end is not None and stream_end(frame):
                self.ended = True
            try:
                events = decoder.feed(frame)
            except ToolwireError as error:
                raise self._failed(error) from None
            for event in events:
                seen.append(event)
                out.append(event)
                if isinstance(event, Done):  # the reply's end: nothing after it is read
                    return True
        return None

    def _done(self) -> Done:
        """The reply of a stream whose end marker came without a `Done` of the decoder's."""
        if not self.ended and self.with_tools and not self.events:
            raise self._refused()
        if not self.ended:
            raise self._cut("ended before its end marker")
        done = Done(self._finish())
        self.events.append(done)
        return done

    def _failed(self, error: ToolwireError) -> ToolwireError:
        """What a frame the decoder refused becomes: a cut stream, or the provider's error event."""
        if isinstance(error, CodecError):
            return self._cut(f"sent an event toolwire cannot read ({error.message})")
        # An error event (typed by its code, Bedrock's by its type), a filter stop.
        error.provider, error.request_id = self.client.provider, error.request_id or self.request_id
        error.partial = list(self.events)  # what streamed before the error event is not lost
        return self.client._scrub(error)

    def _finish(self) -> Response:
        return self.decoder.finish()

    def _refused(self) -> StreamError:
        """A 200 with an empty body: how llama-cpp-python refuses to stream tool calls; a retry gets the same."""
        provider = self.client.provider
        error = StreamError(
            f"The {provider} server accepted the stream and sent nothing, as servers that cannot stream tool "
            f"calls do (llama-cpp-python unless a tool is named); retrying will not help: connect with the "
            f"server's own provider (such as 'llama-cpp-python', profile flag streamed_tool_choices='named') "
            f"or call without streaming.",
            provider=provider,
            request_id=self.request_id,
            partial=[],
        )
        return self.client._scrub(error)

    def _cut(self, what: str) -> StreamError:
        error = StreamError(
            f"The {self.client.provider} stream {what}; the reply is incomplete, retry the request.",
            provider=self.client.provider,
            request_id=self.request_id,
            partial=list(self.events),
        )
        return self.client._scrub(error)


def _ordered(named: tuple[str, ...]) -> tuple[OutputStrategy, ...]:
    """The known strategies among `named`, in `named`'s order (its first is the default)."""
    by_name = {s: s for s in OUTPUT_STRATEGIES}
    return tuple(by_name[n] for n in named if n in by_name)
