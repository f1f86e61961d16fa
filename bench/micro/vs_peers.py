"""toolwire against its peers, in one run on one machine: `make bench` (see bench/micro/README.md).

Usage: python -m bench.micro.vs_peers [--only import,convert,stream,agent,text,cache] [--quick] [--json PATH]
       python -m bench.micro.vs_peers --profile BENCH ROW      (pyinstrument, else cProfile, of one row)
       python -m bench.micro.vs_peers --child-memory BENCH ROW (internal: peak RSS of one row)

Prints one Markdown table per benchmark, then the targets. Peers that fail to import show "n/a".
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network fetch of litellm's price list

import argparse
import json
import logging
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import harness
from bench.harness import Row, RowSpec
from bench.micro import agent_rows, convert_rows, import_rows, stream_rows, text_rows

MODULE = "bench.micro.vs_peers"  # run again as `python -m MODULE --child-memory` for one row's peak RSS
PACKAGES = (
    "toolwire",
    "litellm",
    "pydantic-ai-slim",
    "langchain-core",
    "langchain-anthropic",
    "openai-agents",
    "openai",
    "anthropic",
    "google-genai",
    "pydantic",
)


@dataclass
class Bench:
    title: str
    rows: Callable[[], list[RowSpec]]
    reps: int
    budget_s: float
    check: Callable[[Any], str | None] | None = None
    memory: bool = False


BENCHES: dict[str, Bench] = {
    "convert-anthropic": Bench(
        "Convert: OpenAI body → Anthropic body", lambda: convert_rows.rows("anthropic"), 60, 3.0, convert_rows.check
    ),
    "convert-gemini": Bench(
        "Convert: OpenAI body → Gemini body", lambda: convert_rows.rows("gemini"), 60, 3.0, convert_rows.check
    ),
    "stream": Bench("Stream: 20,000 OpenAI chunks → final reply", stream_rows.rows, 15, 6.0, stream_rows.check, True),
    "agent-loop": Bench(
        "Agent: 10 turns \u00d7 2 parallel calls, 5 trivial async tools",
        lambda: agent_rows.rows("loop"),
        60,
        4.0,
        agent_rows.check_for("loop"),
    ),
    "agent-sleep": Bench(
        "Agent: one turn of 4 low-risk tools sleeping 0.1 s",
        lambda: agent_rows.rows("sleep"),
        9,
        2.0,
        agent_rows.check_for("sleep"),
    ),
    "text": Bench("Text fallback: parse_tool_calls throughput", text_rows.text_rows, 3, 6.0),
    "cache": Bench("Cache: grep over a 100 MB tool output", text_rows.cache_rows, 7, 3.0, None, True),
}
GROUPS = {
    "import": ["import"],
    "convert": ["convert-anthropic", "convert-gemini"],
    "stream": ["stream"],
    "agent": ["agent-loop", "agent-sleep"],
    "text": ["text"],
    "cache": ["cache"],
}


def _spec(bench: str, row: str) -> RowSpec:
    specs = BENCHES[bench].rows() if bench in BENCHES else import_rows.rows()
    if bench == "stream" and row.startswith("toolwire@"):
        return RowSpec(row, "toolwire", "", stream_rows.toolwire_at(int(row.split("@")[1])))
    return next(s for s in specs if s.name == row)


def run_bench(key: str, quick: bool) -> list[Row]:
    bench = BENCHES[key]
    reps = 3 if quick else bench.reps
    specs = bench.rows()
    if key == "text":  # minutes-long rows: one at a time, so a row's big input is freed before the next
        out = [harness.measure(s, reps=reps, budget_s=bench.budget_s, check=bench.check) for s in specs]
    else:
        out = harness.measure_many(specs, reps=reps, budget_s=bench.budget_s / (3 if quick else 1), check=bench.check)
    for spec, row in zip(specs, out, strict=True):
        print(f"  {key}: {spec.name}: {'n/a' if not row.ok else f'{row.median * 1000:.2f} ms'}", file=sys.stderr)
        if bench.memory and row.ok and spec.kind != "info":
            mem = harness.memory_in_child(MODULE, key, spec.name)
            row.extra["peak RSS Δ MB"] = f"{mem['delta_mb']:.1f}" if "delta_mb" in mem else f"n/a ({mem['error']})"
    return out


def run_import(quick: bool) -> list[Row]:
    out = []
    for spec in import_rows.rows():
        reps = 3 if quick else import_rows.REPS.get(spec.name, import_rows.DEFAULT_REPS)
        out.append(harness.measure(spec, reps=reps, budget_s=30.0, min_reps=3))
        print(
            f"  import: {spec.name}: {'n/a' if not out[-1].ok else f'{out[-1].median * 1000:.0f} ms'}", file=sys.stderr
        )
    bare = out[0]
    if bare.ok:
        base = bare.median
        for row in out[1:]:
            row.times = [t - base for t in row.times]
    return out


def stream_memory_scaling() -> str:
    """toolwire's peak RSS growth at 5,000, 10,000 and 20,000 chunks (linear memory shows as ≈ 1:2:4)."""
    parts = []
    for n in (5_000, 10_000, 20_000):
        mem = harness.memory_in_child(MODULE, "stream", f"toolwire@{n}")
        parts.append(f"{n:,} chunks: {mem['delta_mb']:.1f} MB" if "delta_mb" in mem else f"{n:,}: n/a")
    return "toolwire peak RSS Δ by stream length (events kept): " + "; ".join(parts)


