"""A bounded soak of `toolwire serve` under hostile traffic: loopback only.

```sh
.venv/bin/python -m bench.gateway.soak            # about a minute; exits 1 when a check fails
.venv/bin/python -m bench.gateway.soak --quick    # a smoke run: fewer of everything
```

One gateway process (one worker) in front of the stdlib upstream of `wire.py`. Phases, each
bounded in count and time:

1. hostile bodies: JSON nested 100,000 deep, 990 levels inside tool parameters, not JSON, a
   33 MiB body (over the 32 MiB cap), and a body that stops half-way: each must get its 4xx;
2. slow clients: connections that send one header byte a second (slowloris) must be closed
   by the header deadline while normal requests keep being served;
3. 1,000 streams, 100 at a time: every one must end with `[DONE]` (0 lost);
4. disconnects: 200 streams cut by the client after their first bytes;

then the gateway must still answer `/health` and one more stream, its RSS back near where it
started (after the warm-up). Prints one Markdown table and the verdict.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.gateway import processes
from bench.gateway.wire import Conn

AUTH = f"authorization: Bearer {processes.CLIENT_KEY}\r\n".encode()
PATH = "/v1/chat/completions"
HEADER_DEADLINE = 15.0  # toolwire serve's default (gateway/_slow_clients.py)
RSS_SLACK_MB = 60.0  # "back near its start": allocator caches and pools may keep a little


def _body(stream: bool, **extra: object) -> bytes:
    body = {"model": "bench-model", "messages": [{"role": "user", "content": "weather?"}], "stream": stream}
    return json.dumps(body | extra).encode()


@dataclass
class Phase:
    """One phase's outcome: what was expected, what came back."""

    name: str
    sent: int = 0
    ok: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.sent == self.ok


async def _status(port: int, raw: bytes, declared: int | None = None) -> int:
    """POST `raw` on a fresh connection; the status (0 when the gateway hung up without one).

    At most 1 MiB of the body is sent before the status is read: a refused body is not read.
    """
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    length = len(raw) if declared is None else declared
    head = b"POST %s HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: %d\r\n" % (
        PATH.encode(),
        length,
    )
    try:
        writer.write(head + AUTH + b"\r\n" + raw[: 1 << 20])
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 120)
        return int(line[9:12]) if line[:5] == b"HTTP/" else 0
    except (ConnectionError, asyncio.IncompleteReadError):
        return 0
    finally:
        writer.close()


async def hostile_bodies(port: int, rounds: int) -> Phase:
    phase = Phase("hostile bodies")
    started = time.perf_counter()
    deep_params = _body(False)[:-1] + b', "tools_param": ' + b'{"a": ' * 990 + b"1" + b"}" * 990 + b"}"
    cases = [
        (b"[" * 100_000 + b"]" * 100_000, None, 400),
        (deep_params, None, 400),
        (b"{not json", None, 400),
        (b"x" * (33 * 1024 * 1024), None, 413),
        (_body(False)[:20], 10_000, 408),  # stops half-way: answered after the body timeout
    ]
    for _ in range(rounds):
        for index, (raw, declared, wanted) in enumerate(cases):
            if wanted == 408 and _ > 0:
                continue  # one is enough: it waits the whole body timeout
            phase.sent += 1
            got = await _status(port, raw, declared)
            if got == wanted:
                phase.ok += 1
            else:
                phase.notes.append(f"case {index}: {got} instead of {wanted}")
    phase.seconds = time.perf_counter() - started
    return phase


