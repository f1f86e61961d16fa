"""Every named provider reached through `connect()`: its address, its auth header and its quirks.

Each runs against a `toolwire.testing` server speaking that provider's dialect, whole and streamed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import pytest

import toolwire
from toolwire import (
    AssistantMessage,
    AuthenticationError,
    ContentFilterError,
    Done,
    ModelFormatError,
    RateLimitError,
    StopReason,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)
from toolwire.client import Client
from toolwire.providers import PROVIDERS
from toolwire.testing import ScriptedServer, reply
from toolwire.testing.dialects import (
    azure_filtered_prompt,
    azure_filtered_reply,
    groq_tool_use_failed,
    openrouter_stream_error,
)
from toolwire.types import Message, Response

KEY = "sk-provider-test-0123456789"
WEATHER = ToolDefinition(
    name="get_weather",
    description="Weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@dataclass(frozen=True)
class Case:
    target: str
    path: str
    auth: dict[str, str]
    options: dict[str, str] = field(default_factory=dict)
    base: str = "/v1"  # what goes after the server's root in base_url (Azure takes the root: its endpoint)


HOSTED = {
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "xai": "XAI_API_KEY",
    "together": "TOGETHER_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "cerebras": "CEREBRAS_API_KEY",
    "huggingface": "HF_TOKEN",
    "cohere": "CO_API_KEY",
}
DEFAULT_URLS = {
    "mistral": "https://api.mistral.ai/v1/chat/completions",
    "groq": "https://api.groq.com/openai/v1/chat/completions",
    "deepseek": "https://api.deepseek.com/chat/completions",
    "openrouter": "https://openrouter.ai/api/v1/chat/completions",
    "xai": "https://api.x.ai/v1/chat/completions",
    "together": "https://api.together.xyz/v1/chat/completions",
    "fireworks": "https://api.fireworks.ai/inference/v1/chat/completions",
    "cerebras": "https://api.cerebras.ai/v1/chat/completions",
    "huggingface": "https://router.huggingface.co/v1/chat/completions",
    "cohere": "https://api.cohere.ai/compatibility/v1/chat/completions",
    "lmstudio": "http://localhost:1234/v1/chat/completions",
    "sglang": "http://localhost:30000/v1/chat/completions",
}
BEARER = {"authorization": f"Bearer {KEY}"}
CASES = [
    *(Case(f"{name}:m-1", "/v1/chat/completions", BEARER) for name in (*HOSTED, "lmstudio", "sglang")),
    Case("azure:dep-1", "/openai/v1/chat/completions", {"api-key": KEY}, base=""),
    Case(
        "azure:dep-1",
        "/openai/deployments/dep-1/chat/completions?api-version=2024-10-21",
        {"api-key": KEY},
        {"api_version": "2024-10-21"},
        base="",
    ),
    Case("azure-responses:dep-1", "/openai/v1/responses", {"api-key": KEY}, base=""),
    Case(
        "azure-responses:dep-1",
        "/openai/responses?api-version=2025-04-01-preview",
        {"api-key": KEY},
        {"api_version": "2025-04-01-preview"},
        base="",
    ),
    Case(
        "vertex-anthropic:claude-sonnet-4-5@20250929",
        "/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict",
        BEARER,
        {"project": "proj", "location": "us-east5"},
        base="",
    ),
    Case(
        "bedrock-anthropic:us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
        BEARER,
        {"region": "us-east-1"},
        base="",
    ),
]
_STREAM_PATHS = {":rawPredict": ":streamRawPredict", "/invoke": "/invoke-with-response-stream"}


def _dialect(target: str) -> str | None:
    name = target.split(":", 1)[0]
    return name if name in ("azure", "mistral", "deepseek", "cohere", "openrouter", "groq") else None


def _connect(server: ScriptedServer, case: Case, **options: Any) -> Client:
    return toolwire.client.connect_http(
        case.target, base_url=server.base_url + case.base, api_key=KEY, **(case.options | options)
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.target + "".join(f",{v}" for v in c.options.values()))
def test_each_provider_reaches_its_address_with_its_auth_whole_and_streamed(case: Case) -> None:
    with ScriptedServer(["whole", "streamed"], dialect=_dialect(case.target)) as server:
        with _connect(server, case) as client:
            assert client.complete_sync([UserMessage(content="hi")]).text == "whole"
            events = list(client.stream_sync([UserMessage(content="hi")]))
        assert isinstance(events[-1], Done) and events[-1].response.text == "streamed"
        first, second = server.requests
        stream_path = next(
            (case.path.replace(a, b) for a, b in _STREAM_PATHS.items() if case.path.endswith(a)), case.path
        )
        assert (first.path, second.path, first.decode_error) == (case.path, stream_path, None)
        assert {k: first.headers.get(k) for k in case.auth} == case.auth


@pytest.mark.parametrize("name", sorted(DEFAULT_URLS))
def test_default_addresses_and_key_variables(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = HOSTED.get(name)
    if env is not None:
        monkeypatch.delenv(env, raising=False)
        with pytest.raises(AuthenticationError, match=f"No API key for {name}: pass api_key=... to connect"):
            toolwire.client.check_target(f"{name}:m")
        monkeypatch.setenv(env, "from-env")
    assert toolwire.client.check_target(f"{name}:m") == DEFAULT_URLS[name]
    assert PROVIDERS[name].key_env == ((env,) if env else ())


def test_azure_reads_the_official_sdk_variables_and_takes_an_entra_token(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match=r"azure needs the 'endpoint' option; pass endpoint=\.\.\. \(or base_url"):
        toolwire.client.check_target("azure:d", api_key="k")
    with ScriptedServer(["by key", "by token"], dialect="azure") as server:
        monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", server.base_url + "/")
        monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
        monkeypatch.setenv("AZURE_OPENAI_API_KEY", "env-key")
        with toolwire.connect("azure:gpt-4o-prod") as client:
            assert client.complete_sync([UserMessage(content="hi")]).text == "by key"
        monkeypatch.delenv("AZURE_OPENAI_API_KEY")
        monkeypatch.setenv("AZURE_OPENAI_AD_TOKEN", "entra-token")
        with toolwire.connect("azure:gpt-4o-prod") as client:
            assert client.complete_sync([UserMessage(content="hi")]).text == "by token"
        by_key, by_token = server.requests
    path = "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21"
    assert (by_key.path, by_key.headers.get("api-key"), by_key.headers.get("authorization")) == (path, "env-key", None)
    assert (by_token.headers.get("api-key"), by_token.headers.get("authorization")) == (None, "Bearer entra-token")
    monkeypatch.delenv("AZURE_OPENAI_AD_TOKEN")
    with pytest.raises(AuthenticationError, match="set AZURE_OPENAI_API_KEY or AZURE_OPENAI_AD_TOKEN"):
        toolwire.client.check_target("azure:d")


def test_openai_compatible_uses_openai_api_key_and_warns_once_when_it_sends_none(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with ScriptedServer(["with", "without", "again"]) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "env-openai-key")
        with caplog.at_level(logging.WARNING, logger="toolwire.client"):
            with toolwire.connect("openai-compatible:m", base_url=server.base_url + "/v1") as client:
                client.complete_sync([UserMessage(content="hi")])
            assert caplog.records == []
            monkeypatch.delenv("OPENAI_API_KEY")
            with toolwire.connect("openai-compatible:m", base_url=server.base_url + "/v1") as client:
                client.complete_sync([UserMessage(content="hi")])
                client.complete_sync([UserMessage(content="hi")])
        first, second, third = server.requests
    assert first.headers.get("authorization") == "Bearer env-openai-key"
    assert (second.headers.get("authorization"), third.headers.get("authorization")) == (None, None)
    assert [r.getMessage() for r in caplog.records] == [
        "openai-compatible:m: no API key given and OPENAI_API_KEY is not set, so no Authorization header is sent; "
        "pass api_key=... (api_key_env in a route or toolwire.toml) if the server wants one."
    ]


# Mistral


def _history(call_id: str) -> list[Message]:
    call = ToolCall(id=call_id, name="get_weather", arguments={"city": "Paris"})
    return [
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(parts=[call]),
        ToolResult(tool_call_id=call_id, name="get_weather", kind="text", value="sunny"),
        UserMessage(content="And tomorrow?"),
    ]


def test_mistral_gets_nine_character_ids_any_and_no_user_right_after_a_tool_result() -> None:
    echoed = ToolCall(id="call_0fypS1hVX", name="get_weather", arguments={"city": "Lyon"})
    with ScriptedServer([reply("fine"), lambda r: reply(tool_calls=[_wire_call(r)])], dialect="mistral") as server:
        with server.connect("mistral:mistral-large-latest") as client:
            assert (
                client.complete_sync(_history("call_0fypS1hVX"), tools=[WEATHER], tool_choice="required").text == "fine"
            )
            again = client.complete_sync([*_history("call_0fypS1hVX")[:3]], tools=[WEATHER])
        body = server.requests[0].body
    wire_id = body["messages"][1]["tool_calls"][0]["id"]
    assert len(wire_id) == 9 and wire_id.isalnum()
    assert body["messages"][2]["tool_call_id"] == wire_id
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "assistant", "user"]
    assert body["tool_choice"] == "any"
    assert again.message.tool_calls == [echoed]  # an id the server echoes comes back as the caller wrote it


def _wire_call(request: Any) -> ToolCall:
    """A call reusing the wire id of the history's call, as a server that echoes ids does."""
    previous = next(m for m in request.messages if isinstance(m, AssistantMessage)).tool_calls[0]
    return ToolCall(id=previous.id, name="get_weather", arguments={"city": "Lyon"})


