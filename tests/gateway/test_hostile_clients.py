"""The gateway under hostile traffic: deep and huge bodies, slow clients, bad upstream replies."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx2
import pytest
import uvicorn

from tests.gateway.conftest import Gateway, routes_to
from tests.gateway.test_errors import VALID, kind, shaped
from toolwire.codecs import get_codec
from toolwire.gateway import create_app
from toolwire.gateway._errors import GatewayError
from toolwire.gateway._limits import DEFAULT_MAX_BODY_BYTES, MAX_BODY_DEPTH, parse_json
from toolwire.gateway._slow_clients import header_deadline_protocol
from toolwire.testing import RawReply, ScriptedServer, reply

PROTOCOLS = list(VALID)
OTHER_PROTOCOLS = [p for p in PROTOCOLS if p != "openai"]  # the route's upstream speaks openai


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    with Gateway(create_app(routes_to(upstreams), keys=[], max_body_bytes=256 * 1024, body_timeout=2)) as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=60) as client:
        yield client


def with_deep_parameters(body: dict[str, object], levels: int) -> bytes:
    """`body` with a tool schema `levels` deep (written by hand: json.dumps itself recurses)."""
    schema = '{"type": "object", "properties": {"x": ' * (levels // 2) + "{}" + "}}" * (levels // 2)
    return json.dumps(body)[:-1].encode() + b', "tools_param": ' + schema.encode() + b"}"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_json_nested_too_deep_is_a_400_in_the_clients_protocol(
    gateway: Gateway, http: httpx2.Client, protocol: str
) -> None:
    path, body = VALID[protocol]
    message = "The request body nests deeper than 128 levels; send flatter JSON."
    for raw in (b"[" * 100_000 + b"]" * 100_000, with_deep_parameters(body, 990)):
        response = http.post(gateway.url + path, content=raw)
        assert (response.status_code, response.json()) == (400, shaped(protocol, 400, kind(protocol, 400), message))


def test_depth_is_counted_in_levels_not_in_brackets() -> None:
    assert MAX_BODY_DEPTH == 128
    assert parse_json(b"[" * 128 + b"]" * 128) == json.loads(b"[" * 128 + b"]" * 128)
    with pytest.raises(GatewayError, match="nests deeper than 128 levels"):
        parse_json(b"[" * 129 + b"]" * 129)
    wide = b"[" + b",".join([b"[]"] * 500) + b"]"  # 501 brackets, 2 levels
    assert parse_json(wide) == [[]] * 500
    in_strings = json.dumps({"text": "[{" * 300}).encode()  # brackets in a string open nothing
    assert parse_json(in_strings) == {"text": "[{" * 300}


def test_a_forwarded_header_that_is_not_ascii_is_a_400_naming_it(gateway: Gateway, http: httpx2.Client) -> None:
    path, body = VALID["anthropic"]
    reply = http.post(gateway.url + path, json=body, headers={"anthropic-beta": "tools-caf\xe9".encode("latin-1")})
    message = "The anthropic-beta header must be ASCII, got 'tools-caf\xe9'."
    assert (reply.status_code, reply.json()) == (400, shaped("anthropic", 400, kind("anthropic", 400), message))


def test_a_body_past_the_cap_is_a_413_before_it_is_read_whole(gateway: Gateway, http: httpx2.Client) -> None:
    assert DEFAULT_MAX_BODY_BYTES == 32 * 1024 * 1024
    path, body = VALID["anthropic"]
    big = json.dumps(body | {"system": "x" * 270_000}).encode()

    def chunked() -> Iterator[bytes]:  # no content-length: the cap holds while reading
        for start in range(0, len(big), 4096):
            yield big[start : start + 4096]

    message = "The request body is larger than this gateway's limit of 262144 bytes; send a shorter conversation."
    for content in (big, chunked()):
        response = http.post(gateway.url + path, content=content)
        assert (response.status_code, response.json()) == (
            413,
            {"type": "error", "error": {"type": "request_too_large", "message": message}},
        )


def test_a_body_that_trickles_in_is_a_408_and_others_are_served_meanwhile(
    gateway: Gateway, http: httpx2.Client
) -> None:
    path, _ = VALID["openai"]
    with socket.create_connection(("127.0.0.1", gateway.port)) as slow:
        slow.sendall(f"POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{{".encode())
        assert http.get(gateway.url + "/health").status_code == 200
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}}"):
            data = slow.recv(65536)
            if not data:
                break
            answer += data
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ")
    message = "The request body did not arrive within 2 s; send it at once, or a smaller one."
    assert json.loads(payload) == shaped("openai", 408, "invalid_request_error", message)


@pytest.mark.parametrize("protocol", OTHER_PROTOCOLS)
def test_an_upstream_200_that_is_not_json_is_a_502_in_the_clients_protocol(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], protocol: str
) -> None:
    upstreams["openai"].add(RawReply(body=b"<html>oops</html>", content_type="application/json"))
    path, body = VALID[protocol]
    response = http.post(gateway.url + path, json=body)
    assert response.status_code == 502
    message = (
        "The upstream failed: openai answered with a body that is not JSON: b'<html>oops</html>'; "
        "check base_url points at the provider's API."
    )
    assert response.json() == shaped(protocol, 502, kind(protocol, 502), message)


@pytest.mark.parametrize("protocol", OTHER_PROTOCOLS)
def test_an_upstream_reply_with_a_lone_surrogate_reaches_the_client_escaped(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], protocol: str
) -> None:
    # `"a\ud800"` is valid JSON: the client gets the very string the upstream sent, escaped as it
    # was (never a 400 blaming the client, nor a 502 for text that can be written).
    reply = {
        "id": "r",
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "a\\ud800"}}],
    }
    upstreams["openai"].add(RawReply(body=json.dumps(reply).replace("\\\\", "\\"), content_type="application/json"))
    path, body = VALID[protocol]
    response = http.post(gateway.url + path, json=body)
    assert response.status_code == 200
    assert b"a\\ud800" in response.content
    assert get_codec(protocol).decode_response(response.json()).text == "a\ud800"


@pytest.mark.parametrize("protocol", OTHER_PROTOCOLS)
def test_a_client_request_with_a_lone_surrogate_reaches_the_upstream_unchanged(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], protocol: str
) -> None:
    upstreams["openai"].add("ok")
    path, body = VALID[protocol]
    raw = json.dumps(body).replace('"hi"', '"a\\ud800b"')  # valid JSON: the escape, as a client sends it
    response = http.post(gateway.url + path, content=raw.encode(), headers={"content-type": "application/json"})
    assert response.status_code == 200
    sent = upstreams["openai"].requests[-1].body
    assert sent["messages"][-1]["content"] == "a\ud800b"


class SlowClientGateway(Gateway):
    """The gateway as `toolwire serve` runs it: with the header deadline protocol."""

    def __init__(self, header_timeout: float) -> None:
        super().__init__(create_app([], keys=[]))
        config = uvicorn.Config(
            create_app([], keys=[]),
            log_level="warning",
            access_log=False,
            lifespan="on",
            http=header_deadline_protocol(header_timeout),
        )
        self.server = uvicorn.Server(config)


def _hung_up(connection: socket.socket) -> bool:
    """The peer closed the connection (a reset counts: the trickle may write after the close)."""
    connection.settimeout(60)
    try:
        return connection.recv(1024) == b""
    except ConnectionResetError:
        return True


def test_connections_that_never_finish_their_headers_are_closed_and_others_served() -> None:
    with (
        SlowClientGateway(header_timeout=1.0) as gateway,
        socket.create_connection(("127.0.0.1", gateway.port)) as idle,
        socket.create_connection(("127.0.0.1", gateway.port)) as slow,
    ):

        def trickle() -> None:  # one header byte every 0.2 s: resets any idle timer, never finishes
            for byte in b"GET /health HTTP/1.1\r\nhost: x\r\nx-padding: " + b"a" * 1000:
                try:
                    slow.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.2)

        writer = threading.Thread(target=trickle, daemon=True)
        writer.start()
        assert httpx2.get(gateway.url + "/health", timeout=30).status_code == 200
        assert _hung_up(idle) and _hung_up(slow)  # before the fix: never
        writer.join(timeout=60)
        with httpx2.Client(timeout=30) as keep_alive:  # a normal keep-alive client is untouched
            assert [keep_alive.get(gateway.url + "/health").status_code for _ in range(3)] == [200] * 3


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name", ["x\r\ny", "x\ny", "x\x00y", "x\ry"])
def test_a_field_name_with_control_characters_is_answered_and_named_escaped(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], name: str, stream: bool
) -> None:
    upstreams["anthropic"].add(reply("answered"))
    body = {"model": "to-anthropic", "messages": [{"role": "user", "content": "hi"}], name: 1, "stream": stream}
    response = http.post(gateway.url + "/v1/chat/completions", json=body)  # before: no reply at all
    assert response.status_code == 200
    assert response.headers["x-toolwire-dropped"] == "openai:" + name.encode("unicode_escape").decode()


def test_a_trailing_slash_is_a_404_not_a_redirect_to_the_clients_host(gateway: Gateway, http: httpx2.Client) -> None:
    path, body = VALID["openai"]
    response = http.post(gateway.url + path + "/", json=body, headers={"host": "evil.example"})
    assert response.status_code == 404  # before: 307 to http://evil.example/v1/chat/completions
    assert "location" not in response.headers
