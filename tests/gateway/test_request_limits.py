"""Headers are capped before anything parses them, and an early answer reaches a client still sending."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator

import httpx2
import pytest
import uvicorn
from starlette.requests import ClientDisconnect, Request

from tests.gateway.conftest import Gateway
from toolwire.gateway import create_app
from toolwire.gateway._errors import GatewayError
from toolwire.gateway._limits import BodyLimits, header_values, read_body
from toolwire.gateway._slow_clients import MAX_HEADER_BYTES, MAX_HEADER_LINES, header_deadline_protocol

MESSAGE = (
    "The request headers are larger than this gateway's limit of 65536 bytes or 100 lines; "
    "send fewer or shorter headers."
)
BODY_CAP = 256 * 1024


class ServeGateway(Gateway):
    """The gateway as `toolwire serve` runs it (its HTTP protocol), with a small body cap."""

    def __init__(self) -> None:
        app = create_app([], keys=[], max_body_bytes=BODY_CAP)
        super().__init__(app)
        protocol = header_deadline_protocol()
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", http=protocol)
        self.server = uvicorn.Server(config)


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with ServeGateway() as running:
        yield running


def _reply(connection: socket.socket) -> tuple[bytes, bytes]:
    """The whole answer up to the server's close: (status line, body)."""
    connection.settimeout(60)
    data = b""
    while chunk := connection.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], body


def test_limits_are_those_of_common_proxies() -> None:
    assert (MAX_HEADER_BYTES, MAX_HEADER_LINES) == (64 * 1024, 100)


@pytest.mark.parametrize(
    "headers",
    [
        b"x-big: " + b"a" * (MAX_HEADER_BYTES + 1) + b"\r\n",
        b"".join(b"x-h%d: v\r\n" % n for n in range(10_000)),
        b"x-big: " + b"a" * (8 * 1024 * 1024),  # never finished: refused before its end
    ],
    ids=["one-large", "ten-thousand", "unfinished-8MB"],
)
def test_headers_past_the_limit_get_a_431_and_the_connection_closes(gateway: Gateway, headers: bytes) -> None:
    with socket.create_connection(("127.0.0.1", gateway.port)) as connection:

        def send() -> None:
            try:
                connection.sendall(b"GET /health HTTP/1.1\r\nhost: x\r\n" + headers + b"\r\n")
            except OSError:
                pass

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        status, body = _reply(connection)
        sender.join(60)
    assert status == b"HTTP/1.1 431 Request Header Fields Too Large"
    assert json.loads(body) == {
        "error": {"message": MESSAGE, "type": "invalid_request_error", "code": "request_header_fields_too_large"}
    }
    assert httpx2.get(gateway.url + "/health", timeout=30).status_code == 200


def test_headers_under_the_limit_are_served(gateway: Gateway) -> None:
    headers = {f"x-h{n}": "v" * 500 for n in range(90)}
    assert httpx2.get(gateway.url + "/health", headers=headers, timeout=30).status_code == 200


@pytest.mark.parametrize("close", [False, True], ids=["keep-alive", "connection-close"])
def test_a_100MB_body_gets_its_413_and_the_rest_is_dropped_for_a_bounded_time(gateway: Gateway, close: bool) -> None:
    size = 100 * 1024 * 1024
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
    head += (b"connection: close\r\n" if close else b"") + b"content-length: %d\r\n\r\n" % size
    chunk = b"x" * (1024 * 1024)
    with socket.create_connection(("127.0.0.1", gateway.port)) as connection:
        connection.sendall(head)
        for _ in range(100):  # before the fix: a reset here, with connection: close
            connection.sendall(chunk)
        status, body = _reply(connection)  # and with keep-alive, the server read on until the end of the body
    assert status == b"HTTP/1.1 413 Request Entity Too Large"
    assert json.loads(body)["error"]["message"] == (
        f"The request body is larger than this gateway's limit of {BODY_CAP} bytes; send a shorter conversation."
    )


def _request(messages: list[dict[str, object]], headers: list[tuple[bytes, bytes]]) -> Request:
    """A Starlette request whose ASGI `receive` hands out `messages` in turn."""
    pending = iter(messages)

    async def receive() -> dict[str, object]:
        return next(pending)

    return Request({"type": "http", "method": "POST", "path": "/", "headers": headers}, receive)


def test_a_body_in_pieces_is_read_whole_and_other_messages_are_passed_over() -> None:
    pieces = [
        {"type": "http.request", "body": b'{"a": ', "more_body": True},
        {"type": "http.unknown"},  # a message type this gateway does not know is not a piece
        {"type": "http.request", "body": b"", "more_body": True},
        {"type": "http.request", "body": b"1}"},
    ]
    assert asyncio.run(read_body(_request(pieces, []), BodyLimits())) == b'{"a": 1}'


def test_a_client_that_leaves_while_sending_its_body_is_a_disconnect() -> None:
    messages = [{"type": "http.request", "body": b"{", "more_body": True}, {"type": "http.disconnect"}]
    with pytest.raises(ClientDisconnect):
        asyncio.run(read_body(_request(messages, []), BodyLimits()))


def test_a_body_past_the_cap_in_pieces_is_a_413_at_the_piece_that_passes_it() -> None:
    pieces = [{"type": "http.request", "body": b"x" * 6, "more_body": True}] * 2  # 12 bytes, the cap 10
    with pytest.raises(GatewayError) as raised:
        asyncio.run(read_body(_request(pieces, []), BodyLimits(max_bytes=10)))
    assert raised.value.status == 413


def test_a_header_sent_twice_counts_with_its_first_value_as_starlette_reads_it() -> None:
    headers = [(b"authorization", b"Bearer first"), (b"x-api-key", b"k"), (b"authorization", b"Bearer second")]
    request = _request([], headers)
    assert header_values(request) == {b"authorization": b"Bearer first", b"x-api-key": b"k"}
    assert request.headers.get("authorization") == "Bearer first"
