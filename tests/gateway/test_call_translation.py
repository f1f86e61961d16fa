"""The failures other tool-calling proxies shipped, each checked on the wire.

Upstream streams are written by hand (`RawReply`) in the shapes that broke them; the client
side reads the gateway's raw SSE, so an extra empty block or a missing delta is visible.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import Gateway, routes_to
from toolwire.gateway import create_app
from toolwire.testing import RawReply, ScriptedServer

TOOLS = [
    {
        "name": "get_weather",
        "description": "Weather for a city.",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    with Gateway(create_app(routes_to(upstreams), keys=[GATEWAY_KEY])) as running:
        yield running


def _sse(events: list[dict[str, Any]], *, done: bool = False, named: bool = False) -> str:
    lines = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        lines.append(f"{head}data: {json.dumps(event)}\n\n")
    return "".join(lines) + ("data: [DONE]\n\n" if done else "")


def _anthropic_events(gateway: Gateway, model: str, **fields: Any) -> list[dict[str, Any]]:
    body = {"model": model, "max_tokens": 100, "stream": True, "tools": TOOLS} | fields
    body.setdefault("messages", [{"role": "user", "content": "Weather in Paris?"}])
    headers = {"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"}
    reply = httpx2.post(gateway.url + "/v1/messages", json=body, headers=headers, timeout=30)
    assert reply.status_code == 200, reply.text
    return [json.loads(line[6:]) for line in reply.text.splitlines() if line.startswith("data: ")]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "up", "choices": [choice]}


def test_arguments_sent_only_on_the_done_event_reach_an_anthropic_client(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    """A Responses upstream that sends a call's arguments only in `.done` (no deltas)."""
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather", "arguments": ""}
    done = item | {"arguments": '{"city":"Paris"}', "status": "completed"}
    response = {"id": "resp_1", "object": "response", "status": "completed", "model": "up", "output": [done]}
    stream = [
        {"type": "response.created", "response": response | {"status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {
            "type": "response.function_call_arguments.done",
            "output_index": 0,
            "item_id": "fc_1",
            "arguments": '{"city":"Paris"}',
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": response},
    ]
    upstreams["openai-responses"].add(RawReply(body=_sse(stream, named=True)))
    events = _anthropic_events(gateway, "to-openai-responses")
    deltas = [e["delta"] for e in events if e["type"] == "content_block_delta"]
    assert deltas == [{"type": "input_json_delta", "partial_json": '{"city":"Paris"}'}]
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert starts[0] == {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {}}
    assert [s["type"] for s in starts[1:]] == ["redacted_thinking"]  # the Responses item id, carried
    blocks = [(e["index"], e["content_block"]["type"]) for e in events if e["type"] == "content_block_start"]
    assert blocks == [(0, "tool_use"), (1, "redacted_thinking")]  # the carrier's block follows the reply's own
    assert [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"] == ["tool_use"]


def test_a_forced_call_that_ends_with_stop_is_still_tool_use_and_has_no_empty_text_block(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    """OpenAI answers a forced named tool with `finish_reason: "stop"` after an empty content chunk."""
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    stream = [
        _chunk({"role": "assistant", "content": ""}),
        _chunk({"tool_calls": [call]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
        _chunk({}, "stop"),
    ]
    upstreams["openai"].add(RawReply(body=_sse(stream, done=True)))
    events = _anthropic_events(gateway, "to-openai", tool_choice={"type": "tool", "name": "get_weather"})
    assert [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"] == ["tool_use"]
    fragments = [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"]
    assert "".join(fragments) == '{"city":"Oslo"}'  # one fragment when both arrive together
    assert [e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta"] == ["tool_use"]
    sent = upstreams["openai"].requests[-1].body
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}


def test_a_chunk_with_text_and_a_call_together_keeps_the_tool_name(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    call = {"index": 0, "id": "call_7", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    stream = [_chunk({"role": "assistant", "content": "Checking.", "tool_calls": [call]}), _chunk({}, "tool_calls")]
    upstreams["openai"].add(RawReply(body=_sse(stream, done=True)))
    with anthropic.Anthropic(base_url=gateway.url, api_key=GATEWAY_KEY, max_retries=0) as client:
        with client.messages.stream(
            model="to-openai",
            max_tokens=100,
            tools=TOOLS,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "Weather?"}],
        ) as stream_reader:
            message = stream_reader.get_final_message()
    assert [(b.type, getattr(b, "name", None)) for b in message.content] == [
        ("text", None),
        ("tool_use", "get_weather"),
    ]
    assert message.stop_reason == "tool_use"


def test_tool_choice_none_is_translated_not_refused(gateway: Gateway, upstreams: dict[str, ScriptedServer]) -> None:
    upstreams["openai"].add("No tools needed.")
    with anthropic.Anthropic(base_url=gateway.url, api_key=GATEWAY_KEY, max_retries=0) as client:
        message = client.messages.create(
            model="to-openai",
            max_tokens=100,
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice={"type": "none"},
            messages=[{"role": "user", "content": "Hi"}],
        )
    assert [b.text for b in message.content if b.type == "text"] == ["No tools needed."]
    assert upstreams["openai"].requests[-1].body["tool_choice"] == "none"


def test_an_openai_client_streams_calls_from_an_anthropic_upstream_by_index(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    """Two parallel calls: every fragment names its call's index; the SDK's accumulator agrees."""

    def block(index: int, call_id: str, city: str) -> list[dict[str, Any]]:
        start = {"type": "tool_use", "id": call_id, "name": "get_weather", "input": {}}
        return [
            {"type": "content_block_start", "index": index, "content_block": start},
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": '{"city"'},
            },
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": f':"{city}"}}'},
            },
            {"type": "content_block_stop", "index": index},
        ]

    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "up",
        "content": [],
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    stream = [
        {"type": "message_start", "message": message},
        *block(0, "toolu_a", "Paris"),
        *block(1, "toolu_b", "Rome"),
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    upstreams["anthropic"].add(RawReply(body=_sse(stream, named=True)))
    with openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        chunks = list(
            client.chat.completions.create(
                model="to-anthropic",
                messages=[{"role": "user", "content": "Weather in Paris and Rome?"}],
                tools=[
                    {"type": "function", "function": {"name": "get_weather", "parameters": TOOLS[0]["input_schema"]}}
                ],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            for entry in choice.delta.tool_calls or []:
                call = calls.setdefault(entry.index, {"id": "", "name": "", "arguments": ""})
                call["id"] += entry.id or ""
                call["name"] += (entry.function.name or "") if entry.function else ""
                call["arguments"] += (entry.function.arguments or "") if entry.function else ""
    assert calls == {
        0: {"id": "toolu_a", "name": "get_weather", "arguments": '{"city":"Paris"}'},
        1: {"id": "toolu_b", "name": "get_weather", "arguments": '{"city":"Rome"}'},
    }
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["tool_calls"]
    assert chunks[-1].usage is not None and (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (
        3,
        9,
    )
