"""Raw HTTP/1.1 on loopback for bench/gateway/vs_litellm.py: a fast OpenAI upstream and a lean load client.

Both sides are plain asyncio (stdlib only) so that neither is the bottleneck being measured:
the upstream answers from precomputed bytes, and the client parses no JSON while timing.

- `serve_upstream(port, pace_ms, chunks)`: `POST /v1/chat/completions` (and `POST /v1/messages`,
  the same reply as Anthropic's Messages API gives it) answered with a chat
  completion holding two parallel tool calls, or (`"stream": true` in the body) with SSE chunks
  whose two calls' argument fragments interleave: the first chunk at once, the rest `pace_ms`
  apart (0: in the same instant), then `[DONE]`.
  `GET /stats` reports requests served and the peak of streams open at once since the last report.
- `Conn`: one keep-alive client connection; `request()` returns status, body, and the time
  from the request's first byte written to the reply's first body byte.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field

_STREAM = re.compile(rb'"stream"\s*:\s*true')
CALLS = [
    {"id": f"call_bench_{n}", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
    for n, arguments in enumerate(('{"city": "Paris"}', '{"city": "Tokyo", "unit": "c"}'))
]
_USAGE = {"prompt_tokens": 120, "completion_tokens": 18, "total_tokens": 138}


def completion_body() -> bytes:
    """The non-streaming reply: one assistant message with two tool calls, and usage."""
    message = {"role": "assistant", "content": None, "tool_calls": CALLS}
    reply = {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1764000000,
        "model": "up-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": _USAGE,
    }
    return json.dumps(reply).encode()


def stream_events(chunks: int) -> list[bytes]:
    """The SSE events of a streamed reply: role, `chunks` text pieces, two calls, finish, usage, `[DONE]`.

    The calls stream as parallel calls do from vLLM or OpenAI: both headers, then their
    argument fragments interleaved (call 0, call 1, call 0, ...).
    """

    def event(delta: dict[str, object], finish: str | None = None, usage: object = None) -> bytes:
        chunk = {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 1764000000,
            "model": "up-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
        }
        if usage is not None:
            chunk["usage"] = usage
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    events = [event({"role": "assistant", "content": ""})]
    events += [event({"content": f"word{i} "}) for i in range(chunks)]
    fragments: list[list[str]] = []
    for index, call in enumerate(CALLS):
        header = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": "get_weather", "arguments": ""},
        }
        events.append(event({"tool_calls": [header]}))
        arguments = call["function"]["arguments"]
        fragments.append([arguments[i : i + 8] for i in range(0, len(arguments), 8)])
    for step in range(max(map(len, fragments))):
        for index, pieces in enumerate(fragments):
            if step < len(pieces):
                events.append(event({"tool_calls": [{"index": index, "function": {"arguments": pieces[step]}}]}))
    events.append(event({}, "tool_calls"))
    events.append(event({}, usage=_USAGE))
    events.append(b"data: [DONE]\n\n")
    return events


def messages_body() -> bytes:
    """The same reply as Anthropic's Messages API gives it: two `tool_use` blocks, and usage."""
    content = [
        {
            "type": "tool_use",
            "id": f"toolu_bench_{n}",
            "name": c["function"]["name"],
            "input": json.loads(c["function"]["arguments"]),
        }
        for n, c in enumerate(CALLS)
    ]
    reply = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "up-model",
        "content": content,
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 18},
    }
    return json.dumps(reply).encode()


