"""Running one turn's tool calls: low-risk ones together, high-risk ones one by one after review.

Results always come back in the order the model asked. Unknown tools, rejected calls and
cancelled calls become `error` results, so the model is told and the history stays valid.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from toolwire import telemetry
from toolwire.agent._records import AgentEvent, CallRecord, ToolFinished, ToolRejected, ToolStarted
from toolwire.reviewers import ReviewDecision, Reviewer
from toolwire.tools import DEFAULT_TOOL_TIMEOUT, ToolContext
from toolwire.types import ToolCall, ToolDefinition, ToolResult

__all__ = ["AgentTool", "Cancelled", "TurnExecutor", "race_signal"]

T = TypeVar("T")


class AgentTool(Protocol):
    """What the agent needs from a tool (`toolwire.tools.Tool` satisfies it)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str | None: ...
    @property
    def risk(self) -> str: ...
    @property
    def definition(self) -> ToolDefinition: ...

    async def execute_raw(
        self, raw_args: str | dict[str, Any], ctx: ToolContext | None = None, *, call: ToolCall | None = None
    ) -> ToolResult: ...


class Cancelled(Exception):
    """The run's cancellation signal was set while something was running.

    `records` holds the turn's calls as far as they got (unfinished ones as `error` results).
    """

    def __init__(self, records: list[CallRecord] | None = None) -> None:
        super().__init__("the run was cancelled")
        self.records = records or []


async def wait_for_signal(signal: Any) -> None:
    """Return once `signal.is_set()`; awaits an asyncio.Event, polls anything else."""
    if isinstance(signal, asyncio.Event):
        await signal.wait()
        return
    while not signal.is_set():
        await asyncio.sleep(0.02)


async def race_signal(awaitable: Awaitable[T], signal: Any) -> T:
    """Await `awaitable` unless `signal` is set first; then cancel it and raise `Cancelled`."""
    if signal is None:
        return await awaitable
    if signal.is_set():
        if inspect.iscoroutine(awaitable):
            awaitable.close()
        raise Cancelled
    task = asyncio.ensure_future(awaitable)
    watcher = asyncio.ensure_future(wait_for_signal(signal))
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not task.done():
            await stop_task(task)
    if not task.done() or task.cancelled():
        raise Cancelled
    return task.result()


STOP_GRACE_SECONDS = 2.0
"""How long a cancelled tool may take to clean up before the agent stops waiting for it."""


async def stop_task(task: asyncio.Future[Any], grace: float = STOP_GRACE_SECONDS) -> bool:
    """Cancel `task` and wait up to `grace` seconds for it to end; `False` if it ignores cancellation.

    A coroutine that swallows `CancelledError` (in a retry loop, say) would otherwise hold the
    whole run forever. It is left running, its eventual error retrieved so nothing is logged
    twice, and the caller reports it.
    """
    task.cancel()
    await asyncio.wait({task}, timeout=grace)
    if task.done():
        return True
    task.add_done_callback(_retrieve)
    return False


