"""`toolwire eval output`: the typed-output cases in each output strategy, scored.

Per case and strategy: whether the first reply validated, whether one did after the re-asks,
whether the value equals the known answer (strings compared case-folded and trimmed), and the
time the case took, re-asks included. Per strategy: those as shares, and the mean time.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.errors import OutputValidationError, ToolwireError
from toolwire.evals._output_cases import OutputCase
from toolwire.toolmodes import OutputStrategy

__all__ = ["OutputCaseResult", "StrategySummary", "run_output_case", "summarize_outputs", "write_output_chart"]


@dataclass(slots=True, kw_only=True)
class OutputCaseResult:
    """One case in one strategy.

    Attributes:
        id: The case's id.
        kind: The case's kind.
        strategy: The output strategy.
        replies: How many replies the case took (1 + re-asks).
        valid_first: The first reply validated.
        valid: A reply validated, re-asks included.
        exact: The validated value equals the known answer.
        seconds: Wall time of the case, re-asks included.
        output: The validated value as JSON (None when none validated).
        texts: What the model wrote, per reply.
        error: A failure that was not a validation error (HTTP, timeout), if any.
    """

    id: str
    kind: str
    strategy: str
    replies: int
    valid_first: bool
    valid: bool
    exact: bool
    seconds: float
    output: Any = None
    texts: list[str] = dataclasses.field(default_factory=list)
    error: str | None = None


@dataclass(frozen=True, slots=True)
class StrategySummary:
    """One strategy over the cases run."""

    strategy: str
    cases: int
    valid_first: float
    valid: float
    exact: float
    seconds_per_case: float
    replies_per_case: float


async def run_output_case(
    client: Any,
    case: OutputCase,
    strategy: OutputStrategy,
    *,
    retries: int = 2,
    max_tokens: int | None = 256,
    temperature: float | None = 0.0,
) -> OutputCaseResult:
    """Ask one case in one strategy and score the answer."""
    started = time.perf_counter()
    base: dict[str, Any] = {"id": case.id, "kind": case.kind, "strategy": strategy}
    try:
        result = await client.complete(
            case.prompt,
            output_type=case.output_type,
            output_strategy=strategy,
            output_retries=retries,
            max_tokens=max_tokens,
            temperature=temperature,
        )
    except OutputValidationError as exc:
        texts = [text for text, _ in exc.attempts]
        seconds = time.perf_counter() - started
        return OutputCaseResult(
            **base, replies=len(texts), valid_first=False, valid=False, exact=False, seconds=seconds, texts=texts
        )
    except ToolwireError as exc:
        seconds = time.perf_counter() - started
        return OutputCaseResult(
            **base, replies=1, valid_first=False, valid=False, exact=False, seconds=seconds, error=str(exc)
        )
    output = _as_json(result.output)
    texts = [*(text for text, _ in result.attempts), result.text]
    return OutputCaseResult(
        **base,
        replies=len(texts),
        valid_first=not result.attempts,
        valid=True,
        exact=_same(output, case.expected),
        seconds=time.perf_counter() - started,
        output=output,
        texts=texts,
    )


def summarize_outputs(results: Sequence[OutputCaseResult]) -> list[StrategySummary]:
    """One summary per strategy, in the order the strategies first appear."""
    out = []
    for strategy in dict.fromkeys(r.strategy for r in results):
        rows = [r for r in results if r.strategy == strategy]
        n = len(rows)
        out.append(
            StrategySummary(
                strategy=strategy,
                cases=n,
                valid_first=sum(r.valid_first for r in rows) / n,
                valid=sum(r.valid for r in rows) / n,
                exact=sum(r.exact for r in rows) / n,
                seconds_per_case=sum(r.seconds for r in rows) / n,
                replies_per_case=sum(r.replies for r in rows) / n,
            )
        )
    return out


def write_output_chart(summaries: Mapping[str, StrategySummary], path: Path, title: str) -> None:
    """A PNG: per strategy, the shares valid first time, valid after re-asks, exactly right; and time per case."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    names = list(summaries)
    figure, (shares, times) = plt.subplots(1, 2, figsize=(11.0, 4.0), dpi=100, gridspec_kw={"width_ratios": [3, 1.4]})
    width = 0.26
    for i, (label, key) in enumerate((("valid first time", "valid_first"), ("valid after re-asks", "valid"))):
        values = [100 * getattr(summaries[n], key) for n in names]
        bars = shares.bar([x + (i - 1) * width for x in range(len(names))], values, width, label=label)
        shares.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=7)
    values = [100 * summaries[n].exact for n in names]
    bars = shares.bar([x + width for x in range(len(names))], values, width, label="exact match")
    shares.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=7)
    shares.set_xticks(range(len(names)), names)
    shares.set_ylim(0, 115)
    shares.set_ylabel("% of cases")
    shares.set_title(title, fontsize=10)
    shares.legend(fontsize=8, loc="upper left", ncols=3)
    seconds = [summaries[n].seconds_per_case for n in names]
    bars = times.bar(range(len(names)), seconds, 0.6, color="gray")
    times.bar_label(bars, labels=[f"{s:.1f}" for s in seconds], fontsize=7)
    times.set_xticks(range(len(names)), names, fontsize=8)
    times.set_title("seconds per case", fontsize=10)
    figure.tight_layout()
    figure.savefig(path, format="png")
    plt.close(figure)


def _as_json(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, str):
        return isinstance(got, str) and got.strip().casefold() == expected.strip().casefold()
    if isinstance(expected, dict):
        same_keys = isinstance(got, dict) and set(got) == set(expected)
        return same_keys and all(_same(got[k], v) for k, v in expected.items())
    return type(got) is type(expected) and bool(got == expected)