def messages_events(chunks: int) -> list[bytes]:
    """The Messages stream of that reply: a text block in `chunks` pieces, then two `tool_use` blocks.

    Anthropic streams one block at a time, so each call's `input_json_delta` fragments come in turn.
    """

    def event(data: dict[str, object]) -> bytes:
        return b"event: %s\ndata: %s\n\n" % (str(data["type"]).encode(), json.dumps(data).encode())

    message = json.loads(messages_body()) | {"content": [], "stop_reason": None}
    message["usage"] = {"input_tokens": 120, "output_tokens": 1}
    events = [event({"type": "message_start", "message": message}), event({"type": "ping"})]
    block = {"type": "text", "text": ""}
    events.append(event({"type": "content_block_start", "index": 0, "content_block": block}))
    for i in range(chunks):
        events.append(
            event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": f"word{i} "}})
        )
    events.append(event({"type": "content_block_stop", "index": 0}))
    for n, call in enumerate(CALLS, start=1):
        block = {"type": "tool_use", "id": f"toolu_bench_{n - 1}", "name": call["function"]["name"], "input": {}}
        events.append(event({"type": "content_block_start", "index": n, "content_block": block}))
        arguments = call["function"]["arguments"]
        for i in range(0, len(arguments), 8):
            delta = {"type": "input_json_delta", "partial_json": arguments[i : i + 8]}
            events.append(event({"type": "content_block_delta", "index": n, "delta": delta}))
        events.append(event({"type": "content_block_stop", "index": n}))
    delta = {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}}
    events.append(event(delta | {"usage": {"output_tokens": 18}}))
    events.append(event({"type": "message_stop"}))
    return events


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class _Upstream(asyncio.Protocol):
    """One upstream connection: parses requests as they come and answers from precomputed bytes."""

    def __init__(self, state: _UpstreamState) -> None:
        self.state = state
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.busy = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.busy:
            self._next()

    def _next(self) -> None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).lower()
        length = int(m.group(1)) if (m := re.search(rb"content-length:\s*(\d+)", head)) else 0
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        self.state.requests += 1
        if head.startswith(b"get /stats"):
            self._send(json.dumps({"requests": self.state.requests, "peak_streams": self.state.peak}).encode())
            self.state.peak = self.state.open  # each report starts a new peak
        elif _STREAM.search(body):
            self.busy = True
            events = self.state.messages_events if b"/v1/messages" in head else self.state.events
            asyncio.get_running_loop().create_task(self._stream(events))
            return
        else:
            self._send(self.state.messages if b"/v1/messages" in head else self.state.completion)
        if self.buffer:
            self._next()

    def _send(self, body: bytes) -> None:
        assert self.transport is not None
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
        self.transport.write(head + body)

    async def _stream(self, events: list[bytes]) -> None:
        state, transport = self.state, self.transport
        assert transport is not None
        state.open += 1
        state.peak = max(state.peak, state.open)
        try:
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            transport.write(head + _chunked(events[0]))
            if state.pace:
                for event in events[1:]:
                    await asyncio.sleep(state.pace)
                    if transport.is_closing():
                        return
                    transport.write(_chunked(event))
            else:
                transport.write(b"".join(_chunked(e) for e in events[1:]))
            transport.write(b"0\r\n\r\n")
        finally:
            state.open -= 1
        self.busy = False
        if self.buffer:
            self._next()


@dataclass
class _UpstreamState:
    completion: bytes
    events: list[bytes]
    pace: float
    messages: bytes = b""
    messages_events: list[bytes] = field(default_factory=list)
    requests: int = 0
    open: int = 0
    peak: int = 0


async def serve_upstream(port: int, pace_ms: float, chunks: int) -> None:
    """Serve the fast upstream on 127.0.0.1:port until killed."""
    state = _UpstreamState(
        completion_body(), stream_events(chunks), pace_ms / 1000, messages_body(), messages_events(chunks)
    )
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Upstream(state), "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


# the client


@dataclass
class Reply:
    status: int
    body: bytes
    first_byte: float  # seconds from the request written to the first body byte


class Conn:
    """One keep-alive HTTP/1.1 connection to `127.0.0.1:port`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> Conn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 22)
        return self

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(self, path: str, body: bytes, headers: bytes = b"") -> Reply:
        """POST `body`; read the whole reply (content-length or chunked) on the same connection."""
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        head = b"POST %s HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
        self.writer.write(head % (path.encode(), len(body)) + headers + b"\r\n" + body)
        sent = time.perf_counter()
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw[9:12])
        lower = raw.lower()
        if m := re.search(rb"content-length:\s*(\d+)", lower):
            data = await self.reader.readexactly(int(m.group(1)))
            first = time.perf_counter() - sent
        elif b"chunked" in lower:
            data, first = await self._chunks(sent)
        else:  # read to the end: the connection is done
            data = await self.reader.read()
            first = time.perf_counter() - sent
            self.close()
        if b"connection: close" in lower:
            self.close()
        return Reply(status, data, first)

    async def _chunks(self, sent: float) -> tuple[bytes, float]:
        assert self.reader is not None
        parts: list[bytes] = []
        first = 0.0
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return b"".join(parts), first
            if not parts:
                first = time.perf_counter() - sent
            parts.append((await self.reader.readexactly(size + 2))[:-2])
