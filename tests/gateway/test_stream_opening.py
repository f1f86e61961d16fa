"""A translated stream opens when the upstream's does, not when its first text arrives.

The upstream here sends its stream's opening frame (OpenAI's role chunk, Anthropic's
`message_start`) and then holds the rest until the test has seen the client's stream open.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator

import httpx2
import pytest

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import KEY_ENV, Gateway
from toolwire.gateway import Route, Target, create_app
from toolwire.gateway._protocols import PROTOCOLS
from toolwire.gateway._relay import OpeningAhead, Relay
from toolwire.types import TextDelta


def _chunk(delta: dict[str, str], finish: str | None = None) -> dict[str, object]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "up", "choices": [choice]}


_OPENAI_OPENING = [_chunk({"role": "assistant", "content": ""})]
_OPENAI_REST = [_chunk({"content": "Hi"}), _chunk({}, "stop")]
_MESSAGE = {"id": "msg_1", "type": "message", "role": "assistant", "model": "up", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 0}}  # fmt: skip
_ANTHROPIC_OPENING = [{"type": "message_start", "message": _MESSAGE}]
_ANTHROPIC_REST = [
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
]


_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def _http_chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _sse(event: dict[str, object], named: bool) -> bytes:
    head = f"event: {event['type']}\n" if named else ""
    return _http_chunk(f"{head}data: {json.dumps(event)}\n\n".encode())


class HeldUpstream:
    """Answers one streamed request with its opening frame, and the rest only once `release` is set."""

    def __init__(self, opening: list[dict[str, object]], rest: list[dict[str, object]], anthropic: bool) -> None:
        self.opening, self.rest, self.anthropic = opening, rest, anthropic
        self.release = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            sizes = [line.split(b":")[1] for line in head.lower().split(b"\r\n") if line.startswith(b"content-length")]
            while len(body) < int(sizes[0]):
                body += conn.recv(65536)
            opening = b"".join(_sse(e, self.anthropic) for e in self.opening)
            conn.sendall(_HEAD + opening)
            self.release.wait(60)
            rest = b"".join(_sse(e, self.anthropic) for e in self.rest)
            done = b"" if self.anthropic else _http_chunk(b"data: [DONE]\n\n")
            conn.sendall(rest + done + b"0\r\n\r\n")


@pytest.fixture
def upstream_key() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, "upstream-key")
        yield


CASES = {
    "openai upstream, anthropic client": (
        "openai", _OPENAI_OPENING, _OPENAI_REST, "/v1/messages",
        {"model": "held", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]},
        ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
         "message_stop"],
    ),
    "openai upstream in text mode, anthropic client with tools": (
        "openai", _OPENAI_OPENING, _OPENAI_REST, "/v1/messages",
        {"model": "held", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}],
         "tools": [{"name": "lookup", "input_schema": {"type": "object", "properties": {}}}]},
        ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
         "message_stop"],
    ),
    "anthropic upstream, responses client": (
        "anthropic", _ANTHROPIC_OPENING, _ANTHROPIC_REST, "/v1/responses",
        {"model": "held", "input": "hi", "stream": True},
        ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
         "response.output_text.delta", "response.output_text.done", "response.content_part.done",
         "response.output_item.done", "response.completed"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_the_clients_stream_opens_before_the_upstreams_first_text(upstream_key: None, case: str) -> None:
    provider, opening, rest, path, body, expected = CASES[case]
    upstream = HeldUpstream(opening, rest, anthropic=provider == "anthropic")
    base = f"http://127.0.0.1:{upstream.port}" + ("/v1" if provider == "openai" else "")
    mode = "text" if "text mode" in case else "native"
    route = Route(model="held", target=f"{provider}:up", base_url=base, api_key_env=KEY_ENV, tool_mode=mode)
    types: list[str] = []
    with (
        Gateway(create_app([route], keys=[GATEWAY_KEY])) as gateway,
        httpx2.Client(timeout=30, headers={"authorization": f"Bearer {GATEWAY_KEY}"}) as http,
        http.stream("POST", gateway.url + path, json=body) as reply,
    ):
        assert reply.status_code == 200
        for line in reply.iter_lines():
            if line.startswith("data: "):
                types.append(json.loads(line[6:])["type"])
                upstream.release.set()  # the client's stream opened while the upstream still held its text
    upstream.sock.close()
    assert types == expected


def test_a_route_with_a_target_left_fails_over_when_the_upstream_errs_after_its_opening(upstream_key: None) -> None:
    """Anthropic's `message_start`, then `overloaded_error`: the next target serves the request."""
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    failing = HeldUpstream(_ANTHROPIC_OPENING, [overloaded], anthropic=True)
    serving = HeldUpstream(_OPENAI_OPENING, _OPENAI_REST, anthropic=False)
    failing.release.set()
    serving.release.set()
    targets = [
        Target("anthropic:up", f"http://127.0.0.1:{failing.port}", KEY_ENV),
        Target("openai:up", f"http://127.0.0.1:{serving.port}/v1", KEY_ENV),
    ]
    body = {"model": "held", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with (
        Gateway(create_app([Route(model="held", targets=targets)], keys=[GATEWAY_KEY])) as gateway,
        httpx2.Client(timeout=30, headers={"authorization": f"Bearer {GATEWAY_KEY}"}) as http,
        http.stream("POST", gateway.url + "/v1/chat/completions", json=body) as reply,
    ):
        chunks = [json.loads(line[6:]) for line in reply.iter_lines() if line.startswith("data: {")]
        served_by = reply.headers["x-toolwire-target"]
    failing.sock.close()
    serving.sock.close()
    text = "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks if chunk["choices"])
    assert (reply.status_code, served_by, text) == (200, "openai:up", "Hi")


_MADE_UP = re.compile(rb"[0-9a-f]{24}|\d{4}-\d\d-\d\dT[0-9:.]+Z?")  # ids and clock times made per stream


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_the_opening_encoded_ahead_is_the_one_the_relay_would_send(protocol: str) -> None:
    from toolwire.codecs import get_codec

    decoder = get_codec("openai").stream_decoder()
    ahead = OpeningAhead(PROTOCOLS[protocol], "client-model")
    ahead.encode()
    with_ahead = Relay(PROTOCOLS[protocol], "client-model", decoder, foreign=True, ahead=ahead)
    alone = Relay(PROTOCOLS[protocol], "client-model", decoder, foreign=True)
    assert ahead.encoded is not None
    streams = [[relay.feed([event]) for event in (TextDelta(""), TextDelta("Hi"))] for relay in (with_ahead, alone)]
    assert with_ahead.encoder is ahead.encoded[0]  # the stream went on from the opening sent
    assert streams[0][0] == ahead.encoded[1]
    assert [_MADE_UP.sub(b"X", data) for data in streams[0]] == [_MADE_UP.sub(b"X", data) for data in streams[1]]
    together = OpeningAhead(PROTOCOLS[protocol], "client-model")
    together.encode()  # the opening and a delta that arrived with it: one write of both
    both = Relay(PROTOCOLS[protocol], "client-model", decoder, foreign=True, ahead=together).feed(
        [TextDelta(""), TextDelta("Hi")]
    )
    assert _MADE_UP.sub(b"X", both) == _MADE_UP.sub(b"X", b"".join(streams[0]))
    # Gemini and Ollama open on the first text; a Converse stream names no model at all.
    assert b"client-model" in streams[0][0] or protocol in ("gemini", "ollama", "bedrock")
