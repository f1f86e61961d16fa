"""The providers' official SDKs read what toolwire's dialect servers and gateway send.

`openai`'s `AzureOpenAI` reads the Azure dialect (filter chunks, a filtered prompt); `mistralai`
drives a tool loop through the gateway to a Mistral upstream that refuses foreign ids; `groq`
reads the Groq dialect's `tool_use_failed`. The `cohere` SDK is left out: it speaks Cohere's own
v2 Chat API, not the OpenAI compatibility endpoint the `cohere` provider targets.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import KEY_ENV, Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer, reply
from toolwire.testing.dialects import azure_filtered_prompt, groq_tool_use_failed
from toolwire.types import ToolCall

openai = pytest.importorskip("openai")
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CALL = ToolCall(id="call_w1", name="get_weather", arguments={"city": "Paris"})


def _azure(server: ScriptedServer) -> Any:
    return openai.AzureOpenAI(
        azure_endpoint=server.base_url, api_version="2024-10-21", api_key="azure-key", max_retries=0
    )


def test_azure_openai_sdk_streams_through_the_filter_chunks() -> None:
    with ScriptedServer([reply("Hello there"), reply(tool_calls=[CALL])], dialect="azure") as server:
        with _azure(server) as client:
            chunks = list(
                client.chat.completions.create(
                    model="gpt-4o-dep", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            )
            whole = client.chat.completions.create(
                model="gpt-4o-dep", messages=[{"role": "user", "content": "hi"}], tools=[WEATHER]
            )
        first = server.requests[0]
    assert first.path == "/openai/deployments/gpt-4o-dep/chat/completions?api-version=2024-10-21"
    assert first.headers["api-key"] == "azure-key"
    assert chunks[0].choices == [] and chunks[0].prompt_filter_results is not None  # type: ignore[attr-defined]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices and c.choices[0].delta)
    assert text == "Hello there"
    (call,) = whole.choices[0].message.tool_calls or []
    assert (call.id, call.function.name, json.loads(call.function.arguments)) == CALL_WIRE


CALL_WIRE = ("call_w1", "get_weather", {"city": "Paris"})


def test_azure_openai_sdk_reads_a_filtered_prompt_with_its_categories() -> None:
    with ScriptedServer([azure_filtered_prompt("violence")], dialect="azure") as server:
        with _azure(server) as client, pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(model="dep", messages=[{"role": "user", "content": "x"}])
    assert info.value.code == "content_filter"
    body: Any = info.value.body
    assert body["innererror"]["content_filter_result"]["violence"] == {"filtered": True, "severity": "high"}


def test_mistral_sdk_runs_a_tool_loop_through_the_gateway_to_mistral(monkeypatch: pytest.MonkeyPatch) -> None:
    client_module = pytest.importorskip("mistralai.client")
    monkeypatch.setenv(KEY_ENV, "mistral-upstream-key")
    with ScriptedServer([reply(tool_calls=[CALL]), reply("Sunny in Paris.")], dialect="mistral") as upstream:
        route = Route("m", "mistral:mistral-large-latest", base_url=upstream.base_url + "/v1", api_key_env=KEY_ENV)
        with Gateway(create_app([route], keys=[GATEWAY_KEY])) as gateway:
            with client_module.Mistral(api_key=GATEWAY_KEY, server_url=gateway.url) as mistral:
                messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
                first = mistral.chat.complete(model="m", messages=messages, tools=[WEATHER])
                (call,) = first.choices[0].message.tool_calls or []
                assistant = {"role": "assistant", "content": "", "tool_calls": [call.model_dump()]}
                result = {"role": "tool", "tool_call_id": call.id, "name": "get_weather", "content": "sunny"}
                second = mistral.chat.complete(model="m", messages=[*messages, assistant, result], tools=[WEATHER])
        sent = upstream.requests[1].body["messages"]
    assert (call.id, call.function.name) == ("call_w1", "get_weather")  # the upstream's own id, as it sent it
    assert second.choices[0].message.content == "Sunny in Paris."
    wire_id = sent[1]["tool_calls"][0]["id"]
    assert len(wire_id) == 9 and wire_id.isalnum() and sent[2]["tool_call_id"] == wire_id
    assert upstream.requests[1].headers["authorization"] == "Bearer mistral-upstream-key"


def test_groq_sdk_reads_tool_use_failed_with_the_models_text() -> None:
    groq = pytest.importorskip("groq")
    text = '<tool_call>{"name": "get_weather"'
    with ScriptedServer([groq_tool_use_failed(text), "fine"], dialect="groq") as server:
        with groq.Groq(api_key="gsk-test", base_url=server.base_url, max_retries=0) as client:
            with pytest.raises(groq.BadRequestError) as info:
                client.chat.completions.create(
                    model="llama-3.3-70b-versatile", messages=[{"role": "user", "content": "x"}], tools=[WEATHER]
                )
            ok = client.chat.completions.create(
                model="llama-3.3-70b-versatile", messages=[{"role": "user", "content": "x"}]
            )
        paths = [r.path for r in server.requests]
    error: Any = info.value.body["error"]  # type: ignore[index]  # groq keeps the whole body
    assert (error["code"], error["failed_generation"]) == ("tool_use_failed", text)
    assert ok.choices[0].message.content == "fine"
    assert paths == ["/openai/v1/chat/completions", "/openai/v1/chat/completions"]
