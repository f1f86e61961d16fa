"""Timing, percentiles, memory, ports, versions and Markdown tables shared by every benchmark (stdlib only).

The peers' interpreter imports it too (bench/micro), so it needs nothing beyond the standard library.
Entry points run from the repository's root as `python -m bench.FOLDER.NAME`; `ROOT` is that root.

A table of rows (bench/micro) is a list of `RowSpec`s. `make()` imports what the row needs and
builds its inputs (never timed); it returns `(prepare, run)`: `prepare()` makes a fresh input for one repetition
(untimed, may be `None`), `run(input)` is the timed work. A row whose `make()` raises, or whose
result fails the benchmark's check, is shown as "n/a" with the reason, and the run goes on.
"""

from __future__ import annotations

import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

Prepare = Callable[[], Any] | None
Work = Callable[[Any], Any]


@dataclass
class RowSpec:
    name: str
    kind: str  # "toolwire", "floor", "peer" or "info"
    detail: str  # exactly which function the row calls
    make: Callable[[], tuple[Prepare, Work]]


@dataclass
class Row:
    name: str
    kind: str
    detail: str
    times: list[float] = field(default_factory=list)  # seconds
    note: str = ""  # reason for n/a, or an extra remark
    extra: dict[str, str] = field(default_factory=dict)  # extra columns (peak RSS, MB/s)

    @property
    def ok(self) -> bool:
        return bool(self.times)

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def measure(
    spec: RowSpec,
    *,
    reps: int,
    budget_s: float,
    check: Callable[[Any], str | None] | None = None,
    min_reps: int = 3,
) -> Row:
    """Warm up once (and check the result), then time up to `reps` runs or until `budget_s` is spent."""
    row = Row(spec.name, spec.kind, spec.detail)
    try:
        prepare, work = spec.make()
        result = work(prepare() if prepare else None)
        problem = check(result) if check else None
        if problem:
            row.note = f"wrong result: {problem}"
            return row
        del result
        _freeze()
        spent = 0.0
        while len(row.times) < reps and (len(row.times) < min_reps or spent < budget_s):
            arg = prepare() if prepare else None
            gc.collect()
            start = time.perf_counter()
            work(arg)
            elapsed = time.perf_counter() - start
            row.times.append(elapsed)
            spent += elapsed
    except Exception as exc:
        row.times = []
        row.note = _reason(exc)
    return row


def _freeze() -> None:
    """Move everything alive now (libraries, inputs) out of the collector's sight.

    The per-run `gc.collect()` then costs only what earlier runs left behind; without this it
    scans every object of every peer library (about a second per call with litellm loaded).
    """
    gc.collect()
    gc.freeze()


def _reason(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {os.path.basename(frame.filename)}:{frame.lineno}" if frame else ""
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text[:120]}{where}"


# memory: peak RSS (VmHWM) from /proc, reset through clear_refs so a peak is one test's own


def status_kb(key: str, pid: int | str = "self") -> int:
    """One `/proc/PID/status` figure in kB (`VmRSS`, `VmHWM`); 0 when absent. OSError when the process is gone."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def reset_peak(pid: int | str = "self") -> None:
    """Reset the process's VmHWM to its current RSS (Linux >= 4.0); OSError where that is refused."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def child_memory(spec: RowSpec) -> dict[str, Any]:
    """In a child process: build the row, reset the peak, run once; report RSS in MB.

    No warm-up run: it would leave freed memory in the allocator's arenas for the measured run
    to reuse, hiding what the work needs (imports happen in `make`, before the reset).
    """
    prepare, work = spec.make()
    arg = prepare() if prepare else None
    gc.collect()
    before = status_kb("VmRSS")
    try:
        reset_peak()
    except OSError:
        return {"error": "cannot reset the peak RSS (/proc/self/clear_refs)"}
    result = work(arg)
    peak = status_kb("VmHWM")
    del result
    return {"rss_mb": before / 1024, "peak_mb": peak / 1024, "delta_mb": (peak - before) / 1024}


