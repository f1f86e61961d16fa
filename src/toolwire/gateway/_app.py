"""The ASGI app: routes per wire protocol, gateway keys, the request log, disconnect handling.

Every request is checked in order: the gateway key (401), the JSON body (400 naming what is
wrong), the model's route (404 naming the model and the patterns); each failure answers in
the client's own protocol. Then the exchange runs while a watcher waits for the client to
hang up: a disconnect cancels the exchange, and with it the upstream request. One log line
per request says where it went and how it ended. Imports starlette (the `serve`
extra) and the gateway's own modules.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import aclosing, asynccontextmanager, contextmanager
from functools import partial
from types import FrameType
from typing import Any, Protocol

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route as HttpRoute
from starlette.types import Message, Receive, Scope, Send

from toolwire.codecs.common.wire import dumps
from toolwire.gateway._errors import GatewayError, classify
from toolwire.gateway._forwarding import ClientRequest, Last, Start, forward
from toolwire.gateway._limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    BodyLimits,
    header_values,
    parse_json,
    read_body,
)
from toolwire.gateway._metrics import Outcome, gateway_metrics
from toolwire.gateway._protocols import PROTOCOLS, frame
from toolwire.gateway._protocols import Protocol as WireProtocol
from toolwire.gateway._routing import RouteLike, Router, RoutingError
from toolwire.gateway._tokens import estimate_tokens
from toolwire.gateway._warm import warm_up
from toolwire.telemetry import gateway_span, record_gateway

__all__ = ["KEYS_ENV", "HasRoutes", "create_app", "gateway_keys"]

logger = logging.getLogger("toolwire.gateway")
KEYS_ENV = "TOOLWIRE_GATEWAY_KEYS"
_FORWARDED = ("anthropic-beta",)  # request headers a same-protocol upstream still needs
_KEY_HEADERS = (b"authorization", b"x-api-key", b"x-goog-api-key")  # where clients put the gateway key
# How long a reply runs before a task watches for its client hanging up: most replies end
# sooner and need none (a task per request was ~2 % of a fast one); a hang-up is noticed this
# much later at most, and the upstream request is cancelled then.
_WATCH_AFTER = 0.05
# The protocols whose path is fixed (Gemini's and Bedrock's hold the model), by path.
_PROTOCOL_PATHS = {
    "/v1/chat/completions": "openai",
    "/v1/responses": "openai-responses",
    "/v1/messages": "anthropic",
    "/api/chat": "ollama",
}


class HasRoutes(Protocol):
    """A settings object with `[[route]]` tables (`toolwire.config.Config`)."""

    @property
    def routes(self) -> Sequence[RouteLike]: ...


def gateway_keys(value: str | None = None) -> list[str]:
    """The keys clients must present: `TOOLWIRE_GATEWAY_KEYS`, comma-separated (none: open)."""
    raw = os.environ.get(KEYS_ENV, "") if value is None else value
    return [k.strip() for k in raw.split(",") if k.strip()]


class _Gateway:
    """The state one app holds: the routes (with their pooled clients), the keys, the metrics."""

    def __init__(
        self,
        router: Router,
        keys: Sequence[str],
        debug: bool,
        limits: BodyLimits | None = None,
        *,
        access_log: bool = True,
    ) -> None:
        self.router = router
        self._keys = [k.encode() for k in keys]
        self.debug = debug
        self.limits = limits if limits is not None else BodyLimits()
        self.metrics = gateway_metrics()
        self.draining = False
        self.access_log = access_log
        self.warm = False

    def warm_up(self) -> None:
        """Load and build what the first requests would: see `toolwire.gateway._warm`.

        The codecs' first calls once per process; the targets' pools for each event loop it runs in.
        """
        warm_up(self.router, codecs=not self.warm)
        self.warm = True

    def record(self, outcome: Outcome) -> None:
        """Count a finished request in the metrics (when prometheus-client is installed)."""
        if self.metrics is not None:
            self.metrics.record(outcome)

    def authorized(self, request: Request) -> bool:
        """Whether the request carries a gateway key (always, when none is configured).

        An AWS SigV4 signature (boto3's `bedrock-runtime` client) offers the access key id of its
        `Credential`; the signature itself is not verified: the gateway holds no AWS secret.
        """
        if not self._keys:
            return True
        sent = header_values(request)
        bearer, api_key, goog_key = (sent.get(name, b"").decode("latin-1") for name in _KEY_HEADERS)
        offered = [bearer[7:].strip() if bearer[:7].lower() == "bearer " else "", _sigv4_key_id(bearer)]
        offered += [api_key, goog_key]
        found = False
        for given in offered:
            for key in self._keys:
                found |= hmac.compare_digest(given.encode(), key)  # every pair compared: no early exit
        return found

    async def handle(self, request: Request, protocol: WireProtocol, path_model: str | None = None) -> Any:
        """Check the request, then serve it through an exchange."""
        started = time.perf_counter()
        try:
            ex = await self._client_request(request, protocol, path_model)
        except (GatewayError, RoutingError) as exc:
            error = classify(exc)
            if self.access_log:
                _log(request, None, error.status, started)
            attributes = {"toolwire.gateway.protocol": protocol.name}
            with gateway_span(request.method, request.scope["path"], attributes) as span:
                record_gateway(span, error.status, {})
            seconds = time.perf_counter() - started
            self.record(Outcome(protocol=protocol.name, route="-", target="-", status=error.status, seconds=seconds))
            return _error_response(protocol, error)
        if self.debug:
            logger.debug("request body: %s", ex.raw.decode("utf-8", "replace"))
        return _ExchangeResponse(ex, request, started, self)

    async def _client_request(self, request: Request, protocol: WireProtocol, path_model: str | None) -> ClientRequest:
        if not self.authorized(request):
            raise GatewayError(401, "Missing or wrong gateway key: send one of TOOLWIRE_GATEWAY_KEYS as the API key.")
        raw = await read_body(request, self.limits)
        body = _parse_body(raw, protocol)
        model = path_model if path_model is not None else body["model"]
        route = self.router.find(model)
        sent = header_values(request)
        headers = {h: v.decode("latin-1") for h in _FORWARDED if (v := sent.get(h.encode()))}
        for name, value in headers.items():
            if not value.isascii():  # HTTP/1.1 clients send headers as ASCII, httpx2 included
                raise GatewayError(400, f"The {name} header must be ASCII, got {value!r}.", field=name)
        stream = protocol.wants_stream(body, request.path_params.get("action"))
        return ClientRequest(
            protocol=protocol, body=body, raw=raw, model=model, stream=stream, route=route, headers=headers
        )


def _sigv4_key_id(authorization: str) -> str:
    """The access key id of an `AWS4-HMAC-SHA256 Credential=KEY/date/region/service/aws4_request, ...` header."""
    if not authorization.startswith("AWS4-HMAC-SHA256 "):
        return ""
    credential = authorization.partition("Credential=")[2]
    return credential.partition("/")[0].strip()


def _parse_body(raw: bytes, protocol: WireProtocol) -> dict[str, Any]:
    body = parse_json(raw)
    if not isinstance(body, dict):
        raise GatewayError(400, f"The request body must be a JSON object, got {type(body).__name__}.")
    for name, kind in protocol.required.items():
        if name not in body:
            raise GatewayError(
                400, f"The request body has no {name!r} field; {protocol.name} requests need it.", field=name
            )
        if not isinstance(body[name], kind):
            wanted = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
            shown = type(body[name]).__name__
            raise GatewayError(400, f"The {name!r} field must be a {wanted}, got {shown}.", field=name)
    return body


def _error_response(protocol: WireProtocol, error: GatewayError) -> JSONResponse:
    headers = {"retry-after": error.retry_after} if error.retry_after else None
    return JSONResponse(protocol.error_body(error.status, error.message, error.field), error.status, headers)


def _log(request: Request, ex: ClientRequest | None, status: int, started: float, hung_up: bool = False) -> None:
    if not logger.isEnabledFor(logging.INFO):
        return
    ms = (time.perf_counter() - started) * 1000
    if ex is None:
        logger.info("%s %s status=%d %.1fms", request.method, request.scope["path"], status, ms)
        return
    tokens_in, tokens_out = ex.tokens
    logger.info(
        "%s %s model=%s route=%s upstream=%s mode=%s stream=%s status=%d %.1fms tokens=%s/%s%s%s%s",
        request.method,
        request.scope["path"],
        ex.model,
        ex.route.model,
        ex.target.target,
        ex.mode,
        "yes" if ex.stream else "no",
        status,
        ms,
        "-" if tokens_in is None else tokens_in,
        "-" if tokens_out is None else tokens_out,
        f" dropped={','.join(dict.fromkeys(ex.dropped))}" if ex.dropped else "",
        f" fallbacks={','.join(ex.fallbacks)}" if ex.fallbacks else "",
        " client disconnected; upstream request cancelled" if hung_up else "",
    )


class _ExchangeResponse:
    """Runs an exchange as the reply, cancelling it when the client disconnects."""

    def __init__(self, ex: ClientRequest, request: Request, started: float, gateway: _Gateway) -> None:
        self.ex = ex
        self.request = request
        self.started = started
        self.debug = gateway.debug
        self.gateway = gateway
        self.status = 499  # nginx's "client closed request", if nothing else is ever sent
        self.first_byte: float | None = None
        self.ended = False  # the last body piece went out: a disconnect now is the normal end
        self.hung_up = False  # the client left before the reply ended

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ex = self.ex

        async def timed_send(message: Message) -> None:
            if self.first_byte is None and message["type"] == "http.response.body":
                self.first_byte = time.perf_counter() - self.started
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.ended = True

        with gateway_span(self.request.method, self.request.scope["path"], _span_attributes(ex)) as span:
            running = asyncio.current_task()
            assert running is not None
            # A plain task, not anyio's task group: that cost ~0.13 ms before the first byte. Started
            # only once the reply takes `_WATCH_AFTER`: most end sooner, and then no task is made.
            watchers: list[asyncio.Task[None]] = []
            loop = asyncio.get_running_loop()
            timer = loop.call_later(_WATCH_AFTER, self._watch, receive, running, watchers)
            try:
                await self._run(timed_send)
            except asyncio.CancelledError:
                if not self.hung_up or running.uncancel() > 0:
                    raise  # cancelled from outside (shutdown): not ours to swallow
            finally:
                timer.cancel()
                for watcher in watchers:
                    watcher.cancel()
                if self.gateway.access_log:
                    _log(self.request, ex, self.status, self.started, self.hung_up)
                if span is not None:  # a tracer records: what the request became
                    record_gateway(span, self.status, _outcome(ex))
                self.gateway.record(
                    Outcome(
                        protocol=ex.protocol.name,
                        route=ex.route.model,
                        target=ex.target.target,
                        status=self.status,
                        seconds=time.perf_counter() - self.started,
                        first_byte=self.first_byte,
                        tokens=ex.tokens,
                        failures=tuple(ex.failures),
                        fallbacks=tuple(ex.fallbacks),
                    )
                )

    def _watch(self, receive: Receive, exchange: asyncio.Task[Any], watchers: list[asyncio.Task[None]]) -> None:
        watchers.append(asyncio.get_running_loop().create_task(self._watch_disconnect(receive, exchange)))

    async def _watch_disconnect(self, receive: Receive, exchange: asyncio.Task[Any]) -> None:
        """Cancel the exchange (and its upstream request) when the client hangs up mid-reply.

        uvicorn also reports `http.disconnect` once the reply has ended: that is no hang-up.
        """
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                if not self.ended:
                    self.hung_up = True
                    exchange.cancel()
                return

    async def _run(self, send: Send) -> None:
        try:
            pieces = forward(self.ex)
        except Exception as exc:  # building the route's client failed: a configuration problem
            await self._send_error(send, classify(exc))
            return
        async with aclosing(pieces):
            try:
                start = await anext(pieces)
            except Exception as exc:
                await self._send_error(send, classify(exc))
                return
            assert isinstance(start, Start)
            if not self.ex.stream:
                await self._whole(start, pieces, send)
                return
            self.status = start.status
            await send({"type": "http.response.start", "status": start.status, "headers": _raw(start.headers)})
            streams = self.gateway.metrics.streams(self.ex.protocol.name) if self.gateway.metrics else None
            if streams is not None:
                streams.inc()
            try:
                await self._body(pieces, send)
            finally:
                if streams is not None:
                    streams.dec()

    async def _whole(self, start: Start, pieces: AsyncIterator[Start | bytes], send: Send) -> None:
        """A whole reply: one body with its length, so no chunked framing and one write less."""
        try:
            body = b"".join([piece async for piece in pieces if isinstance(piece, bytes)])
        except Exception as exc:
            await self._send_error(send, classify(exc))
            return
        if self.debug:
            logger.debug("reply body: %s", body.decode("utf-8", "replace"))
        self.status = start.status
        headers = [*_raw(start.headers), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": start.status, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _body(self, pieces: AsyncIterator[Start | bytes], send: Send) -> None:
        try:
            async for piece in pieces:
                assert isinstance(piece, bytes)
                if type(piece) is Last:  # the body ends with it
                    self.ended = True
                    await send({"type": "http.response.body", "body": bytes(piece), "more_body": False})
                    return
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        except Exception as exc:  # a bug after the status went out: end the stream with an error event
            error = classify(exc)
            event, data = self.ex.protocol.stream_error(error.status, error.message)
            await send({"type": "http.response.body", "body": frame(self.ex.protocol, data, event), "more_body": True})
        # The client has the whole reply (a client that read its end marker may hang up now): what
        # is left is the chunked body's terminator, and a disconnect before it is no hang-up.
        self.ended = True
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _send_error(self, send: Send, error: GatewayError) -> None:
        self.status = error.status
        body = dumps(self.ex.protocol.error_body(error.status, error.message, error.field)).encode()
        headers = {"content-type": "application/json"}
        if error.retry_after:
            headers["retry-after"] = error.retry_after
        await send({"type": "http.response.start", "status": error.status, "headers": _raw(headers)})
        await send({"type": "http.response.body", "body": body, "more_body": False})


def _outcome(ex: ClientRequest) -> dict[str, Any]:
    outcome = {
        "toolwire.gateway.mode": ex.mode,
        "toolwire.gateway.dropped": ",".join(ex.dropped) or None,
        "toolwire.gateway.upstream": ex.target.target,
    }
    tokens = dict(zip(("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"), ex.tokens, strict=True))
    return outcome | tokens


def _span_attributes(ex: ClientRequest) -> dict[str, Any]:
    return {
        "toolwire.gateway.protocol": ex.protocol.name,
        "gen_ai.request.model": ex.model,
        "toolwire.gateway.route": ex.route.model,
        "toolwire.gateway.upstream": ex.target.target,
        "toolwire.stream": ex.stream,
    }


def _raw(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    """Every response header as sent, control characters escaped.

    A value can carry what a client put in its body (a field name in `x-toolwire-dropped`), and a
    raw CR or LF in it is no header: the server dropped the connection instead of answering.
    """
    return [(k.encode(), _header_value(v)) for k, v in headers.items()]


def _header_value(value: str) -> bytes:
    if value.isprintable():
        return value.encode("latin-1", "replace")
    escaped = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in value)
    return escaped.encode("latin-1", "replace")


# the app


def _routes_of(config: HasRoutes | Iterable[RouteLike] | None) -> Iterable[RouteLike]:
    if config is None:
        return ()
    routes = getattr(config, "routes", None)
    return routes if routes is not None else config  # type: ignore[return-value]


def create_app(
    config: HasRoutes | Iterable[RouteLike] | None = None,
    *,
    keys: Sequence[str] | None = None,
    debug: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    access_log: bool = True,
    warm: bool = True,
) -> Starlette:
    """The gateway as an ASGI app, for `uvicorn` or embedding.

    Args:
        config: `toolwire.config.Config` (its `[[route]]` tables) or a sequence of routes.
        keys: The keys clients must present; default `TOOLWIRE_GATEWAY_KEYS` (none: no check).
        debug: Log request and reply bodies at DEBUG (never headers, so never a key).
        max_body_bytes: The largest request body accepted (413 beyond it, before it is held whole).
        body_timeout: Seconds a client has to send its body (408 after).
        access_log: Log one INFO line per request on `toolwire.gateway` (what, where, status, time).
        warm: At startup, load and build what the first requests would, so they cost what later ones do.
    """
    keys = gateway_keys() if keys is None else list(keys)
    limits = BodyLimits(max_body_bytes, body_timeout)
    gateway = _Gateway(Router(_routes_of(config)), keys, debug, limits, access_log=access_log)

    def endpoint(name: str) -> Any:
        protocol = PROTOCOLS[name]

        async def handle(request: Request) -> Any:
            return await gateway.handle(request, protocol)

        return handle

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if warm:
            gateway.warm_up()
        with _draining_on_sigterm(gateway):
            yield
        await gateway.router.aclose()

    routes = [HttpRoute(path, endpoint(name), methods=["POST"]) for path, name in _PROTOCOL_PATHS.items()]
    routes += [
        HttpRoute("/v1/messages/count_tokens", partial(_count_tokens, gateway), methods=["POST"]),
        HttpRoute("/v1beta/models/{target:path}", partial(_gemini, gateway), methods=["POST"]),
        HttpRoute("/v1/models/{target:path}", partial(_gemini, gateway), methods=["POST"]),  # google-genai 3.x: v1
        HttpRoute("/model/{target:path}", partial(_bedrock, gateway), methods=["POST"]),
        HttpRoute("/v1/models", partial(_list_models, gateway), methods=["GET"]),
        HttpRoute("/health", partial(_health, gateway), methods=["GET"]),
        HttpRoute("/metrics", partial(_metrics_text, gateway), methods=["GET"]),
    ]
    app = _App(gateway, routes=routes, lifespan=lifespan)
    # Starlette answers `/v1/messages/` with a redirect built from the client's Host header: a
    # Location any client can point elsewhere. A path is served as written or not at all.
    app.router.redirect_slashes = False
    app.state.gateway = gateway  # `draining`, `metrics` and `router`, for embedding and tests
    return app


class _App(Starlette):
    """Starlette, with a POST to one of the four fixed protocol paths taken straight to the gateway.

    Those requests need none of Starlette's middleware and routing (about a tenth of a gateway's
    pass-through request): their paths are fixed, their method one, their errors answered in
    the client's protocol by the gateway itself. An exception that escapes reaches the server,
    which answers 500 as Starlette's error middleware would. Every other request (Gemini and
    Bedrock paths that hold the model, the GET routes, a wrong method) goes through Starlette.
    """

    def __init__(self, gateway: _Gateway, **options: Any) -> None:
        super().__init__(**options)
        self._gateway = gateway
        self._direct = {path: PROTOCOLS[name] for path, name in _PROTOCOL_PATHS.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        protocol = self._direct.get(scope["path"]) if scope["type"] == "http" else None
        if protocol is None or scope["method"] != "POST":
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        response = await self._gateway.handle(Request(scope, receive), protocol)
        await response(scope, receive, send)


@contextmanager
def _draining_on_sigterm(gateway: _Gateway) -> Iterator[None]:
    """While the app runs, SIGTERM marks it draining (`/health` answers 503) first.

    Then the server's own handler runs: it stops accepting and lets requests in flight finish.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # an app served from a thread: its server handles no signals either
        return
    previous = signal.getsignal(signal.SIGTERM)

    def drain(number: int, frame: FrameType | None) -> None:
        gateway.draining = True
        logger.info("SIGTERM: draining; requests in flight finish, new connections are refused")
        if callable(previous):
            previous(number, frame)

    signal.signal(signal.SIGTERM, drain)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


