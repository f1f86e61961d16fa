"""The gateway's numbers for dashboards: `GET /metrics` in the Prometheus text format.

Built on `prometheus-client` (the `serve` extra), in a registry of the app's own, so two apps
in one process never mix their counts. With several worker processes (`toolwire serve
--workers N`) the CLI points `PROMETHEUS_MULTIPROC_DIR` at a fresh directory before the
workers start: each worker writes its values there and any worker's `/metrics` answers with
the sum over all of them (the library's multiprocess mode).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

__all__ = ["MULTIPROCESS_ENV", "GatewayMetrics", "Outcome", "gateway_metrics"]

MULTIPROCESS_ENV = "PROMETHEUS_MULTIPROC_DIR"
_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


@dataclass(slots=True, kw_only=True)
class Outcome:
    """What one request came to, as the metrics count it."""

    protocol: str
    route: str
    target: str
    status: int
    seconds: float
    first_byte: float | None = None
    tokens: tuple[int | None, int | None] = (None, None)
    failures: tuple[tuple[str, int], ...] = ()
    fallbacks: tuple[str, ...] = ()


def gateway_metrics() -> GatewayMetrics | None:
    """The app's metrics, or `None` without prometheus-client (an app embedded without the extra)."""
    try:
        return GatewayMetrics()
    except ModuleNotFoundError:
        return None


class GatewayMetrics:
    """Requests, latency, time to first byte, tokens, upstream errors, fallbacks, open streams."""

    def __init__(self) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = CollectorRegistry()
        self._children: dict[tuple[Any, tuple[str, ...]], Any] = {}
        self._multiprocess = bool(os.environ.get(MULTIPROCESS_ENV))
        by_target = ["protocol", "route", "target"]
        self.requests = Counter(
            "toolwire_gateway_requests",
            "Requests answered, by client protocol, route, target and HTTP status.",
            [*by_target, "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "toolwire_gateway_request_duration_seconds",
            "Seconds from a request's arrival to the end of its reply.",
            by_target,
            buckets=_SECONDS,
            registry=self.registry,
        )
        self.first_byte = Histogram(
            "toolwire_gateway_time_to_first_byte_seconds",
            "Seconds from a request's arrival to the first byte of its reply body.",
            by_target,
            buckets=_SECONDS,
            registry=self.registry,
        )
        self.tokens = Counter(
            "toolwire_gateway_tokens",
            "Tokens as the upstreams reported them, in (prompt) and out (completion).",
            ["route", "target", "direction"],
            registry=self.registry,
        )
        self.upstream_errors = Counter(
            "toolwire_gateway_upstream_errors",
            "Upstream failures, by route, target and the status the gateway gave them.",
            ["route", "target", "status"],
            registry=self.registry,
        )
        self.fallbacks = Counter(
            "toolwire_gateway_fallbacks",
            "Requests a failing target handed to the route's next one.",
            ["route", "from_target"],
            registry=self.registry,
        )
        self.open_streams = Gauge(
            "toolwire_gateway_open_streams",
            "Streamed replies being sent right now.",
            ["protocol"],
            multiprocess_mode="livesum",
            registry=self.registry,
        )

    def record(self, outcome: Outcome) -> None:
        """Count one finished request."""
        labels = (outcome.protocol, outcome.route, outcome.target)
        self._child(self.requests, *labels, str(outcome.status)).inc()
        self._child(self.latency, *labels).observe(outcome.seconds)
        if outcome.first_byte is not None:
            self._child(self.first_byte, *labels).observe(outcome.first_byte)
        for direction, count in zip(("in", "out"), outcome.tokens, strict=True):
            # What an upstream reports is not trusted: a negative count (which a Counter refuses,
            # after the reply went out) or a float counts nothing.
            if isinstance(count, int) and count > 0:
                self._child(self.tokens, outcome.route, outcome.target, direction).inc(count)
        for target, status in outcome.failures:
            self.upstream_errors.labels(outcome.route, target, str(status)).inc()
        for target in outcome.fallbacks:
            self.fallbacks.labels(outcome.route, target).inc()

    def streams(self, protocol: str) -> Any:
        """The gauge of streamed replies being sent in `protocol` (`inc` as one starts, `dec` as it ends)."""
        return self._child(self.open_streams, protocol)

    def _child(self, metric: Any, *values: str) -> Any:
        """`metric.labels(*values)`, kept: `labels` checks and locks on every call.

        Every request asks for the same few: the labels are routes, targets, protocols and
        statuses, never what a client sends.
        """
        key = (metric, values)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = metric.labels(*values)
        return child

    def render(self) -> tuple[bytes, str]:
        """The text format and its content type: this process's registry, or every worker's sum."""
        from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        registry: Any = self.registry
        if self._multiprocess:
            registry = CollectorRegistry()
            MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
