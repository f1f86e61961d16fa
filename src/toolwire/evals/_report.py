"""Per-category figures of an eval run, as a table, a JSON report and a chart.

Figures per category: accuracy (BFCL AST), the share of replies that parsed, the share of calls
valid against their tool's schema, latency p50; and the same over all cases. Cases whose request
failed (`CaseResult.failed`: the upstream was down, answered 5xx, timed out) are counted apart
and left out of every share: they say nothing about the model. Pure functions
over `CaseResult`s, except `write_chart`, which draws with matplotlib (imported on use).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from toolwire.evals._runner import CaseResult

__all__ = ["CategorySummary", "build_report", "summarize", "write_chart"]

OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class CategorySummary:
    """The figures of one category (or `overall`)."""

    category: str
    cases: int
    correct: int
    parsed: int
    calls: int
    valid_calls: int
    latency_p50_s: float
    model_s: float
    failed: int = 0

    @property
    def answered(self) -> int:
        """Cases the model answered (the request did not fail)."""
        return self.cases - self.failed

    @property
    def accuracy(self) -> float:
        """Correct cases / answered cases."""
        return self.correct / self.answered if self.answered else 0.0

    @property
    def parsed_share(self) -> float:
        """Parsed replies / answered cases."""
        return self.parsed / self.answered if self.answered else 0.0

    @property
    def valid_share(self) -> float | None:
        """Schema-valid calls / calls (None when no call was made)."""
        return self.valid_calls / self.calls if self.calls else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, the shares included."""
        return {
            **asdict(self),
            "accuracy": self.accuracy,
            "parsed_share": self.parsed_share,
            "valid_share": self.valid_share,
        }


def _summary(category: str, results: Sequence[CaseResult]) -> CategorySummary:
    answered = [r for r in results if not r.failed]
    return CategorySummary(
        category=category,
        cases=len(results),
        correct=sum(r.correct for r in results),
        parsed=sum(r.parsed for r in results),
        calls=sum(len(r.calls) for r in results),
        valid_calls=sum(r.valid_calls for r in results),
        latency_p50_s=statistics.median(r.latency_s for r in answered) if answered else 0.0,
        model_s=sum(r.latency_s for r in results),
        failed=len(results) - len(answered),
    )


def summarize(results: Sequence[CaseResult]) -> list[CategorySummary]:
    """One summary per category, in the order categories first appear, then `overall`."""
    categories = list(dict.fromkeys(r.category for r in results))
    rows = [_summary(c, [r for r in results if r.category == c]) for c in categories]
    return [*rows, _summary(OVERALL, results)] if results else rows


def build_report(meta: Mapping[str, Any], results: Sequence[CaseResult], wall_s: float, cpu_s: float) -> dict[str, Any]:
    """The JSON report of a run: `meta` (provider, model, mode, ...), timings, summaries, every case.

    `harness_overhead` is the eval process's own CPU time (requests built, replies decoded and
    scored, the progress bar) over the time spent waiting for the model: what the harness adds.
    """
    model_s = sum(r.latency_s for r in results)
    return {
        **meta,
        "wall_s": wall_s,
        "model_s": model_s,
        "harness_cpu_s": cpu_s,
        "harness_overhead": cpu_s / model_s if model_s else None,
        "summary": [s.to_dict() for s in summarize(results)],
        "results": [r.to_dict() for r in results],
    }


def _valid_share(summary: CategorySummary) -> float:
    return summary.valid_share or 0.0


_PANELS: tuple[tuple[str, Callable[[CategorySummary], float]], ...] = (
    ("BFCL AST accuracy (%)", lambda s: s.accuracy),
    ("replies parsed (%)", lambda s: s.parsed_share),
    ("calls schema-valid (%)", _valid_share),
)


def write_chart(runs: Mapping[str, Sequence[CategorySummary]], path: Path) -> None:
    """A PNG with three panels (accuracy, replies parsed, calls valid) per category, one bar per run.

    Args:
        runs: Label (e.g. a tool mode) -> that run's summaries.
        path: Where the PNG goes.
    """
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    categories = list(dict.fromkeys(s.category for rows in runs.values() for s in rows))
    width = 0.8 / max(len(runs), 1)
    figure, panels = plt.subplots(1, len(_PANELS), figsize=(5.0 * len(_PANELS), 4.0), dpi=100, squeeze=False)
    for axes, (title, figure_of) in zip(panels[0], _PANELS, strict=True):
        for i, (label, rows) in enumerate(runs.items()):
            by_category = {s.category: s for s in rows}
            xs = [c + (i - (len(runs) - 1) / 2) * width for c in range(len(categories))]
            values = [100 * figure_of(by_category[c]) if c in by_category else 0.0 for c in categories]
            bars = axes.bar(xs, values, width, label=label)
            axes.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=6)
        axes.set_xticks(range(len(categories)), categories, rotation=20, fontsize=8)
        axes.set_title(title, fontsize=10)
        axes.set_ylim(0, 110)
    panels[0][0].legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)
