"""The same batch spread over a Ray cluster (extra `ray`): Ray workers run, the driver writes.

Each Ray worker is an async actor that runs up to `concurrency` tasks at once through the same
`run_task` as local mode, with its own shared back-off. The driver keeps every worker's slots
full (least-loaded first), awaits results as they complete and hands them to the caller, who
alone writes the output. Nothing here distributes work by itself: Ray places the actors and
moves the tasks and results.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from toolwire.batch._results import TaskResult
from toolwire.batch._runner import AgentFactory, Backoff, run_task
from toolwire.batch._tasks import Task

__all__ = ["RayUnavailable", "run_batch_ray"]


class RayUnavailable(RuntimeError):
    """Ray is not installed (install the `ray` extra: pip install -e '.[ray]' in the checkout)."""


class _Worker:
    """One Ray actor: runs tasks with the batch's settings and a back-off shared by its tasks."""

    def __init__(self, make_agent: AgentFactory, timeout: float | None, retries: int) -> None:
        self.make_agent = make_agent
        self.timeout = timeout
        self.retries = retries
        self.backoff = Backoff()

    async def run(self, task: Task) -> TaskResult:
        return await run_task(task, self.make_agent, timeout=self.timeout, retries=self.retries, backoff=self.backoff)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray; from the toolwire checkout: pip install -e '.[ray]'.") from None
    return ray


async def run_batch_ray(
    tasks: Iterable[Task],
    make_agent: AgentFactory,
    *,
    concurrency: int = 16,
    address: str | None = None,
    workers: int | None = None,
    timeout: float | None = None,
    retries: int = 2,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[TaskResult]:
    """`run_batch` on Ray: join the cluster at `address` (or start a local one), yield results.

    Args:
        tasks: The tasks, read lazily.
        make_agent: The agent factory; pickled to every worker (see `AgentRecipe`).
        concurrency: Tasks in flight per worker.
        address: A Ray cluster address (`auto`, `ray://host:10001`); `None` starts a local Ray
            unless this process already called `ray.init`.
        workers: How many worker actors (default: one per CPU of the cluster).
        timeout: Seconds per task.
        retries: Retries after rate limits and transient provider failures.
        env: Environment variables the workers need (API keys: Ray workers do not inherit the
            driver's environment), passed through each actor's `runtime_env`.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency!r}.")
    ray = _ray()
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    runtime_env = {"env_vars": dict(env)} if env else None
    actor_class = ray.remote(num_cpus=0)(_Worker).options(max_concurrency=concurrency, runtime_env=runtime_env)
    pool = _Pool([actor_class.remote(make_agent, timeout, retries) for _ in range(count)], concurrency)
    try:
        async for result in pool.run(iter(tasks)):
            yield result
    finally:
        pool.cancel()
        for actor in pool.actors:
            ray.kill(actor)
        if started_here:
            ray.shutdown()


class _Pool:
    """Keeps every actor's slots full, least-loaded first, and collects results as they finish."""

    def __init__(self, actors: list[Any], concurrency: int) -> None:
        self.actors = actors
        self.capacity = len(actors) * concurrency
        self.load = [0] * len(actors)
        self.inflight: dict[asyncio.Future[TaskResult], int] = {}

    async def run(self, pending: Iterator[Task]) -> AsyncIterator[TaskResult]:
        self._fill(pending)
        while self.inflight:
            finished, _ = await asyncio.wait(self.inflight, return_when=asyncio.FIRST_COMPLETED)
            for future in finished:
                self.load[self.inflight.pop(future)] -= 1
            self._fill(pending)
            for future in finished:
                yield future.result()

    def cancel(self) -> None:
        for future in self.inflight:
            future.cancel()

    def _fill(self, pending: Iterator[Task]) -> None:
        while len(self.inflight) < self.capacity and (task := next(pending, None)) is not None:
            slot = min(range(len(self.actors)), key=self.load.__getitem__)
            self.load[slot] += 1
            self.inflight[asyncio.wrap_future(self.actors[slot].run.remote(task).future())] = slot
