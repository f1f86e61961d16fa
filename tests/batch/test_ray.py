"""The batch on a local Ray: the same results as the local mode, the driver alone writing."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.batch.test_batch import tasks_file
from tests.cli.test_cli import cli_env
from toolwire.batch import AgentRecipe, Task, TaskResult, read_tasks, run_batch, run_batch_ray
from toolwire.offline import SCRIPTED_MODEL, OfflineModel

ray = pytest.importorskip("ray", reason="Ray is not installed here (pip install 'toolwire[ray]')")


def comparable(result: TaskResult) -> tuple[Any, ...]:
    """Everything but the timings."""
    calls = [{k: v for k, v in call.items() if k != "duration_s"} for call in result.calls]
    return (result.id, result.text, result.stop_reason, result.turns, calls, result.usage, result.error)


def test_the_cli_runs_a_batch_on_a_local_ray(tmp_path: Path) -> None:
    tasks = tasks_file(tmp_path / "tasks.jsonl", 12)
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "batch", str(tasks), "--out", "out.jsonl", "--yes", "--ray"],
        cwd=tmp_path,
        env=cli_env(tmp_path, {"RAY_USAGE_STATS_ENABLED": "0"}),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "12 tasks run: 12 succeeded, 0 failed" in done.stderr
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(line["id"] for line in lines) == sorted(f"t{i}" for i in range(12))
    assert {line["text"] for line in lines} == {
        "Done: I wrote SUMMARY.md and found 2 TODO comments in the code (src/app.py:2, src/app.py:6)."
    }


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


async def test_ray_gives_the_same_results_as_the_local_mode(local_ray: None, tmp_path: Path) -> None:
    tasks = [t for t in read_tasks(tasks_file(tmp_path / "tasks.jsonl", 40)) if isinstance(t, Task)]
    with OfflineModel("scripted-anthropic") as offline:
        recipe = AgentRecipe(
            offline.wire, SCRIPTED_MODEL, str(offline.root), base_url=offline.server.base_url, api_key="k", approve=True
        )
        local = [r async for r in run_batch(tasks, recipe, concurrency=4)]
        await recipe.aclose()
        spread = [r async for r in run_batch_ray(tasks, recipe, concurrency=4, workers=2)]
    assert len(spread) == 40
    assert sorted(map(comparable, spread)) == sorted(map(comparable, local))
    assert {r.error for r in spread} == {None}


async def test_ray_workers_get_the_key_variables_they_need(local_ray: None, tmp_path: Path) -> None:
    from toolwire.testing import ScriptedServer, reply

    with ScriptedServer(lambda request: reply("ok")) as server:
        recipe = AgentRecipe("openai", "m", str(tmp_path), base_url=server.base_url, api_key_env="TW_RAY_TEST_KEY")
        env = {"TW_RAY_TEST_KEY": "sk-ray-worker-key"}  # set only for the workers, not in this process
        results = [r async for r in run_batch_ray([Task(id="a", prompt="hi")], recipe, workers=1, env=env)]
        assert [(r.text, r.error) for r in results] == [("ok", None)]
        assert server.requests[0].headers["authorization"] == "Bearer sk-ray-worker-key"
