"""The closing summary of a batch: counts, tokens, task-time percentiles, rate."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from toolwire.batch._results import TaskResult

__all__ = ["Summary"]


@dataclass(slots=True)
class Summary:
    """Running totals, updated as each result arrives."""

    skipped: int = 0
    bad_lines: int = 0
    succeeded: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    durations: list[float] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    @property
    def done(self) -> int:
        """Tasks finished in this run, failed ones included."""
        return self.succeeded + self.failed

    def add(self, result: TaskResult) -> None:
        """Count one result."""
        if result.error is None:
            self.succeeded += 1
        else:
            self.failed += 1
        self.input_tokens += result.usage.get("input_tokens") or 0
        self.output_tokens += result.usage.get("output_tokens") or 0
        self.durations.append(result.duration_s)

    def percentile(self, fraction: float) -> float:
        """The task time below which `fraction` of the tasks finished (nearest rank)."""
        if not self.durations:
            return 0.0
        ordered = sorted(self.durations)
        return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]

    def lines(self) -> list[str]:
        """The summary as a few lines for a terminal."""
        elapsed = max(time.monotonic() - self.started, 1e-9)
        return [
            f"{self.done} tasks run: {self.succeeded} succeeded, {self.failed} failed; "
            f"{self.skipped} already in the output; {self.bad_lines} bad task lines skipped",
            f"tokens: {self.input_tokens} in, {self.output_tokens} out",
            f"task time: p50 {self.percentile(0.5):.3f} s, p95 {self.percentile(0.95):.3f} s; "
            f"{self.done / elapsed:.1f} tasks/s over {elapsed:.1f} s",
        ]
