"""A real HTTP server on 127.0.0.1 that speaks the providers' wire protocols from a script.

Routes by path suffix, so any base URL pointing at the server works: `/chat/completions`
(openai), `/responses` (openai-responses), `/messages` (anthropic), `:generateContent` and
`:streamGenerateContent` (gemini, Vertex paths included), `/api/chat` (ollama),
`/model/{modelId}/converse` and `/converse-stream` (bedrock, streamed as an AWS event stream).
Each incoming body is decoded with the codec's `decode_request`; each reply is rendered with
`encode_response` / `encode_stream`. Uses only the standard library's `http.server`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from toolwire.codecs import get_codec
from toolwire.http import EVENTSTREAM_MEDIA_TYPE, encode_event
from toolwire.testing._script import Delay, DropStream, ErrorReply, RawReply, Turn, reply, resolve_turn
from toolwire.types import Request, Response, Usage

if TYPE_CHECKING:
    from toolwire.client import Client

__all__ = ["RecordedRequest", "ScriptedServer"]


# routes


def _openai_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "scripted_error", "param": None, "code": str(status)}}


def _anthropic_error(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "scripted_error", "message": message}}


def _gemini_error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": "SCRIPTED_ERROR"}}


def _ollama_error(status: int, message: str) -> dict[str, Any]:
    return {"error": message}


def _bedrock_error(status: int, message: str) -> dict[str, Any]:
    return {"message": message}


@dataclass(frozen=True, slots=True)
class _Route:
    codec: str
    framing: Literal["sse", "sse-named", "ndjson", "eventstream"]
    error_body: Callable[[int, str], dict[str, Any]]
    done_marker: bool = False
    stream_default: bool = False


_ROUTES: tuple[tuple[str, _Route], ...] = (
    ("/chat/completions", _Route("openai", "sse", _openai_error, done_marker=True)),
    ("/responses", _Route("openai-responses", "sse-named", _openai_error)),
    ("/messages", _Route("anthropic", "sse-named", _anthropic_error)),
    (":generateContent", _Route("gemini", "sse", _gemini_error)),
    (":streamGenerateContent", _Route("gemini", "sse", _gemini_error, stream_default=True)),
    ("/api/chat", _Route("ollama", "ndjson", _ollama_error, stream_default=True)),  # Ollama streams by default
    ("/converse", _Route("bedrock", "eventstream", _bedrock_error)),
    ("/converse-stream", _Route("bedrock", "eventstream", _bedrock_error, stream_default=True)),
)


def _route_for(path: str) -> _Route | None:
    bare = path.split("?", 1)[0]
    return next((route for suffix, route in _ROUTES if bare.endswith(suffix)), None)


@dataclass(slots=True, kw_only=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        path: The path with its query string.
        headers: The request headers, names lower-cased.
        body: The parsed JSON body.
        codec: The wire format the path selected (`None` for unknown paths).
        request: The body decoded by that codec's `decode_request` (`None` if it could not be).
        decode_error: Why decoding failed, if it did.
        stream: Whether the request asked for a stream.
        raw_body: The body's bytes as they arrived (what a request signature covers).
    """

    path: str
    headers: dict[str, str]
    body: Any
    codec: str | None = None
    request: Request | None = None
    decode_error: str | None = None
    stream: bool = False
    raw_body: bytes = b""


# the server


