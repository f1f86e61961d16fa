"""Bad input and failing upstreams get a clear error in the client's own protocol."""

from __future__ import annotations

import copy
import json
import logging
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import KEY_ENV, UPSTREAM_KEY, Gateway, routes_to
from toolwire.gateway import Route, create_app
from toolwire.testing import DropStream, ErrorReply, ScriptedServer, reply

# (path, a valid body) per client protocol
VALID = {
    "openai": ("/v1/chat/completions", {"model": "to-openai", "messages": [{"role": "user", "content": "hi"}]}),
    "openai-responses": ("/v1/responses", {"model": "to-openai", "input": "hi"}),
    "anthropic": (
        "/v1/messages",
        {"model": "to-openai", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]},
    ),
    "gemini": ("/v1beta/models/to-openai:generateContent", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
    "ollama": ("/api/chat", {"model": "to-openai", "messages": [{"role": "user", "content": "hi"}], "stream": False}),
}


def shaped(protocol: str, status: int, kind: str, message: str, field: str | None = None) -> dict[str, object]:
    """The error body each protocol uses (kind: OpenAI/Anthropic type, Gemini status)."""
    if protocol in ("openai", "openai-responses"):
        return {"error": {"message": message, "type": kind, "param": field, "code": kind}}
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == "gemini":
        return {"error": {"code": status, "message": message, "status": kind}}
    return {"error": message}


