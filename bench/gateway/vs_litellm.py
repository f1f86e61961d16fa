"""The gateway benchmark: `toolwire serve`, LiteLLM's proxy and the Portkey gateway side by side, one run.

    make bench-gateway      # = setup_litellm.sh + setup_portkey.sh + .venv/bin/python -m bench.gateway.vs_litellm

Processes (each its own, one worker): a fast upstream (`wire.serve_upstream`: OpenAI Chat
Completions and Anthropic Messages, two parallel tool calls whose argument fragments
interleave), a paced one for the long streams, `toolwire serve`, LiteLLM's proxy (`litellm
--num_workers 1` from bench/.litellm-venv), the Portkey gateway (`@portkey-ai/gateway` on
Node.js from bench/gateway/.portkey, routed by its `x-portkey-provider` and
`x-portkey-custom-host` headers), `toolwire serve --workers N` for the scaling rows, and this
load client (raw asyncio HTTP/1.1, keep-alive). Every gateway gets the same requests in three
scenarios: an OpenAI client to the OpenAI upstream (toolwire passes it through), an Anthropic
client to the OpenAI upstream, and an OpenAI client to the Anthropic upstream (both
translated). Replies are checked (status 200, the calls' arguments present, the stream's end
marker); a failure is counted and its first reply shown, never dropped from the table.

Measures: added latency p50/p99 (sequential non-streaming requests, gateway percentile minus
direct percentile), added time to the first streamed byte, the first request's time after the
gateway started, requests per second and the gateway's CPU time per request at 64 concurrent
clients (whole and streamed replies), corrupted calls (every sequential reply's calls
reassembled as a client would and compared), and N concurrent streams (default 1,000) with
their errors and the gateway process's peak RSS. Prints Markdown tables and the targets.
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
from typing import Any

from bench import harness
from bench.gateway import processes
from bench.gateway.calls import calls_in
from bench.gateway.wire import CALLS, Conn, Reply

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
    protocol: str = "openai"  # the client's: how its calls are read back
    proc: str | None = None  # the process measured (CPU, memory): a key of the run's processes
    streams_row: bool = False  # one of the rows that open 1,000 streams
    latency: list[float] = field(default_factory=list)
    first_byte: list[float] = field(default_factory=list)
    first: float | None = None  # the first request of this row since the gateway started
    rps: list[float] = field(default_factory=list)
    rps_stream: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # gateway CPU ms per request, whole replies
    cpu_stream: list[float] = field(default_factory=list)
    checked: int = 0
    corrupted: int = 0
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

    def verify(self, reply: Reply, stream: bool) -> None:
        """Count a 200 reply whose calls, reassembled as a client would, are not the upstream's."""
        self.checked += 1
        if calls_in(self.protocol, stream, reply.body) != EXPECTED:
            self.corrupted += 1
            if not self.note:
                self.note = f"corrupted calls: {reply.body[:300]!r}"


OPENAI_HEADERS = b"authorization: Bearer sk-bench-client\r\n"
ANTHROPIC_HEADERS = b"x-api-key: sk-bench-client\r\nanthropic-version: 2023-06-01\r\n"
EXPECTED = [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in CALLS]
MEMORY: dict[str, float] = {}  # toolwire's resident set around the throughput runs, and the requests between
OO, AO, OA = "openai→openai", "anthropic→openai", "openai→anthropic"  # client protocol → upstream protocol
_SPREAD_ROWS = (("bench-two", ", 2 targets (balance)"), ("bench-failover", ", failover (1st refuses)"))


def _scenario(
    scenario: str, gateway: str, port: int, model: str, headers: bytes = b"", label: str = "", **more: Any
) -> Target:
    """A row of `scenario` (OO, AO or OA: what the client sends), named `gateway scenario label`."""
    name = f"{gateway} {scenario}{label}"
    if scenario == AO:
        return Target(
            name, port, "/v1/messages", anthropic_body, b"message_stop", headers or ANTHROPIC_HEADERS, model,
            "anthropic", **more,
        )  # fmt: skip
    return Target(name, port, "/v1/chat/completions", openai_body, b"[DONE]", headers or OPENAI_HEADERS, model, **more)


