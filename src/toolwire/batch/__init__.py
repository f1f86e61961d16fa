"""Batch runs: many agent tasks, bounded concurrency, resumable output, Ray scale-out.

- `read_tasks(path)` reads a JSONL task file lazily (bad lines come back as `BadLine`).
- `run_batch(tasks, make_agent, concurrency=16)` runs them and yields `TaskResult`s as they finish.
- `run_batch_ray(...)` does the same on a Ray cluster (extra `ray`).
- `ResultFile` appends result lines whole and knows which ids are done, so reruns resume.
- `AgentRecipe` is a picklable agent factory over the standard tools (what the CLI uses).

This package is in the runtime's edge layer: it uses the agent, clients and standard tools,
never the CLI.
"""

from __future__ import annotations

from toolwire.batch._ray import RayUnavailable, run_batch_ray
from toolwire.batch._recipe import AgentRecipe
from toolwire.batch._results import ResultFile, TaskResult
from toolwire.batch._runner import AgentFactory, Backoff, RunnableAgent, run_batch, run_task
from toolwire.batch._summary import Summary
from toolwire.batch._tasks import BadLine, Task, parse_task, read_tasks

__all__ = [
    "AgentFactory",
    "AgentRecipe",
    "Backoff",
    "BadLine",
    "RayUnavailable",
    "ResultFile",
    "RunnableAgent",
    "Summary",
    "Task",
    "TaskResult",
    "parse_task",
    "read_tasks",
    "run_batch",
    "run_batch_ray",
    "run_task",
]
