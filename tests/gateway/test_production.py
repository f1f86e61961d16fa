"""The gateway in production: `/metrics` in the Prometheus format, `/health` while draining,
and `toolwire serve` finishing every stream in flight on SIGTERM (real subprocesses)."""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.gateway.conftest import Gateway
from tests.gateway.serve_process import ServeProcess
from toolwire.gateway import Route, Target, create_app
from toolwire.testing import Delay, ErrorReply, ScriptedServer, reply
from toolwire.types import Request, Usage

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


Key = tuple[str, tuple[tuple[str, str], ...]]


def _samples(text: str) -> dict[Key, float]:
    """Every sample of a scrape, keyed by `_key`."""
    return {
        _key(sample.name, **sample.labels): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _key(name: str, **labels: str) -> Key:
    return name, tuple(sorted(labels.items()))


def test_metrics_count_requests_latency_tokens_errors_fallbacks_and_streams() -> None:
    with ScriptedServer() as first, ScriptedServer() as second:
        first.add(ErrorReply(status=429, message="busy", headers={"retry-after": "60"}))
        used = Usage(input_tokens=11, output_tokens=7)
        second.add(reply("one", usage=used), reply("two", usage=used))
        a = Target("openai-compatible:a", base_url=first.base_url + "/v1")
        b = Target("openai-compatible:b", base_url=second.base_url + "/v1")
        with Gateway(create_app([Route("*", targets=[a, b])], keys=["gk"])) as gateway:
            with httpx2.Client(base_url=gateway.url, timeout=30, headers={"authorization": "Bearer gk"}) as http:
                assert http.post("/v1/chat/completions", json=BODY).status_code == 200
                with http.stream("POST", "/v1/chat/completions", json=BODY | {"stream": True}) as streamed:
                    assert streamed.status_code == 200 and streamed.read()
                assert (
                    http.post("/v1/chat/completions", json=BODY, headers={"authorization": "Bearer no"}).status_code
                    == 401
                )
                scrape = httpx2.get(gateway.url + "/metrics", timeout=30)
    assert scrape.status_code == 200 and scrape.headers["content-type"].startswith("text/plain")
    samples = _samples(scrape.text)
    served = {"protocol": "openai", "route": "*", "target": "openai-compatible:b"}
    assert samples[_key("toolwire_gateway_requests_total", **served, status="200")] == 2
    refused = {"protocol": "openai", "route": "-", "target": "-", "status": "401"}
    assert samples[_key("toolwire_gateway_requests_total", **refused)] == 1
    assert samples[_key("toolwire_gateway_request_duration_seconds_count", **served)] == 2
    assert samples[_key("toolwire_gateway_time_to_first_byte_seconds_count", **served)] == 2
    route_b = {"route": "*", "target": "openai-compatible:b"}
    # The whole reply's usage; a passed-through stream's bytes are not parsed for it.
    assert samples[_key("toolwire_gateway_tokens_total", **route_b, direction="in")] == 11
    assert samples[_key("toolwire_gateway_tokens_total", **route_b, direction="out")] == 7
    errors = {"route": "*", "target": "openai-compatible:a", "status": "429"}
    assert samples[_key("toolwire_gateway_upstream_errors_total", **errors)] == 1
    assert samples[_key("toolwire_gateway_fallbacks_total", route="*", from_target="openai-compatible:a")] == 1
    assert samples[_key("toolwire_gateway_open_streams", protocol="openai")] == 0


def test_health_says_draining_with_503() -> None:
    app = create_app([Route("*", "openai:m")])
    with Gateway(app) as gateway:
        assert httpx2.get(gateway.url + "/health", timeout=30).json() == {"status": "ok", "routes": 1}
        app.state.gateway.draining = True
        answer = httpx2.get(gateway.url + "/health", timeout=30)
    assert (answer.status_code, answer.json()) == (503, {"status": "draining", "routes": 1})


ROUTE = """\
[[route]]
model = "*"
target = "openai-compatible:up"
base_url = "{url}/v1"
"""


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[object]:
    started: list[ServeProcess] = []

    def start(upstream: ScriptedServer, *flags: str) -> tuple[subprocess.Popen[str], str]:
        config = tmp_path / "toolwire.toml"
        config.write_text(ROUTE.format(url=upstream.base_url), encoding="utf-8")
        gateway = ServeProcess(config, *flags, log=tmp_path / f"serve-{len(started)}.log")
        started.append(gateway)
        gateway.start()
        return gateway.process, gateway.url

    yield start
    for gateway in started:
        gateway.stop(signal.SIGKILL, timeout=30)


def test_sigterm_lets_50_open_streams_finish_then_exits_0(serve: object) -> None:
    arrived = threading.Semaphore(0)

    def slow(request: Request) -> Delay:
        arrived.release()
        return Delay(seconds=2.0, then=reply(f"whole answer for {request.messages[-1].content}"))  # type: ignore[union-attr]

    with ScriptedServer(slow) as upstream:
        process, url = serve(upstream)  # type: ignore[operator]
        results: dict[int, str] = {}

        def stream(number: int) -> None:
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": f"q{number}"}]}
            with httpx2.stream("POST", url + "/v1/chat/completions", json=body, timeout=60) as answer:
                results[number] = answer.read().decode()

        threads = [threading.Thread(target=stream, args=(n,)) for n in range(50)]
        for thread in threads:
            thread.start()
        for _ in range(50):
            assert arrived.acquire(timeout=60)  # every stream is open at the upstream
        process.send_signal(signal.SIGTERM)
        for thread in threads:
            thread.join(60)
        assert process.wait(60) == 0
    assert sorted(results) == list(range(50))
    for number, text in results.items():
        assert text.rstrip().endswith("data: [DONE]"), text[-200:]
        assert f"q{number}" in text.replace('"', "")
    with pytest.raises(httpx2.TransportError):
        httpx2.get(url + "/health", timeout=5)  # nothing listens any more


def test_two_workers_report_the_sum_of_their_requests(serve: object) -> None:
    with ScriptedServer(lambda request: "ok") as upstream:
        process, url = serve(upstream, "--workers", "2")  # type: ignore[operator]
        with httpx2.Client(base_url=url, timeout=30) as http:
            for _ in range(40):
                assert http.post("/v1/chat/completions", json=BODY).status_code == 200
        counts = set()
        for _ in range(6):  # whichever worker answers the scrape, it reports both
            with httpx2.Client(base_url=url, timeout=30) as scraper:
                samples = _samples(scraper.get("/metrics").text)
            labels = {"protocol": "openai", "route": "*", "target": "openai-compatible:up", "status": "200"}
            key = _key("toolwire_gateway_requests_total", **labels)
            counts.add(samples[key])
        process.send_signal(signal.SIGTERM)
        assert process.wait(60) == 0
    assert counts == {40}
