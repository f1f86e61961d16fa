"""Tables and targets of bench/gateway/vs_litellm.py (Markdown, like bench/micro/vs_peers.py's)."""

from __future__ import annotations

import statistics
from typing import Any

from bench.gateway.processes import DIRECT_NAME as DIRECT
from bench.harness import markdown_table as table
from bench.harness import percentile


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1000:.2f}"


def percentiles(rows: list[Any], attr: str) -> dict[str, dict[str, float]]:
    """p50/p99 per row of `attr` (`latency` or `first_byte`), and the added time over the direct row."""
    found: dict[str, dict[str, float]] = {}
    for t in rows:
        values = getattr(t, attr)
        if values:
            found[t.name] = {"p50": percentile(values, 0.5), "p99": percentile(values, 0.99), "n": len(values)}
    base = found.get(DIRECT)
    for name, figures in found.items():
        if base is not None and name != DIRECT:
            figures["added_p50"] = figures["p50"] - base["p50"]
            figures["added_p99"] = figures["p99"] - base["p99"]
    return found


def latency_table(rows: list[Any], attr: str) -> tuple[str, dict[str, dict[str, float]]]:
    figures = percentiles(rows, attr)
    lite = {r.name: figures.get(r.name.replace("toolwire", "litellm"), {}).get("added_p50") for r in rows}
    out = []
    for t in rows:
        f = figures.get(t.name)
        if f is None:
            out.append([t.name, "n/a (see below)", "", "", "", "", ""])
            continue
        peer = lite.get(t.name) if t.name.startswith("toolwire") else None
        ratio = f"{peer / f['added_p50']:.1f}\u00d7" if peer and f.get("added_p50", 0) > 0 else ""
        out.append(
            [
                t.name,
                _ms(f["p50"]),
                _ms(f["p99"]),
                _ms(f.get("added_p50")),
                _ms(f.get("added_p99")),
                ratio,
                str(int(f["n"])),
            ]
        )
    header = ["row", "p50 ms", "p99 ms", "added p50 ms", "added p99 ms", "litellm ÷ toolwire (added p50)", "n"]
    return table(header, out), figures


def throughput_table(rows: list[Any]) -> tuple[str, dict[str, float]]:
    rps = {t.name: statistics.median(t.rps) for t in rows if t.rps}
    out = []
    for t in rows:
        if t.name not in rps:
            out.append([t.name, "n/a (see below)", str(t.errors), "", ""])
            continue
        peer = rps.get(t.name.replace("toolwire", "litellm")) if t.name.startswith("toolwire") else None
        ratio = f"{rps[t.name] / peer:.1f}\u00d7" if peer else ""
        runs = ", ".join(f"{r:,.0f}" for r in t.rps)
        out.append([t.name, f"{rps[t.name]:,.0f}", str(t.errors), ratio, runs])
    return table(["row", "req/s (median)", "errors", "\u00d7 litellm", "runs"], out), rps


def streams_table(rows: list[Any]) -> str:
    out = []
    for t in rows:
        s = t.streams
        if not s:
            continue
        rss = f"{s['rss_before']:.0f} → {s['rss_peak']:.0f}" if "rss_peak" in s else ""
        out.append(
            [
                t.name,
                str(s["ok"]),
                str(s["errors"]),
                f"{s['wall']:.2f}",
                str(s["upstream_peak"]),
                rss,
                str(s.get("first_error", ""))[:120],
            ]
        )
    header = [
        "row",
        "ok",
        "errors",
        "wall s",
        "upstream streams open at once (peak)",
        "gateway RSS MB (before → peak)",
        "first error",
    ]
    return table(header, out)


def targets_table(lat: dict[str, Any], ttfb: dict[str, Any], rps: dict[str, float], rows: list[Any]) -> str:
    def verdict(value: float | None, ok: bool) -> str:
        return "n/a" if value is None else ("yes" if ok else "no")

    items = []
    for name in ("toolwire openai→openai", "toolwire anthropic→openai"):
        added = lat.get(name, {}).get("added_p50")
        items.append(
            [f"{name}: added p50 ≤ 1 ms", _ms(added) + " ms", verdict(added, added is not None and added <= 0.001)]
        )
        first = ttfb.get(name, {}).get("added_p50")
        items.append(
            [
                f"{name}: first byte ≤ 1 ms after the upstream's",
                _ms(first) + " ms",
                verdict(first, first is not None and first <= 0.001),
            ]
        )
        peer = rps.get(name.replace("toolwire", "litellm"))
        ratio = rps[name] / peer if peer and name in rps else None
        items.append(
            [
                f"{name}: ≥ 5\u00d7 LiteLLM's req/s",
                "n/a" if ratio is None else f"{ratio:.1f}\u00d7",
                verdict(ratio, ratio is not None and ratio >= 5),
            ]
        )
    for t in rows:
        if t.streams and t.name.startswith("toolwire"):
            items.append(
                [
                    f"{t.name}: {t.streams['ok'] + t.streams['errors']} streams, 0 errors",
                    f"{t.streams['errors']} errors",
                    verdict(1, t.streams["errors"] == 0),
                ]
            )
    return table(["target", "measured", "met"], items)