def _retrieve(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


@dataclass(slots=True)
class TurnExecutor:
    """Runs the calls of one model turn under the agent's tools, reviewer and context."""

    tools: dict[str, AgentTool]
    reviewer: Reviewer | None
    context: ToolContext
    emit: Callable[[AgentEvent], None]
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT

    async def run(self, calls: Sequence[ToolCall]) -> list[CallRecord]:
        """Run `calls`; return one record per call, in the model's order.

        Low-risk calls run concurrently first; then high-risk calls run one at a time, each just
        after the reviewer approves it. Raises `Cancelled` (after recording what finished) when
        the context's signal is set.
        """
        records: dict[int, CallRecord] = {}
        low: list[tuple[int, ToolCall, AgentTool]] = []
        high: list[tuple[int, ToolCall, AgentTool]] = []
        for index, call in enumerate(calls):
            tool = self.tools.get(call.name)
            if tool is None:
                records[index] = self._unknown(call)
            else:
                (low if tool.risk == "low" else high).append((index, call, tool))
        try:
            await self._run_concurrently(low, records)
            for index, call, tool in high:
                records[index] = await self._review_and_run(call, tool)
        except Cancelled:
            for index, call in enumerate(calls):
                records.setdefault(index, _not_run(call, "Cancelled before it finished: the run was stopped."))
            raise Cancelled([records[i] for i in range(len(calls))]) from None
        return [records[i] for i in range(len(calls))]

    async def _run_concurrently(
        self, items: list[tuple[int, ToolCall, AgentTool]], records: dict[int, CallRecord]
    ) -> None:
        if not items:
            return

        async def one(index: int, call: ToolCall, tool: AgentTool) -> None:
            records[index] = await self._execute(call, tool, None)

        async def all_of_them() -> None:
            async with asyncio.TaskGroup() as group:
                for item in items:
                    group.create_task(one(*item))

        await race_signal(all_of_them(), self.context.cancel)

    async def _review_and_run(self, call: ToolCall, tool: AgentTool) -> CallRecord:
        if self.reviewer is None:
            return await race_signal(self._execute(call, tool, None), self.context.cancel)
        decision = await race_signal(self._review(call, tool, self.reviewer), self.context.cancel)
        if not decision.approved:
            reason = decision.reason or "no reason given"
            self.emit(ToolRejected(call, reason))
            result = ToolResult.error(call, f"The call was rejected by the reviewer and did not run: {reason}")
            with telemetry.tool_span(call, risk=tool.risk, description=tool.description) as span:
                telemetry.record_tool_result(span, result, approved=False, error_type="rejected")
            return CallRecord(call=call, result=result, duration_s=0.0, approved=False, review=decision)
        return await race_signal(self._execute(call, tool, decision), self.context.cancel)

    async def _review(self, call: ToolCall, tool: AgentTool, reviewer: Reviewer) -> ReviewDecision:
        attributes = {
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "toolwire.reviewer": type(reviewer).__name__,
        }
        with telemetry.span(f"review {call.name}", attributes) as span:
            decision = await reviewer.review(call, tool)
            if span is not None:
                span.set_attribute("toolwire.review.approved", decision.approved)
                if decision.votes:
                    span.set_attribute("toolwire.review.votes", len(decision.votes))
                    span.set_attribute("toolwire.review.approvals", sum(v.approve for v in decision.votes))
            return decision

    async def _execute(self, call: ToolCall, tool: AgentTool, review: ReviewDecision | None) -> CallRecord:
        self.emit(ToolStarted(call))
        with telemetry.tool_span(call, risk=tool.risk, description=tool.description) as span:
            started = time.perf_counter()
            result = await self._execute_in_time(call, tool)
            duration = time.perf_counter() - started
            telemetry.record_tool_result(span, result, approved=True)
        self.emit(ToolFinished(call, result, duration))
        return CallRecord(call=call, result=result, duration_s=duration, approved=True, review=review)

    async def _execute_in_time(self, call: ToolCall, tool: AgentTool) -> ToolResult:
        """Run the call under its time limit: the tool's own `timeout`, else the agent's."""
        limit = getattr(tool, "timeout", None) or self.tool_timeout
        task = asyncio.ensure_future(tool.execute_raw(call.arguments, self.context, call=call))
        try:
            await asyncio.wait({task}, timeout=limit)
        finally:
            timed_out = not task.done()
            stopped = not timed_out or await stop_task(task)
        if timed_out and limit is not None:
            if not stopped:
                self.context.logger.warning(
                    "Tool %r was stopped after %g s but ignores cancellation and is still running; its result "
                    "will be ignored. Let CancelledError propagate in the tool.",
                    call.name,
                    limit,
                )
            return ToolResult.error(
                call,
                f"Tool {call.name!r} did not finish within {limit:g} s and was stopped; "
                "try smaller inputs or another approach.",
            )
        return task.result()

    def _unknown(self, call: ToolCall) -> CallRecord:
        known = ", ".join(sorted(self.tools)) or "none"
        record = _not_run(call, f"Unknown tool {call.name!r}. Available tools: {known}.")
        with telemetry.tool_span(call, risk="unknown") as span:
            telemetry.record_tool_result(span, record.result, approved=False, error_type="unknown_tool")
        return record


def _not_run(call: ToolCall, message: str) -> CallRecord:
    return CallRecord(call=call, result=ToolResult.error(call, message), duration_s=0.0, approved=False)
