"""Connection reuse: a finished stream gives its connection back; the pool's size is a client option.

A raw asyncio HTTP/1.1 server on loopback counts the connections it accepts, so reuse is
observed on the wire, not in the pool's internals.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.client import connect_http
from toolwire.types import Done

_CHUNK = {
    "id": "c1",
    "object": "chat.completion.chunk",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
}


_REPLY = {
    "id": "c1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
}
_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _sse(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class _Server:
    """Answers every POST with a chunked SSE stream ending in `[DONE]`, on keep-alive connections."""

    def __init__(self, *, end_body: bool = True, gather: int = 1, end_late: bool = False) -> None:
        self.end_body = end_body  # False: the body stays open after [DONE] (a server that never ends it)
        self.gather = gather  # answer once this many requests are open at once (or after 3 s)
        self.end_late = end_late  # the body's terminator comes in a later packet, 20 ms after [DONE]
        self.ended = 0  # bodies whose terminator was written
        self.connections = 0
        self.requests = 0
        self.open = 0
        self.peak = 0
        self.arrived = asyncio.Event()
        self.server: asyncio.Server | None = None

    async def _hold(self) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)
        if self.open >= self.gather:
            self.arrived.set()
        try:
            await asyncio.wait_for(self.arrived.wait(), 3)
        except TimeoutError:
            self.arrived.set()  # the cap held the others back: let every later request through
        self.open -= 1

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                self.requests += 1
                await self._hold()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                )
                writer.write(_sse(b"data: " + json.dumps(_CHUNK).encode() + b"\n\n") + _sse(b"data: [DONE]\n\n"))
                if not self.end_body:
                    await writer.drain()
                    await asyncio.sleep(3600)
                if self.end_late:
                    await writer.drain()
                    await asyncio.sleep(0.02)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
                self.ended += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        for task in asyncio.all_tasks():
            if task.get_coro().__qualname__.startswith("_Server._serve"):  # type: ignore[union-attr]
                task.cancel()


async def _texts(events: AsyncIterator[object]) -> list[str]:
    return [event.response.text for event in [e async for e in events] if isinstance(event, Done)]


async def test_streams_after_done_reuse_one_connection() -> None:
    server = _Server()
    async with server as url, connect_http("openai:m", api_key="k", base_url=url) as client:
        for _ in range(3):
            assert await _texts(client.stream("hello")) == ["hi"]
    assert (server.requests, server.connections) == (3, 1)


async def _until_done(events: AsyncGenerator[object, None]) -> str:
    """Read a stream only up to its `Done`, as the gateway's relay does, and close it there."""
    async with aclosing(events):
        async for event in events:
            if isinstance(event, Done):
                return event.response.text
    raise AssertionError("no Done")


async def test_a_reader_that_stops_at_done_keeps_the_connection_for_the_next_request() -> None:
    # Before: the body's terminator had not arrived when the reader closed the reply, and the
    # connection was closed with it; each request paid a new connection (and TLS handshake).
    server = _Server(end_late=True)
    async with server as url, connect_http("openai:m", api_key="k", base_url=url) as client:
        for number in range(1, 4):
            assert await _until_done(client.stream("hello")) == "hi"
            await _terminated(server, number)  # the terminator arrives while nobody reads
    assert (server.requests, server.connections) == (3, 1)


async def _terminated(server: _Server, bodies: int) -> None:
    """Until the server has written `bodies` terminators, then the loop's turn that reads the last.

    Loopback hands written bytes to the reader's socket at once; the next turns of this loop (the
    server is on it too) read them. No fixed sleep: a busy machine only makes it later.
    """
    async with asyncio.timeout(30):
        while server.ended < bodies:
            await asyncio.sleep(0.005)
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_reader_that_stops_at_done_of_a_body_that_never_ends_gets_a_new_connection() -> None:
    server = _Server(end_body=False)
    async with server as url, connect_http("openai:m", api_key="k", base_url=url) as client:
        for _ in range(2):
            assert await asyncio.wait_for(_until_done(client.stream("hello")), timeout=60) == "hi"
    assert (server.requests, server.connections) == (2, 2)


async def test_a_body_left_open_after_done_still_ends_the_stream() -> None:
    server = _Server(end_body=False)
    async with server as url, connect_http("openai:m", api_key="k", base_url=url) as client:
        for _ in range(2):
            assert await asyncio.wait_for(_texts(client.stream("hello")), timeout=60) == ["hi"]
    assert (server.requests, server.connections) == (2, 2)  # each connection given up, as before