# Groq


def test_groq_tool_use_failed_becomes_the_calls_read_from_its_text(caplog: pytest.LogCaptureFixture) -> None:
    hermes = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'
    with ScriptedServer([groq_tool_use_failed(hermes), groq_tool_use_failed(hermes)], dialect="groq") as server:
        with server.connect("groq:llama-3.3-70b-versatile") as client:
            with caplog.at_level(logging.INFO, logger="toolwire.client"):
                whole = client.complete_sync([UserMessage(content="Weather?")], tools=[WEATHER])
            events = list(client.stream_sync([UserMessage(content="Weather?")], tools=[WEATHER]))
    assert [(c.name, c.arguments) for c in whole.message.tool_calls] == [("get_weather", {"city": "Oslo"})]
    assert whole.stop_reason is StopReason.TOOL_USE
    assert isinstance(events[-1], Done)
    assert [(c.name, c.arguments) for c in events[-1].response.message.tool_calls] == [
        ("get_weather", {"city": "Oslo"})
    ]
    assert "groq could not parse the model's tool call; toolwire read get_weather from its text." in caplog.messages


def test_groq_tool_use_failed_without_a_readable_call_is_a_retryable_model_format_error() -> None:
    with ScriptedServer([groq_tool_use_failed("I will now call the tool get weather for"), "ok"]) as server:
        with server.connect("groq:llama-3.3-70b-versatile") as client:
            with pytest.raises(ModelFormatError) as info:
                client.complete_sync([UserMessage(content="Weather?")], tools=[WEATHER])
    error = info.value
    assert (error.retryable, error.status, error.provider) == (True, 400, "groq")
    assert error.text == "I will now call the tool get weather for"
    assert error.message == (
        "groq could not parse the model's tool call and neither could toolwire ('I will now call the tool get "
        "weather for'); retry the request (a new sample is usually well formed)."
    )