class ScriptedServer:
    """A loopback HTTP server replaying a script of turns (see `toolwire.testing._script`).

    Use it as a context manager: `with ScriptedServer(["hello"]) as server: ...`; point a
    client at `server.base_url` (or use `server.connect("anthropic:model")`), then assert
    on `server.requests`. A call beyond the end of the script gets HTTP 500. A callable
    script (`Request -> Turn`) answers every request, however many arrive at once.
    """

    def __init__(self, script: Iterable[Turn] | Callable[[Request], Turn] = (), *, keep_requests: bool = True) -> None:
        self.requests: list[RecordedRequest] = []
        self.request_count = 0
        self.keep_requests = keep_requests  # False for long runs: memory stays flat, only the count is kept
        self._function = script if callable(script) else None
        self._script: deque[Turn] = deque() if callable(script) else deque(script)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._sockets: set[socket.socket] = set()
        self._counter = 0

    def add(self, *turns: Turn) -> None:
        """Append turns to the script."""
        with self._lock:
            self._script.extend(turns)

    @property
    def remaining(self) -> int:
        """How many scripted turns are still unanswered."""
        return len(self._script)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`; every provider's paths work below it."""
        if self._httpd is None:
            raise RuntimeError("The ScriptedServer is not running; use it as a context manager or call start().")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def connect(self, target: str, **kwargs: Any) -> Client:
        """`toolwire.connect` aimed at this server, with a dummy key and fast retries."""
        from toolwire.client import connect_http

        kwargs.setdefault("api_key", "test-key")
        kwargs.setdefault("retry_base_delay", 0.001)
        kwargs.setdefault("retry_max_delay", 0.01)
        if target.startswith("vertex:"):
            kwargs.setdefault("project", "test-project")
        if target.startswith("bedrock:"):
            kwargs.setdefault("region", "us-east-1")
        return connect_http(target, base_url=self.base_url, **kwargs)

    def start(self) -> Self:
        """Start serving on a free port."""
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_class(self))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},  # stop() waits for one poll; keep it short for fast tests
            name="toolwire-scripted-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop every open connection."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        with self._lock:
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # used by the handler

    def _next_turn(self) -> tuple[Turn | None, str]:
        with self._lock:
            self._counter += 1
            request_id = f"req_{self._counter}"
            if self._function is not None:
                return self._function, request_id
            return (self._script.popleft() if self._script else None), request_id

    def _track(self, sock: socket.socket, alive: bool) -> None:
        with self._lock:
            (self._sockets.add if alive else self._sockets.discard)(sock)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the default 5 resets connections under many concurrent clients

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up early (timeouts, dropped streams) are expected here, not errors."""


def _handler_class(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes; Nagle would delay keep-alive replies
    timeout = 10  # idle keep-alive connections give up instead of pinning a thread
    owner: ScriptedServer

    def setup(self) -> None:
        super().setup()
        self.owner._track(self.connection, alive=True)

    def finish(self) -> None:
        self.owner._track(self.connection, alive=False)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read `server.requests`, not a log."""

    def do_POST(self) -> None:
        """Record the request, then answer it with the next scripted turn."""
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        route = _route_for(self.path)
        record = self._record(route, body)
        record.raw_body = raw
        if route is None:
            self._send_json(404, {"error": {"message": f"ScriptedServer has no route for {self.path!r}."}}, {})
            return
        turn, request_id = self.owner._next_turn()
        if turn is None:
            message = f"ScriptedServer: the script is exhausted (request {self.owner.request_count})."
            self._send_json(500, route.error_body(500, message), {})
            return
        request = record.request or Request(model="", messages=[])
        self._answer(route, record.stream, resolve_turn(turn, request), request_id, request)

    def _record(self, route: _Route | None, body: Any) -> RecordedRequest:
        record = RecordedRequest(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            codec=route.codec if route else None,
        )
        if route is not None:
            record.stream = ":streamGenerateContent" in self.path or (
                isinstance(body, dict) and bool(body.get("stream", route.stream_default))
            )
            try:
                record.request = get_codec(route.codec).decode_request(body)
            except Exception as exc:  # a test double must record what it could not read, not crash
                record.decode_error = f"{type(exc).__name__}: {exc}"
            if record.request is not None and route.codec == "bedrock":  # the model id is in the path
                record.request.model = _bedrock_model(self.path)
        with self.owner._lock:
            self.owner.request_count += 1
            if self.owner.keep_requests:
                self.owner.requests.append(record)
        return record

    def _answer(self, route: _Route, stream: bool, turn: Turn, request_id: str, request: Request) -> None:
        headers = {"x-request-id": request_id}
        if isinstance(turn, Response):
            turn = _complete(turn, request, request_id)
        match turn:
            case Delay(seconds=seconds, then=then):
                time.sleep(seconds)
                self._answer(route, stream, resolve_turn(then, request), request_id, request)
            case ErrorReply(status=status, message=message, body=body, headers=extra):
                payload = route.error_body(status, message) if body is None else body
                self._send_json(status, payload, headers | extra)
            case RawReply():
                self._send_bytes(turn.status, turn.body, turn.content_type, headers | turn.headers)
            case DropStream(response=response, after=after, clean=clean):
                resolved = reply(response) if isinstance(response, str) else response
                events = get_codec(route.codec).encode_stream(resolved)[:after]
                self._send_stream(route, events, headers, end=False, clean=clean)
            case Response() if stream:
                events = get_codec(route.codec).encode_stream(turn)
                self._send_stream(route, events, headers, end=True, clean=True)
            case Response():
                self._send_json(200, get_codec(route.codec).encode_response(turn), headers)
            case _:
                self._send_json(500, route.error_body(500, f"ScriptedServer cannot answer with {turn!r}."), headers)

    def _send_json(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        if status >= 400 and "/converse" in self.path:  # Bedrock names the error type in a header
            headers = {"x-amzn-errortype": f"ScriptedError{status}"} | headers
        if isinstance(payload, str):
            self._send_bytes(status, payload, "text/plain", headers)
        else:
            self._send_bytes(status, json.dumps(payload), "application/json", headers)

    def _send_bytes(self, status: int, body: str | bytes, content_type: str, headers: dict[str, str]) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(
        self, route: _Route, events: list[dict[str, Any]], headers: dict[str, str], *, end: bool, clean: bool
    ) -> None:
        self.send_response(200)
        content_type = {"ndjson": "application/x-ndjson", "eventstream": EVENTSTREAM_MEDIA_TYPE}.get(
            route.framing, "text/event-stream"
        )
        self.send_header("content-type", content_type)
        self.send_header("transfer-encoding", "chunked")
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        for event in events:
            self._chunk(_frame(route, event))
        if end and route.done_marker:
            self._chunk("data: [DONE]\n\n")
        if clean:
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.close_connection = True  # no final chunk: the client sees the body cut mid-way
        self.wfile.flush()

    def _chunk(self, text: str | bytes) -> None:
        data = text.encode() if isinstance(text, str) else text
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


def _complete(response: Response, request: Request, request_id: str) -> Response:
    """A reply as a real server sends it: with an id, the model asked for, and usage.

    Official SDKs rely on them (the Anthropic SDK's `messages.stream` fails without `usage`).
    """
    if response.id is not None and response.model is not None and response.usage is not None:
        return response
    return dataclasses.replace(
        response,
        id=response.id if response.id is not None else f"toolwire_{request_id}",
        model=response.model if response.model is not None else (request.model or "scripted"),
        usage=response.usage if response.usage is not None else Usage(input_tokens=0, output_tokens=0),
    )


def _bedrock_model(path: str) -> str:
    """The model id of a `/model/{modelId}/converse[-stream]` path, decoded."""
    bare = path.split("?", 1)[0]
    return urllib.parse.unquote(bare.rpartition("/model/")[2].rpartition("/")[0])


def _frame(route: _Route, event: dict[str, Any]) -> str | bytes:
    if route.framing == "eventstream":
        return encode_event(event)
    data = json.dumps(event)
    if route.framing == "ndjson":
        return data + "\n"
    if route.framing == "sse-named":
        return f"event: {event.get('type', 'message')}\ndata: {data}\n\n"
    return f"data: {data}\n\n"