def targets(up: int, ports: dict[str, int]) -> list[Target]:
    """The rows of one run: the upstream directly, then each gateway that started, scenario by scenario."""
    rows = [
        Target(processes.DIRECT_NAME, up, "/v1/chat/completions", openai_body, b"[DONE]", OPENAI_HEADERS, "up-model",
               proc="upstream", streams_row=True),
        Target(f"{processes.DIRECT_NAME}, Messages API", up, "/v1/messages", anthropic_body, b"message_stop",
               ANTHROPIC_HEADERS, "up-model", "anthropic", proc="upstream"),
    ]  # fmt: skip
    toolwire, litellm, portkey = ports.get("toolwire"), ports.get("litellm"), ports.get("portkey")
    assert toolwire is not None
    for scenario, tw_model, ll_model in ((OO, "bench-model", "bench-model"), (AO, "bench-model", "bench-vllm-model"),
                                         (OA, "bench-claude", "bench-claude")):  # fmt: skip
        rows.append(_scenario(scenario, "toolwire", toolwire, tw_model, proc="toolwire", streams_row=scenario != OA))
        if litellm is not None:
            rows.append(_scenario(scenario, "litellm", litellm, ll_model, proc="litellm", streams_row=scenario != OA))
        if portkey is not None:  # it has no Anthropic client route for an OpenAI upstream: that row shows its error
            pk = processes.portkey_headers("anthropic" if scenario == OA else "openai", up)
            pk += ANTHROPIC_HEADERS if scenario == AO else b""
            rows.append(_scenario(scenario, "portkey", portkey, "up-model", pk, proc="portkey"))
        if scenario == OO:
            for model, label in _SPREAD_ROWS:
                rows.append(_scenario(OO, "toolwire", toolwire, model, label=label, proc="toolwire"))
    for name, port in ports.items():
        if name.startswith("toolwire-"):  # --workers N: the scaling rows, throughput only
            workers = name.split("-")[1]
            for scenario in (OO, AO, OA):
                model = "bench-claude" if scenario == OA else "bench-model"
                # the scenario itself, not its label, picks the client's protocol (an Anthropic one for AO)
                rows.append(_scenario(scenario, "toolwire", port, model, label=f" ({workers})", proc=name))
    return rows


# measurements