# DeepSeek


def test_deepseek_gets_the_reasoning_back_beside_its_calls_whoever_wrote_it() -> None:
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    foreign = ThinkingPart(text="Paris, so the weather tool.", provider="anthropic", signature="sig")
    history: list[Message] = [
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(parts=[foreign, call]),
        ToolResult(tool_call_id="call_1", name="get_weather", kind="text", value="sunny"),
        AssistantMessage(parts=[ToolCall(id="call_2", name="get_weather", arguments={"city": "Oslo"})]),
        ToolResult(tool_call_id="call_2", name="get_weather", kind="text", value="rain"),
    ]
    with ScriptedServer(["done"], dialect="deepseek") as server:
        with server.connect("deepseek:deepseek-reasoner") as client:
            assert client.complete_sync(history, tools=[WEATHER]).text == "done"
        messages = server.requests[0].body["messages"]
    assert [m.get("reasoning_content") for m in messages if m["role"] == "assistant"] == [
        "Paris, so the weather tool.",
        "",
    ]


# Cohere


def test_cohere_streams_without_stream_options() -> None:
    with ScriptedServer(["streamed"], dialect="cohere") as server:
        with server.connect("cohere:command-a-03-2025") as client:
            events = list(client.stream_sync([UserMessage(content="hi")]))
        body = server.requests[0].body
    assert isinstance(events[-1], Done) and events[-1].response.text == "streamed"
    assert (body["stream"], "stream_options" in body) == (True, False)


# Azure


def _azure(server: ScriptedServer) -> Client:
    return server.connect("azure:gpt-4o", base_url=server.base_url, api_version="2024-10-21")


