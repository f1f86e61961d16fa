"""`Http1Transport`, toolwire's HTTP/1.1 on httptools: what a real server on 127.0.0.1 can send it.

Each test's server writes its bytes by hand, so the framing under test (chunks, no length, 1xx,
garbage, early closes) is exactly what the client meets. What both transports share is in
tests/http/test_asyncio.py.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncIterator, Callable

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.http._loopback import read_message, read_request, reply, server
from toolwire.http._asyncio import asyncio_transport

pytest.importorskip("httptools", reason="httptools (the serve extra) is not installed")

from toolwire.http._http1 import Http1Transport


@functools.cache
def _verify() -> ssl.SSLContext:
    return ssl.create_default_context()  # loading the system's CAs takes ~20 ms: once per test process


def client(timeout: float = 5.0, most: int = 10, idle: int = 5, pool: float | None = None) -> httpx2.AsyncClient:
    limits = httpx2.Limits(max_connections=most, max_keepalive_connections=idle)
    verify = _verify()
    transport = Http1Transport(verify=verify, limits=limits, fallback=asyncio_transport(verify=verify, limits=limits))
    return httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(timeout, pool=pool))


class Counted:
    """A server that counts connections and answers each request on them with `answer(body)`."""

    def __init__(self, answer: bytes = reply(b"ok")) -> None:
        self.answer = answer
        self.connections = 0
        self.requests: list[bytes] = []

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        while True:
            try:
                head, _ = await read_message(reader)
            except asyncio.IncompleteReadError:
                return
            self.requests.append(head)
            writer.write(self.answer)
            await writer.drain()


async def test_a_chunked_stream_reaches_the_reader_piece_by_piece() -> None:
    go_on = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        writer.write(b"b\r\ndata: one\n\n\r\n")
        await writer.drain()
        await go_on.wait()  # the second piece is sent only once the first was read
        writer.write(b"b\r\ndata: two\n\n\r\n0\r\n\r\n")
        await writer.drain()
        await reader.read()

    pieces = []
    async with server(handle) as port, client() as http:
        async with http.stream("POST", f"http://127.0.0.1:{port}/v1", content=b"{}") as response:
            async for piece in response.aiter_raw():
                pieces.append(piece)
                go_on.set()
        assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
        assert response.extensions["http_version"] == b"HTTP/1.1"
        assert response.extensions["reason_phrase"] == b"OK"
    assert pieces == [b"data: one\n\n", b"data: two\n\n"]


async def test_a_body_without_length_ends_with_the_connection_which_is_not_reused() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end")
        writer.close()

    async with server(handle) as port, client() as http:
        first = await http.get(f"http://127.0.0.1:{port}/")
        second = await http.get(f"http://127.0.0.1:{port}/")
    assert (first.text, second.text) == ("until the end", "until the end")


async def test_informational_responses_are_skipped_for_the_final_one() -> None:
    counted = Counted(
        b"HTTP/1.1 103 Early Hints\r\nlink: </style.css>\r\n\r\n"
        b"HTTP/1.1 201 Created\r\ncontent-length: 4\r\nx-id: 7\r\n\r\ndone"
    )
    async with server(counted) as port, client() as http:
        answers = [await http.post(f"http://127.0.0.1:{port}/", content=b"x") for _ in range(2)]
    assert [(a.status_code, a.text, a.headers.get("x-id"), a.headers.get("link")) for a in answers] == [
        (201, "done", "7", None)
    ] * 2
    assert counted.connections == 1


async def test_keep_alive_reuses_one_connection_and_a_request_saying_close_ends_it() -> None:
    counted = Counted()
    async with server(counted) as port, client() as http:
        for _ in range(3):
            assert (await http.post(f"http://127.0.0.1:{port}/", content=b"abc")).text == "ok"
        assert counted.connections == 1
        await http.get(f"http://127.0.0.1:{port}/", headers={"connection": "close"})
        await http.get(f"http://127.0.0.1:{port}/")
    assert counted.connections == 2
    assert counted.requests[0].startswith(b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
    assert b"Content-Length: 3\r\n" in counted.requests[0]


async def test_a_response_that_says_close_is_not_reused() -> None:
    counted = Counted(b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok")
    async with server(counted) as port, client() as http:
        texts = [(await http.get(f"http://127.0.0.1:{port}/")).text for _ in range(3)]
    assert (texts, counted.connections) == (["ok"] * 3, 3)


async def test_a_streamed_request_body_is_sent_in_chunks() -> None:
    received = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        received.append(head)
        received.append(await reader.readuntil(b"0\r\n\r\n"))
        writer.write(reply(b"got it"))
        await writer.drain()
        await reader.read()

    async def parts() -> AsyncIterator[bytes]:
        yield b"hello "
        yield b""
        yield b"world"

    async with server(handle) as port, client() as http:
        answer = await http.post(f"http://127.0.0.1:{port}/", content=parts())
    assert answer.text == "got it"
    assert b"transfer-encoding: chunked\r\n" in received[0].lower()
    assert received[1] == b"6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"


async def test_garbage_is_a_protocol_error_and_unasked_bytes_end_the_connection() -> None:
    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await reader.read()

    async with server(garbage) as port, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="malformed HTTP response"):
            await http.get(f"http://127.0.0.1:{port}/")

    connections = requests = 0

    async def extra(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections, requests
        connections += 1
        while True:
            try:
                await read_request(reader)
            except asyncio.IncompleteReadError:
                return
            requests += 1
            if requests == 1:  # a second response in the same packet as the first
                writer.write(reply(b"one") + b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nextra")
            else:
                writer.write(reply(b"one"))
            await writer.drain()
            if requests == 2:  # bytes while the connection is idle
                await asyncio.sleep(0.01)
                writer.write(b"garbage")
                await writer.drain()
                garbage_sent.set()

    garbage_sent = asyncio.Event()
    async with server(extra) as port, client() as http:
        texts = []
        for number in range(3):
            texts.append((await http.get(f"http://127.0.0.1:{port}/")).text)
            if number == 1:
                await garbage_sent.wait()
            await asyncio.sleep(0.01)  # a turn of the event loop for the bytes to reach the connection
    assert (texts, connections) == (["one"] * 3, 3)


async def test_a_silent_server_and_an_early_close_name_what_was_missing() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(5)

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.close()

    async with server(silent) as port, client(timeout=0.2) as http:
        with pytest.raises(httpx2.ReadTimeout, match=r"^no response within 0.2s$"):
            await http.get(f"http://127.0.0.1:{port}/")
    async with server(hang_up) as port, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match=r"^Server disconnected without sending a response\.$"):
            await http.get(f"http://127.0.0.1:{port}/")


async def test_header_values_that_would_split_the_request_are_refused_before_sending() -> None:
    counted = Counted()
    async with server(counted) as port, client() as http:
        for bad in ({"x-a": "1\r\nx-injected: 2"}, {"x-a": "1\nx"}, {"x a": "1"}):
            with pytest.raises(httpx2.LocalProtocolError, match="invalid"):
                await http.get(f"http://127.0.0.1:{port}/", headers=bad)
        assert (await http.get(f"http://127.0.0.1:{port}/")).text == "ok"
    assert len(counted.requests) == 1


async def test_a_post_without_a_built_request_sends_the_bytes_the_built_one_sends() -> None:
    """`Http1Transport.post` (toolwire's own requests) and `handle_async_request` write alike."""
    from toolwire.http._connections import merged_headers, post_request

    counted = Counted()
    headers = {"content-type": "application/json", "anthropic-beta": "a,b", "x-api-key": "k"}
    async with server(counted) as port, client() as http:
        url = httpx2.URL(f"http://127.0.0.1:{port}/v1/messages?beta=true")
        merged = merged_headers(http, url, b'{"a": 1}', headers)
        assert merged is not None
        transport = http._transport
        assert isinstance(transport, Http1Transport)
        sent = await transport.post(url, merged, b'{"a": 1}', http.timeout.as_dict())
        assert (await sent.aread(), sent.status_code) == (b"ok", 200)
        built = await http.send(post_request(http, url, b'{"a": 1}', headers))
        assert (built.content, built.status_code) == (b"ok", 200)
        with pytest.raises(httpx2.LocalProtocolError, match="invalid value for header 'x-a'"):
            await transport.post(url, [*merged, (b"x-a", b"1\r\nx-injected: 2")], b"{}", http.timeout.as_dict())
    first, second = counted.requests
    assert first == second
    assert first.startswith(b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % port)
    assert b"\r\nanthropic-beta: a,b\r\n" in first and b"\r\nContent-Length: 8\r\n" in first
    assert counted.connections == 1


async def _until(condition: Callable[[], bool]) -> None:
    """Waits for what the server sees (no fixed sleep: a busy machine only makes it later)."""
    async with asyncio.timeout(10):
        while not condition():
            await asyncio.sleep(0.005)


async def test_the_pool_waits_for_a_free_connection_and_times_out_when_none_comes() -> None:
    release = asyncio.Event()
    open_now = 0
    peak = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now, peak
        while True:
            try:
                await read_request(reader)
            except asyncio.IncompleteReadError:
                return
            open_now += 1
            peak = max(peak, open_now)
            await release.wait()
            open_now -= 1
            writer.write(reply(b"ok"))
            await writer.drain()

    async with server(handle) as port, client(most=2) as http:
        asking = [asyncio.create_task(http.get(f"http://127.0.0.1:{port}/")) for _ in range(5)]
        await _until(lambda: open_now == 2)
        await asyncio.sleep(0.05)  # room for a third, were the pool to let one through
        assert (open_now, sum(task.done() for task in asking)) == (2, 0)
        release.set()
        assert [answer.text for answer in await asyncio.gather(*asking)] == ["ok"] * 5
    assert peak == 2

    release.clear()
    async with server(handle) as port, client(most=1, pool=0.1) as http:
        holding = asyncio.create_task(http.get(f"http://127.0.0.1:{port}/"))
        await _until(lambda: open_now == 1)
        with pytest.raises(httpx2.PoolTimeout, match="no connection became free"):
            await http.get(f"http://127.0.0.1:{port}/")
        release.set()
        assert (await holding).text == "ok"


async def test_a_waiter_cancelled_as_it_is_woken_passes_the_connection_on() -> None:
    counted = Counted()
    async with server(counted) as port, client(most=1, pool=5) as http:
        url = f"http://127.0.0.1:{port}/"
        async with http.stream("GET", url):  # its body unread: the connection stays taken
            woken = asyncio.create_task(http.get(url))
            next_in_line = asyncio.create_task(http.get(url))
            await asyncio.sleep(0.1)
            assert not woken.done() and not next_in_line.done()  # both wait for the one connection
        # Closing the stream gave the connection to `woken` in this very step: cancelled before it runs.
        woken.cancel()
        with pytest.raises(asyncio.CancelledError):
            await woken
        answer = await asyncio.wait_for(next_in_line, 2)  # not after the pool's 5 s timeout
    assert answer.text == "ok"


async def test_a_stream_left_half_read_closes_its_connection() -> None:
    closed = asyncio.Event()
    connections = answered = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections, answered
        connections += 1
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\none\r\n")
        await writer.drain()
        answered += 1
        await reader.read()  # until the client closes
        closed.set()

    async with server(handle) as port, client() as http:
        async with http.stream("GET", f"http://127.0.0.1:{port}/") as response:
            async for piece in response.aiter_raw():
                assert piece == b"one"
                break
        await asyncio.wait_for(closed.wait(), 5)
        closed.clear()
        cancelled = asyncio.create_task(http.get(f"http://127.0.0.1:{port}/"))
        await _until(lambda: answered == 2)  # the body's first piece sent, the rest never comes
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        await asyncio.wait_for(closed.wait(), 5)
    assert connections == 2


async def test_head_requests_go_to_the_fallback_and_other_hosts_take_idle_room() -> None:
    counted = Counted(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n")  # a HEAD reply: the length, no body
    async with server(counted) as port:
        async with client() as http:
            answer = await http.head(f"http://127.0.0.1:{port}/")
        assert (answer.status_code, answer.headers["content-length"], answer.content) == (200, "9", b"")

    first, second = Counted(), Counted()
    async with server(first) as one, server(second) as two, client(most=1, pool=2) as http:
        texts = [(await http.get(f"http://127.0.0.1:{port}/")).text for port in (one, two, one)]
    assert (texts, first.connections, second.connections) == (["ok"] * 3, 2, 1)


_NAME = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz-"), min_size=1, max_size=10).map(lambda n: "x-" + n)
_VALUE = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20)


@st.composite
def responses(draw: st.DrawFn) -> tuple[bytes, list[int], bool]:
    """A response's bytes as a server writes them, the places its writes are cut, and whether to end it early."""
    status = draw(st.sampled_from([200, 201, 204, 400, 404, 429, 500, 503]))
    headers = draw(st.lists(st.tuples(_NAME, _VALUE), max_size=4))
    body = b"" if status == 204 else draw(st.binary(max_size=300))
    framing = "none" if status == 204 else draw(st.sampled_from(["length", "chunked", "close"]))
    head = [f"HTTP/1.1 {status} Whatever\r\n".encode()] + [f"{n}: {v}\r\n".encode() for n, v in headers]
    if framing == "length":
        head.append(b"content-length: %d\r\n" % len(body))
    elif framing == "chunked":
        head.append(b"transfer-encoding: chunked\r\n")
        sizes = draw(st.lists(st.integers(1, 80), max_size=6))
        pieces, start = [], 0
        for size in [*sizes, len(body)]:
            if start < len(body):
                pieces.append(body[start : start + size])
                start += size
        body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    raw = b"".join(head) + b"\r\n" + body
    cuts = sorted(draw(st.lists(st.integers(1, len(raw)), max_size=4)))
    early = draw(st.booleans()) and framing != "close"
    if early:
        raw = raw[: draw(st.integers(0, len(raw) - 1))]
    return raw, cuts, early or framing == "close"


async def _outcome(http: httpx2.AsyncClient, port: int) -> object:
    try:
        answer = await http.get(f"http://127.0.0.1:{port}/")
    except httpx2.HTTPError as error:  # the words differ (h11 names what it held when the peer closed)
        return type(error).__name__
    return answer.status_code, answer.headers.multi_items(), answer.content


@settings(max_examples=200, deadline=None)
@given(responses())
def test_both_transports_read_any_response_alike(response: tuple[bytes, list[int], bool]) -> None:
    raw, cuts, close = response

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        start = 0
        for cut in [*cuts, len(raw)]:
            writer.write(raw[start:cut])
            await writer.drain()
            await asyncio.sleep(0.001)
            start = max(start, cut)
        if close:
            writer.close()
        else:
            await reader.read()

    async def both() -> tuple[object, object]:
        verify, limits = _verify(), httpx2.Limits()
        async with server(handle) as port:
            async with httpx2.AsyncClient(transport=asyncio_transport(verify=verify, limits=limits), timeout=2) as http:
                theirs = await _outcome(http, port)
            async with client(timeout=2) as http:
                ours = await _outcome(http, port)
        return theirs, ours

    theirs, ours = asyncio.run(both())
    assert ours == theirs
