"""Running tasks: bounded concurrency, one shared back-off, a time limit per task.

`run_batch` pulls tasks lazily (a 10-million-line file never sits in memory) into a fixed pool
of worker coroutines and yields each result as soon as it is ready, in completion order.
When one task meets a rate limit or a transient provider failure (after the client's own
retries), the shared `Backoff` pauses every worker before its next attempt: one 429 slows the
whole batch instead of each task hammering the provider on its own.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Protocol

from toolwire import telemetry
from toolwire.agent import RunResult
from toolwire.batch._results import TaskResult
from toolwire.batch._tasks import Task
from toolwire.errors import ProviderError, RateLimitError, StreamError, TimeoutError, ToolwireError

__all__ = ["AgentFactory", "Backoff", "RunnableAgent", "run_batch", "run_task"]


class RunnableAgent(Protocol):
    """What a batch needs of an agent (`toolwire.agent.Agent` is one)."""

    async def run(self, prompt: str) -> RunResult:
        """One run to the end."""
        ...


AgentFactory = Callable[[Task], "RunnableAgent | Awaitable[RunnableAgent]"]

_TRANSIENT = (RateLimitError, ProviderError, StreamError, TimeoutError)


class Backoff:
    """A pause shared by every worker: exponential with jitter, or the provider's `Retry-After`."""

    def __init__(self, base_delay: float = 1.0, max_delay: float = 60.0) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._until = 0.0

    async def wait(self) -> None:
        """Sleep until the shared pause is over (returns at once when there is none)."""
        while (delay := self._until - time.monotonic()) > 0:
            await asyncio.sleep(delay)

    def pause(self, attempt: int, retry_after: float | None = None) -> None:
        """Push the shared pause out after a failed attempt (number `attempt`, from 1)."""
        if retry_after is not None:
            delay = min(retry_after, self.max_delay)
        else:
            delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
        self._until = max(self._until, time.monotonic() + delay)


async def run_task(
    task: Task,
    make_agent: AgentFactory,
    *,
    timeout: float | None = None,
    retries: int = 2,
    backoff: Backoff | None = None,
) -> TaskResult:
    """Run one task to a result line; never raises except on cancellation.

    Rate limits and transient provider failures are retried up to `retries` times behind the
    shared back-off; anything else (a bad key, a bad request, a bug in a tool) fails the task.
    """
    backoff = backoff or Backoff()
    started = time.perf_counter()
    attributes = {"toolwire.batch.task_id": task.id}
    with telemetry.span(f"batch_task {task.id}", attributes) as span:
        for attempt in range(1, retries + 2):
            await backoff.wait()
            try:
                result = await _attempt(task, make_agent, timeout)
            except _TRANSIENT as exc:
                if attempt > retries:
                    return _failed(task, exc, started, attempt, span)
                backoff.pause(attempt, getattr(exc, "retry_after", None))
                continue
            except Exception as exc:  # a task's failure is its own line, never the batch's end
                return _failed(task, exc, started, attempt, span)
            return TaskResult.from_run(task.id, result, time.perf_counter() - started, attempt)
    raise AssertionError("unreachable: the loop returns on its last attempt")


async def _attempt(task: Task, make_agent: AgentFactory, timeout: float | None) -> RunResult:
    made = make_agent(task)
    agent = await made if inspect.isawaitable(made) else made
    scope = asyncio.timeout(timeout)
    try:
        async with scope:
            return await agent.run(task.prompt)
    except builtins.TimeoutError as exc:
        if scope.expired():
            raise _TaskTimeout(f"the task took longer than its limit of {timeout:g} s") from exc
        raise


class _TaskTimeout(Exception):
    """The per-task time limit passed (not retried: a slow task stays slow)."""


def _failed(task: Task, exc: BaseException, started: float, attempts: int, span: Any) -> TaskResult:
    if isinstance(exc, _TaskTimeout | ToolwireError):
        message = str(exc)
    else:
        message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ToolwireError) and attempts > 1:
        message = f"{message} (gave up after {attempts} attempts)"
    if span is not None:
        span.set_attribute("error.type", type(exc).__name__)
    return TaskResult.failed(task.id, message, time.perf_counter() - started, attempts)


async def run_batch(
    tasks: Iterable[Task],
    make_agent: AgentFactory,
    *,
    concurrency: int = 16,
    timeout: float | None = None,
    retries: int = 2,
    backoff: Backoff | None = None,
) -> AsyncIterator[TaskResult]:
    """Run `tasks` with at most `concurrency` at once; yield each result as it completes.

    `make_agent(task)` returns the agent for a task (or an awaitable of one); it is called once
    per attempt. Stopping the iteration early cancels the tasks in flight.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency!r}.")
    shared = backoff or Backoff()
    pending = iter(tasks)
    results: asyncio.Queue[TaskResult | None] = asyncio.Queue(maxsize=concurrency)

    async def worker() -> None:
        for task in pending:  # one shared iterator: each task goes to exactly one worker
            await results.put(await run_task(task, make_agent, timeout=timeout, retries=retries, backoff=shared))

    async def all_workers() -> None:
        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(concurrency):
                    group.create_task(worker())
        finally:
            await results.put(None)

    runner = asyncio.create_task(all_workers())
    try:
        while (result := await results.get()) is not None:
            yield result
        await runner  # re-raises what broke a worker (a bug in make_agent's awaitable, say)
    finally:
        if not runner.done():
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
