"""Parallel calls whose fragments interleave upstream reach every SDK client whole.

An OpenAI-compatible upstream may send call 1's header before the rest of call 0's arguments:
deltas are keyed by `index`, not ordered. The gateway holds call 1 back until call 0's JSON is
complete, so clients whose calls are items or blocks that close (Responses, Anthropic) see each
call whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pytest

from tests.gateway.conftest import Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import RawReply, ScriptedServer


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "up", "choices": [choice]}
    return f"data: {json.dumps(body)}\n\n"


def _call(index: int, call_id: str | None = None, name: str | None = None, arguments: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
    if call_id is not None:
        entry |= {"id": call_id, "type": "function"}
        entry["function"]["name"] = name
    return {"tool_calls": [entry]}


INTERLEAVED = "".join(
    [
        _chunk({"role": "assistant", "content": None}),
        _chunk(_call(0, "call_a", "get_weather")),
        _chunk(_call(0, arguments='{"ci')),
        _chunk(_call(1, "call_b", "get_time")),
        _chunk(_call(0, arguments='ty": "Paris"}')),
        _chunk(_call(1, arguments='{"tz": "CET"}')),
        _chunk({}, "tool_calls"),
        "data: [DONE]\n\n",
    ]
)
TOOLS = [
    ("get_weather", {"type": "object", "properties": {"city": {"type": "string"}}}),
    ("get_time", {"type": "object", "properties": {"tz": {"type": "string"}}}),
]


@pytest.fixture
def gateway() -> Iterator[tuple[Gateway, ScriptedServer]]:
    with ScriptedServer() as upstream:
        route = Route("*", "openai-compatible:up", base_url=upstream.base_url + "/v1")
        with Gateway(create_app([route])) as running:
            yield running, upstream


def test_the_responses_sdk_sees_both_interleaved_calls_whole(gateway: tuple[Gateway, ScriptedServer]) -> None:
    running, upstream = gateway
    upstream.add(RawReply(body=INTERLEAVED))
    tools: Any = [{"type": "function", "name": n, "parameters": p, "strict": False} for n, p in TOOLS]
    with openai.OpenAI(base_url=running.url + "/v1", api_key="unused", max_retries=0) as client:
        with client.responses.stream(model="m", input="Weather and time in Paris?", tools=tools) as stream:
            final = stream.get_final_response()
    calls = [(item.call_id, item.arguments) for item in final.output if item.type == "function_call"]
    assert calls == [("call_a", '{"city": "Paris"}'), ("call_b", '{"tz": "CET"}')]


def test_the_anthropic_sdk_sees_both_interleaved_calls_whole(gateway: tuple[Gateway, ScriptedServer]) -> None:
    running, upstream = gateway
    upstream.add(RawReply(body=INTERLEAVED))
    tools: Any = [{"name": n, "input_schema": p} for n, p in TOOLS]
    messages: Any = [{"role": "user", "content": "Weather and time in Paris?"}]
    with anthropic.Anthropic(base_url=running.url, api_key="unused", max_retries=0) as client:
        with client.messages.stream(model="m", max_tokens=100, messages=messages, tools=tools) as stream:
            final = stream.get_final_message()
    calls = [(block.id, block.input) for block in final.content if block.type == "tool_use"]
    assert calls == [("call_a", {"city": "Paris"}), ("call_b", {"tz": "CET"})]
