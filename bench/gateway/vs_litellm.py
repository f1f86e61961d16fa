"""The gateway benchmark: `toolwire serve` and LiteLLM's proxy side by side, one run, one machine.

    make bench-gateway      # = bash bench/gateway/setup_litellm.sh && .venv/bin/python -m bench.gateway.vs_litellm

Processes (each its own, one worker): a fast OpenAI-chat upstream (`wire.serve_upstream`),
a paced one for the long streams, `toolwire serve`, LiteLLM's proxy (`litellm --num_workers 1`
from bench/.litellm-venv), and this load client (raw asyncio HTTP/1.1, keep-alive). Every
gateway gets the same requests on the same route: an OpenAI client through the gateway to the
OpenAI upstream, plus an Anthropic client (`/v1/messages`) to the same upstream. Replies are
checked (status 200, the tool call's arguments present, the stream's end marker).

Measures: added latency p50/p99 (sequential non-streaming requests, gateway percentile minus
direct percentile), added time to the first streamed byte, requests per second at 64
concurrent clients, and N concurrent streams (default 1,000) with their errors and the gateway
process's peak RSS. Prints Markdown tables and the targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench import harness
from bench.gateway import processes
from bench.gateway.wire import Conn, Reply

_TOOL = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
        "required": ["city"],
    },
}
_SYSTEM = "You are a helpful assistant. Use the tools when they help."
_USER = "What is the weather in Paris right now?"


def openai_body(model: str, stream: bool) -> bytes:
    tool = {"type": "function", "function": {k if k != "schema" else "parameters": v for k, v in _TOOL.items()}}
    messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": _USER}]
    return json.dumps({"model": model, "messages": messages, "tools": [tool], "stream": stream}).encode()


def anthropic_body(model: str, stream: bool) -> bytes:
    tool = {k if k != "schema" else "input_schema": v for k, v in _TOOL.items()}
    messages = [{"role": "user", "content": _USER}]
    body = {"model": model, "max_tokens": 512, "system": _SYSTEM, "messages": messages, "tools": [tool]}
    return json.dumps(body | {"stream": stream}).encode()


@dataclass
class Target:
    """One row: where requests go and how a good reply looks."""

    name: str
    port: int
    path: str
    body: Callable[[str, bool], bytes]
    end: bytes  # the stream's last event marker
    headers: bytes = b""
    model: str = "bench-model"
    latency: list[float] = field(default_factory=list)
    first_byte: list[float] = field(default_factory=list)
    rps: list[float] = field(default_factory=list)
    errors: int = 0
    streams: dict[str, float | int | str] = field(default_factory=dict)
    note: str = ""

    def check(self, reply: Reply, stream: bool) -> bool:
        ok = reply.status == 200 and b"Paris" in reply.body and (not stream or self.end in reply.body)
        if not ok:
            self.errors += 1
            if not self.note:
                self.note = f"bad reply: {reply.status} {reply.body[:300]!r}"
        return ok


OPENAI_HEADERS = b"authorization: Bearer sk-bench-client\r\n"
ANTHROPIC_HEADERS = b"x-api-key: sk-bench-client\r\nanthropic-version: 2023-06-01\r\n"


def targets(up: int, tw: int, ll: int | None) -> list[Target]:
    rows = [
        Target("direct upstream", up, "/v1/chat/completions", openai_body, b"[DONE]", OPENAI_HEADERS, "up-model"),
        Target("toolwire openai→openai", tw, "/v1/chat/completions", openai_body, b"[DONE]", OPENAI_HEADERS),
        Target(
            "toolwire openai→openai, 2 targets (balance)",
            tw,
            "/v1/chat/completions",
            openai_body,
            b"[DONE]",
            OPENAI_HEADERS,
            "bench-two",
        ),
        Target(
            "toolwire openai→openai, failover (1st refuses)",
            tw,
            "/v1/chat/completions",
            openai_body,
            b"[DONE]",
            OPENAI_HEADERS,
            "bench-failover",
        ),
    ]
    if ll is not None:
        rows.append(Target("litellm openai→openai", ll, "/v1/chat/completions", openai_body, b"[DONE]", OPENAI_HEADERS))
    rows.append(
        Target("toolwire anthropic→openai", tw, "/v1/messages", anthropic_body, b"message_stop", ANTHROPIC_HEADERS)
    )
    if ll is not None:
        rows.append(
            Target(
                "litellm anthropic→openai",
                ll,
                "/v1/messages",
                anthropic_body,
                b"message_stop",
                ANTHROPIC_HEADERS,
                "bench-vllm-model",
            )
        )
    return rows


# measurements


async def sequential(rows: list[Target], n: int, stream: bool, rounds: int = 20) -> None:
    """`n` requests per row on one keep-alive connection each, rows interleaved in `rounds` slices."""
    conns = {t.name: await Conn(t.port).open() for t in rows}
    live = list(rows)
    for t in rows:  # warm up (first requests build clients and pools), and drop rows that fail
        for _ in range(max(20, n // 20)):
            if not t.check(await conns[t.name].request(t.path, t.body(t.model, stream), t.headers), stream):
                live.remove(t)
                break
    for conn in conns.values():
        conn.close()
    for _ in range(rounds):
        for t in live:
            # a fresh connection per slice: servers close keep-alive connections idle for 5 s
            conn, body = await Conn(t.port).open(), t.body(t.model, stream)
            for _ in range(n // rounds):
                begun = time.perf_counter()
                try:
                    reply = await conn.request(t.path, body, t.headers)
                except (OSError, asyncio.IncompleteReadError) as exc:
                    t.errors += 1
                    t.note = t.note or f"{type(exc).__name__}: {exc}"
                    conn.close()
                    continue
                took = time.perf_counter() - begun
                if t.check(reply, stream):
                    (t.first_byte if stream else t.latency).append(reply.first_byte if stream else took)
            conn.close()


async def throughput(t: Target, clients: int, seconds: float) -> float:
    """Requests per second with `clients` connections each sending back to back."""
    body = t.body(t.model, False)
    done = 0
    stop = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal done
        conn = await Conn(t.port).open()
        try:
            while time.perf_counter() < stop:
                if t.check(await conn.request(t.path, body, t.headers), False):
                    done += 1
        finally:
            conn.close()

    begun = time.perf_counter()
    results = await asyncio.gather(*(client() for _ in range(clients)), return_exceptions=True)
    t.errors += sum(isinstance(r, BaseException) for r in results)
    return done / (time.perf_counter() - begun)


async def many_streams(t: Target, n: int, proc: processes.Proc | None, slow_port: int) -> None:
    """`n` streams at once through the gateway to the paced upstream; errors, wall time, peak RSS."""
    if proc is not None:
        t.streams["rss_before"] = proc.memory_mb("VmRSS")
        proc.reset_peak()
    body = t.body(t.model.replace("-model", "-slow") if proc is not None else "up-model", True)
    ok = 0
    errors: list[str] = []

    async def one() -> None:
        nonlocal ok
        conn = Conn(t.port if proc is not None else slow_port)
        try:
            reply = await asyncio.wait_for(conn.request(t.path, body, t.headers), 300)
            if reply.status == 200 and t.end in reply.body and b"Paris" in reply.body:
                ok += 1
            else:
                errors.append(f"{reply.status} {reply.body[:200]!r}")
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()

    await _stats(slow_port)  # resets the upstream's peak of open streams
    begun = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    t.streams |= {"ok": ok, "errors": len(errors), "wall": time.perf_counter() - begun}
    t.streams["upstream_peak"] = (await _stats(slow_port))["peak_streams"]
    if proc is not None:
        t.streams["rss_peak"] = proc.memory_mb("VmHWM")
    if errors:
        t.streams["first_error"] = errors[0]


async def _stats(port: int) -> dict[str, int]:
    conn = await Conn(port).open()
    try:
        reader, writer = conn.reader, conn.writer
        assert reader is not None and writer is not None
        writer.write(b"GET /stats HTTP/1.1\r\nhost: x\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        return json.loads(await reader.readexactly(length))  # type: ignore[no-any-return]
    finally:
        conn.close()


# the run


def _versions() -> str:
    listed = harness.versions(("toolwire", "starlette", "uvicorn", "uvloop", "httptools", "httpx2"))
    return (
        f"Python {platform.python_version()} on {platform.machine()}, {len(os.sched_getaffinity(0))} CPUs. "
        f"{listed}, litellm {processes.litellm_version()}."
    )


async def measure(args: argparse.Namespace, rows: list[Target], procs: dict[str, processes.Proc], slow: int) -> None:
    print(f"sequential non-streaming: {args.requests} requests per row ...", file=sys.stderr)
    await sequential(rows, args.requests, stream=False)
    print(f"sequential streaming: {args.requests} requests per row ...", file=sys.stderr)
    await sequential(rows, args.requests, stream=True)
    for run in range(args.rounds):
        for t in rows if run % 2 == 0 else rows[::-1]:
            print(f"throughput {t.name}: {args.clients} clients, {args.seconds:g} s ...", file=sys.stderr)
            t.rps.append(await throughput(t, args.clients, args.seconds))
    for t in rows:
        if args.streams and (t.name == processes.DIRECT_NAME or t.name.split()[0] in procs):
            print(f"{args.streams} streams at once through {t.name} ...", file=sys.stderr)
            await many_streams(t, args.streams, procs.get(t.name.split()[0]), slow)


def report(rows: list[Target], args: argparse.Namespace, elapsed: float) -> dict[str, object]:
    from bench.gateway import report as tables

    lat_text, lat = tables.latency_table(rows, "latency")
    ttfb_text, ttfb = tables.latency_table(rows, "first_byte")
    rps_text, rps = tables.throughput_table(rows)
    print(f"\n{_versions()} Whole run {elapsed:.0f} s.\n")
    print(f"### Added latency, non-streaming ({args.requests} sequential requests per row, one connection)\n")
    print(lat_text)
    print("\n### Time to first byte, streaming (first SSE byte; added = gateway \u2212 upstream directly)\n")
    print(ttfb_text)
    print(f"\n### Throughput: {args.clients} concurrent clients, non-streaming, {args.seconds:g} s per run\n")
    print(rps_text)
    if args.streams:
        paced = args.pace_ms * (args.chunks + 4) / 1000
        print(f"\n### {args.streams:,} concurrent streams through one worker (upstream paced: ~{paced:.1f} s each)\n")
        print(tables.streams_table(rows))
    print("\n### Targets\n")
    print(tables.targets_table(lat, ttfb, rps, rows))
    notes = [f"- {t.name}: {t.note}" for t in rows if t.note]
    if notes:
        print("\n" + "\n".join(notes))
    return {"latency": lat, "first_byte": ttfb, "rps": rps, "streams": {t.name: t.streams for t in rows if t.streams}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="sequential requests per row (latency, first byte)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients for the throughput runs")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one throughput run")
    parser.add_argument("--rounds", type=int, default=2, help="throughput runs per row (order alternates)")
    parser.add_argument("--streams", type=int, default=1000, help="concurrent streams (0: skip)")
    parser.add_argument("--pace-ms", type=float, default=50.0, help="gap between the paced upstream's chunks")
    parser.add_argument("--chunks", type=int, default=20, help="text chunks per paced stream")
    parser.add_argument("--no-litellm", action="store_true", help="measure toolwire alone")
    parser.add_argument("--workers", type=int, default=1, help="toolwire serve --workers N (scaling out on one host)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    begun = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tw-bench-gw-") as tmp:
        logs = Path(tmp)
        procs: dict[str, processes.Proc] = {}
        try:
            fast = procs["upstream"] = processes.start_upstream("upstream", logs, 0, 10)
            slow = procs["upstream-paced"] = processes.start_upstream("upstream-paced", logs, args.pace_ms, args.chunks)
            procs["toolwire"] = processes.start_toolwire(logs, fast.port, slow.port, args.workers)
            lite = "n/a: --no-litellm" if args.no_litellm else processes.start_litellm(logs, fast.port, slow.port)
            if isinstance(lite, str):
                print(f"litellm: {lite}", file=sys.stderr)
            else:
                procs["litellm"] = lite
            rows = targets(fast.port, procs["toolwire"].port, procs["litellm"].port if "litellm" in procs else None)
            asyncio.run(measure(args, rows, procs, slow.port))
        finally:
            for proc in procs.values():
                proc.stop()
        figures = report(rows, args, time.perf_counter() - begun)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
