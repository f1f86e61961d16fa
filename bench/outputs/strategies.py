"""Every output strategy side by side on the typed-output cases, against SmolLM2-135M-Instruct on llama-cpp-python.

    make e2e-server                                    # .venv-e2e: the server and the model, once
    .venv/bin/python -m bench.outputs.strategies [--strategies constrained,native,tool,prompted]
        [--limit N] [--retries 2] [--max-tokens 128] [--resume] [--report]

Two servers on free loopback ports (tests/e2e/llama_server.py), same GGUF: plain `chatml` for
`native`, `constrained` and `prompted`, `chatml-function-calling` for `tool` (its named tool
choice decodes the output tool's arguments under their schema). The cases are
`toolwire.evals`' output suite (110 extraction and classification questions with known answers),
run as `toolwire eval output` runs them: `client.complete(..., output_type=T,
output_strategy=S)` through the `llama-cpp-python` provider, temperature 0, re-asks with the
validation errors. Case by case, every strategy in turn, each result saved at once to
`bench/outputs/results/<strategy>.json` (`--resume` goes on from there); `--report` prints the
table and draws `smollm2.png` from the cases every strategy has done.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from tests.e2e.llama_server import MODEL_NAME, llama_server, skip_reason

from toolwire.client import connect_http
from toolwire.evals._output_cases import output_cases
from toolwire.evals._output_suite import (
    OutputCaseResult,
    StrategySummary,
    run_output_case,
    summarize_outputs,
    write_output_chart,
)
from toolwire.toolmodes import OUTPUT_STRATEGIES, OutputStrategy

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
SERVER_FORMAT = {
    "tool": "chatml-function-calling",
    "native": "chatml",
    "constrained": "chatml",
    "prompted": "chatml",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--strategies", default="constrained,native,tool,prompted")
    parser.add_argument("--limit", type=int, default=None, help="the first N cases (kinds interleaved)")
    parser.add_argument("--retries", type=int, default=2, help="re-asks after a reply that does not validate")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--resume", action="store_true", help="keep the results already recorded")
    parser.add_argument("--report", action="store_true", help="only print the table and draw the chart")
    args = parser.parse_args()
    strategies = [s for s in args.strategies.split(",") if s]
    unknown = [s for s in strategies if s not in OUTPUT_STRATEGIES]
    if unknown:
        parser.error(f"unknown strategies {unknown}; choose from {OUTPUT_STRATEGIES}")
    if not args.report:
        reason = skip_reason()
        if reason is not None:
            raise SystemExit(reason)
        RESULTS.mkdir(exist_ok=True)
        asyncio.run(run(strategies, args))
    report(strategies)


async def run(strategies: list[OutputStrategy], args: argparse.Namespace) -> None:
    """Case by case, every strategy in turn: stopped at any time, every strategy has the same cases done."""
    done = {s: _recorded(s) if args.resume else [] for s in strategies}
    cases = output_cases()[: args.limit]
    with contextlib.ExitStack() as stack:
        logs = Path(tempfile.gettempdir())  # the servers' logs stay out of the results
        formats = {SERVER_FORMAT[s] for s in strategies}
        servers = {f: stack.enter_context(llama_server(f, logs)) for f in formats}
        clients = {
            s: connect_http(
                f"llama-cpp-python:{MODEL_NAME}", base_url=servers[SERVER_FORMAT[s]].base_url, timeout=600.0
            )
            for s in strategies
        }
        for i, case in enumerate(cases, 1):
            for strategy in strategies:
                if any(r["id"] == case.id for r in done[strategy]):
                    continue
                result = await run_output_case(
                    clients[strategy], case, strategy, retries=args.retries, max_tokens=args.max_tokens
                )
                done[strategy].append(dataclasses.asdict(result))
                meta = {"strategy": strategy, "retries": args.retries, "max_tokens": args.max_tokens}
                (RESULTS / f"{strategy}.json").write_text(
                    json.dumps({**meta, "results": done[strategy]}, indent=1) + "\n"
                )
                mark = "valid" if result.valid else "INVALID"
                print(
                    f"{i}/{len(cases)} {case.id} {strategy}: {mark} exact={result.exact} {result.seconds:.1f}s",
                    flush=True,
                )
        for client in clients.values():
            await client.aclose()


def _recorded(strategy: str) -> list[dict[str, Any]]:
    path = RESULTS / f"{strategy}.json"
    return list(json.loads(path.read_text())["results"]) if path.exists() else []


def report(strategies: list[str]) -> None:
    runs = {s: json.loads((RESULTS / f"{s}.json").read_text()) for s in strategies if (RESULTS / f"{s}.json").exists()}
    if not runs:
        raise SystemExit("no results yet: run without --report first")
    common = set.intersection(*({r["id"] for r in run["results"]} for run in runs.values()))
    summaries: dict[str, StrategySummary] = {}
    for strategy, run in runs.items():
        rows = [OutputCaseResult(**r) for r in run["results"] if r["id"] in common]
        summaries[strategy] = summarize_outputs(rows)[0]
    print("| strategy | cases | valid first time | valid after re-asks | exact match | s per case | replies per case |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for s in summaries.values():
        print(
            f"| {s.strategy} | {s.cases} | {100 * s.valid_first:.0f} % | {100 * s.valid:.0f} % | "
            f"{100 * s.exact:.0f} % | {s.seconds_per_case:.2f} | {s.replies_per_case:.2f} |"
        )
    title = f"SmolLM2-135M-Instruct on llama-cpp-python, {len(common)} cases"
    write_output_chart(summaries, HERE / "smollm2.png", title)


if __name__ == "__main__":
    main()
