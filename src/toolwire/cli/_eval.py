"""`toolwire eval bfcl`: a tool-calling benchmark against any provider in any tool mode (`eval output`: typed replies).

Cases come from the Berkeley Function Calling Leaderboard's files (`pip install --no-deps
bfcl-eval`), one request each at temperature 0 with a fixed seed; a progress bar runs on
stderr, the table (accuracy, replies parsed, calls schema-valid, latency p50 per category)
goes to stdout, `--json` keeps every case, `--plot` draws the chart.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from rich.console import Console
from rich.table import Table

from toolwire.cli._eval_output import CASE_TIMEOUT_S, eval_output_command, progress_bar
from toolwire.cli._settings import SCRIPTED_PROVIDERS, Settings, UsageError
from toolwire.cli._setup import open_model
from toolwire.cli._terminal import Loop
from toolwire.client import Client
from toolwire.evals import BfclCase, BfclDataError, load_cases
from toolwire.evals._report import CategorySummary, build_report, summarize, write_chart
from toolwire.evals._runner import CaseResult, EvalMode, RequestOptions, run_case

__all__ = ["eval_command"]


EXIT_FAILED = 1
"""Exit status when cases failed for infrastructure reasons (the score would say nothing)."""
EXIT_INTERRUPTED = 130


def eval_command(settings: Settings, args: argparse.Namespace) -> int:
    """Run the benchmark, print the table.

    Exit status 0 whatever the model scored; 1 when requests failed (the upstream unreachable,
    5xx, timeouts: counted apart, never as the model's errors); 130 on Ctrl-C, after the table
    and the JSON report of the cases that finished. `output` runs the typed-output suite.
    """
    if args.benchmark == "output":
        return eval_output_command(settings, args)
    mode: EvalMode = args.tool_mode or settings.tool_mode
    _check_model(settings)
    if args.plot:
        _check_matplotlib()
    cases = _cases(args)
    options = RequestOptions(temperature=0.0, seed=args.seed, max_tokens=args.max_tokens, stream=args.stream)
    err = Console(stderr=True, highlight=False)
    if settings.timeout is None:
        settings = dataclasses.replace(settings, timeout=CASE_TIMEOUT_S)
    with open_model(settings) as model:
        if not isinstance(model.client, Client):
            raise UsageError(f"toolwire eval needs an HTTP provider; {settings.provider!r} is not one.")
        client = model.client
        started, cpu = time.perf_counter(), time.process_time()
        with Loop(client) as loop, progress_bar(err) as progress:
            task = progress.add_task(f"bfcl {mode}", total=len(cases))
            results: list[CaseResult] = []
            interrupted = False
            try:
                for case in cases:
                    results.append(loop.run(run_case(client, case, mode, options)))
                    progress.advance(task)
            except KeyboardInterrupt:  # what finished is kept, reported and written
                interrupted = True
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    summaries = summarize(results)
    Console(highlight=False).print(_table(summaries, f"BFCL, {settings.provider}:{settings.model}, tool mode {mode}"))
    if args.json_out:
        meta = {
            "benchmark": "bfcl",
            "provider": settings.provider,
            "model": settings.model,
            "base_url": settings.base_url,
            "tool_mode": mode,
            "limit": args.limit,
            "seed": args.seed,
            "max_tokens": args.max_tokens,
            "stream": args.stream,
        }
        report = build_report(meta, results, wall, cpu)
        args.json_out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.plot:
        write_chart({mode: summaries}, args.plot)
    return _status(err, results, len(cases), interrupted)


def _status(err: Console, results: list[CaseResult], planned: int, interrupted: bool) -> int:
    failed = [r for r in results if r.failed]
    if failed:
        err.print(
            f"toolwire eval: {len(failed)} of {len(results)} cases failed for infrastructure reasons and are "
            f"not scored (first: {failed[0].error}); check the provider, then run again.",
            markup=False,
            soft_wrap=True,
        )
    if interrupted:
        err.print(f"toolwire eval: interrupted after {len(results)} of {planned} cases.", markup=False, soft_wrap=True)
        return EXIT_INTERRUPTED
    return EXIT_FAILED if failed else 0


def _check_model(settings: Settings) -> None:
    """The score is a model's: refuse to run (and print a table of) the offline scripted one."""
    if settings.provider in SCRIPTED_PROVIDERS or not settings.model:
        raise UsageError(
            "toolwire eval scores a model: give --provider and --model (and --base-url for a local "
            "server), e.g. --provider llamacpp --model qwen3 --base-url http://127.0.0.1:8080/v1."
        )


def _check_matplotlib() -> None:
    """`--plot` needs matplotlib: say so before a run that may take hours, not after."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--plot draws with matplotlib, which is not installed: pip install -e '.[eval]'.") from None


def _cases(args: argparse.Namespace) -> list[BfclCase]:
    categories = list(dict.fromkeys(c.strip() for c in args.categories.split(",") if c.strip()))  # once each
    if not categories:
        raise UsageError(f"--categories names no category ({args.categories!r}); give one or more, comma-separated.")
    try:
        return list(load_cases(categories, limit=args.limit, data_dir=args.data_dir))
    except BfclDataError as exc:
        raise UsageError(str(exc)) from None


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _table(summaries: list[CategorySummary], title: str) -> Table:
    table = Table(title=title)
    failures = any(s.failed for s in summaries)  # the column is there when there is something to count
    columns = (
        "category",
        "cases",
        *(("failed",) if failures else ()),
        "accuracy",
        "parsed",
        "calls valid",
        "latency p50",
    )
    for column in columns:
        table.add_column(column, justify="left" if column == "category" else "right")
    for s in summaries:
        table.add_row(
            s.category,
            str(s.cases),
            *((str(s.failed),) if failures else ()),
            _percent(s.accuracy),
            _percent(s.parsed_share),
            f"{_percent(s.valid_share)} of {s.calls}",
            _seconds(s.latency_p50_s),
        )
    return table


def _seconds(value: float) -> str:
    """A latency readable at its scale: `840 ms` under a second, `2.35 s` above."""
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