async def _gemini(gateway: _Gateway, request: Request) -> Any:
    model, _, action = request.path_params["target"].rpartition(":")
    if action not in ("generateContent", "streamGenerateContent") or not model:
        error = GatewayError(404, f"Unknown Gemini method {action!r}; use generateContent or streamGenerateContent.")
        return _error_response(PROTOCOLS["gemini"], error)
    request.path_params["action"] = action
    return await gateway.handle(request, PROTOCOLS["gemini"], path_model=model)


async def _bedrock(gateway: _Gateway, request: Request) -> Any:
    # The path is decoded already: an ARN's `/` is part of the model id, the last segment the operation.
    model, _, action = request.path_params["target"].rpartition("/")
    if action not in ("converse", "converse-stream") or not model:
        error = GatewayError(404, f"Unknown Bedrock operation {action!r}; use converse or converse-stream.")
        return _error_response(PROTOCOLS["bedrock"], error)
    request.path_params["action"] = action
    return await gateway.handle(request, PROTOCOLS["bedrock"], path_model=model)


async def _list_models(gateway: _Gateway, request: Request) -> Any:
    if not gateway.authorized(request):
        return _error_response(PROTOCOLS["openai"], GatewayError(401, "Missing or wrong gateway key."))
    return JSONResponse(_models(gateway.router))


