"""The tool-calling bugs peers keep shipping, each run through every client protocol and the gateway.

The official SDKs (plain HTTP for Ollama) talk to a gateway; the gateway talks to `ScriptedServer`
upstreams speaking each provider's dialect. Scenarios: parallel streamed calls that share index 0,
argument deltas after the first chunk, empty arguments; schemas Gemini is said to refuse, in tools
and in results; Anthropic's parallel results in one user turn; Mistral's ids; Groq's
`tool_use_failed`; Azure's content filter, streamed and as a 400; OpenRouter's comment lines and
in-stream errors; DeepSeek's reasoning passed back.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from tests.gateway._clients import DRIVERS, GATEWAY_KEY, Turn
from tests.gateway.conftest import KEY_ENV, Gateway
from tests.gateway.test_tool_loop import EXPECTED, SCRIPT
from toolwire.gateway import Route, create_app
from toolwire.testing import RawReply, ScriptedServer
from toolwire.testing import Turn as ScriptTurn
from toolwire.testing.dialects import (
    azure_filtered_prompt,
    azure_filtered_reply,
    groq_tool_use_failed,
    openrouter_stream_error,
)

CLIENTS = sorted(DRIVERS)


@pytest.fixture(autouse=True)
def upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "upstream-key-0123456789")


def _base(target: str, server: ScriptedServer) -> str:
    name = target.split(":", 1)[0]
    roots = ("azure", "azure-responses", "anthropic", "vertex-anthropic", "bedrock-anthropic", "gemini", "ollama")
    return server.base_url if name in roots else server.base_url + "/v1"


def _gateway(target: str, server: ScriptedServer) -> Gateway:
    route = Route("m", target, base_url=_base(target, server), api_key_env=KEY_ENV)
    return Gateway(create_app([route], keys=[GATEWAY_KEY]))


def _run(target: str, script: Any, client: str, stream: bool, turns: int, dialect: str | None = None) -> list[Turn]:
    with ScriptedServer(script, dialect=dialect) as server, _gateway(target, server) as gateway:
        return DRIVERS[client](gateway.url, "m", stream, turns)


def _plain(turns: list[Turn]) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    return [(t.text, t.calls) for t in turns]


# The named providers: a three-turn loop with parallel calls, each upstream refusing what its service refuses.

NAMED = [
    ("mistral", "mistral:mistral-large-latest"),  # 9-character ids, no user turn right after a tool result
    ("deepseek", "deepseek:deepseek-reasoner"),  # reasoning_content on every assistant turn with calls
    ("azure", "azure:gpt-4o"),  # filter-only chunks, `choices: []`, api-key header
    ("openrouter", "openrouter:openai/gpt-4o"),  # comment lines in the stream
    ("cohere", "cohere:command-a-03-2025"),  # no stream_options
    ("groq", "groq:llama-3.3-70b-versatile"),
]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(("dialect", "target"), NAMED, ids=[n for n, _ in NAMED])
def test_a_tool_loop_through_each_named_provider(dialect: str, target: str, client: str, stream: bool) -> None:
    seen = _run(target, list(SCRIPT), client, stream, 3, dialect=dialect)
    assert _plain(seen) == _plain(EXPECTED)


# Stream reassembly: chunks written by hand, as the servers that broke peers send them.


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "model": "up", "choices": [choice]})


def _call(index: int, call_id: str | None, name: str | None, arguments: str | None) -> dict[str, Any]:
    function: dict[str, Any] = {} if name is None else {"name": name}
    if arguments is not None:
        function["arguments"] = arguments
    entry: dict[str, Any] = {"index": index, "function": function}
    if call_id is not None:
        entry |= {"id": call_id, "type": "function"}
    return {"tool_calls": [entry]}


STREAMS = {
    # every call at index 0, told apart only by its id (Ollama's compat endpoint; LiteLLM #33678, langchain #34807)
    "index 0 shared": [
        _call(0, "call_a", "get_weather", '{"city": "Paris"}'),
        _call(0, "call_b", "get_time", '{"tz": "CET"}'),
    ],
    # the arguments only in later chunks (LiteLLM #20711)
    "arguments after the first chunk": [
        _call(0, "call_a", "get_weather", None),
        _call(0, None, None, '{"ci'),
        _call(0, None, None, 'ty": "Paris"}'),
        _call(1, "call_b", "get_time", ""),
        _call(1, None, None, '{"tz": "CET"}'),
    ],
    # "" and no arguments at all (LiteLLM PRs #5064, #14583)
    "empty arguments": [_call(0, "call_a", "get_weather", ""), _call(1, "call_b", "get_time", None)],
}
CALLS = {
    "index 0 shared": [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    "arguments after the first chunk": [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    "empty arguments": [("get_weather", {}), ("get_time", {})],
}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("case", sorted(STREAMS))
def test_streamed_calls_reach_every_client_whole(case: str, client: str) -> None:
    lines = [_chunk({"role": "assistant", "content": None}), *map(_chunk, STREAMS[case])]
    body = "\n\n".join([*lines, _chunk({}, "tool_calls"), "data: [DONE]"]) + "\n\n"
    # Ollama's compat endpoint is where index 0 repeats; the others come from any compatible server.
    target = "ollama-openai:up" if case == "index 0 shared" else "openai-compatible:up"
    (turn,) = _run(target, [RawReply(body=body)], client, True, 1)
    assert turn.calls == CALLS[case]


# Schemas with $ref/$defs, additionalProperties and type lists, in tools and in tool results.

HOSTILE = {
    "type": "object",
    "$defs": {"Unit": {"type": "string", "enum": ["C", "F"]}},
    "properties": {"city": {"type": ["string", "null"]}, "unit": {"$ref": "#/$defs/Unit"}},
    "additionalProperties": False,
}
RESULT = {"schema": {"$ref": "#/$defs/X", "type": ["integer", "null"], "additionalProperties": True}}


@pytest.mark.parametrize("client", ["openai", "anthropic"])
def test_schema_keywords_reach_gemini_as_json_schema_in_tools_and_results(client: str) -> None:
    call = {"id": "call_1", "name": "report", "arguments": {"city": "Paris"}}
    if client == "openai":
        path, body = "/v1/chat/completions", _openai_body(call)
    else:
        path, body = "/v1/messages", _anthropic_body(call)
    with ScriptedServer(["ok"]) as server, _gateway("gemini:gemini-2.5-flash", server) as gateway:
        answer = httpx2.post(gateway.url + path, json=body, headers={"authorization": f"Bearer {GATEWAY_KEY}"})
        assert answer.status_code == 200, answer.text
        (upstream,) = server.requests
    declaration = upstream.body["tools"][0]["functionDeclarations"][0]
    assert declaration["parametersJsonSchema"] == HOSTILE
    response = upstream.body["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response == {"output": json.dumps(RESULT)}  # the text as the client wrote it, nothing stripped


def _openai_body(call: dict[str, Any]) -> dict[str, Any]:
    wire_call = {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": "{}"}}
    return {
        "model": "m",
        "tools": [{"type": "function", "function": {"name": "report", "parameters": HOSTILE}}],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [wire_call]},
            {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(RESULT)},
        ],
    }


def _anthropic_body(call: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "m",
        "max_tokens": 100,
        "tools": [{"name": "report", "input_schema": HOSTILE}],
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": call["id"], "name": "report", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": json.dumps(RESULT)}],
            },
        ],
    }


# Anthropic: parallel results in ONE user turn, whatever protocol the client wrote them in.


@pytest.mark.parametrize("client", CLIENTS)
def test_parallel_results_reach_anthropic_in_one_user_turn(client: str) -> None:
    with ScriptedServer(list(SCRIPT)) as server, _gateway("anthropic:claude-sonnet-4-5", server) as gateway:
        DRIVERS[client](gateway.url, "m", False, 2)
        second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert [block["type"] for block in second[2]["content"]] == ["tool_result", "tool_result"]


# Groq: a call its server could not parse is read from the model's text.

HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n</tool_call>'


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("client", CLIENTS)
def test_groq_tool_use_failed_reaches_every_client_as_a_call(client: str, stream: bool) -> None:
    (turn,) = _run("groq:llama-3.3-70b-versatile", [groq_tool_use_failed(HERMES)], client, stream, 1, "groq")
    assert turn.calls == [("get_weather", {"city": "Oslo"})]


# Errors: the client gets its own protocol's error, with the provider's words in it.


def _failure(target: str, turn: ScriptTurn, client: str, stream: bool, dialect: str) -> str:
    """What the client saw of a failed turn: the SDK's exception text, or Ollama's error line."""
    with ScriptedServer([turn], dialect=dialect) as server, _gateway(target, server) as gateway:
        if client == "ollama":
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
            answer = httpx2.post(
                gateway.url + "/api/chat", json=body, headers={"authorization": f"Bearer {GATEWAY_KEY}"}
            )
            last = json.loads(answer.text.strip().splitlines()[-1])
            return f"HTTP {answer.status_code}: {last['error']}"
        with pytest.raises(Exception) as info:
            DRIVERS[client](gateway.url, "m", stream, 1)
        return str(info.value)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("client", CLIENTS)
def test_azure_filtered_prompt_reaches_every_client_naming_the_categories(client: str, stream: bool) -> None:
    seen = _failure("azure:gpt-4o", azure_filtered_prompt("violence", "hate"), client, stream, "azure")
    assert "Upstream content filter: azure's content filter blocked the prompt (hate, violence)" in seen
    if client == "ollama":
        assert seen.startswith("HTTP 400: ")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("client", CLIENTS)
def test_azure_filtered_reply_reaches_every_client_naming_the_categories(client: str, stream: bool) -> None:
    seen = _failure("azure:gpt-4o", azure_filtered_reply("Once upon", "sexual"), client, stream, "azure")
    assert "azure's content filter stopped the reply (sexual)" in seen


@pytest.mark.parametrize("client", CLIENTS)
def test_openrouter_in_stream_error_reaches_every_client(client: str) -> None:
    failing = openrouter_stream_error("Partial", 429, "Rate limit exceeded: upstream busy")
    seen = _failure("openrouter:openai/gpt-4o", failing, client, True, "openrouter")
    assert "Rate limit exceeded: upstream busy" in seen


# Every other named provider: a gateway route reaches its address with its auth, whole and streamed.

VERTEX = "/v1/projects/p/locations/global/publishers/anthropic/models/"
ROUTED = [
    ("xai:grok-4", "/v1/chat/completions", "authorization"),
    ("together:meta-llama/Llama-3.3-70B-Instruct-Turbo", "/v1/chat/completions", "authorization"),
    ("fireworks:accounts/fireworks/models/llama-v3p3-70b-instruct", "/v1/chat/completions", "authorization"),
    ("cerebras:llama-3.3-70b", "/v1/chat/completions", "authorization"),
    ("huggingface:openai/gpt-oss-120b", "/v1/chat/completions", "authorization"),
    ("lmstudio:qwen3-8b", "/v1/chat/completions", "authorization"),
    ("sglang:qwen3-8b", "/v1/chat/completions", "authorization"),
    ("azure-responses:gpt-4o", "/openai/v1/responses", "api-key"),
    ("vertex-anthropic:claude-sonnet-4-5", VERTEX + "claude-sonnet-4-5:rawPredict", "authorization"),
    ("bedrock-anthropic:anthropic.claude-sonnet-4-5", "/model/anthropic.claude-sonnet-4-5/invoke", "authorization"),
]
_STREAM_PATHS = {":rawPredict": ":streamRawPredict", "/invoke": "/invoke-with-response-stream"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("target", "path", "header"), ROUTED, ids=[t.split(":")[0] for t, _, _ in ROUTED])
def test_a_route_reaches_each_named_provider(
    target: str, path: str, header: str, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    with ScriptedServer(list(SCRIPT)) as server, _gateway(target, server) as gateway:
        seen = DRIVERS["openai"](gateway.url, "m", stream, 1)
        (request,) = server.requests
    assert _plain(seen) == _plain(EXPECTED[:1])
    streamed = next((path.replace(a, b) for a, b in _STREAM_PATHS.items() if path.endswith(a)), path)
    expected_path = streamed if stream else path
    assert (request.path, request.headers.get(header) is not None, request.decode_error) == (expected_path, True, None)


def test_an_anthropic_client_reaches_claude_on_vertex_translated_not_passed_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    with ScriptedServer(list(SCRIPT)) as server, _gateway("vertex-anthropic:claude-sonnet-4-5", server) as gateway:
        seen = DRIVERS["anthropic"](gateway.url, "m", False, 1)
        (request,) = server.requests
    assert _plain(seen) == _plain(EXPECTED[:1])
    assert ("model" in request.body, request.body["anthropic_version"]) == (False, "vertex-2023-10-16")
