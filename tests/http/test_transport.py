"""Retries, typed errors and cut streams, over real sockets against the loopback server."""

from __future__ import annotations

import email.utils
import gzip
import logging
import socket
import time

import pytest

from tests._providers import KEY, Case, cases, text_reply
from toolwire.codecs import get_codec
from toolwire.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderError,
    RateLimitError,
    StreamError,
    TimeoutError,
    ToolwireError,
)
from toolwire.http import RetryPolicy, error_for_status, parse_retry_after
from toolwire.testing import Delay, DropStream, ErrorReply, RawReply, ScriptedServer
from toolwire.types import Done, TextDelta

FAST = {"retry_base_delay": 0.001, "retry_max_delay": 0.005}


def _connect(server: ScriptedServer, case: Case, **kwargs: object):  # type: ignore[no-untyped-def]
    return server.connect(f"{case.provider}:m-1", api_key=KEY, **{**case.options, **FAST, **kwargs})


# retries


@pytest.mark.parametrize("case", cases())
@pytest.mark.parametrize("status", [408, 409, 429, 500, 503])
async def test_transient_statuses_are_retried(case: Case, status: int) -> None:
    with ScriptedServer([ErrorReply(status=status, message="busy"), text_reply("recovered")]) as server:
        async with _connect(server, case) as client:
            assert (await client.complete("hi")).text == "recovered"
    assert len(server.requests) == 2


@pytest.mark.parametrize("case", cases("openai", "anthropic"))
async def test_retry_after_seconds_is_honoured(case: Case) -> None:
    turns = [ErrorReply(status=429, message="slow down", headers={"retry-after": "0.3"}), text_reply("ok")]
    with ScriptedServer(turns) as server:
        async with _connect(server, case) as client:
            started = time.monotonic()
            assert (await client.complete("hi")).text == "ok"
            elapsed = time.monotonic() - started
    # At least the server's 0.3 s (not the tiny backoff); the upper bound only catches a misread
    # value, so it is far away: a loaded machine may add seconds to the two round trips.
    assert 0.28 <= elapsed < 30


async def test_retry_after_http_date_is_honoured() -> None:
    when = email.utils.formatdate(time.time() + 1.2, usegmt=True)  # whole seconds: waits 0.2 to 1.2 s
    turns = [ErrorReply(status=503, message="later", headers={"retry-after": when}), text_reply("ok")]
    with ScriptedServer(turns) as server:
        async with server.connect("openai:m-1", **FAST) as client:
            started = time.monotonic()
            assert (await client.complete("hi")).text == "ok"
            elapsed = time.monotonic() - started
    assert 0.15 <= elapsed < 30  # see test_retry_after_seconds_is_honoured


def test_parse_retry_after() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after-ms": "150", "retry-after": "9"}) == 0.15
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (parse_retry_after({"retry-after": date}) or 0) <= 30


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("1e12", 600.0),
        ("inf", 600.0),
        ("1e400", 600.0),
        ("0", None),
        ("-5", None),
        ("nan", None),
        ("-inf", None),
        (" 7 ", 7.0),
        ("Mon, 01 Jan 1990 00:00:00 GMT", None),  # gone by
        ("Fri, 01 Jan 9999 00:00:00 GMT", 600.0),
        ("Fri, 99 Foo 9999 99:99:99 GMT", None),
    ],
)
def test_retry_after_is_read_within_bounds(value: str, seconds: float | None) -> None:
    assert parse_retry_after({"retry-after": value}) == seconds


def test_retry_after_ms_is_read_within_the_same_bounds() -> None:
    found = [parse_retry_after({"retry-after-ms": value}) for value in ("1500", "1e15", "inf", "0", "-5", "nan")]
    assert found == [1.5, 600.0, 600.0, None, None, None]


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=5, base_delay=1.0, max_delay=3.0)
    assert 0.75 <= policy.delay(0) <= 1.0
    assert 1.5 <= policy.delay(1) <= 2.0
    assert 2.25 <= policy.delay(4) <= 3.0
    assert policy.delay(0, retry_after=7.0) == 7.0
    assert policy.delay(0, retry_after=3600.0) <= 1.0  # an absurd Retry-After falls back to backoff


@pytest.mark.parametrize("case", cases("openai", "anthropic"))
async def test_retries_are_bounded_by_max_retries(case: Case) -> None:
    turns = [ErrorReply(status=429, message=f"rate limited {i}") for i in range(3)]
    with ScriptedServer(turns) as server:
        async with _connect(server, case, max_retries=2) as client:
            with pytest.raises(RateLimitError) as info:
                await client.complete("hi")
    assert len(server.requests) == 3
    assert info.value.status == 429
    assert info.value.request_id == "req_3"
    assert info.value.provider == case.provider
    assert "rate limited 2" in str(info.value)


async def test_max_retries_zero_sends_once() -> None:
    with ScriptedServer([ErrorReply(status=500, message="boom")]) as server:
        async with server.connect("openai:m-1", max_retries=0) as client:
            with pytest.raises(ProviderError, match="boom"):
                await client.complete("hi")
    assert len(server.requests) == 1


