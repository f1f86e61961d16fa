"""Routes with several targets: fallback before the first byte, balancing by weight, cool-downs.

Every upstream is a real `ScriptedServer` on 127.0.0.1 that fails on cue; the gateway runs on
a real socket (`tests/gateway/conftest.py`).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import httpx2
import pytest

from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, Target, create_app
from toolwire.testing import DropStream, ErrorReply, RawReply, ScriptedServer, reply

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def first() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def second() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


def _openai(server: ScriptedServer, name: str, weight: float = 1.0) -> Target:
    return Target(f"openai-compatible:{name}", base_url=server.base_url + "/v1", weight=weight)


def _anthropic(server: ScriptedServer, name: str) -> Target:
    return Target(f"anthropic:{name}", base_url=server.base_url, api_key_env="TOOLWIRE_TEST_TARGETS_KEY")


@pytest.fixture(autouse=True)
def _anthropic_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_TEST_TARGETS_KEY", "k")


def _gateway(*targets: Target, strategy: str = "fallback", cooldown: float = 30.0) -> Gateway:
    route = Route("*", strategy=strategy, cooldown=cooldown, targets=list(targets))  # type: ignore[arg-type]
    return Gateway(create_app([route]))


def _text(response: httpx2.Response) -> str:
    return str(response.json()["choices"][0]["message"]["content"])


def test_a_429_hands_the_request_to_the_next_target_and_the_first_rests(
    first: ScriptedServer, second: ScriptedServer
) -> None:
    first.add(ErrorReply(status=429, message="slow down", headers={"retry-after": "60"}))
    second.add(reply("from the second"), reply("again the second"))
    with _gateway(_openai(first, "a"), _anthropic(second, "b")) as gateway:
        answer = httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=30)
        again = httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=30)
    assert (answer.status_code, _text(answer), answer.headers["x-toolwire-target"]) == (
        200,
        "from the second",
        "anthropic:b",
    )
    assert (again.status_code, _text(again), again.headers["x-toolwire-target"]) == (
        200,
        "again the second",
        "anthropic:b",
    )
    assert first.request_count == 1  # resting for its Retry-After: not asked again
    assert second.requests[0].request is not None and second.requests[0].request.model == "b"


def test_a_5xx_an_unreachable_target_and_a_stream_fall_back_too(first: ScriptedServer, second: ScriptedServer) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    unreachable = Target("openai-compatible:gone", base_url=f"http://127.0.0.1:{port}/v1")
    first.add(ErrorReply(status=503, message="overloaded"))
    second.add(reply("streamed from the second"))
    with _gateway(unreachable, _openai(first, "a"), _openai(second, "b")) as gateway:
        with httpx2.stream("POST", gateway.url + "/v1/chat/completions", json=BODY | {"stream": True}) as answer:
            text = "".join(answer.iter_text())
            target = answer.headers["x-toolwire-target"]
    assert (answer.status_code, target) == (200, "openai-compatible:b")
    assert text.rstrip().endswith("data: [DONE]")
    assert "streamed from the second" not in text  # it streams in pieces...
    assert "".join(_deltas(text)) == "streamed from the second"  # ...that add up to the reply
    assert (first.request_count, second.request_count) == (1, 1)


def _deltas(sse: str) -> list[str]:
    pieces = []
    for line in sse.splitlines():
        if line.startswith("data: {"):
            choices = json.loads(line[6:]).get("choices") or [{}]
            pieces.append(choices[0].get("delta", {}).get("content") or "")
    return pieces


def test_a_stream_cut_after_its_first_bytes_is_an_error_not_a_second_answer(
    first: ScriptedServer, second: ScriptedServer
) -> None:
    first.add(DropStream(response="a long answer that never ends", after=3, clean=False))
    second.add(reply("must not be asked"))
    with _gateway(_openai(first, "a"), _openai(second, "b")) as gateway:
        with httpx2.stream("POST", gateway.url + "/v1/chat/completions", json=BODY | {"stream": True}) as answer:
            text = "".join(answer.iter_text())
    assert (answer.status_code, answer.headers["x-toolwire-target"]) == (200, "openai-compatible:a")
    assert '"error"' in text and "must not be asked" not in text
    assert second.request_count == 0


def test_when_every_target_fails_the_client_gets_the_last_error_in_its_protocol(
    first: ScriptedServer, second: ScriptedServer
) -> None:
    first.add(ErrorReply(status=500, message="first broke"))
    second.add(ErrorReply(status=502, message="second broke"))
    with _gateway(_openai(first, "a"), _openai(second, "b")) as gateway:
        answer = httpx2.post(gateway.url + "/v1/messages", json=BODY | {"max_tokens": 5}, timeout=30)
    assert answer.status_code == 502
    body = answer.json()
    assert body["type"] == "error" and "second broke" in body["error"]["message"]
    assert (first.request_count, second.request_count) == (1, 1)


def test_a_client_error_is_not_retried_on_another_target(first: ScriptedServer, second: ScriptedServer) -> None:
    first.add(ErrorReply(status=400, message="bad request"))
    with _gateway(_openai(first, "a"), _openai(second, "b")) as gateway:
        answer = httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=30)
    assert answer.status_code == 400
    assert second.request_count == 0


def test_balanced_targets_share_400_requests_by_weight(first: ScriptedServer, second: ScriptedServer) -> None:
    first.add(*["one"] * 400)
    second.add(*["two"] * 400)
    counts = {"openai-compatible:a": 0, "openai-compatible:b": 0}
    with _gateway(_openai(first, "a", weight=3), _openai(second, "b", weight=1), strategy="balance") as gateway:
        with httpx2.Client(base_url=gateway.url, timeout=30) as http:
            for _ in range(400):
                answer = http.post("/v1/chat/completions", json=BODY)
                counts[answer.headers["x-toolwire-target"]] += 1
    assert counts == {"openai-compatible:a": 300, "openai-compatible:b": 100}


def test_a_target_that_keeps_failing_rests_then_gets_traffic_again(
    first: ScriptedServer, second: ScriptedServer
) -> None:
    a, b = _openai(first, "a"), _openai(second, "b")
    route = Route("*", cooldown=1.0, targets=[a, b])
    first.add(*[ErrorReply(status=500)] * 3, reply("a is back"))
    second.add(*["b"] * 4)
    with Gateway(create_app([route])) as gateway, httpx2.Client(base_url=gateway.url, timeout=30) as http:
        served = [http.post("/v1/chat/completions", json=BODY).headers["x-toolwire-target"] for _ in range(4)]
        assert route.candidates() == [b, a]  # resting after three failures in a row
        time.sleep(1.2)
        back = http.post("/v1/chat/completions", json=BODY)
    assert served == ["openai-compatible:b"] * 4
    assert first.request_count == 4 and _text(back) == "a is back"
    assert a.failures == 0  # its success started the count again


def test_route_tables_with_targets_build_routes() -> None:
    from toolwire.config import RouteSettings, TargetSettings

    settings = RouteSettings(
        model="*",
        strategy="balance",
        cooldown=5,
        targets=(TargetSettings("openai:a", weight=2), TargetSettings("ollama:b", tool_mode="text")),
    )
    route = Route.of(settings)
    assert [(t.target, t.weight, t.tool_mode) for t in route.targets] == [
        ("openai:a", 2, "native"),
        ("ollama:b", 1.0, "text"),
    ]
    assert (route.target, route.strategy, route.cooldown) == ("openai:a", "balance", 5)
    with pytest.raises(ValueError, match=r"weight must be a number from more than 0 to 1e\+06, got 0"):
        Target("openai:a", weight=0)
    with pytest.raises(ValueError, match="strategy must be one of"):
        Route("*", "openai:a", strategy="random")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("retry_after", "rest", "handed_on"),
    [("1e400", 600.0, "600"), ("inf", 600.0, "600"), ("0", None, None), ("nan", None, None), ("-5", None, None)],
)
def test_a_retry_after_out_of_range_neither_benches_a_target_nor_turns_its_cool_down_off(
    first: ScriptedServer, retry_after: str, rest: float | None, handed_on: str | None
) -> None:
    first.add(*[ErrorReply(status=429, message="busy", headers={"retry-after": retry_after})] * 3)
    with _gateway(_openai(first, "a"), cooldown=45.0) as gateway:
        target = gateway.app.state.gateway.router.routes[0].targets[0]
        answers = [httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=30) for _ in range(3)]
        resting = target.resting_until - time.monotonic()
    assert [a.status_code for a in answers] == [429] * 3
    assert answers[0].headers.get("retry-after") == handed_on
    # Capped at ten minutes; or, with no usable wish, the route's cool-down after the third failure.
    assert (rest or 45.0) - 30 < resting <= (rest or 45.0)


def test_a_target_that_never_answers_hands_the_request_on_after_its_time_to_first_byte(
    second: ScriptedServer,
) -> None:
    from tests.gateway.test_errors import Hanging

    silent = Hanging()
    second.add(reply("from the second"))
    hanging = Target("openai-compatible:silent", base_url=f"http://127.0.0.1:{silent.port}/v1", timeout=0.5)
    try:
        with _gateway(hanging, _openai(second, "b")) as gateway:
            answer = httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=60)
    finally:
        silent.sock.close()
    assert silent.accepted.is_set()  # it was asked, and said nothing
    assert (answer.status_code, _text(answer), answer.headers["x-toolwire-target"]) == (
        200,
        "from the second",
        "openai-compatible:b",
    )


def test_a_passthrough_200_that_is_not_json_is_a_502_or_hands_the_request_on(
    first: ScriptedServer, second: ScriptedServer
) -> None:
    first.add(*[RawReply(body="<html>nope</html>", content_type="text/html")] * 2)
    second.add(reply("from the second"))
    with _gateway(_openai(first, "a"), _openai(second, "b")) as gateway:  # same protocol, native: passthrough
        answer = httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=30)
    with _gateway(_openai(first, "a")) as gateway:
        alone = httpx2.post(gateway.url + "/v1/chat/completions", json=BODY, timeout=30)
    assert (answer.status_code, _text(answer)) == (200, "from the second")
    assert alone.status_code == 502
    assert alone.json()["error"]["message"] == (
        "The upstream failed: openai-compatible answered with a body that is not a JSON object: "
        "b'<html>nope</html>'; check base_url points at the provider's API."
    )


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_a_stream_cut_after_its_opening_hands_the_request_on_in_passthrough_too(
    first: ScriptedServer, second: ScriptedServer, client: str
) -> None:
    first.add(DropStream(response=reply("never finished"), after=1))
    second.add(reply("streamed from the second"))
    targets = (_openai(first, "a"), _openai(second, "b"))
    if client == "anthropic":
        targets = (_anthropic(first, "a"), _anthropic(second, "b"))
    path = "/v1/chat/completions" if client == "openai" else "/v1/messages"
    body = BODY | {"stream": True, "max_tokens": 50}
    with _gateway(*targets) as gateway:
        with httpx2.stream("POST", gateway.url + path, json=body, timeout=30) as answer:
            text = answer.read().decode()
            target = answer.headers["x-toolwire-target"]
    assert (answer.status_code, target) == (200, targets[1].target)
    assert "error" not in text
    assert (first.request_count, second.request_count) == (1, 1)


def test_a_whole_reply_the_decoder_refuses_is_a_502_and_never_asked_of_a_second_target(
    first: ScriptedServer, second: ScriptedServer
) -> None:
    first.add(RawReply(body='{"choices": "not a list"}', content_type="application/json"))
    second.add(reply("from the second"))
    with _gateway(_openai(first, "a"), _openai(second, "b")) as gateway:
        answer = httpx2.post(gateway.url + "/v1/messages", json=BODY | {"max_tokens": 50}, timeout=30)
    assert answer.status_code == 502
    assert (first.request_count, second.request_count) == (1, 0)  # before: both asked, both billed


def test_negative_usage_from_an_upstream_breaks_neither_the_reply_nor_the_next_request(
    first: ScriptedServer,
) -> None:
    usage = '"usage": {"prompt_tokens": -1, "completion_tokens": -5, "total_tokens": -6}'
    choice = '{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}'
    body = '{"id": "x", "object": "chat.completion", "model": "a", "choices": [' + choice + "], " + usage + "}"
    first.add(RawReply(body=body, content_type="application/json"), reply("again"))
    request = json.dumps(BODY).encode()
    head = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
    head += b"content-length: %d\r\n\r\n" % len(request)
    with _gateway(_openai(first, "a")) as gateway, socket.create_connection(("127.0.0.1", gateway.port)) as sock:
        reader = sock.makefile("rb")
        answers = []
        for _ in range(2):  # one keep-alive connection: before, the metrics raised and it was dropped
            sock.sendall(head + request)
            status = reader.readline()
            length = 0
            while (line := reader.readline()) != b"\r\n":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            answers.append((status.strip(), json.loads(reader.read(length))["choices"][0]["message"]["content"]))
    assert answers == [(b"HTTP/1.1 200 OK", "hi"), (b"HTTP/1.1 200 OK", "again")]
