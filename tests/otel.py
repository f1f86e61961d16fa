"""One in-memory span exporter for the whole test process (the global provider is set once)."""

from __future__ import annotations

from collections.abc import Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["EXPORTER", "collected_spans"]

EXPORTER = InMemorySpanExporter()


def _install_provider() -> None:
    """The global tracer provider can be set once per process: set it the first time only."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(EXPORTER))
        trace.set_tracer_provider(provider)


def collected_spans() -> Iterator[InMemorySpanExporter]:
    """For a `spans` fixture: the exporter, emptied before and after the test."""
    _install_provider()
    EXPORTER.clear()
    yield EXPORTER
    EXPORTER.clear()