@pytest.mark.parametrize("case", cases("openai", "anthropic"))
async def test_a_stream_is_retried_before_it_starts(case: Case) -> None:
    with ScriptedServer([ErrorReply(status=503, message="warming up"), text_reply("streamed")]) as server:
        async with _connect(server, case) as client:
            events = [e async for e in client.stream("hi")]
    assert isinstance(events[-1], Done) and events[-1].response.text == "streamed"
    assert len(server.requests) == 2


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_connection_errors_are_retried_then_raised() -> None:
    from toolwire import connect

    url = f"http://127.0.0.1:{_closed_port()}/v1"
    async with connect("openai:m", api_key=KEY, base_url=url, max_retries=2, **FAST) as client:
        with pytest.raises(
            ProviderError, match=r"Could not reach openai at http://127\.0\.0\.1:\d+/v1/chat/completions: ConnectError"
        ) as info:
            await client.complete("hi")
    assert KEY not in str(info.value)


async def test_retries_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    from toolwire import connect

    port = _closed_port()
    with ScriptedServer([text_reply("late")]) as server:
        # the first attempt hits a closed port; a retry cannot fix that, so point the retry at the server
        async with connect("openai:m", api_key=KEY, base_url=f"http://127.0.0.1:{port}", **FAST) as client:
            with caplog.at_level(logging.INFO, logger="toolwire.transport"), pytest.raises(ProviderError):
                await client.complete("hi")
        assert "retrying openai request" in caplog.text
        assert server.requests == []


# typed errors


@pytest.mark.parametrize("case", cases())
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, BadRequestError),
        (422, BadRequestError),
        (429, RateLimitError),
        (500, ProviderError),
    ],
)
async def test_status_maps_to_a_typed_error(case: Case, status: int, kind: type[ToolwireError]) -> None:
    with ScriptedServer([ErrorReply(status=status, message="the provider's own words")]) as server:
        async with _connect(server, case, max_retries=0) as client:
            with pytest.raises(kind) as info:
                await client.complete("hi")
    error = info.value
    assert type(error) is kind
    assert error.status == status
    assert error.request_id == "req_1"
    assert error.provider == case.provider
    answered = f"{case.provider} answered HTTP {status}" + (" for POST http://" if status == 404 else ": ")
    assert error.message.startswith(answered)  # a 404 names the address: usually a wrong base_url
    assert '"the provider\'s own words"; ' in error.message


def test_error_for_status_reads_every_provider_shape() -> None:
    shapes = [
        {"error": {"message": "openai says", "type": "invalid_request_error"}},
        {"type": "error", "error": {"type": "invalid_request_error", "message": "anthropic says"}},
        [{"error": {"code": 400, "message": "gemini says", "status": "INVALID_ARGUMENT"}}],
        {"error": "ollama says"},
        {"detail": "vllm says"},
    ]
    messages = [error_for_status(400, body, "", provider="p").message for body in shapes]
    assert [m.split(": ", 1)[1].split(";")[0] for m in messages] == [
        "'openai says'",
        "'anthropic says'",
        "'gemini says'",
        "'ollama says'",
        "'vllm says'",
    ]
    assert "'plain text'" in error_for_status(502, None, "plain text", provider="p").message
    assert type(error_for_status(413, None, "", provider="p")) is BadRequestError
    assert type(error_for_status(409, None, "", provider="p")) is ProviderError


async def test_timeout_raises_toolwire_timeout_error() -> None:
    # The reply would come after 30 s: finishing well before that means the 0.2 s timeout fired.
    with ScriptedServer([Delay(seconds=30.0, then=text_reply())]) as server:
        async with server.connect("openai:m-1", timeout=0.2, max_retries=0) as client:
            started = time.monotonic()
            with pytest.raises(
                TimeoutError, match=r"openai at http://127\.0\.0\.1:\d+/\S+ did not answer within 0.2s"
            ) as info:
                await client.complete("hi")
            assert time.monotonic() - started < 20
    assert isinstance(info.value, ToolwireError)


async def test_a_body_that_is_not_json_is_a_provider_error() -> None:
    with ScriptedServer([RawReply(body="<html>gateway</html>", content_type="text/html")]) as server:
        async with server.connect("openai:m-1") as client:
            with pytest.raises(ProviderError, match=r"not JSON: b'<html>gateway</html>'"):
                await client.complete("hi")


# streams


@pytest.mark.parametrize("case", cases())
@pytest.mark.parametrize("clean", [True, False], ids=["clean-close", "cut"])
async def test_a_dropped_stream_raises_stream_error_with_partial(case: Case, clean: bool) -> None:
    scripted = text_reply("Twelve words of text that the stream will deliver only in part.")
    after = max(1, len(get_codec(case.codec).encode_stream(scripted)) - 2)  # cut before the end marker
    with ScriptedServer([DropStream(response=scripted, after=after, clean=clean)]) as server:
        async with _connect(server, case) as client:
            received = []
            with pytest.raises(StreamError) as info:
                async for event in client.stream("hi"):
                    received.append(event)
    assert info.value.partial == received
    assert not any(isinstance(e, Done) for e in received)
    assert info.value.provider == case.provider
    assert info.value.request_id == "req_1"
    assert len(server.requests) == 1  # never retried once the stream had started
    if clean:
        assert "ended before its end marker" in str(info.value)


