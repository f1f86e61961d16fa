"""Batch runs: task files, resumable output, concurrency, time limits, back-off, the CLI, kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.test_cli import cli_env
from toolwire import ToolCall, Usage
from toolwire.agent import Agent, RunResult
from toolwire.batch import (
    AgentRecipe,
    Backoff,
    BadLine,
    ResultFile,
    Task,
    TaskResult,
    read_tasks,
    run_batch,
)
from toolwire.testing import ErrorReply, ScriptedModel, ScriptedServer, reply
from toolwire.tools import tool


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def tasks_file(path: Path, count: int) -> Path:
    return write_lines(
        path, [json.dumps({"id": f"t{i}", "prompt": f"summarize the to-do list {i}"}) for i in range(count)]
    )


@tool(risk="low")
async def double(n: int) -> int:
    """Double a number."""
    return 2 * n


def scripted_agent(task: Task) -> Agent:
    """A deterministic two-turn run per task: one tool call, then an answer naming the task."""
    n = int(task.id.removeprefix("t"))
    model = ScriptedModel(
        [
            reply(
                "",
                [ToolCall(id=f"c{n}", name="double", arguments={"n": n})],
                usage=Usage(input_tokens=5, output_tokens=1),
            ),
            reply(f"answer {task.id}", usage=Usage(input_tokens=7, output_tokens=2)),
        ]
    )
    return Agent(model, [double])


async def collect(*args: object, **kwargs: object) -> list[TaskResult]:
    return [result async for result in run_batch(*args, **kwargs)]  # type: ignore[arg-type]


def test_read_tasks_reports_bad_lines_with_their_numbers(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "tasks.jsonl",
        [
            '{"id": "a", "prompt": "one", "tools": ["read"], "max_tool_turns": 2, "tag": "x"}',
            "",
            "not json",
            '{"id": "a", "prompt": "again"}',
            '{"id": 7, "prompt": "seven"}',
            '{"prompt": "no id"}',
            '{"id": "b", "prompt": "  "}',
            '{"id": "c", "prompt": "p", "tools": "read"}',
            "[1, 2]",
        ],
    )
    items = list(read_tasks(path))
    assert items == [
        Task(id="a", prompt="one", tools=("read",), max_tool_turns=2, extra={"tag": "x"}),
        BadLine(3, "not valid JSON (Expecting value at column 1)"),
        BadLine(4, "duplicate id 'a' (first on line 1)"),
        Task(id="7", prompt="seven"),
        BadLine(6, "'id' must be a non-empty string or an integer, got None"),
        BadLine(7, "'prompt' must be a non-empty string, got '  '"),
        BadLine(8, "'tools' must be list, got 'read'"),
        BadLine(9, "a task must be a JSON object, got list"),
    ]


def test_the_result_file_cuts_a_torn_line_and_knows_what_is_done(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b'{"id":"a","error":null}\n{"id":"b","error":"boom"}\n{"id":"c","te')
    with ResultFile(path) as out:
        assert (out.repaired, out.done) == (True, {"a", "b"})
        out.append(TaskResult.failed("d", "nope", 0.5))
    assert path.read_bytes().splitlines()[:2] == [b'{"id":"a","error":null}', b'{"id":"b","error":"boom"}']
    assert json.loads(path.read_bytes().splitlines()[2])["id"] == "d"
    with ResultFile(path, retry_failed=True) as again:
        assert (again.repaired, again.done, again.dropped_failed) == (False, {"a"}, 2)
    assert path.read_bytes() == b'{"id":"a","error":null}\n'


async def test_run_batch_runs_every_task_with_its_own_agent() -> None:
    tasks = [Task(id=f"t{i}", prompt="go") for i in range(12)]
    results = sorted(await collect(tasks, scripted_agent, concurrency=4), key=lambda r: int(r.id[1:]))
    assert [(r.id, r.text, r.stop_reason, r.turns, r.error) for r in results] == [
        (f"t{i}", f"answer t{i}", "end_turn", 2, None) for i in range(12)
    ]
    assert results[3].usage == {"input_tokens": 12, "output_tokens": 3}
    assert [(c["name"], c["arguments"], c["result_kind"], c["approved"]) for c in results[3].calls] == [
        ("double", {"n": 3}, "data", True)
    ]


class _Gauge:
    """An agent that records how many runs are in flight at once."""

    def __init__(self, live: list[int]) -> None:
        self.live = live

    async def run(self, prompt: str) -> RunResult:
        self.live[0] += 1
        self.live[1] = max(self.live[1], self.live[0])
        for _ in range(3):
            await asyncio.sleep(0)
        self.live[0] -= 1
        return RunResult(text=prompt, messages=[], turns=1, stop_reason="end_turn", usage=Usage(), calls=[])


async def test_concurrency_is_bounded() -> None:
    live = [0, 0]
    tasks = (Task(id=str(i), prompt=f"p{i}") for i in range(50))  # a lazy iterable is fine
    results = await collect(tasks, lambda task: _Gauge(live), concurrency=5)
    assert (len(results), len({r.id for r in results}), live) == (50, 50, [0, 5])


class _Forever:
    async def run(self, prompt: str) -> RunResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_task_over_its_time_limit_fails_alone() -> None:
    def make(task: Task) -> object:
        return _Forever() if task.id == "t1" else scripted_agent(task)

    results = {r.id: r for r in await collect([Task(id=f"t{i}", prompt="go") for i in range(3)], make, timeout=1.5)}
    assert (results["t1"].stop_reason, results["t1"].error) == ("error", "the task took longer than its limit of 1.5 s")
    assert [results[k].error for k in ("t0", "t2")] == [None, None]


async def test_a_broken_factory_fails_only_its_task() -> None:
    def make(task: Task) -> Agent:
        if task.id == "t2":
            raise ValueError("no model for t2")
        return scripted_agent(task)

    results = {r.id: r.error for r in await collect([Task(id=f"t{i}", prompt="go") for i in range(4)], make)}
    assert results == {"t0": None, "t1": None, "t2": "ValueError: no model for t2", "t3": None}


async def test_a_rate_limit_pauses_the_batch_then_the_task_is_retried() -> None:
    turns = [ErrorReply(status=429, message="slow down", headers={"retry-after": "0.3"}), reply("ok")]
    with ScriptedServer(turns) as server:
        client = server.connect("anthropic:m", max_retries=0)
        async with client:
            backoff = Backoff(base_delay=0.01)
            started = time.monotonic()
            results = await collect([Task(id="a", prompt="go")], lambda task: Agent(client), backoff=backoff)
            waited = time.monotonic() - started
    assert [(r.text, r.error, r.attempts) for r in results] == [("ok", None, 2)]
    assert waited >= 0.3  # the provider's Retry-After, not the 0.01 s base delay, paced the retry


async def test_retries_run_out_into_an_error_line() -> None:
    with ScriptedServer([ErrorReply(status=503, message="overloaded")] * 3) as server:
        client = server.connect("openai:m", max_retries=0)
        async with client:
            results = await collect(
                [Task(id="a", prompt="go")], lambda task: Agent(client), retries=2, backoff=Backoff(0.001)
            )
    (result,) = results
    assert (result.stop_reason, result.attempts) == ("error", 3)
    assert result.error is not None and result.error.endswith("(gave up after 3 attempts)")
    assert "overloaded" in result.error


def batch(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "batch", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=cli_env(cwd),
        timeout=timeout,
        check=False,
    )


def test_the_cli_runs_resumes_and_reports(tmp_path: Path) -> None:
    tasks = tasks_file(tmp_path / "tasks.jsonl", 20)
    with tasks.open("a", encoding="utf-8") as f:
        f.write('{"id": "t3", "prompt": "dup"}\n{"id": "bad", "prompt": "x", "tools": ["nope"]}\n')
    first = batch(str(tasks), "--out", "out.jsonl", "--yes", "--concurrency", "4", cwd=tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert first.returncode == 1  # a failed task and a bad line
    assert f"{tasks}:21: skipped: duplicate id 't3' (first on line 4)" in first.stderr
    assert "21 tasks run: 20 succeeded, 1 failed; 0 already in the output; 1 bad task lines skipped" in first.stderr
    assert sorted(line["id"] for line in lines) == sorted([f"t{i}" for i in range(20)] + ["bad"])
    bad = next(line for line in lines if line["id"] == "bad")
    assert bad["error"].startswith("ValueError: unknown standard tools ['nope']; known: done, edit, exec")
    good = next(line for line in lines if line["id"] == "t0")
    assert sorted(good) == ["attempts", "calls", "duration_s", "error", "id", "stop_reason", "text", "turns", "usage"]
    assert (good["stop_reason"], good["turns"], good["error"]) == ("end_turn", 4, None)

    again = batch(str(tasks), "--out", "out.jsonl", "--yes", cwd=tmp_path)
    assert "0 tasks run: 0 succeeded, 0 failed; 21 already in the output; 1 bad task lines skipped" in again.stderr
    retried = batch(str(tasks), "--out", "out.jsonl", "--yes", "--retry-failed", cwd=tmp_path)
    assert "1 tasks run: 0 succeeded, 1 failed; 20 already in the output" in retried.stderr
    assert len((tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()) == 21


def test_the_cli_names_a_missing_task_file(tmp_path: Path) -> None:
    done = batch("nope.jsonl", "--out", "out.jsonl", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (
        2,
        "toolwire: error: No task file at 'nope.jsonl'; give a JSONL file with one task per line.\n",
    )


def test_kill_9_half_way_then_rerun_gives_every_result_exactly_once(tmp_path: Path) -> None:
    count = 400
    tasks = tasks_file(tmp_path / "tasks.jsonl", count)
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "toolwire.cli", "batch", str(tasks), "--out", str(out), "--yes"]
    process = subprocess.Popen(
        [*command, "--concurrency", "8"],
        cwd=tmp_path,
        env=cli_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out.exists() and out.read_bytes().count(b"\n") >= count // 4):
            assert process.poll() is None, "the batch ended before it could be killed"
            assert time.monotonic() < deadline, "the batch wrote too little in 120 s"
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    written = out.read_bytes().count(b"\n")
    assert count // 4 <= written < count
    rerun = subprocess.run(command, cwd=tmp_path, env=cli_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    ids = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert (len(ids), len(set(ids))) == (count, count)
    assert set(ids) == {f"t{i}" for i in range(count)}


async def test_a_recipe_builds_agents_from_settings_and_travels_without_its_clients(tmp_path: Path) -> None:
    import pickle

    with ScriptedServer(lambda request: reply(f"seen {len(request.messages)}")) as server:
        recipe = AgentRecipe("openai", "m-1", str(tmp_path), base_url=server.base_url, api_key="k", approve=True)
        results = await collect([Task(id="a", prompt="hi", tools=("read",)), Task(id="b", prompt="yo")], recipe)
        assert sorted((r.id, r.text) for r in results) == [("a", "seen 1"), ("b", "seen 1")]
        assert list(recipe._clients) == ["m-1"]
        copy = pickle.loads(pickle.dumps(recipe))
        assert (copy._clients, copy.base_url, copy.model) == ({}, server.base_url, "m-1")
        await recipe.aclose()
    prompts = sorted(str(r.request.messages[0].content) for r in server.requests if r.request)  # any order
    assert prompts == ["hi", "yo"]
