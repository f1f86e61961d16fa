"""Transport faults: resets, stalls, long Retry-After, partial replies, caps, scrubbing."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from toolwire import TextDelta
from toolwire.client import connect_http
from toolwire.errors import AuthenticationError, BadRequestError, ProviderError, RateLimitError, StreamError
from toolwire.errors import TimeoutError as ToolwireTimeout
from toolwire.testing import ErrorReply, RawReply, ScriptedServer

OK_BODY = json.dumps(
    {"id": "r", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "fine"}}]}
).encode()


@contextmanager
def raw_server(handle: Callable[[socket.socket, int], None]) -> Iterator[str]:
    """A loopback server that hands each accepted connection (and its number) to `handle`."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        number = 0
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            number += 1
            threading.Thread(target=handle, args=(connection, number), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        listener.close()


def read_request(connection: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += connection.recv(65536)


async def test_a_connection_reset_before_any_reply_byte_is_retried() -> None:
    def handle(connection: socket.socket, number: int) -> None:
        read_request(connection)
        if number == 1:  # reset: RST instead of an answer
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            connection.close()
            return
        head = f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(OK_BODY)}\r\n\r\n"
        connection.sendall(head.encode() + OK_BODY)
        connection.close()

    with raw_server(handle) as url:
        async with connect_http("openai-compatible:m", base_url=url, api_key="k", retry_base_delay=0.01) as client:
            assert (await client.complete("hi")).text == "fine"


async def test_keep_alive_comments_do_not_hold_a_dead_stream_open() -> None:
    done = threading.Event()

    def handle(connection: socket.socket, number: int) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        chunk = b'data: {"choices": [{"index": 0, "delta": {"content": "hel"}}]}\n\n'
        connection.sendall(chunk)
        while not done.wait(0.05):
            try:
                connection.sendall(b": keep-alive\n\n")
            except OSError:
                return
        connection.close()

    with raw_server(handle) as url:
        async with connect_http("openai-compatible:m", base_url=url, api_key="k", timeout=1.0) as client:
            with pytest.raises(StreamError) as caught:
                async for _ in client.stream("hi"):
                    pass
    done.set()
    assert "stalled: no event for 1s (keep-alives do not count)" in caught.value.message
    assert caught.value.partial == [TextDelta(text="hel")]


async def test_a_retry_after_beyond_the_budget_gives_up_at_once_and_says_how_long() -> None:
    turns = [ErrorReply(status=429, message="slow down", headers={"retry-after": "120"})] * 3
    with ScriptedServer(turns) as server:
        async with server.connect("anthropic:m", max_retries=2) as client:
            with pytest.raises(RateLimitError) as caught:
                await client.complete("hi")
        assert (caught.value.retry_after, len(server.requests)) == (120.0, 1)


async def test_an_error_event_mid_stream_keeps_what_streamed_before() -> None:
    sse = (
        'data: {"choices": [{"index": 0, "delta": {"content": "partial answer"}}]}\n\n'
        'data: {"error": {"message": "the model crashed", "type": "server_error"}}\n\n'
    )
    with ScriptedServer([RawReply(body=sse)]) as server:
        async with server.connect("openai:m") as client:
            with pytest.raises(ProviderError) as caught:
                async for _ in client.stream("hi"):
                    pass
    assert caught.value.partial == [TextDelta(text="partial answer")]


async def test_events_past_one_mebibyte_pass_and_the_cap_is_enforced() -> None:
    big = "x" * (3 * 1024 * 1024)
    chunk = json.dumps({"choices": [{"index": 0, "delta": {"content": big}, "finish_reason": "stop"}]})
    huge_line = json.dumps({"message": {"role": "assistant", "content": "y" * (17 * 1024 * 1024)}, "done": True})
    turns = [
        RawReply(body=f"data: {chunk}\n\ndata: [DONE]\n\n"),
        RawReply(body=huge_line + "\n", content_type="application/x-ndjson"),
    ]
    with ScriptedServer(turns) as server:
        async with server.connect("openai:m") as client:
            events = [event async for event in client.stream("hi")]
        assert events[-1].response.text == big  # type: ignore[attr-defined]
        async with server.connect("ollama:m") as client:
            with pytest.raises(StreamError, match="sent a line longer than 16777216 bytes"):
                async for _ in client.stream("hi"):
                    pass


async def test_credentials_in_headers_are_scrubbed_and_short_keys_never_mangle_text() -> None:
    secret = "hdr-secret-0123456789"
    turns = [
        ErrorReply(status=400, message=f"bad header value {secret}"),
        ErrorReply(status=400, message="a bad request about a test"),
    ]
    with ScriptedServer(turns) as server:
        async with server.connect("openai:m", headers={"x-gateway-token": secret}) as client:
            with pytest.raises(BadRequestError) as caught:
                await client.complete("hi")
        assert "'bad header value [redacted]'" in caught.value.message
        assert secret not in repr(caught.value.args)
        async with server.connect("openai:m", api_key="a") as client:
            with pytest.raises(BadRequestError) as short:
                await client.complete("hi")
        assert "'a bad request about a test'" in short.value.message


async def test_an_overall_deadline_ends_a_stream_that_never_finishes() -> None:
    done = threading.Event()

    def handle(connection: socket.socket, number: int) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n")
        chunk = b'data: {"choices": [{"index": 0, "delta": {"content": "."}}]}\n\n'
        while not done.wait(0.05):  # an event every 50 ms, within the idle timeout, forever
            try:
                connection.sendall(chunk)
            except OSError:
                return

    with raw_server(handle) as url:
        options = {"base_url": url, "api_key": "k", "timeout": 30.0, "deadline": 1.0}
        async with connect_http("openai-compatible:m", **options) as client:  # type: ignore[arg-type]
            with pytest.raises(ToolwireTimeout) as caught:
                async for _ in client.stream("hi"):
                    pass
    done.set()
    assert caught.value.message == (
        "openai-compatible did not finish within the deadline of 1s; raise deadline= or ask for less."
    )


async def test_a_404_names_the_address_and_never_switches_to_text_mode() -> None:
    from toolwire.agent import Agent
    from toolwire.stdtools import read

    not_found = ErrorReply(status=404, body={"detail": "Not Found"})
    with ScriptedServer([not_found, not_found]) as server:
        url = server.base_url
        async with server.connect("openai:m", max_retries=0) as client:
            with pytest.raises(BadRequestError) as caught:
                await client.complete("hi")
            with pytest.raises(BadRequestError):  # `auto` must not take a wrong address for "no tools"
                await Agent(client, [read], tool_mode="auto").run("hi")
    assert caught.value.message == (
        f"openai answered HTTP 404 for POST {url}/chat/completions: 'Not Found'; nothing is "
        "served at that address: check base_url (OpenAI-compatible servers usually end in /v1, e.g. "
        "http://localhost:8000/v1)."
    )
    assert str(caught.value).startswith("openai answered HTTP 404 for POST http://127.0.0.1:")


def _events_forever(done: threading.Event, first: bytes, then: bytes) -> Callable[[socket.socket, int], None]:
    """A stream that sends `first`, then `then` every 50 ms until `done` (or 40 s, so a failing test ends)."""

    def handle(connection: socket.socket, number: int) -> None:
        read_request(connection)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" + first)
        for _ in range(800):
            if done.wait(0.05):
                break
            try:
                connection.sendall(then)
            except OSError:
                return
        connection.close()

    return handle


@pytest.mark.parametrize("then", [b'data: {"choices": [{"index": 0, "delta": {"content": "."}}]}\n\n', b": ping\n\n"])
def test_the_deadline_bounds_a_stream_read_from_sync_code_past_its_first_event(then: bytes) -> None:
    done = threading.Event()
    first = b'data: {"choices": [{"index": 0, "delta": {"content": "hel"}}]}\n\n'
    with raw_server(_events_forever(done, first, then)) as url:
        options = {"base_url": url, "api_key": "k", "timeout": 60.0, "deadline": 1.0}
        with connect_http("openai-compatible:m", **options) as client:  # type: ignore[arg-type]
            events = []
            with pytest.raises(ToolwireTimeout) as caught:
                for event in client.stream_sync("hi"):  # each event is read in a task of its own
                    events.append(event)
    done.set()
    assert events[0] == TextDelta(text="hel")
    assert caught.value.message == (
        "openai-compatible did not finish within the deadline of 1s; raise deadline= or ask for less."
    )


async def test_a_retry_after_past_the_deadline_gives_up_at_once_with_the_rate_limit_error() -> None:
    turns = [ErrorReply(status=429, message="slow down", headers={"retry-after": "30"})] * 3
    with ScriptedServer(turns) as server:
        async with server.connect("anthropic:m", max_retries=2, deadline=3.0) as client:
            with pytest.raises(RateLimitError) as caught:
                await client.complete("hi")
        assert (caught.value.retry_after, len(server.requests)) == (30.0, 1)


def _endless_chunked_json(connection: socket.socket, number: int) -> None:
    read_request(connection)
    connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
    chunk = b"x" * 65536
    try:
        connection.sendall(b'%x\r\n["%s\r\n' % (len(chunk) + 2, chunk))
        for _ in range(1000):  # 64 MiB at most: twice the cap
            connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
    except OSError:
        return
    connection.close()


async def test_a_non_streamed_reply_past_the_cap_is_refused_before_it_is_held_whole() -> None:
    expected = (
        "openai-compatible sent a reply larger than 33554432 bytes, which toolwire does not hold in memory; "
        "ask for less (max_tokens=) or stream the reply."
    )
    with raw_server(_endless_chunked_json) as url:
        async with connect_http("openai-compatible:m", base_url=url, api_key="k") as client:
            with pytest.raises(ProviderError) as chunked:
                await client.complete("hi")
    assert chunked.value.message == expected
    declared = RawReply(body=b"{" + b" " * (33 * 1024 * 1024) + b"}", content_type="application/json")
    with ScriptedServer([declared]) as server:
        async with connect_http("openai-compatible:m", base_url=server.base_url, api_key="k") as client:
            with pytest.raises(ProviderError) as whole:
                await client.complete("hi")
    assert whole.value.message == expected


@pytest.mark.parametrize(
    ("header", "value", "echoed"),
    [
        ("Authorization", "Bearer tok-0123456789abcdef", "tok-0123456789abcdef"),
        ("Proxy-Authorization", "Basic dXNlcjpodW50ZXIyLXBhc3N3b3Jk", "hunter2-password"),
        ("Proxy-Authorization", "Basic dXNlcjpodW50ZXIyLXBhc3N3b3Jk", "user:hunter2-password"),
    ],
)
async def test_the_token_part_of_a_credential_header_is_scrubbed_when_echoed(
    header: str, value: str, echoed: str
) -> None:
    turns = [ErrorReply(status=401, message=f"Incorrect API key provided: {echoed}")]
    with ScriptedServer(turns) as server:
        async with server.connect("openai:m", api_key="other-key-123456", headers={header: value}) as client:
            with pytest.raises(AuthenticationError) as caught:
                await client.complete("hi")
    assert "'Incorrect API key provided: [redacted]'" in caught.value.message
    assert echoed not in repr((caught.value.args, caught.value.body))


@pytest.mark.parametrize(
    ("target", "hint"),
    [
        (
            "anthropic:m",
            "give the server's root as anthropic's SDK takes it, e.g. https://api.anthropic.com; "
            "toolwire adds /v1/messages...",
        ),
        (
            "gemini:m",
            "give the server's root as gemini's SDK takes it, e.g. https://generativelanguage.googleapis.com; "
            "toolwire adds /v1beta/models/...",
        ),
        (
            "ollama:m",
            "give the server's root as ollama's SDK takes it, e.g. http://localhost:11434; toolwire adds /api/chat...",
        ),
    ],
)
async def test_a_404_hint_fits_the_provider(target: str, hint: str) -> None:
    not_found = ErrorReply(status=404, body={"detail": "Not Found"})
    with ScriptedServer([not_found]) as server:
        async with server.connect(target, max_retries=0) as client:
            with pytest.raises(BadRequestError) as caught:
                await client.complete("hi")
    assert caught.value.message.endswith(f"nothing is served at that address: check base_url ({hint}).")