async def sequential(rows: list[Target], n: int, stream: bool, rounds: int = 20) -> None:
    """`n` requests per row on one keep-alive connection each, rows interleaved in `rounds` slices.

    The first request of each row is timed on its own (the gateway's first of its kind since it
    started), and every reply's calls are read back and compared (after it was timed).
    """
    live = [t for t in rows if await _warm_up(t, max(20, n // 20), stream)]
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
                    t.verify(reply, stream)
            conn.close()


async def _warm_up(t: Target, n: int, stream: bool) -> bool:
    """The row's first requests (they build clients and pools; the very first is timed): whether they all worked."""
    conn = await Conn(t.port).open()
    try:
        for number in range(n):
            begun = time.perf_counter()
            reply = await conn.request(t.path, t.body(t.model, stream), t.headers)
            if number == 0 and not stream and t.first is None:
                t.first = time.perf_counter() - begun
            if not t.check(reply, stream):
                return False
        return True
    finally:
        conn.close()


async def throughput(
    t: Target, clients: int, seconds: float, stream: bool, proc: processes.Proc | None
) -> tuple[float, float | None]:
    """Requests per second with `clients` connections each sending back to back; the gateway's CPU ms per request."""
    body = t.body(t.model, stream)
    done = 0
    stop = time.perf_counter() + seconds

    async def client() -> None:
        nonlocal done
        conn = await Conn(t.port).open()
        try:
            while time.perf_counter() < stop:
                if t.check(await conn.request(t.path, body, t.headers), stream):
                    done += 1
        finally:
            conn.close()

    cpu = proc.cpu_seconds() if proc is not None else 0.0
    begun = time.perf_counter()
    results = await asyncio.gather(*(client() for _ in range(clients)), return_exceptions=True)
    elapsed = time.perf_counter() - begun
    cpu = proc.cpu_seconds() - cpu if proc is not None else 0.0
    t.errors += sum(isinstance(r, BaseException) for r in results)
    return done / elapsed, (cpu * 1000 / done if proc is not None and done else None)


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
        f"{listed}, litellm {processes.litellm_version()}, @portkey-ai/gateway {processes.portkey_version()}."
    )


async def measure(args: argparse.Namespace, rows: list[Target], procs: dict[str, processes.Proc], slow: int) -> None:
    timed = [t for t in rows if not (t.proc or "").startswith("toolwire-")]  # the scaling rows: throughput only
    print(f"sequential non-streaming: {args.requests} requests per row ...", file=sys.stderr)
    await sequential(timed, args.requests, stream=False)
    print(f"sequential streaming: {args.requests} requests per row ...", file=sys.stderr)
    await sequential(timed, args.requests, stream=True)
    toolwire = procs["toolwire"]
    memory: dict[str, float] = {"before": toolwire.memory_mb("VmRSS"), "requests": 0.0}
    for run in range(args.rounds):
        for t in rows if run % 2 == 0 else rows[::-1]:
            for stream in (False, True):
                kind = "streamed" if stream else "whole"
                print(f"throughput {t.name}, {kind}: {args.clients} clients, {args.seconds:g} s ...", file=sys.stderr)
                rps, cpu = await throughput(t, args.clients, args.seconds, stream, procs.get(t.proc or ""))
                memory["requests"] += rps * args.seconds if t.proc == "toolwire" else 0
                (t.rps_stream if stream else t.rps).append(rps)
                if cpu is not None:
                    (t.cpu_stream if stream else t.cpu).append(cpu)
    memory["after"] = toolwire.memory_mb("VmRSS")
    MEMORY.update(memory)
    for t in rows:
        if args.streams and t.streams_row:
            print(f"{args.streams} streams at once through {t.name} ...", file=sys.stderr)
            proc = None if t.name == processes.DIRECT_NAME else procs.get(t.proc or "")
            await many_streams(t, args.streams, proc, slow)


def report(rows: list[Target], args: argparse.Namespace, elapsed: float) -> dict[str, object]:
    from bench.gateway import report as tables

    lat_text, lat = tables.latency_table(rows, "latency")
    ttfb_text, ttfb = tables.latency_table(rows, "first_byte")
    tput_text, tput = tables.throughput_table(rows)
    print(f"\n{_versions()} Whole run {elapsed:.0f} s.\n")
    print("### Every gateway, scenario by scenario (whole: non-streaming; CPU: the gateway's own per request)\n")
    print(tables.peers_table(rows, lat, tput))
    print(f"\n### Added latency, non-streaming ({args.requests} sequential requests per row, one connection)\n")
    print(lat_text)
    print("\n### Time to first byte, streaming (first SSE byte; added = gateway \u2212 upstream directly)\n")
    print(ttfb_text)
    print(f"\n### Throughput: {args.clients} concurrent clients, {args.seconds:g} s per run, {args.rounds} runs\n")
    print(tput_text)
    if args.streams:
        paced = args.pace_ms * (args.chunks + 4) / 1000
        print(f"\n### {args.streams:,} concurrent streams through one worker (upstream paced: ~{paced:.1f} s each)\n")
        print(tables.streams_table(rows))
    print("\n### Targets\n")
    print(tables.targets_table(lat, ttfb, tput, rows))
    if MEMORY:
        print(
            f"\ntoolwire serve (one worker) resident set: {MEMORY['before']:.0f} MB before the throughput runs, "
            f"{MEMORY['after']:.0f} MB after them (~{MEMORY['requests']:,.0f} requests through it)."
        )
    notes = [f"- {t.name}: {t.note}" for t in rows if t.note]
    if notes:
        print("\n" + "\n".join(notes))
    return {
        "latency": lat,
        "first_byte": ttfb,
        "throughput": tput,
        "streams": {t.name: t.streams for t in rows if t.streams},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="sequential requests per row (latency, first byte)")
    parser.add_argument("--clients", type=int, default=64, help="concurrent clients for the throughput runs")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one throughput run")
    parser.add_argument("--rounds", type=int, default=2, help="throughput runs per row (order alternates)")
    parser.add_argument("--streams", type=int, default=1000, help="concurrent streams (0: skip)")
    parser.add_argument("--pace-ms", type=float, default=50.0, help="gap between the paced upstream's chunks")
    parser.add_argument("--chunks", type=int, default=20, help="text chunks per paced stream")
    parser.add_argument("--no-litellm", action="store_true", help="leave LiteLLM out")
    parser.add_argument("--no-portkey", action="store_true", help="leave Portkey out")
    parser.add_argument(
        "--workers", type=int, default=2, help="toolwire serve --workers N for the scaling rows (1: none)"
    )
    parser.add_argument("--access-log", action="store_true", help="run toolwire serve with its access log on")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    begun = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tw-bench-gw-") as tmp:
        logs = Path(tmp)
        procs: dict[str, processes.Proc] = {}
        try:
            fast = procs["upstream"] = processes.start_upstream("upstream", logs, 0, 10)
            slow = procs["upstream-paced"] = processes.start_upstream("upstream-paced", logs, args.pace_ms, args.chunks)
            procs["toolwire"] = processes.start_toolwire(logs, fast.port, slow.port, access_log=args.access_log)
            if args.workers > 1:
                name = f"toolwire-{args.workers} workers"
                procs[name] = processes.start_toolwire(
                    logs, fast.port, slow.port, args.workers, access_log=args.access_log
                )
            peers = {
                "litellm": "n/a: --no-litellm"
                if args.no_litellm
                else processes.start_litellm(logs, fast.port, slow.port),
                "portkey": "n/a: --no-portkey" if args.no_portkey else processes.start_portkey(logs),
            }
            for name, peer in peers.items():
                if isinstance(peer, str):
                    print(f"{name}: {peer}", file=sys.stderr)
                else:
                    procs[name] = peer
            ports = {name: proc.port for name, proc in procs.items() if not name.startswith("upstream")}
            rows = targets(fast.port, ports)
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
