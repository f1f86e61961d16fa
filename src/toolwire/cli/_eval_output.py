"""`toolwire eval output`: the typed-output suite against any provider, in each output strategy.

110 extraction and classification cases with known answers (`toolwire.evals`), each asked with
`output_type` at temperature 0 in every strategy chosen (default: all the provider supports);
a progress bar on stderr, the table (valid first time, valid after re-asks, exact match, time
per case) on stdout, `--json` keeps every case, `--plot` draws the chart.
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from toolwire.cli._settings import Settings, UsageError
from toolwire.cli._setup import open_model
from toolwire.cli._terminal import Loop
from toolwire.evals._output_cases import output_cases
from toolwire.evals._output_suite import (
    OutputCaseResult,
    StrategySummary,
    run_output_case,
    summarize_outputs,
    write_output_chart,
)
from toolwire.toolmodes import OUTPUT_STRATEGIES, OutputStrategy

__all__ = ["CASE_TIMEOUT_S", "eval_output_command", "progress_bar"]

CASE_TIMEOUT_S = 900.0
"""How long one case may wait for its whole (unstreamed) reply: a local model on a busy CPU takes
minutes, and a case cut by the client's usual 60 s would be scored as the model's failure."""


def progress_bar(console: Console) -> Progress:
    """The progress bar every `toolwire eval` suite shows on stderr."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    return Progress(*columns, console=console, transient=True)


def eval_output_command(settings: Settings, args: argparse.Namespace) -> int:
    """Run the suite in each strategy, print the table; exit status 0 whatever the score."""
    cases = output_cases()[: args.limit]
    err = Console(stderr=True, highlight=False)
    if settings.timeout is None:
        settings = dataclasses.replace(settings, timeout=CASE_TIMEOUT_S)
    with open_model(settings) as model:
        client = model.client
        strategies = _strategies(args.strategies, client.output_strategies)
        results: list[OutputCaseResult] = []
        with Loop(client) as loop, progress_bar(err) as progress:
            for strategy in strategies:
                task = progress.add_task(f"output {strategy}", total=len(cases))
                for case in cases:
                    ask = run_output_case(client, case, strategy, retries=args.retries, max_tokens=args.max_tokens)
                    results.append(loop.run(ask))
                    progress.advance(task)
    summaries = summarize_outputs(results)
    title = f"Typed output, {settings.provider}:{settings.model}, {len(cases)} cases"
    Console(highlight=False).print(_table(summaries, title))
    if args.json_out:
        meta = {"benchmark": "output", "provider": settings.provider, "model": settings.model, "cases": len(cases)}
        report = {
            **meta,
            "retries": args.retries,
            "summary": [dataclasses.asdict(s) for s in summaries],
            "results": [dataclasses.asdict(r) for r in results],
        }
        args.json_out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.plot:
        write_output_chart({s.strategy: s for s in summaries}, args.plot, title)
    return 0


def _strategies(wanted: str | None, supported: tuple[str, ...]) -> list[OutputStrategy]:
    names = [s.strip() for s in wanted.split(",") if s.strip()] if wanted else list(supported)
    bad = [s for s in names if s not in supported]
    if bad:
        raise UsageError(f"--strategies {', '.join(bad)}: not supported by this provider; use {', '.join(supported)}.")
    return [s for name in names for s in OUTPUT_STRATEGIES if s == name]


def _table(summaries: list[StrategySummary], title: str) -> Table:
    table = Table(title=title)
    for column in ("strategy", "cases", "valid first time", "valid after re-asks", "exact match", "s per case"):
        table.add_column(column, justify="left" if column == "strategy" else "right")
    for s in summaries:
        table.add_row(
            s.strategy,
            str(s.cases),
            f"{100 * s.valid_first:.0f} %",
            f"{100 * s.valid:.0f} %",
            f"{100 * s.exact:.0f} %",
            f"{s.seconds_per_case:.2f}",
        )
    return table