async def _health(gateway: _Gateway, request: Request) -> JSONResponse:
    if gateway.draining:  # a load balancer stops sending; requests in flight still finish
        return JSONResponse({"status": "draining", "routes": len(gateway.router.routes)}, 503)
    return JSONResponse({"status": "ok", "routes": len(gateway.router.routes)})


async def _metrics_text(gateway: _Gateway, request: Request) -> Response:
    if gateway.metrics is None:
        message = "Metrics need prometheus-client: pip install -e '.[serve]' (in a checkout of toolwire)."
        return PlainTextResponse(message + "\n", 501)
    text, content_type = gateway.metrics.render()
    return Response(text, headers={"content-type": content_type})


def _models(router: Router) -> dict[str, Any]:
    """`GET /v1/models` readable by OpenAI and Anthropic clients alike (each reads its own fields)."""
    data = [
        {
            "id": name,
            "object": "model",
            "type": "model",
            "created": 0,
            "created_at": "1970-01-01T00:00:00Z",
            "owned_by": route.targets[0].target.partition(":")[0],
            "display_name": f"{name} (via {', '.join(t.target for t in route.targets)})",
        }
        for name, route in router.listed_models()
    ]
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return {"object": "list", "data": data, "has_more": False, "first_id": first, "last_id": last}


async def _count_tokens(gateway: _Gateway, request: Request) -> Any:
    protocol = PROTOCOLS["anthropic"]
    if not gateway.authorized(request):
        return _error_response(protocol, GatewayError(401, "Missing or wrong gateway key."))
    try:
        body = _parse_body(await read_body(request, gateway.limits), protocol)
        gateway.router.find(body["model"])
        return JSONResponse({"input_tokens": estimate_tokens(body)})
    except GatewayError as error:
        return _error_response(protocol, error)
    except Exception as exc:  # the routing error and unreadable bodies alike answer in Anthropic's shape
        return _error_response(protocol, classify(exc))
