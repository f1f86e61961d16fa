"""1,000 concurrent agent runs against one ScriptedServer: nothing lost, nothing crossed.

    .venv/bin/python -m bench.scale.concurrent_agents [--runs 1000] [--protocol openai]

Each run makes 3 model turns with 2 parallel tool calls in each of the first two, over real
loopback HTTP; the server answers from the request alone (a callable script), so every reply
must carry the run's own marker back. Prints wall time, peak RSS, lost and crossed runs.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import time

from toolwire import Request, ToolCall, ToolResult, UserMessage
from toolwire.agent import Agent
from toolwire.testing import ScriptedServer, reply
from toolwire.tools import tool


@tool(risk="low")
async def probe(run: str, step: int) -> str:
    """Echo the run marker and step."""
    await asyncio.sleep(0)
    return f"{run}:{step}"


def answer(request: Request) -> object:
    prompt = next(m for m in request.messages if isinstance(m, UserMessage))
    run = str(prompt.content)
    results = [m for m in request.messages if isinstance(m, ToolResult)]
    turn = len(results) // 2
    if turn < 2:
        calls = [ToolCall(id=f"{run}-{turn}-{i}", name="probe", arguments={"run": run, "step": i}) for i in range(2)]
        return reply("", calls)
    return reply(f"done {run} " + ",".join(str(r.value) for r in results))


async def main(runs: int, protocol: str) -> None:
    with ScriptedServer(answer, keep_requests=False) as server:
        async with server.connect(f"{protocol}:m", timeout=120) as client:
            agent = Agent(client, [probe])
            started = time.perf_counter()
            results = await asyncio.gather(*(agent.run(f"run{i}") for i in range(runs)), return_exceptions=True)
            elapsed = time.perf_counter() - started
        requests = server.request_count
    lost = [r for r in results if isinstance(r, BaseException)]
    crossed = [
        i
        for i, r in enumerate(results)
        if not isinstance(r, BaseException)
        and r.text != f"done run{i} " + ",".join(f"run{i}:{s}" for s in (0, 1, 0, 1))
    ]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{runs} concurrent runs ({protocol}): {elapsed:.1f} s wall, {requests} requests, "
        f"{len(lost)} lost, {len(crossed)} crossed, peak RSS {peak:.0f} MB"
    )
    for error in lost[:3]:
        print(f"  lost: {type(error).__name__}: {error}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--protocol", default="openai")
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.protocol))