@pytest.mark.parametrize(("most", "peak"), [(None, 3), (2, 2)])
async def test_max_connections_caps_the_requests_in_flight(most: int | None, peak: int) -> None:
    server = _Server(gather=3)  # holds each reply until 3 requests are open at once (or 3 s pass)
    async with server as url, connect_http("openai:m", api_key="k", base_url=url, max_connections=most) as client:
        results = await asyncio.wait_for(asyncio.gather(*(_texts(client.stream("x")) for _ in range(3))), 60)
    assert results == [["hi"]] * 3
    assert server.peak == peak


def test_unknown_options_list_max_connections() -> None:
    with pytest.raises(ValueError, match=r"max_connections"):
        connect_http("openai:m", api_key="k", max_conections=5)


async def test_a_proxy_named_in_the_environment_carries_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.http._loopback import read_message
    from toolwire import connect

    completion = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "via proxy"}, "finish_reason": "stop"}],
    }
    body = json.dumps(completion).encode()
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head, _ = await read_message(reader)
        seen.append(head.split(b"\r\n")[0])
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body))
        writer.write(body)
        await writer.drain()
        writer.close()

    proxy = await asyncio.start_server(handle, "127.0.0.1", 0)
    for name in ("https_proxy", "all_proxy", "no_proxy", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "HTTP_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{proxy.sockets[0].getsockname()[1]}")
    try:
        async with connect(
            "openai:m", api_key="sk-test", base_url="http://upstream.invalid/v1", max_retries=0
        ) as client:
            reply = await client.complete("hi")
    finally:
        proxy.close()
    assert reply.text == "via proxy"
    assert seen == [b"POST http://upstream.invalid/v1/chat/completions HTTP/1.1"]


def test_without_httptools_requests_go_through_httpcore2_on_asyncio(monkeypatch: pytest.MonkeyPatch) -> None:
    import ssl
    import sys

    import httpx2

    from toolwire.http._connections import connections
    from toolwire.testing import ScriptedServer

    limits, verify = httpx2.Limits(max_connections=4), ssl.create_default_context()
    assert type(connections(verify=verify, limits=limits)).__name__ == "Http1Transport"
    monkeypatch.setitem(sys.modules, "httptools", None)  # `import httptools` fails, as without the serve extra
    monkeypatch.delitem(sys.modules, "toolwire.http._http1", raising=False)
    assert type(connections(verify=verify, limits=limits)) is httpx2.AsyncHTTPTransport
    with ScriptedServer(["from httpcore2"]) as server, server.connect("openai:m") as client:
        assert client.complete_sync("hi").text == "from httpcore2"


_NAMES = ("Accept", "accept", "Authorization", "content-type", "anthropic-version", "Host", "content-length", "X-Ab")


@given(
    headers=st.dictionaries(st.sampled_from(_NAMES), st.text("abc/-; é", max_size=8), max_size=5),
    content=st.binary(max_size=40),
    cookie=st.booleans(),
)
def test_a_post_request_is_the_one_httpx2_builds(headers: dict[str, str], content: bytes, cookie: bool) -> None:
    import httpx2

    from toolwire.http._connections import post_request

    pool = httpx2.AsyncClient(headers={"authorization": "Bearer k", "x-ab": "1"}, timeout=httpx2.Timeout(7))
    if cookie:
        pool.cookies.set("session", "s1", domain="127.0.0.1")
    url = httpx2.URL("http://127.0.0.1:8123/v1/chat/completions")
    try:
        built = pool.build_request("POST", url, content=content, headers=headers or None)
    except UnicodeEncodeError:  # httpx2 sends headers as ASCII
        with pytest.raises(UnicodeEncodeError):
            post_request(pool, url, content, headers)
        return
    ours = post_request(pool, url, content, headers)
    assert (ours.method, ours.url, ours.headers.raw, ours.content, ours.extensions) == (
        built.method,
        built.url,
        built.headers.raw,
        built.content,
        built.extensions,
    )
    assert type(ours.stream) is type(built.stream)


async def test_cookies_a_provider_sets_are_sent_back() -> None:
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                await reader.readexactly(length)
                seen.append(head)
                body = json.dumps(_REPLY).encode()
                cookie = b"set-cookie: __cf_bm=abc; path=/\r\n" if len(seen) == 1 else b""
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%scontent-length: %d\r\n\r\n%s"
                    % (cookie, len(body), body)
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        async with connect_http("openai:m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1") as client:
            for _ in range(2):
                assert (await client.complete("hello")).text == "hi"
    finally:
        listening.close()
        await listening.wait_closed()
    assert [b"cookie: __cf_bm=abc" in head.lower() for head in seen] == [False, True]
