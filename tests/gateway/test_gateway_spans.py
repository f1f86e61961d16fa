"""A gateway request is one SERVER span, with the upstream's `chat` span under it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import Gateway, routes_to
from tests.otel import collected_spans
from toolwire.gateway import create_app
from toolwire.testing import ErrorReply, ScriptedServer, reply
from toolwire.types import Usage


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    yield from collected_spans()


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    with Gateway(create_app(routes_to(upstreams), keys=[GATEWAY_KEY])) as running:
        yield running


def _finished(spans: InMemorySpanExporter, name: str, count: int) -> list[ReadableSpan]:
    """The spans named `name` once `count` have ended: a server span ends just after its reply went out."""
    deadline = time.monotonic() + 30
    while True:
        found = [s for s in spans.get_finished_spans() if s.name == name]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


BODY = {"model": "to-openai", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
HEADERS = {"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"}


def test_a_translated_request_is_a_server_span_over_the_upstream_call(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], spans: InMemorySpanExporter
) -> None:
    upstreams["openai"].add(reply("Hello.", usage=Usage(input_tokens=4, output_tokens=2)))
    response = httpx2.post(gateway.url + "/v1/messages", json=BODY, headers=HEADERS, timeout=30)
    assert response.status_code == 200
    [server] = _finished(spans, "POST /v1/messages", 1)
    chat = next(s for s in spans.get_finished_spans() if s.name == "chat up-openai")
    assert server.kind is SpanKind.SERVER and chat.kind is SpanKind.CLIENT
    assert chat.parent is not None and chat.parent.span_id == server.context.span_id
    assert dict(server.attributes or {}) == {
        "http.request.method": "POST",
        "url.path": "/v1/messages",
        "http.route": "/v1/messages",
        "toolwire.gateway.protocol": "anthropic",
        "gen_ai.request.model": "to-openai",
        "toolwire.gateway.route": "to-openai",
        "toolwire.gateway.upstream": "openai:up-openai",
        "toolwire.stream": False,
        "http.response.status_code": 200,
        "toolwire.gateway.mode": "translate",
        "gen_ai.usage.input_tokens": 4,
        "gen_ai.usage.output_tokens": 2,
    }
    assert server.status.status_code is StatusCode.UNSET


def test_refused_and_failed_requests_are_spans_too(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], spans: InMemorySpanExporter
) -> None:
    assert httpx2.post(gateway.url + "/v1/messages", json=BODY, timeout=30).status_code == 401
    upstreams["openai"].add(ErrorReply(status=500, message="upstream broke"))
    upstreams["openai"].add(ErrorReply(status=500, message="upstream broke"))
    upstreams["openai"].add(ErrorReply(status=500, message="upstream broke"))
    failed = httpx2.post(gateway.url + "/v1/messages", json=BODY, headers=HEADERS, timeout=60)
    assert failed.status_code == 502
    statuses = [
        (dict(s.attributes or {})["http.response.status_code"], s.status.status_code)
        for s in _finished(spans, "POST /v1/messages", 2)
    ]
    assert statuses == [(401, StatusCode.UNSET), (502, StatusCode.ERROR)]
