"""A route in `tool_mode = "constrained"`: the upstream decodes under the reply schema, the client sees tool calls.

The upstream is a `ScriptedServer` answering as llama-cpp-python's server would under the
schema (JSON text); the clients are the official SDKs, whole and streamed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest

from tests.gateway._clients import DRIVERS, GATEWAY_KEY, TOOLS, run_tool
from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer, reply
from toolwire.types import Usage

CALLS = [
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_time", "arguments": {"tz": "CET"}},
]
ANSWER = "Sunny, and it is noon."


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(upstream: ScriptedServer) -> Iterator[Gateway]:
    route = Route("small-model", "llama-cpp-python:smollm2", base_url=upstream.base_url, tool_mode="constrained")
    with Gateway(create_app([route], keys=[GATEWAY_KEY])) as running:
        yield running


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_a_constrained_route_gives_sdk_clients_ordinary_tool_calls(
    gateway: Gateway, upstream: ScriptedServer, client: str, stream: bool
) -> None:
    start = len(upstream.requests)
    upstream.add(json.dumps(CALLS), "[]", ANSWER)
    turns = DRIVERS[client](gateway.url, "small-model", stream, 2)
    assert [(t.text, t.calls) for t in turns] == [
        ("", [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]),
        (ANSWER, []),
    ]
    first, second, answer = (r.body for r in upstream.requests[start:])
    assert first["response_format"]["type"] == "json_object"
    assert [c["properties"]["name"]["const"] for c in first["response_format"]["schema"]["items"]["anyOf"]] == [
        "get_weather",
        "get_time",
    ]
    assert "response_format" not in answer and "tools" not in answer

    def history(body: dict[str, Any]) -> list[Any]:
        return [m for m in body["messages"] if m["role"] != "system"]

    assert history(answer) == history(second)  # the history, without the tools' prompt
    assert answer.get("stream", False) == stream
    assert "tools" not in first and "tool_choice" not in first
    ids = turns[0].ids
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": json.dumps(CALLS)},
        {
            "role": "user",
            "content": f"TOOL_RESULT (result) for get_weather [{ids[0]}]:\n{run_tool('get_weather', {'city': 'Paris'})}"
            f"\n\nTOOL_RESULT (result) for get_time [{ids[1]}]:\n{run_tool('get_time', {'tz': 'CET'})}",
        },
    ]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_an_answer_after_no_call_reports_the_tokens_of_both_upstream_requests(
    gateway: Gateway, upstream: ScriptedServer, stream: bool
) -> None:
    upstream.add(reply("[]", usage=Usage(input_tokens=300, output_tokens=2)))
    upstream.add(reply("Sunny.", usage=Usage(input_tokens=120, output_tokens=9)))
    body = {
        "model": "small-model",
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [{"type": "function", "function": spec} for spec in TOOLS],
        "stream": stream,
    }
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    answer = httpx2.post(gateway.url + "/api/chat", json=body, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    lines = [json.loads(line) for line in answer.text.splitlines() if line.strip()]
    assert "".join(line["message"].get("content", "") for line in lines) == "Sunny."
    assert (lines[-1]["done"], lines[-1]["prompt_eval_count"], lines[-1]["eval_count"]) == (True, 420, 11)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_an_openai_client_reads_finish_reason_tool_calls_when_the_reply_became_calls(
    gateway: Gateway, upstream: ScriptedServer, stream: bool
) -> None:
    """The upstream said `stop` (it wrote JSON text); the client's reply holds calls, so `tool_calls`."""
    import openai

    upstream.add(json.dumps(CALLS[:1]))
    sdk = openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0)
    tools: Any = [{"type": "function", "function": t} for t in TOOLS]
    messages: Any = [{"role": "user", "content": "Weather in Paris?"}]
    if stream:
        chunks = list(sdk.chat.completions.create(model="small-model", messages=messages, tools=tools, stream=True))
        reasons = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    else:
        reasons = [
            sdk.chat.completions.create(model="small-model", messages=messages, tools=tools).choices[0].finish_reason
        ]
    assert reasons == ["tool_calls"]