async def slow_clients(port: int, count: int) -> Phase:
    phase = Phase(f"slow clients ({count} slowloris)")
    started = time.perf_counter()

    async def trickle() -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for byte in b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\nx-pad: " + b"a" * 120:
                writer.write(bytes([byte]))
                await writer.drain()
                if await _closed_within(reader, 1.0):
                    return True
            return False
        except ConnectionError:
            return True
        finally:
            writer.close()

    tasks = [asyncio.create_task(trickle()) for _ in range(count)]
    served = 0
    conn = await Conn(port).open()
    while not all(task.done() for task in tasks) and time.perf_counter() - started < HEADER_DEADLINE + 60:
        reply = await conn.request(PATH, _body(False), AUTH)
        served += reply.status == 200
        await asyncio.sleep(0.5)
    conn.close()
    closed = [task.result() for task in tasks if task.done()]
    phase.sent, phase.ok = count, sum(closed)
    phase.notes.append(f"{served} normal requests answered 200 meanwhile")
    phase.seconds = time.perf_counter() - started
    return phase


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), seconds) == b""
    except TimeoutError:
        return False


async def streams(port: int, total: int, at_once: int) -> Phase:
    phase = Phase(f"{total} streams, {at_once} at a time")
    started = time.perf_counter()
    queue = list(range(total))

    async def worker() -> None:
        conn = await Conn(port).open()
        while queue:
            queue.pop()
            phase.sent += 1
            try:
                reply = await conn.request(PATH, _body(True), AUTH)
            except (ConnectionError, asyncio.IncompleteReadError) as exc:
                phase.notes.append(type(exc).__name__)
                conn = await Conn(port).open()
                continue
            if reply.status == 200 and b"[DONE]" in reply.body:
                phase.ok += 1
        conn.close()

    await asyncio.gather(*(worker() for _ in range(at_once)))
    phase.seconds = time.perf_counter() - started
    return phase


async def disconnects(port: int, count: int) -> Phase:
    phase = Phase(f"{count} streams cut by the client")
    started = time.perf_counter()

    async def cut() -> bool:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        body = _body(True)
        head = b"POST %s HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n" % (PATH.encode(), len(body))
        writer.write(head + AUTH + b"\r\n" + body)
        try:
            first = await asyncio.wait_for(reader.read(64), 60)
        finally:
            writer.close()
        return first.startswith(b"HTTP/1.1 200")

    results = await asyncio.gather(*(cut() for _ in range(count)), return_exceptions=True)
    phase.sent, phase.ok = count, sum(r is True for r in results)
    phase.seconds = time.perf_counter() - started
    return phase


async def soak(port: int, gateway: processes.Proc, quick: bool) -> tuple[list[Phase], float, float, bool]:
    warm = await streams(port, 100, 20)
    if not warm.passed:
        raise RuntimeError(f"the warm-up failed: {warm}")
    before = gateway.memory_mb("VmRSS")
    phases = [
        await hostile_bodies(port, 1 if quick else 3),
        await slow_clients(port, 50 if quick else 400),
        await streams(port, 200 if quick else 1000, 100),
        await disconnects(port, 50 if quick else 200),
    ]
    await asyncio.sleep(2)  # cancelled upstream requests wind down
    after_streams = await streams(port, 100, 20)
    phases.append(after_streams)
    alive = after_streams.passed and gateway.popen.poll() is None
    return phases, before, gateway.memory_mb("VmRSS"), alive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer of everything: a smoke run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolwire-soak-") as folder:
        logs = Path(folder)
        upstream = processes.start_upstream("upstream", logs, pace_ms=5, chunks=20)
        gateway = processes.start_toolwire(logs, upstream.port, upstream.port)
        try:
            phases, before, after, alive = asyncio.run(soak(gateway.port, gateway, args.quick))
        finally:
            gateway.stop()
            upstream.stop()
    print("| phase | sent | as expected | seconds | notes |\n|---|---|---|---|---|")
    for phase in phases:
        notes = "; ".join(dict.fromkeys(phase.notes)) or ""
        print(f"| {phase.name} | {phase.sent} | {phase.ok} | {phase.seconds:.1f} | {notes} |")
    print(f"\ngateway RSS: {before:.0f} MB after the warm-up, {after:.0f} MB at the end; up at the end: {alive}")
    passed = all(p.passed for p in phases) and alive and after - before <= RSS_SLACK_MB
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