def text_columns(rows: list[Row]) -> None:
    one_mb: dict[str, float] = {}
    for row in rows:
        if not row.ok or row.kind == "floor":
            if row.ok:
                row.extra["MB/s"] = f"{text_rows.text_sizes(row.name) / row.median:.1f}"
            continue
        kind, size = row.name.split()[0], text_rows.text_sizes(row.name)
        speed = size / row.median
        one_mb.setdefault(kind, speed) if size == 1 else None
        row.extra["MB/s"] = f"{speed:.2f}"
        row.extra["vs 1 MB"] = f"{speed / one_mb[kind]:.2f}" if kind in one_mb else "n/a"


# targets


def _by(rows: list[Row], name: str) -> Row | None:
    return next((r for r in rows if r.name == name and r.ok), None)


def targets(results: dict[str, list[Row]]) -> list[tuple[str, str, bool | None]]:
    out: list[tuple[str, str, bool | None]] = []

    def add(label: str, value: float | None, limit: float, fmt: str = "{:.2f}\u00d7") -> None:
        out.append((label, "n/a" if value is None else fmt.format(value), None if value is None else value <= limit))

    if "import" in results:
        tw = _by(results["import"], "toolwire")
        add("Import: toolwire ≤ 100 ms", tw.median * 1000 if tw else None, 100, "{:.0f} ms")
        agent = _by(results["import"], "toolwire.agent")
        add("Import: toolwire.agent ≤ 80 ms", agent.median * 1000 if agent else None, 80, "{:.0f} ms")
        add(
            "Import: toolwire ≤ 0.5\u00d7 langchain_core",
            harness.ratio(results["import"], "toolwire", "langchain_core"),
            0.5,
        )
    for key, target in (("convert-anthropic", "Anthropic"), ("convert-gemini", "Gemini")):
        if key in results:
            add(f"Convert → {target}: ≤ 0.6\u00d7 floor", harness.ratio(results[key], "toolwire", "floor"), 0.6)
    if "stream" in results:
        add("Stream: ≤ 3\u00d7 floor", harness.ratio(results["stream"], "toolwire", "floor"), 3)
        nulls = harness.ratio(results["stream"], "toolwire (null keys)", "toolwire")
        add("Stream with null keys: ≤ 2\u00d7 the toolwire row", nulls, 2)
    if "agent-loop" in results:
        add("Agent loop: ≤ 10\u00d7 floor", harness.ratio(results["agent-loop"], "toolwire", "floor"), 10)
    if "agent-sleep" in results:
        tw = _by(results["agent-sleep"], "toolwire")
        add("Agent: 4 \u00d7 sleep(0.1 s) in one turn ≤ 105 ms", tw.median * 1000 if tw else None, 105, "{:.1f} ms")
    if "text" in results:
        for kind in ("corpus", "adversarial"):
            small, big = _by(results["text"], f"{kind} 1 MB"), _by(results["text"], f"{kind} 16 MB")
            value = (small.median * 16) / big.median if small and big else None  # MB/s(16) / MB/s(1)
            out.append(
                (
                    f"Text fallback linear ({kind}: MB/s at 16 MB ÷ at 1 MB ≥ 0.8)",
                    "n/a" if value is None else f"{value:.2f}",
                    None if value is None else value >= 0.8,
                )
            )
    return out


def render_targets(items: list[tuple[str, str, bool | None]]) -> str:
    lines = ["### Targets (median ratios)", "", "| target | measured | met |", "|---|---|---|"]
    lines += [f"| {label} | {value} | {'yes' if ok else 'n/a' if ok is None else 'NO'} |" for label, value, ok in items]
    return "\n".join(lines)


def profile(bench: str, row: str) -> None:
    spec = _spec(bench, row)
    prepare, work = spec.make()
    work(prepare() if prepare else None)
    arg = prepare() if prepare else None
    try:
        from pyinstrument import Profiler
    except ImportError:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.runcall(work, arg)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
        return
    profiler = Profiler(interval=0.0002)
    profiler.start()
    work(arg)
    profiler.stop()
    print(profiler.output_text(unicode=True, color=False, show_all=False))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="import,convert,stream,agent,text,cache")
    parser.add_argument("--quick", action="store_true", help="3 runs per row (a smoke test, not a measurement)")
    parser.add_argument("--json", help="also write the medians (seconds) to this file")
    parser.add_argument("--profile", nargs=2, metavar=("BENCH", "ROW"))
    parser.add_argument("--child-memory", nargs=2, metavar=("BENCH", "ROW"))
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    if args.child_memory:
        print(json.dumps(harness.child_memory(_spec(*args.child_memory))))
        return 0
    if args.profile:
        profile(*args.profile)
        return 0
    started = time.perf_counter()
    print(
        f"# toolwire benchmarks\n\nPython {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs. {harness.versions(PACKAGES)}.\n"
    )
    results: dict[str, list[Row]] = {}
    for group in args.only.split(","):
        for key in GROUPS[group.strip()]:
            if key == "import":
                results[key] = run_import(args.quick)
                print(harness.render("Import: fresh interpreter, minus a bare start", results[key], floor=None), "\n")
                continue
            results[key] = run_bench(key, args.quick)
            floor: str | None = "floor"
            if key == "text":
                text_columns(results[key])
                floor = None
            print(
                harness.render(
                    BENCHES[key].title,
                    results[key],
                    floor=floor,
                    baseline=None if key in ("text", "cache") else "toolwire",
                )
            )
            if key == "stream":
                print("\n" + stream_memory_scaling())
            print()
    print(render_targets(targets(results)))
    print(f"\nTotal {time.perf_counter() - started:.0f} s.")
    if args.json:
        medians = {
            k: {r.name: (statistics.median(r.times) if r.ok else None) for r in rows} for k, rows in results.items()
        }
        with open(args.json, "w") as f:
            json.dump(medians, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