def test_azure_filter_chunks_are_skipped_and_the_reply_keeps_its_id() -> None:
    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    with ScriptedServer(
        [reply("Hello there", id="chatcmpl-9", model="gpt-4o"), reply(tool_calls=[call])], dialect="azure"
    ) as server:
        with _azure(server) as client:
            events = list(client.stream_sync([UserMessage(content="hi")]))
            calls = list(client.stream_sync([UserMessage(content="hi")], tools=[WEATHER]))
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.response.text, done.response.id, done.response.model) == ("Hello there", "chatcmpl-9", "gpt-4o")
    assert isinstance(calls[-1], Done) and calls[-1].response.message.tool_calls == [call]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_azure_filtered_prompt_is_a_content_filter_error_naming_the_categories(stream: bool) -> None:
    with ScriptedServer([azure_filtered_prompt("violence", "hate")], dialect="azure") as server:
        with _azure(server) as client, pytest.raises(ContentFilterError) as info:
            if stream:
                list(client.stream_sync([UserMessage(content="something violent")]))
            else:
                client.complete_sync([UserMessage(content="something violent")])
    error = info.value
    assert (error.categories, error.status, error.provider) == (["hate", "violence"], 400, "azure")
    assert error.message.startswith("azure's content filter blocked the prompt (hate, violence): The response was")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_azure_filtered_reply_is_a_content_filter_error_naming_the_categories(stream: bool) -> None:
    with ScriptedServer([azure_filtered_reply("Once upon", "sexual")], dialect="azure") as server:
        with _azure(server) as client, pytest.raises(ContentFilterError) as info:
            if stream:
                list(client.stream_sync([UserMessage(content="a story")]))
            else:
                client.complete_sync([UserMessage(content="a story")])
    error = info.value
    assert (error.categories, error.provider) == (["sexual"], "azure")
    assert error.message == (
        "azure's content filter stopped the reply (sexual); rephrase the request or adjust the deployment's "
        "content filter policy."
    )
    if stream:
        assert [type(e).__name__ for e in error.partial or []] == ["TextDelta"]


# OpenRouter


def test_openrouter_comment_lines_are_skipped_and_an_in_stream_error_is_typed() -> None:
    failing = openrouter_stream_error("Partial", 429, "Rate limit exceeded: upstream")
    with ScriptedServer(["streamed", failing], dialect="openrouter") as server:
        with server.connect("openrouter:openai/gpt-4o") as client:
            events = list(client.stream_sync([UserMessage(content="hi")]))
            with pytest.raises(RateLimitError) as info:
                list(client.stream_sync([UserMessage(content="hi")]))
    assert isinstance(events[-1], Done) and events[-1].response.text == "streamed"
    assert (info.value.message, info.value.status, info.value.provider) == (
        "Rate limit exceeded: upstream",
        429,
        "openrouter",
    )
    assert [getattr(e, "text", None) for e in info.value.partial or []] == ["Partial"]


def test_a_reply_with_nothing_rewritten_is_returned_as_decoded() -> None:
    response = Response(message=AssistantMessage(parts=[TextPart(text="x")]), stop_reason=StopReason.END_TURN)
    with ScriptedServer([response], dialect="mistral") as server:
        with server.connect("mistral:m") as client:
            assert client.complete_sync([UserMessage(content="hi")]).text == "x"


# Claude on Bedrock (InvokeModel)


def test_claude_on_bedrock_sends_the_messages_body_bedrock_takes_signed_and_reads_its_chunk_stream() -> None:
    call = ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Oslo"})
    with ScriptedServer([reply("", [call]), reply("", [call])]) as server:
        target = "bedrock-anthropic:anthropic.claude-sonnet-4-5-20250929-v1:0"
        options = {"region": "eu-west-1", "aws_access_key_id": "AKIDEXAMPLE", "aws_secret_access_key": "secret"}
        with toolwire.client.connect_http(target, base_url=server.base_url, **options) as client:
            whole = client.complete_sync([UserMessage(content="Weather in Oslo?")])
            events = list(client.stream_sync([UserMessage(content="Weather in Oslo?")]))
        first, second = server.requests
    streamed = events[-1]
    assert isinstance(streamed, Done)
    assert (
        [c.arguments for c in whole.tool_calls]
        == [c.arguments for c in streamed.response.tool_calls]
        == [{"city": "Oslo"}]
    )
    model = "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0"
    assert (first.path, second.path) == (model + "/invoke", model + "/invoke-with-response-stream")
    for sent in (first, second):  # no model (the path has it), no `stream` (the path says it), Bedrock's version
        assert (sorted(sent.body), sent.body["anthropic_version"]) == (
            ["anthropic_version", "max_tokens", "messages"],
            "bedrock-2023-05-31",
        )
        assert sent.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") and sent.headers[
            "authorization"
        ].split("/")[2:4] == ["eu-west-1", "bedrock"]