ERROR_EVENTS = {
    "openai": 'data: {"error": {"message": "overloaded mid-stream", "type": "server_error"}}\n\n',
    "anthropic": (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "overloaded mid-stream"}}\n\n'
    ),
    "openai-responses": (
        'event: error\ndata: {"type": "error", "code": "server_error", "message": "overloaded mid-stream", '
        '"param": null, "sequence_number": 0}\n\n'
    ),
    "gemini": 'data: {"error": {"code": 503, "message": "overloaded mid-stream", "status": "UNAVAILABLE"}}\n\n',
    "ollama": '{"error": "overloaded mid-stream"}\n',
}


@pytest.mark.parametrize("case", cases(*ERROR_EVENTS))
async def test_an_error_event_inside_a_stream_is_a_provider_error(case: Case) -> None:
    content_type = "application/x-ndjson" if case.provider == "ollama" else "text/event-stream"
    with ScriptedServer([RawReply(body=ERROR_EVENTS[case.provider], content_type=content_type)]) as server:
        async with _connect(server, case) as client:
            with pytest.raises(ProviderError, match="overloaded mid-stream") as info:
                async for _event in client.stream("hi"):
                    pass
    assert info.value.request_id == "req_1"
    assert info.value.provider == case.provider
    assert len(server.requests) == 1


async def test_a_malformed_event_is_a_stream_error() -> None:
    first = '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}'
    with ScriptedServer([RawReply(body=f"data: {first}\n\ndata: not json\n\n")]) as server:
        async with server.connect("openai:m-1") as client:
            with pytest.raises(StreamError, match=r"not a JSON object: 'not json'") as info:
                async for _event in client.stream("hi"):
                    pass
    assert info.value.partial == [TextDelta("Hi")]


async def test_a_stream_with_the_wrong_content_type_is_a_stream_error() -> None:
    with ScriptedServer([RawReply(body='{"ok": true}', content_type="application/json")]) as server:
        async with server.connect("anthropic:m-1") as client:
            with pytest.raises(StreamError, match=r"not a valid event stream"):
                async for _event in client.stream("hi"):
                    pass


async def test_openai_stream_without_done_marker_but_with_finish_reason_completes() -> None:
    chunks = [
        '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}',
        '{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    ]
    with ScriptedServer([RawReply(body="".join(f"data: {c}\n\n" for c in chunks))]) as server:
        async with server.connect("vllm:m-1") as client:
            events = [e async for e in client.stream("hi")]
    assert isinstance(events[-1], Done) and events[-1].response.text == "Hi"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
async def test_a_compressed_reply_is_read_as_sent(stream: bool) -> None:
    """A gzip body goes through httpx2's decoding; a plain one is read straight off the connection."""
    choice = '{"index":0,"delta":{"content":"Hé"},"finish_reason":"stop"}'
    chunk = f'{{"id":"c1","object":"chat.completion.chunk","choices":[{choice}]}}'
    whole = '{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hé"},"finish_reason":"stop"}]}'
    body = f"data: {chunk}\n\ndata: [DONE]\n\n" if stream else whole
    content_type = "text/event-stream" if stream else "application/json"
    reply = RawReply(body=gzip.compress(body.encode()), content_type=content_type, headers={"content-encoding": "gzip"})
    with ScriptedServer([reply]) as server:
        async with server.connect("vllm:m-1") as client:
            if stream:
                done = [e async for e in client.stream("hi")][-1]
                assert isinstance(done, Done)
                response = done.response
            else:
                response = await client.complete("hi")
    assert (response.text, response.id) == ("Hé", "c1")


# secrets


@pytest.mark.parametrize("case", cases())
async def test_the_key_never_appears_in_errors_or_logs(case: Case, caplog: pytest.LogCaptureFixture) -> None:
    echo = f"Incorrect API key provided: {KEY}."
    turns = [
        ErrorReply(status=500, message=echo),
        ErrorReply(status=401, message=echo),
        DropStream(response=text_reply("some words to stream"), after=2),
        ErrorReply(status=400, body={"error": {"message": echo, "key": KEY}}),
    ]
    errors: list[ToolwireError] = []
    with caplog.at_level(logging.DEBUG), ScriptedServer(turns) as server:
        async with _connect(server, case, max_retries=1) as client:
            with pytest.raises(AuthenticationError) as auth:
                await client.complete("hi")
            errors.append(auth.value)
            with pytest.raises(StreamError) as cut:
                async for _event in client.stream("hi"):
                    pass
            errors.append(cut.value)
            with pytest.raises(BadRequestError) as bad:
                await client.complete("hi")
            errors.append(bad.value)
    assert "[redacted]" in str(auth.value)
    for error in errors:
        assert KEY not in str(error)
        assert KEY not in repr(error)
        assert KEY not in repr(error.args)
        assert KEY not in repr(error.body)
    assert KEY not in caplog.text
    assert "retrying" in caplog.text
