"""Batch at scale: N scripted tasks through `toolwire batch`, locally and on a local Ray.

    .venv/bin/python -m bench.scale.batch [--tasks 10000] [--concurrency 16] [--no-ray]

Prints, for the offline scripted model (4 model turns and 5 tool calls per task over loopback
HTTP): the bare agent loop (asyncio + a semaphore, no batch machinery) in this process; the
`toolwire batch` command (tasks/s, peak RSS of the child, overhead per task against the bare
loop); a run killed with SIGKILL half-way and restarted (result lines, duplicates); and the
same batch with `--ray`. Figures, not assertions: the correctness checks live in tests/batch.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from toolwire.batch import AgentRecipe, Task
from toolwire.offline import SCRIPTED_MODEL, OfflineModel


def write_tasks(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(count):
            f.write(json.dumps({"id": f"t{i}", "prompt": f"summarize the to-do list {i}"}) + "\n")


async def bare_loop(count: int, concurrency: int) -> float:
    with OfflineModel("scripted", keep_requests=False) as offline:
        recipe = AgentRecipe(
            offline.wire, SCRIPTED_MODEL, str(offline.root), base_url=offline.server.base_url, api_key="k", approve=True
        )
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                await recipe(Task(id=str(i), prompt=f"summarize the to-do list {i}")).run(f"summarize {i}")

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(count)))
        elapsed = time.perf_counter() - started
        await recipe.aclose()
    return elapsed


def batch(folder: Path, *extra: str) -> tuple[float, int, str, int]:
    """Run the command; return wall time, the child's own peak RSS (kB), its stderr and exit status."""
    command = [sys.executable, "-m", "toolwire.cli", "batch", "tasks.jsonl", "--out", "out.jsonl", "--yes", *extra]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, cwd=folder, stderr=err, stdout=subprocess.DEVNULL, env=_env())
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return elapsed, usage.ru_maxrss, text, process.returncode


def killed_and_resumed(folder: Path, count: int, concurrency: int) -> str:
    out = folder / "out.jsonl"
    command = [sys.executable, "-m", "toolwire.cli", "batch", "tasks.jsonl", "--out", "out.jsonl", "--yes"]
    process = subprocess.Popen(
        [*command, "--concurrency", str(concurrency)], cwd=folder, env=_env(), stderr=subprocess.DEVNULL
    )
    while not (out.exists() and out.read_bytes().count(b"\n") >= count // 2):
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    at_kill = out.read_bytes().count(b"\n")
    torn = not out.read_bytes().endswith(b"\n")
    subprocess.run(
        [*command, "--concurrency", str(concurrency)], cwd=folder, env=_env(), capture_output=True, check=False
    )
    ids = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    return (
        f"killed at {at_kill} lines (torn last line: {torn}); after the rerun: {len(ids)} lines, "
        f"{len(set(ids))} distinct ids, {len(ids) - len(set(ids))} duplicates"
    )


def _env() -> dict[str, str]:
    return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "NO_COLOR": "1"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    n, c = args.tasks, args.concurrency
    bare = asyncio.run(bare_loop(n, c))
    print(f"bare agent loop: {n} tasks in {bare:.1f} s = {n / bare:.0f} tasks/s (concurrency {c})")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_tasks(folder / "tasks.jsonl", n)
        elapsed, peak_kb, stderr, status = batch(folder, "--concurrency", str(c))
        print(
            f"toolwire batch: {n / elapsed:.0f} tasks/s, {elapsed:.1f} s, "
            f"peak RSS {peak_kb / 1024:.0f} MB, exit {status}"
        )
        print(
            f"  overhead per task against the bare loop: {(elapsed - bare) / n * 1000:.2f} ms (incl. interpreter start)"
        )
        print("  " + stderr.strip().splitlines()[-1])
        (folder / "out.jsonl").unlink()
        print("kill -9 half-way, then rerun: " + killed_and_resumed(folder, n, c))
        if not args.no_ray:
            (folder / "out.jsonl").unlink()
            elapsed, peak_kb, stderr, status = batch(folder, "--concurrency", str(c), "--ray")
            lines = (folder / "out.jsonl").read_bytes().count(b"\n")
            print(
                f"toolwire batch --ray (local, 2 workers): {n / elapsed:.0f} tasks/s, {elapsed:.1f} s incl. Ray start, "
                f"driver peak RSS {peak_kb / 1024:.0f} MB, {lines} lines, exit {status}"
            )


if __name__ == "__main__":
    main()