def memory_in_child(module: str, bench: str, row: str, timeout: float = 300) -> dict[str, Any]:
    """Run `python -m MODULE --child-memory BENCH ROW` from the root and return what it printed (or an error)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", module, "--child-memory", bench, row],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": tail[:160]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


# plain timing, percentiles, the machine


def median_ms(work: Callable[[], Any], runs: int = 5) -> float:
    """The median wall time of `runs` calls of `work`, in ms (no warm-up, no collection between)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank `q` quantile (0.5: p50, 0.99: p99) of `values`."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def free_port() -> int:
    """A loopback port free now (a server started next binds it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def versions(packages: Sequence[str]) -> str:
    """`name version` of each installed distribution, `name (not installed)` for the others."""
    found = []
    for name in packages:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} (not installed)")
    return ", ".join(found)


# tables


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    if ms >= 100:
        return f"{ms:,.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.3f}" if ms < 1 else f"{ms:.2f}"


def _ratio(a: float, b: float) -> str:
    r = a / b
    return f"{r:.2f}\u00d7" if r < 10 else f"{r:,.1f}\u00d7"


def markdown_table(header: list[str], rows: list[list[str]], *, numbers: bool = False) -> str:
    """A Markdown table padded to its widest cells; with `numbers`, every column after the first aligned right."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "| " + " | ".join(c.rjust(w) if numbers and i else c.ljust(w) for i, (c, w) in pairs) + " |"

    return "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])


def render(title: str, rows: list[Row], *, floor: str | None = "floor", baseline: str | None = "toolwire") -> str:
    """One table: median/min/max in ms, ratio to the floor and to the toolwire row, extra columns."""
    by_name = {r.name: r for r in rows}
    refs = [(f"\u00d7 {ref}", by_name.get(ref)) for ref in (floor, baseline) if ref]
    extra_keys = list(dict.fromkeys(k for r in rows for k in r.extra))
    head = ["row", "median ms", "min ms", "max ms", *(label for label, _ in refs), *extra_keys]
    table: list[list[str]] = []
    for r in rows:
        extras = [r.extra.get(k, "") for k in extra_keys]
        if not r.ok:
            table.append([r.name, "n/a", "", "", *("" for _ in refs), *extras])
            continue
        ratios = [_ratio(r.median, ref.median) if ref and ref.ok else "n/a" for _, ref in refs]
        table.append([r.name, _ms(r.median), _ms(min(r.times)), _ms(max(r.times)), *ratios, *extras])
    lines = [f"### {title}", "", markdown_table(head, table, numbers=True), ""]
    for r in rows:
        note = f" — n/a: {r.note}" if not r.ok else (f" — {r.note}" if r.note else "")
        reps = f" ({len(r.times)} runs)" if r.ok else ""
        lines.append(f"- `{r.name}`{reps}: {r.detail}{note}")
    return "\n".join(lines)


def ratio(rows: list[Row], a: str, b: str) -> float | None:
    """median(a) / median(b), or None when either row is missing."""
    by_name = {r.name: r for r in rows}
    ra, rb = by_name.get(a), by_name.get(b)
    if not ra or not rb or not ra.ok or not rb.ok:
        return None
    return ra.median / rb.median


def measure_many(
    specs: list[RowSpec],
    *,
    reps: int,
    budget_s: float,
    check: Callable[[Any], str | None] | None = None,
    min_reps: int = 3,
) -> list[Row]:
    """Like `measure` for several rows, timed round-robin so machine load drifts hit every row alike."""
    rows = [Row(s.name, s.kind, s.detail) for s in specs]
    live: list[tuple[Row, Prepare, Work, list[float]]] = []
    for spec, row in zip(specs, rows, strict=True):
        try:
            prepare, work = spec.make()
            result = work(prepare() if prepare else None)
            problem = check(result) if check and spec.kind != "info" else None
            if problem:
                row.note = f"wrong result: {problem}"
                continue
            del result
            live.append((row, prepare, work, [0.0]))
        except Exception as exc:
            row.note = _reason(exc)
    _freeze()
    while live:
        for item in list(live):
            row, prepare, work, spent = item
            try:
                arg = prepare() if prepare else None
                gc.collect()
                start = time.perf_counter()
                work(arg)
                elapsed = time.perf_counter() - start
            except Exception as exc:
                row.times, row.note = [], _reason(exc)
                live.remove(item)
                continue
            row.times.append(elapsed)
            spent[0] += elapsed
            if len(row.times) >= reps or (len(row.times) >= min_reps and spent[0] >= budget_s):
                live.remove(item)
    return rows
