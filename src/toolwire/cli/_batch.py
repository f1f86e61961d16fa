"""`toolwire batch TASKS.jsonl --out RESULTS.jsonl`: many tasks, resumable, locally or on Ray.

Exit status 0 when every task of this run succeeded and every task line was readable; 1 when
a task failed or a line was skipped (the summary says which); 130 on Ctrl-C, with every
finished result already in the output: run the same command again to do only what is missing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn
from rich.text import Text

from toolwire.batch import (
    AgentRecipe,
    BadLine,
    ResultFile,
    Summary,
    Task,
    TaskResult,
    read_tasks,
    run_batch,
    run_batch_ray,
)
from toolwire.cli._settings import COPILOT, SCRIPTED_PROVIDERS, Settings, UsageError
from toolwire.client import PROVIDERS

__all__ = ["batch_command"]

_Advance = Callable[[TaskResult, Summary], None]


def batch_command(settings: Settings, args: argparse.Namespace) -> int:
    """Run every task not yet in the output; print a summary on stderr."""
    if not args.tasks.is_file():
        raise UsageError(f"No task file at {str(args.tasks)!r}; give a JSONL file with one task per line.")
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    summary = Summary()
    with _recipe(settings) as recipe, ResultFile(args.out, retry_failed=args.retry_failed) as out:
        if out.repaired:
            err.print(Text(f"{args.out}: cut off a torn last line (that task runs again)", style="yellow"))
        total = _count_pending(args.tasks, out.done)
        tasks = _pending(args.tasks, out, summary, err)
        try:
            asyncio.run(_drive(recipe, tasks, args, out, summary, total, err))
        except KeyboardInterrupt:
            err.print(Text(f"interrupted: {summary.done} results written to {args.out}; rerun to resume", "yellow"))
            raise
    for line in summary.lines():
        err.print(line)
    return 0 if summary.failed == 0 and summary.bad_lines == 0 else 1


@contextlib.contextmanager
def _recipe(settings: Settings) -> Iterator[AgentRecipe]:
    if settings.provider in SCRIPTED_PROVIDERS:
        from toolwire.offline import SCRIPTED_MODEL, OfflineModel

        with OfflineModel(settings.provider, keep_requests=False) as offline:
            recipe = _from_settings(settings, offline.wire, SCRIPTED_MODEL, offline.root, offline.server.base_url)
            recipe.api_key = "test-key"
            yield recipe
        return
    if settings.provider == COPILOT:
        raise UsageError("batch does not drive the Copilot CLI; choose an HTTP provider with --provider.")
    if not settings.model:
        raise UsageError(f"No model for provider {settings.provider!r}; pass --model or set [provider] model.")
    yield _from_settings(settings, settings.provider, settings.model, Path.cwd(), settings.base_url)


def _from_settings(settings: Settings, provider: str, model: str, root: Path, base_url: str | None) -> AgentRecipe:
    return AgentRecipe(
        provider,
        model,
        str(root),
        base_url=base_url,
        api_key_env=settings.api_key_env,
        system=settings.system_prompt,
        tool_mode=settings.tool_mode,
        max_tool_turns=settings.max_tool_turns,
        output_budget_chars=settings.output_budget_chars,
        approve=settings.yes,
    )


def _count_pending(path: Path, done: set[str]) -> int:
    return sum(1 for item in read_tasks(path) if isinstance(item, Task) and item.id not in done)


def _pending(path: Path, out: ResultFile, summary: Summary, err: Console) -> Iterator[Task]:
    for item in read_tasks(path):
        if isinstance(item, BadLine):
            summary.bad_lines += 1
            err.print(Text(f"{path}:{item.line}: skipped: {item.reason}", style="yellow"))
        elif item.id in out.done:
            summary.skipped += 1
        else:
            yield item


async def _drive(
    recipe: AgentRecipe,
    tasks: Iterator[Task],
    args: argparse.Namespace,
    out: ResultFile,
    summary: Summary,
    total: int,
    err: Console,
) -> None:
    results = _results(recipe, tasks, args)
    with _progress(err, total) as advance:
        try:
            async for result in results:
                out.append(result)
                summary.add(result)
                advance(result, summary)
        finally:
            await recipe.aclose()


def _results(recipe: AgentRecipe, tasks: Iterator[Task], args: argparse.Namespace) -> AsyncIterator[TaskResult]:
    options = {"concurrency": args.concurrency, "timeout": args.timeout, "retries": args.retries}
    if args.ray is None:
        return run_batch(tasks, recipe, **options)
    return run_batch_ray(
        tasks, recipe, address=args.ray or None, workers=args.ray_workers, env=_key_variables(recipe), **options
    )


def _key_variables(recipe: AgentRecipe) -> dict[str, str]:
    """The API key variables this batch's provider reads, as set here, for the Ray workers."""
    names = {*(PROVIDERS[recipe.provider].key_env if recipe.provider in PROVIDERS else ()), recipe.api_key_env or ""}
    return {name: os.environ[name] for name in sorted(names) if name and name in os.environ}


@contextlib.contextmanager
def _progress(err: Console, total: int) -> Iterator[_Advance]:
    if not err.is_terminal:
        yield lambda result, summary: None
        return
    columns = (
        TextColumn("[bold]batch"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.completed}/{task.total} done, {task.fields[failed]} failed, {task.fields[rate]} tasks/s"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=err, transient=False) as progress:
        bar = progress.add_task("batch", total=total, failed=0, rate="0.0")

        def advance(result: TaskResult, summary: Summary) -> None:
            rate = summary.done / max(progress.tasks[0].elapsed or 1e-9, 1e-9)
            progress.update(bar, advance=1, failed=summary.failed, rate=f"{rate:.1f}")

        yield advance
