"""The HTTP client under a gateway hop: from sending a streamed request to holding its first body bytes.

    .venv/bin/python -m bench.gateway.http_client [--seconds 3] [--rounds 2]

One local upstream (`wire`'s, the one bench/gateway/vs_litellm.py uses: it answers at once with an
OpenAI stream), one event loop (uvloop), requests one after another on a kept-alive connection.
Rows, each the same httpx2 `AsyncClient` call but the last:

- `httpx2, its own transport`: httpcore2 and h11 on anyio (what `httpx2.AsyncClient()` makes);
- `httpx2 + httpcore2 on asyncio`: toolwire's `asyncio_transport` (the fallback without httptools);
- `httpx2 + toolwire Http1Transport`: httptools (llhttp) fed from the socket callback;
- `bare socket + httptools (floor)`: no httpx2 at all, the least any client of this kind can take.

Rounds alternate the rows; each row's figure is the median over its rounds' medians.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httptools
import httpx2
import uvloop

from bench.gateway import processes
from bench.gateway.vs_litellm import openai_body
from toolwire.http._asyncio import asyncio_transport
from toolwire.http._http1 import Http1Transport
from toolwire.http._transport import _ssl_context

_PATH = "/v1/chat/completions"
_HEADERS = {"authorization": "Bearer sk-bench-upstream", "content-type": "application/json"}


class _Floor:
    """One kept-alive socket, the request written by hand, the response parsed by httptools."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.first: asyncio.Future[None] | None = None
        self.done = False

    async def open(self) -> _Floor:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    def on_body(self, body: bytes) -> None:
        if self.first is not None and not self.first.done():
            self.first.set_result(None)

    def on_message_complete(self) -> None:
        self.done = True

    async def request(self, body: bytes) -> float:
        started = time.perf_counter()
        self.first, self.done = asyncio.get_running_loop().create_future(), False
        parser = httptools.HttpResponseParser(self)
        head = f"POST {_PATH} HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-length: {len(body)}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in _HEADERS.items()) + "\r\n"
        self.writer.write(head.encode() + body)
        while not self.first.done():
            parser.feed_data(await self.reader.read(65536))
        first = time.perf_counter() - started
        while not self.done:
            parser.feed_data(await self.reader.read(65536))
        return first


def _through(client: httpx2.AsyncClient, url: str, body: bytes) -> Callable[[], Awaitable[float]]:
    async def request() -> float:
        started = time.perf_counter()
        response = await client.send(client.build_request("POST", url, content=body, headers=_HEADERS), stream=True)
        chunks = response.aiter_raw()
        await anext(chunks)
        first = time.perf_counter() - started
        async for _ in chunks:
            pass
        await response.aclose()
        return first

    return request


async def _median_for(request: Callable[[], Awaitable[float]], seconds: float) -> tuple[float, int]:
    times, ends = [], time.perf_counter() + seconds
    while time.perf_counter() < ends:
        times.append(await request())
    return statistics.median(times) * 1000, len(times)


async def main(seconds: float, rounds: int) -> None:
    upstream = processes.start_upstream("upstream", Path(tempfile.mkdtemp()), 0, 10)
    try:
        url, body = f"http://127.0.0.1:{upstream.port}{_PATH}", openai_body("up-model", True)
        verify, limits = _ssl_context(), httpx2.Limits()
        own = httpx2.AsyncClient()
        fallback = httpx2.AsyncClient(transport=asyncio_transport(verify=verify, limits=limits))
        fast = Http1Transport(verify=verify, limits=limits, fallback=asyncio_transport(verify=verify, limits=limits))
        floor = await _Floor(upstream.port).open()
        rows = {
            "httpx2, its own transport": _through(own, url, body),
            "httpx2 + httpcore2 on asyncio": _through(fallback, url, body),
            "httpx2 + toolwire Http1Transport": _through(httpx2.AsyncClient(transport=fast), url, body),
            "bare socket + httptools (floor)": lambda: floor.request(body),
        }
        results: dict[str, list[float]] = {name: [] for name in rows}
        counts = dict.fromkeys(rows, 0)
        for turn in range(rounds):
            for name in list(rows)[:: 1 if turn % 2 == 0 else -1]:
                await _median_for(rows[name], 0.3)  # warm: connection open, caches filled
                median, count = await _median_for(rows[name], seconds)
                results[name].append(median)
                counts[name] += count
        floor_ms = statistics.median(results["bare socket + httptools (floor)"])
        print(f"### Send → first body bytes, one kept-alive connection ({rounds} rounds of {seconds:g} s)\n")
        print("| client | p50 | x floor | rounds | requests |\n|---|---|---|---|---|")
        for name, medians in results.items():
            p50 = statistics.median(medians)
            each = ", ".join(f"{m:.3f}" for m in medians)
            print(f"| {name} | {p50:.3f} ms | {p50 / floor_ms:.1f}x | {each} | {counts[name]:,} |")
    finally:
        upstream.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of one row's run in a round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds (the order of the rows alternates)")
    args = parser.parse_args()
    uvloop.run(main(args.seconds, args.rounds))