class Hanging:
    """An upstream that reads a request, never answers, and notices when the gateway hangs up."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = threading.Event()
        self.closed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.recv(65536)
            self.accepted.set()
            while conn.recv(65536):
                pass
            self.closed.set()


@pytest.fixture(scope="module")
def hanging() -> Iterator[Hanging]:
    upstream = Hanging()
    yield upstream
    upstream.sock.close()


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str, hanging: Hanging) -> Iterator[Gateway]:
    dead = socket.create_server(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()  # nothing listens there any more
    routes = [
        *routes_to(upstreams),
        Route(model="to-down", target="openai:down", base_url=f"http://127.0.0.1:{dead_port}/v1", api_key_env=KEY_ENV),
        Route(
            model="to-hang", target="openai:hang", base_url=f"http://127.0.0.1:{hanging.port}/v1", api_key_env=KEY_ENV
        ),
    ]
    with Gateway(create_app(routes, keys=[GATEWAY_KEY, "second-key"])) as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30, headers={"authorization": f"Bearer {GATEWAY_KEY}"}) as client:
        yield client


PROTOCOLS = list(VALID)


def kind(protocol: str, status: int) -> str:
    table = {
        400: ("invalid_request_error", "INVALID_ARGUMENT"),
        401: ("authentication_error", "UNAUTHENTICATED"),
        404: ("not_found_error", "NOT_FOUND"),
        429: ("rate_limit_error", "RESOURCE_EXHAUSTED"),
        502: ("server_error", "UNAVAILABLE"),
    }
    openai_kind, gemini_kind = table[status]
    if protocol == "anthropic" and status == 502:
        return "api_error"
    return gemini_kind if protocol == "gemini" else openai_kind


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_body_that_is_not_json_is_a_400(gateway: Gateway, http: httpx2.Client, protocol: str) -> None:
    path, _ = VALID[protocol]
    response = http.post(gateway.url + path, content=b"{not json")
    message = (
        "The request body is not valid JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)); send a JSON object."
    )
    assert response.status_code == 400
    assert response.json() == shaped(protocol, 400, kind(protocol, 400), message)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_missing_field_is_a_400_naming_it(gateway: Gateway, http: httpx2.Client, protocol: str) -> None:
    path, body = VALID[protocol][0], copy.deepcopy(VALID[protocol][1])
    field = {"gemini": "contents", "openai-responses": "input"}.get(protocol, "messages")
    del body[field]
    response = http.post(gateway.url + path, json=body)
    message = f"The request body has no {field!r} field; {protocol} requests need it."
    assert response.status_code == 400
    assert response.json() == shaped(protocol, 400, kind(protocol, 400), message, field)
    body[field] = "wrong type" if protocol != "openai-responses" else 3
    response = http.post(gateway.url + path, json=body)
    wanted = "str or list" if protocol == "openai-responses" else "list"
    shown = "int" if protocol == "openai-responses" else "str"
    message = f"The {field!r} field must be a {wanted}, got {shown}."
    assert response.json() == shaped(protocol, 400, kind(protocol, 400), message, field)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_unknown_model_is_a_404_naming_the_model_and_the_patterns(
    gateway: Gateway, http: httpx2.Client, protocol: str
) -> None:
    path, body = VALID[protocol]
    body = dict(body)
    if protocol == "gemini":
        path = path.replace("to-openai", "gpt-9")
    else:
        body["model"] = "gpt-9"
    response = http.post(gateway.url + path, json=body)
    message = (
        "No route for model 'gpt-9'; the gateway routes 'to-openai', 'to-openai-responses', 'to-anthropic', "
        "'to-gemini', 'to-ollama', 'to-bedrock', 'to-down', 'to-hang'. Ask for a model these patterns match, or add a "
        "[[route]] to toolwire.toml."
    )
    assert response.status_code == 404
    assert response.json() == shaped(protocol, 404, kind(protocol, 404), message, "model")


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("header", [None, "authorization", "x-api-key", "x-goog-api-key"])
def test_a_wrong_or_missing_gateway_key_is_a_401(gateway: Gateway, protocol: str, header: str | None) -> None:
    path, body = VALID[protocol]
    headers = {} if header is None else {header: "Bearer wrong" if header == "authorization" else "wrong"}
    response = httpx2.post(gateway.url + path, json=body, headers=headers, timeout=30)
    message = "Missing or wrong gateway key: send one of TOOLWIRE_GATEWAY_KEYS as the API key."
    assert response.status_code == 401
    assert response.json() == shaped(protocol, 401, kind(protocol, 401), message)


@pytest.mark.parametrize("header", ["authorization", "x-api-key", "x-goog-api-key"])
def test_every_key_header_is_accepted(gateway: Gateway, upstreams: dict[str, ScriptedServer], header: str) -> None:
    upstreams["openai"].add("hello")
    path, body = VALID["openai"]
    value = "Bearer second-key" if header == "authorization" else "second-key"
    response = httpx2.post(gateway.url + path, json=body, headers={header: value}, timeout=30)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"] == "hello"


def test_the_official_sdks_raise_their_own_auth_errors(gateway: Gateway) -> None:
    with (
        openai.OpenAI(base_url=gateway.url + "/v1", api_key="nope", max_retries=0) as client,
        pytest.raises(openai.AuthenticationError) as caught,
    ):
        client.chat.completions.create(model="to-openai", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 401
    with (
        anthropic.Anthropic(base_url=gateway.url, api_key="nope", max_retries=0) as other,
        pytest.raises(anthropic.AuthenticationError),
    ):
        other.messages.create(model="to-openai", max_tokens=5, messages=[{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_upstream_that_is_down_is_a_502(gateway: Gateway, http: httpx2.Client, protocol: str) -> None:
    path, body = VALID[protocol]
    body = dict(body)
    if protocol == "gemini":
        path = path.replace("to-openai", "to-down")
    else:
        body["model"] = "to-down"
    response = http.post(gateway.url + path, json=body)
    assert response.status_code == 502
    error = response.json()
    text = error["error"] if protocol == "ollama" else error["error"]["message"]
    assert text.startswith("The upstream failed: Could not reach openai at http://127.0.0.1:")
    assert text.endswith("/v1/chat/completions: ConnectError: Connection refused; check base_url and the network.")


@pytest.mark.parametrize("stream", [False, True])
def test_an_upstream_5xx_is_a_502_streamed_or_not(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], stream: bool
) -> None:
    upstreams["openai"].add(ErrorReply(status=500, message="upstream broke"))
    path, body = VALID["openai"]
    response = http.post(gateway.url + path, json={**body, "stream": stream})
    assert response.status_code == 502
    message = "The upstream failed: openai answered HTTP 500: 'upstream broke'; the provider failed; retry later."
    assert response.json() == shaped("openai", 502, kind("openai", 502), message)
    assert upstreams["openai"].remaining == 0  # the gateway's routes do not retry: nothing left for other tests


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_upstream_429_keeps_its_status_and_retry_after(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], protocol: str
) -> None:
    upstreams["openai"].add(ErrorReply(status=429, message="slow down", headers={"retry-after": "7"}))
    path, body = VALID[protocol]
    response = http.post(gateway.url + path, json=body)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "7"
    message = "Upstream error: openai answered HTTP 429: 'slow down'; slow down or raise max_retries."
    assert response.json() == shaped(protocol, 429, kind(protocol, 429), message)


def test_the_openai_sdk_sees_the_429_as_a_rate_limit_error(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["anthropic"].add(ErrorReply(status=429, message="busy", headers={"retry-after": "3"}))
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0)
    with client, pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="to-anthropic", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.response.headers["retry-after"] == "3"


def test_upstream_keys_reach_neither_the_client_nor_the_log(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer], caplog: pytest.LogCaptureFixture
) -> None:
    upstreams["anthropic"].add(ErrorReply(status=401, message=f"invalid x-api-key {UPSTREAM_KEY}"))
    path, body = VALID["openai"]
    with caplog.at_level(logging.DEBUG, logger="toolwire"):
        response = http.post(gateway.url + path, json=dict(body, model="to-anthropic"))
    assert response.status_code == 401
    assert UPSTREAM_KEY not in response.text and "[redacted]" in response.text
    assert UPSTREAM_KEY not in caplog.text
    assert upstreams["anthropic"].requests[-1].headers["x-api-key"] == UPSTREAM_KEY


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        ("openai", openai.APIError),
        ("anthropic", anthropic.APIStatusError),
    ],
)
def test_an_upstream_cut_mid_stream_ends_with_the_protocols_error_event(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], client: str, expected: type[Exception]
) -> None:
    upstreams[client].add(DropStream(response=reply("a long answer that never ends"), after=2))
    with pytest.raises(expected) as caught:
        if client == "openai":
            with openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as sdk:
                for _ in sdk.chat.completions.create(
                    model="to-openai", messages=[{"role": "user", "content": "hi"}], stream=True
                ):
                    pass
        else:
            with (
                anthropic.Anthropic(base_url=gateway.url, api_key=GATEWAY_KEY, max_retries=0) as sdk_a,
                sdk_a.messages.stream(
                    model="to-anthropic", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
                ) as events,
            ):
                events.get_final_message()
    cut = (
        f"The upstream failed: The {client} stream was cut: RemoteProtocolError: peer closed connection without "
        "sending complete message body (incomplete chunked read); retry the request."
    )
    if client == "openai":
        assert str(caught.value) == cut
    else:
        assert caught.value.body == {"type": "error", "error": {"type": "api_error", "message": cut}}  # type: ignore[attr-defined]


def test_a_client_that_disconnects_cancels_the_upstream_request(
    gateway: Gateway, hanging: Hanging, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps({"model": "to-hang", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"authorization: Bearer {GATEWAY_KEY}\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    with caplog.at_level(logging.INFO, logger="toolwire.gateway"):
        with socket.create_connection(("127.0.0.1", gateway.port)) as sock:
            sock.sendall(request)
            assert hanging.accepted.wait(30), "the gateway never called the upstream"
        assert hanging.closed.wait(30), "the upstream request was not cancelled"
        lines = _request_lines(caplog, "/v1/chat/completions", "to-hang")
    assert len(lines) == 1  # one line per request, which says the client left
    assert " status=499 " in lines[0]
    assert lines[0].endswith(" client disconnected; upstream request cancelled")


_REQUEST_LINE = re.compile(r"[A-Z]+ /\S* model=")


def _request_lines(caplog: pytest.LogCaptureFixture, path: str, model: str) -> list[str]:
    """The gateway's lines once the request's own line is out (it is written after the reply is sent).

    The gateway is shared by the module's tests: an earlier test's request line, written after its
    reply went out, may arrive late on a busy machine, so request lines for other models are left out.
    """
    own = f"POST {path} model={model} "
    deadline = time.monotonic() + 30
    while not any(r.getMessage().startswith(own) for r in caplog.records):
        assert time.monotonic() < deadline, "the gateway never logged the request"
        time.sleep(0.01)
    lines = [r.getMessage() for r in caplog.records if r.name == "toolwire.gateway"]
    return [line for line in lines if line.startswith(own) or not _REQUEST_LINE.match(line)]


@pytest.mark.parametrize("stream", [False, True])
def test_a_completed_request_logs_one_line_and_no_disconnect(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], caplog: pytest.LogCaptureFixture, stream: bool
) -> None:
    upstreams["openai"].add(reply("done"))
    with (
        caplog.at_level(logging.INFO, logger="toolwire.gateway"),
        openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as sdk,
    ):
        messages: list[Any] = [{"role": "user", "content": "hi"}]
        if stream:
            text = "".join(
                c.choices[0].delta.content or ""
                for c in sdk.chat.completions.create(model="to-openai", messages=messages, stream=True)
                if c.choices
            )
        else:
            text = sdk.chat.completions.create(model="to-openai", messages=messages).choices[0].message.content or ""
        lines = _request_lines(caplog, "/v1/chat/completions", "to-openai")
    assert text == "done"
    assert len(lines) == 1
    assert lines[0].startswith("POST /v1/chat/completions model=to-openai route=to-openai upstream=openai:up-openai ")
    assert "disconnect" not in lines[0]
