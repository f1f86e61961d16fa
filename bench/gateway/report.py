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


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def throughput_table(rows: list[Any]) -> tuple[str, dict[str, dict[str, float | None]]]:
    """Req/s and gateway CPU ms per request, whole and streamed; errors and corrupted calls."""
    figures: dict[str, dict[str, float | None]] = {}
    out = []
    for t in rows:
        f = figures[t.name] = {
            "rps": _median(t.rps),
            "rps_stream": _median(t.rps_stream),
            "cpu": _median(t.cpu),
            "cpu_stream": _median(t.cpu_stream),
            "first": t.first,
        }
        corrupted = f"{t.corrupted} of {t.checked}" if t.checked else ""
        out.append(
            [
                t.name,
                _rate(f["rps"]),
                _rate(f["rps_stream"]),
                _cpu(f["cpu"]),
                _cpu(f["cpu_stream"]),
                str(t.errors),
                corrupted,
                _ms(t.first),
                ", ".join(f"{r:,.0f}" for r in t.rps) + " / " + ", ".join(f"{r:,.0f}" for r in t.rps_stream),
            ]
        )
    header = [
        "row",
        "req/s whole",
        "req/s streamed",
        "CPU ms/req whole",
        "CPU ms/req streamed",
        "errors",
        "corrupted calls",
        "first request ms",
        "runs (whole / streamed)",
    ]
    return table(header, out), figures


def _rate(value: float | None) -> str:
    return "fails" if not value else f"{value:,.0f}"


def _cpu(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def peers_table(rows: list[Any], lat: dict[str, Any], tput: dict[str, dict[str, float | None]]) -> str:
    """Each scenario with every gateway side by side: added p50, req/s and CPU per request (whole; streamed)."""
    scenarios = ("openai→openai", "anthropic→openai", "openai→anthropic")
    gateways = ("litellm", "portkey", "toolwire")
    out = []
    for scenario in scenarios:
        for stream in (False, True):
            direct = DIRECT if scenario != "openai→anthropic" else f"{DIRECT}, Messages API"
            cells = [
                f"{scenario}, {'streamed' if stream else 'whole'}",
                _rate(tput.get(direct, {}).get(_k("rps", stream))),
            ]
            for gateway in gateways:
                name = f"{gateway} {scenario}"
                if name not in tput:
                    cells.append("not run")
                    continue
                f = tput[name]
                rps, cpu = f.get(_k("rps", stream)), f.get(_k("cpu", stream))
                added = None if stream else lat.get(name, {}).get("added_p50")
                shown = [] if added is None else [f"+{added * 1000:.2f} ms"]
                shown += ["fails"] if not rps else [f"{rps:,.0f} req/s", f"{cpu:.2f} ms CPU" if cpu else "CPU n/a"]
                cells.append(" / ".join(shown))
            out.append(cells)
    header = ["scenario", "direct req/s", *(f"{g} (added p50 / req/s / CPU per request)" for g in gateways)]
    return table(header, out)


def _k(key: str, stream: bool) -> str:
    return f"{key}_stream" if stream else key


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


def targets_table(
    lat: dict[str, Any], ttfb: dict[str, Any], tput: dict[str, dict[str, float | None]], rows: list[Any]
) -> str:
    def verdict(value: float | None, ok: bool) -> str:
        return "n/a" if value is None else ("yes" if ok else "no")

    items = []
    cpu_targets = (
        ("toolwire openai→anthropic", "cpu_stream", 0.5, "streamed OpenAI → Anthropic"),
        ("toolwire anthropic→openai", "cpu_stream", 0.5, "streamed Anthropic → OpenAI"),
        ("toolwire openai→openai", "cpu", 0.25, "pass-through, whole"),
        ("toolwire openai→openai", "cpu_stream", 0.25, "pass-through, streamed"),
        ("toolwire openai→anthropic", "cpu", 0.4, "whole translation, OpenAI → Anthropic"),
        ("toolwire anthropic→openai", "cpu", 0.4, "whole translation, Anthropic → OpenAI"),
    )
    for name, key, most, what in cpu_targets:
        value = tput.get(name, {}).get(key)
        shown = "n/a" if value is None else f"{value:.2f} ms"
        items.append(
            [f"{what}: ≤ {most:g} ms CPU per request", shown, verdict(value, value is not None and value <= most)]
        )
    for name in ("toolwire openai→openai", "toolwire anthropic→openai", "toolwire openai→anthropic"):
        for key in ("rps", "rps_stream"):
            mine = tput.get(name, {}).get(key)
            ran = [tput[peer] for p in ("litellm", "portkey") if (peer := name.replace("toolwire", p)) in tput]
            best = max((v for f in ran if (v := f.get(key))), default=None)
            lost = "peers not run" if not ran else "peers fail"
            shown = "n/a" if mine is None else f"{mine:,.0f} vs {best:,.0f}" if best else f"{mine:,.0f} ({lost})"
            ok = mine is not None and (best is None or mine > best)
            items.append(
                [
                    f"{name} ({'streamed' if key == 'rps_stream' else 'whole'}): ahead of every peer",
                    shown,
                    verdict(mine, ok),
                ]
            )
    bad = sum(t.corrupted for t in rows if t.name.startswith("toolwire"))
    items.append(["toolwire: 0 corrupted calls", f"{bad} corrupted", verdict(1, bad == 0)])
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
