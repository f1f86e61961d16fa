"""The gateway's own cost per request, in one process: CPU time, ASGI sends, and a profile.

    .venv/bin/python -m bench.gateway.hotpath                        # every row, CPU ms per request
    .venv/bin/python -m bench.gateway.hotpath --row openai-anthropic-stream --profile 25
    .venv/bin/python -m bench.gateway.hotpath --uvloop --instructions 300   # valgrind's count per request, every row
    .venv/bin/python -m bench.gateway.hotpath --uvloop --instructions 300 --chunks 30 --row openai-anthropic-stream

The app (`toolwire.gateway.create_app`) is driven through ASGI directly, with no HTTP server in
front, against `wire.py`'s upstream in its own process: what is left is toolwire's work per
request (parsing, routing, the codecs, the relay, the upstream HTTP client), which is what a
change to the gateway moves. CPU time is this process's own (`time.process_time`), so other
work on a busy machine does not count; valgrind's instruction counts are steadier still (the
difference between `-n 0` and `-n N`, divided by N, is one request's). Every reply is checked:
status 200, both tool calls whole in the client's protocol.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.gateway import processes, wire
from bench.gateway.calls import calls_in
from bench.gateway.vs_litellm import anthropic_body, openai_body

EXPECTED = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in wire.CALLS]


@dataclass(frozen=True)
class Row:
    """One kind of request: the client's path and body, and whether it streams."""

    path: str
    protocol: str
    body: Callable[[str, bool], bytes]
    stream: bool
    model: str = "bench-model"


ROWS = {
    "openai-openai-whole": Row("/v1/chat/completions", "openai", openai_body, False),
    "openai-openai-stream": Row("/v1/chat/completions", "openai", openai_body, True),
    "anthropic-openai-whole": Row("/v1/messages", "anthropic", anthropic_body, False),
    "anthropic-openai-stream": Row("/v1/messages", "anthropic", anthropic_body, True),
    "openai-anthropic-whole": Row("/v1/chat/completions", "openai", openai_body, False, "bench-claude"),
    "openai-anthropic-stream": Row("/v1/chat/completions", "openai", openai_body, True, "bench-claude"),
}


class _Client:
    """One ASGI request: its receive side (the body, then nothing until the reply ended) and its sends."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent = 0
        self.status = 0
        self.parts: list[bytes] = []
        self._gone = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        if self.body is not None:
            body, self.body = self.body, None  # type: ignore[assignment]
            return {"type": "http.request", "body": body, "more_body": False}
        await self._gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent += 1
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.parts.append(message["body"])
            if not message.get("more_body", False):
                self._gone.set()


def _scope(path: str, body: bytes, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 4000),
        "state": {},
    }


_HEADERS = [(b"authorization", b"Bearer " + processes.CLIENT_KEY.encode()), (b"anthropic-version", b"2023-06-01")]


async def _one(app: Any, row: Row, body: bytes) -> _Client:
    client = _Client(body)
    await app(_scope(row.path, body, _HEADERS), client.receive, client.send)
    return client


def check(row: Row, client: _Client) -> None:
    """Status 200 and both calls whole, else `AssertionError` with the reply."""
    reply = b"".join(client.parts)
    found = calls_in(row.protocol, row.stream, reply) if client.status == 200 else None
    assert found == EXPECTED, f"{client.status}: {reply[:400]!r} gave {found!r}"


async def measure(app: Any, row: Row, count: int, warmup: int, profile: cProfile.Profile | None) -> dict[str, float]:
    body = row.body(row.model, row.stream)
    for _ in range(warmup):
        check(row, await _one(app, row, body))
    sends = 0
    if profile is not None:
        profile.enable()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(count):
        client = await _one(app, row, body)
        sends += client.sent
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if profile is not None:
        profile.disable()
    check(row, client) if count else None
    return {
        "cpu_ms": cpu * 1000 / max(count, 1),
        "wall_ms": wall * 1000 / max(count, 1),
        "sends": sends / max(count, 1),
    }


async def _run(args: argparse.Namespace, port: int) -> dict[str, dict[str, float]]:
    from toolwire.config import load_config
    from toolwire.gateway import create_app

    os.environ[processes.KEY_ENV] = "sk-bench-upstream"
    with tempfile.TemporaryDirectory(prefix="tw-hotpath-") as tmp:
        config = Path(tmp) / "toolwire.toml"
        config.write_text(processes.TOOLWIRE_TOML.format(fast=port, slow=port, dead=port, key=processes.KEY_ENV))
        app = create_app(load_config(config), keys=[processes.CLIENT_KEY])
    profile = cProfile.Profile(time.process_time) if args.profile else None  # CPU time: steady on a busy machine
    results = {}
    async with _lifespan(app):
        for name in args.row or list(ROWS):
            results[name] = await measure(app, ROWS[name], args.n, args.warmup, profile)
    if profile is not None:
        pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(args.profile)
    return results


class _lifespan:
    """The app's lifespan (its upstream clients close at the end), driven as uvicorn drives it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def __aenter__(self) -> None:
        self.task = asyncio.get_running_loop().create_task(
            self.app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, self.queue.get, self.replies.put)
        )
        await self.queue.put({"type": "lifespan.startup"})
        await self.replies.get()

    async def __aexit__(self, *exc: object) -> None:
        await self.queue.put({"type": "lifespan.shutdown"})
        await self.replies.get()
        await self.task


def instructions(row: str, count: int, args: argparse.Namespace) -> int:
    """Instructions one request of `row` takes: valgrind's count for `count` requests less that for none."""
    counts = []
    for n in (0, count):
        command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
        command += [sys.executable, "-m", "bench.gateway.hotpath", "--row", row, "-n", str(n), "--warmup", "100"]
        command += ["--chunks", str(args.chunks)]
        command += ["--uvloop"] if args.uvloop else []
        run = subprocess.run(command, capture_output=True, text=True, check=True)
        found = re.search(r"Collected : (\d+)", run.stderr)
        assert found is not None, run.stderr[-2000:]
        counts.append(int(found[1]))
    return (counts[1] - counts[0]) // count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", action="append", choices=list(ROWS), help="a row to run (repeatable; default all)")
    parser.add_argument("-n", type=int, default=2000, help="measured requests per row")
    parser.add_argument("--warmup", type=int, default=200, help="requests per row before measuring")
    parser.add_argument("--profile", type=int, default=0, metavar="LINES", help="print cProfile's top LINES")
    parser.add_argument("--uvloop", action="store_true", help="run on uvloop, as toolwire serve does")
    parser.add_argument("--chunks", type=int, default=10, help="text chunks in each upstream reply")
    parser.add_argument(
        "--instructions", type=int, default=0, metavar="N", help="valgrind's instructions per request over N requests"
    )
    args = parser.parse_args()
    if args.instructions:
        for name in args.row or list(ROWS):
            print(f"{name:24} {instructions(name, args.instructions, args):,} instructions/request", flush=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="tw-hotpath-up-") as logs:
        upstream = processes.start_upstream("upstream", Path(logs), 0, args.chunks)
        try:
            runner = asyncio.run
            if args.uvloop:
                import uvloop

                runner = uvloop.run  # type: ignore[assignment]
            results = runner(_run(args, upstream.port))
        finally:
            upstream.stop()
    for name, figures in results.items():
        cpu, wall, sends = figures["cpu_ms"], figures["wall_ms"], figures["sends"]
        print(f"{name:24} cpu {cpu:.3f} ms/request, wall {wall:.3f} ms, {sends:.1f} sends")
    return 0


if __name__ == "__main__":
    sys.exit(main())
