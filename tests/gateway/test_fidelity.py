"""Opaque-context carriage, text tool mode, passthrough fidelity, drops, and the small endpoints."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2
import pytest

from tests.gateway._clients import DRIVERS, GATEWAY_KEY, run_tool
from tests.gateway.conftest import KEY_ENV, Gateway, routes_to
from toolwire.gateway import Route, create_app
from toolwire.testing import ErrorReply, RawReply, ScriptedServer, reply
from toolwire.types import SystemMessage, ToolCall, Usage

SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS1maXJzdC1jYWxs"  # base64, as Gemini's are


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    routes = [
        *routes_to(upstreams),
        Route(
            "to-text",
            "openai:up-text",
            base_url=upstreams["openai"].base_url + "/v1",
            api_key_env=KEY_ENV,
            tool_mode="text",
        ),
        Route("to-auto", "ollama:up-auto", base_url=upstreams["ollama"].base_url, tool_mode="auto"),
        Route("literal-name", "anthropic:up-literal", base_url=upstreams["anthropic"].base_url, api_key_env=KEY_ENV),
    ]
    with Gateway(create_app(routes, keys=[GATEWAY_KEY])) as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30, headers={"authorization": f"Bearer {GATEWAY_KEY}"}) as client:
        yield client


# Gemini thought signatures behind clients that have no field for them


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("client", ["anthropic", "openai", "openai-responses"])
def test_gemini_thought_signatures_come_back_through_other_clients(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], client: str, stream: bool
) -> None:
    server = upstreams["gemini"]
    start = len(server.requests)
    signed = ToolCall(
        id="g-1", name="get_weather", arguments={"city": "Paris"}, metadata={"gemini": {"thought_signature": SIGNATURE}}
    )
    plain = ToolCall(id="g-2", name="get_time", arguments={"tz": "CET"})
    server.add(reply("", [signed, plain], usage=Usage(input_tokens=5, output_tokens=5)))
    server.add(reply("Sunny.", usage=Usage(input_tokens=9, output_tokens=2)))
    seen = DRIVERS[client](gateway.url, "to-gemini", stream, 2)
    assert [(t.text, t.calls) for t in seen] == [
        ("", [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]),
        ("Sunny.", []),
    ]
    second = server.requests[start + 1].body
    model_turn = second["contents"][1]
    assert model_turn["role"] == "model"
    assert [p.get("thoughtSignature") for p in model_turn["parts"]] == [SIGNATURE, None]
    assert [p["functionCall"]["name"] for p in model_turn["parts"]] == ["get_weather", "get_time"]
    responses = second["contents"][2]["parts"]
    outputs = [r["functionResponse"]["response"]["output"] for r in responses]
    assert outputs == [run_tool("get_weather", {"city": "Paris"}), run_tool("get_time", {"tz": "CET"})]
    assert "twctx1" not in json.dumps(second)  # carriers never reach the upstream


def test_the_anthropic_carrier_is_a_redacted_thinking_block(
    gateway: Gateway, upstreams: dict[str, ScriptedServer]
) -> None:
    signed = ToolCall(id="g-1", name="get_weather", arguments={}, metadata={"gemini": {"thought_signature": SIGNATURE}})
    upstreams["gemini"].add(reply("", [signed]))
    body = {"model": "to-gemini", "max_tokens": 50, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"x-api-key": GATEWAY_KEY}
    content = httpx2.post(gateway.url + "/v1/messages", json=body, headers=headers, timeout=30).json()["content"]
    assert [block["type"] for block in content] == ["tool_use", "redacted_thinking"]
    assert content[1]["data"].startswith("twctx1.")
    assert content[0]["id"] == "g-1"


def test_the_openai_carrier_is_the_call_id(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    signed = ToolCall(id="g-1", name="get_weather", arguments={}, metadata={"gemini": {"thought_signature": SIGNATURE}})
    upstreams["gemini"].add(reply("", [signed]))
    body = {"model": "to-gemini", "messages": [{"role": "user", "content": "hi"}]}
    message = http.post(gateway.url + "/v1/chat/completions", json=body).json()["choices"][0]["message"]
    call_id = message["tool_calls"][0]["id"]
    assert call_id.startswith("g-1.twctx1.")


# text tool mode


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("client", ["anthropic", "openai", "gemini"])
def test_text_mode_gives_native_calls_to_the_client(
    gateway: Gateway, upstreams: dict[str, ScriptedServer], client: str, stream: bool
) -> None:
    server = upstreams["openai"]
    start = len(server.requests)
    written = (
        "Let me look.\n"
        'TOOL_CALL: {"name": "get_weather", "args": {"city": "Paris"}}\n'
        'TOOL_CALL: {"name": "get_time", "args": {"tz": "CET"}}'
    )
    server.add(reply(written, usage=Usage(input_tokens=3, output_tokens=3)), reply("Sunny at noon."))
    seen = DRIVERS[client](gateway.url, "to-text", stream, 2)
    assert [(t.text.strip(), t.calls) for t in seen] == [
        ("Let me look.", [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]),
        ("Sunny at noon.", []),
    ]
    first, second = (r.request for r in server.requests[start:])
    assert first is not None and second is not None
    assert first.tools == [] and "tools" not in server.requests[start].body
    system = first.messages[0]
    assert isinstance(system, SystemMessage) and "get_weather" in system.content and "TOOL_CALL" in system.content
    results = second.messages[-1]
    assert "TOOL_RESULT" in str(results) and run_tool("get_time", {"tz": "CET"}) in str(results)


def test_auto_mode_switches_to_text_when_the_upstream_rejects_tools(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    server = upstreams["ollama"]
    start = len(server.requests)
    server.add(ErrorReply(status=400, message="registry.ollama.ai/library/x does not support tools"))
    server.add(reply('TOOL_CALL: {"name": "get_weather", "args": {"city": "Oslo"}}'))
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    body = {"model": "to-auto", "messages": [{"role": "user", "content": "weather?"}], "tools": tools}
    message = http.post(gateway.url + "/v1/chat/completions", json=body).json()["choices"][0]["message"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]] == [
        ("get_weather", {"city": "Oslo"})
    ]
    sent = [r.body for r in server.requests[start:]]
    assert ["tools" in b for b in sent] == [True, False]


# passthrough and drops


def test_passthrough_keeps_unknown_fields_both_ways(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    server = upstreams["openai"]
    raw = (
        '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"up-openai","choices":[{"index":0,'
        '"message":{"role":"assistant","content":"hi","future_field":{"x":1}},"finish_reason":"stop"}],'
        '"service_tier":"flex","usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}'
    )
    server.add(RawReply(body=raw, content_type="application/json"))
    body = {
        "model": "to-openai",
        "messages": [{"role": "user", "content": "hi", "x_client_field": True}],
        "prediction": {"type": "content", "content": "hi"},
    }
    response = http.post(gateway.url + "/v1/chat/completions", json=body)
    assert response.status_code == 200 and response.text == raw
    assert server.requests[-1].body == dict(body, model="up-openai")
    # a whole reply goes out in one piece with its length, not chunked
    assert response.headers["content-length"] == str(len(raw.encode()))
    assert "transfer-encoding" not in response.headers


def test_what_the_target_cannot_carry_is_named_in_a_header(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["openai"].add("fine")
    body = {
        "model": "to-openai",
        "max_tokens": 20,
        "messages": [{"role": "user", "content": "hi"}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "u-1"},
    }
    response = http.post(gateway.url + "/v1/messages", json=body)
    assert response.status_code == 200
    assert response.headers["x-toolwire-dropped"] == "anthropic:thinking"  # metadata.user_id became `user`
    assert response.headers["content-length"] == str(len(response.content))
    assert "thinking" not in upstreams["openai"].requests[-1].body


def test_a_same_protocol_reply_has_no_dropped_header(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["anthropic"].add("fine")
    body = {"model": "to-anthropic", "max_tokens": 20, "messages": [{"role": "user", "content": "hi"}], "metadata": {}}
    response = http.post(gateway.url + "/v1/messages?beta=true", json=body, headers={"anthropic-beta": "x-2025"})
    assert response.status_code == 200 and "x-toolwire-dropped" not in response.headers
    assert upstreams["anthropic"].requests[-1].headers["anthropic-beta"] == "x-2025"


# the small endpoints


def test_models_health_and_count_tokens(gateway: Gateway, http: httpx2.Client) -> None:
    models = http.get(gateway.url + "/v1/models").json()
    names = ["to-openai", "to-openai-responses", "to-anthropic", "to-gemini", "to-ollama", "to-bedrock", "to-text"]
    names.append("to-auto")
    assert [m["id"] for m in models["data"]] == [*names, "literal-name"]
    assert models["data"][-1]["owned_by"] == "anthropic"
    assert models["object"] == "list" and models["has_more"] is False
    assert httpx2.get(gateway.url + "/health", timeout=30).json()["status"] == "ok"
    body = {"model": "literal-name", "messages": [{"role": "user", "content": "x" * 40}]}
    assert http.post(gateway.url + "/v1/messages/count_tokens", json=body).json() == {"input_tokens": 16}
    assert httpx2.get(gateway.url + "/v1/models", timeout=30).status_code == 401
