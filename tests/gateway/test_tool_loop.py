"""A 3-turn tool loop with parallel calls for every (client protocol, upstream protocol) pair.

The official SDKs talk to the gateway over a real socket; the gateway talks to ScriptedServer
upstreams. Same-protocol pairs go through the byte passthrough, the others through the
codecs. Streaming runs once the client codec has a stream encoder.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.gateway._clients import DRIVERS, GATEWAY_KEY, Turn, run_tool
from tests.gateway.conftest import UPSTREAMS, Gateway, routes_to
from toolwire.gateway import create_app
from toolwire.testing import ScriptedServer, reply
from toolwire.types import AssistantMessage, Request, ToolCall, ToolResult, Usage

SCRIPT = [
    reply(
        "",
        [
            ToolCall(id="call_w1", name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id="call_t1", name="get_time", arguments={"tz": "CET"}),
        ],
        usage=Usage(input_tokens=12, output_tokens=7),
    ),
    reply(
        "Checking Rome too.",
        [ToolCall(id="call_w2", name="get_weather", arguments={"city": "Rome"})],
        usage=Usage(input_tokens=30, output_tokens=9),
    ),
    reply("Sunny in Paris and Rome.", usage=Usage(input_tokens=41, output_tokens=6)),
]
EXPECTED = [
    Turn("", [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]),
    Turn("Checking Rome too.", [("get_weather", {"city": "Rome"})]),
    Turn("Sunny in Paris and Rome.", []),
]


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    with Gateway(create_app(routes_to(upstreams), keys=[GATEWAY_KEY])) as running:
        yield running


def _result_text(result: ToolResult) -> str:
    value: Any = result.value
    if isinstance(value, dict) and "output" in value:
        value = value["output"]
    return value if isinstance(value, str) else str(value)


def _assert_results_pair_with_calls(request: Request, expected: list[str]) -> None:
    """The upstream got every result, in order, each naming a call of the assistant turn before it."""
    calls: dict[str, ToolCall] = {}
    results: list[str] = []
    for message in request.messages:
        if isinstance(message, AssistantMessage):
            calls.update((c.id, c) for c in message.tool_calls)
        elif isinstance(message, ToolResult):
            assert message.tool_call_id in calls, (message, list(calls))
            results.append(_result_text(message))
    assert results == expected


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("upstream", list(UPSTREAMS))
@pytest.mark.parametrize("client", list(DRIVERS))
def test_three_turn_tool_loop(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], client: str, upstream: str, stream: bool
) -> None:
    server = upstreams[upstream]
    start = len(server.requests)
    server.add(*SCRIPT)
    seen = DRIVERS[client](gateway.url, f"to-{upstream}", stream, 3)
    assert [(t.text, t.calls) for t in seen] == [(t.text, t.calls) for t in EXPECTED]
    ids = [i for t in seen for i in t.ids if i]  # Gemini and Ollama replies may carry no call ids
    assert len(set(ids)) == len(ids)
    requests = server.requests[start:]
    assert len(requests) == 3 and all(r.request is not None for r in requests), [r.decode_error for r in requests]
    assert [r.stream for r in requests] == [stream] * 3
    first = run_tool("get_weather", {"city": "Paris"})
    second = run_tool("get_time", {"tz": "CET"})
    third = run_tool("get_weather", {"city": "Rome"})
    _assert_results_pair_with_calls(requests[1].request, [first, second])  # type: ignore[arg-type]
    _assert_results_pair_with_calls(requests[2].request, [first, second, third])  # type: ignore[arg-type]
    assert server.remaining == 0
