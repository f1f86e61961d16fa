"""MCP tools: what a call through `toolwire.mcp` costs, against the same tool in process.

    .venv/bin/python -m bench.micro.mcp_calls [--calls 300]
    .venv/bin/python -m bench.micro.mcp_calls --big 4,16,100   # results of that many MiB

Prints, for `toolwire mcp-server` over stdio (served by this checkout, its `glob` tool) and the
npm reference `server-everything` (`echo`, when `make mcp-servers` installed it): the time to
start and list the tools, the median and p95 of one call, and calls/s with 10 at once; then the
same `glob` called in process. `--big` instead times one call each whose result is that many MiB
(tests/mcp/_raw_server.py), with the event loop's worst lag meanwhile and the process's peak RSS.
Figures, not assertions: the checks live in tests/mcp.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import harness
from toolwire.mcp import MCPServer
from toolwire.stdtools import ROOT, glob
from toolwire.tools import Tool, ToolContext

NPM_BIN = harness.ROOT / ".cache" / "mcp-servers" / "node_modules" / ".bin"
RAW_SERVER = harness.ROOT / "tests" / "mcp" / "_raw_server.py"


async def measure(tool: Tool, arguments: dict[str, Any], calls: int, ctx: ToolContext | None = None) -> str:
    one: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        result = await tool.execute_raw(arguments, ctx)
        one.append(time.perf_counter() - start)
        assert result.kind != "error", result.value
    start = time.perf_counter()
    for _ in range(calls // 10):
        await asyncio.gather(*(tool.execute_raw(arguments, ctx) for _ in range(10)))
    rate = (calls // 10 * 10) / (time.perf_counter() - start)
    p95 = harness.percentile(one, 0.95)
    return f"median {statistics.median(one) * 1e3:7.3f} ms  p95 {p95 * 1e3:7.3f} ms  {rate:8.0f} calls/s (10 at once)"


async def remote(label: str, server: MCPServer, name: str, arguments: dict[str, Any], calls: int) -> None:
    start = time.perf_counter()
    async with server:
        opened = time.perf_counter() - start
        tool = next(t for t in server.tools if t.name == name)
        print(f"{label:<34} start+list {opened * 1e3:7.0f} ms  {await measure(tool, arguments, calls)}")


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for i in range(20):
            Path(folder, f"f{i}.txt").write_text("x")
        command = [sys.executable, "-m", "toolwire.cli", "mcp-server", "--root", folder]
        await remote(
            "toolwire mcp-server (stdio) glob",
            MCPServer.stdio(command[0], command[1:]),
            "glob",
            {"pattern": "*.txt"},
            calls,
        )
        everything = NPM_BIN / "mcp-server-everything"
        if everything.exists():
            server = MCPServer.stdio(str(everything))
            await remote("npm server-everything (stdio) echo", server, "echo", {"message": "hi"}, calls)
        else:
            print("npm server-everything: not installed (make mcp-servers)")
        ctx = ToolContext(deps={ROOT.id: Path(folder)})
        local = await measure(glob, {"pattern": "*.txt"}, calls, ctx)
        print(f"{'glob in process':<34} {'':>21}  {local}")


async def lag_watch(worst: list[float]) -> None:
    """The event loop's worst delay in waking a 10 ms sleeper (what every other task waits)."""
    while True:
        start = time.perf_counter()
        await asyncio.sleep(0.01)
        worst[0] = max(worst[0], time.perf_counter() - start - 0.01)


async def big_results(sizes_mib: list[int], timeout: float, cap_mib: int) -> None:
    server = MCPServer.stdio(sys.executable, [str(RAW_SERVER), "big"], timeout=timeout, max_message_bytes=cap_mib << 20)
    async with server:
        tool = server.tools[0]
        for mib in sizes_mib:
            worst = [0.0]
            watcher = asyncio.create_task(lag_watch(worst))
            start = time.perf_counter()
            result = await tool.execute_raw({"size": mib << 20, "plain": True})
            took = time.perf_counter() - start
            watcher.cancel()
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            shown = str(result.value)[:90].replace("\n", " ")
            print(
                f"{mib:>4} MiB result: {took:7.2f} s  loop lag {worst[0] * 1e3:6.0f} ms  peak RSS {rss:5.0f} MiB  "
                f"{result.kind}: {len(str(result.value))} chars, {shown!r}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--big", default=None, metavar="MIB,MIB", help="time results of these sizes instead")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one --big call may take")
    parser.add_argument("--cap", type=int, default=32, metavar="MIB", help="max_message_bytes in MiB for --big (32)")
    options = parser.parse_args()
    if options.big:
        asyncio.run(big_results([int(size) for size in options.big.split(",")], options.timeout, options.cap))
    else:
        asyncio.run(main(options.calls))
