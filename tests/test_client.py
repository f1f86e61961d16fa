"""Clients against the loopback server over real sockets: URLs, auth, bodies, streaming, sync twins."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import toolwire.client as client_module
from tests._providers import KEY, WEATHER, Case, call_reply, cases, codec_available, text_reply
from toolwire._connect import connect
from toolwire.client import PROVIDERS
from toolwire.codecs import get_codec
from toolwire.errors import AuthenticationError
from toolwire.testing import ScriptedServer
from toolwire.types import (
    Done,
    NamedToolChoice,
    Response,
    SystemMessage,
    TextDelta,
    ToolCallDelta,
    UserMessage,
)

MESSAGES = [SystemMessage(content="Be brief."), UserMessage(content="Weather in Paris and Tokyo?")]


def _connect(server: ScriptedServer, case: Case, **kwargs: object) -> client_module.Client:
    return server.connect(f"{case.provider}:m-1", api_key=KEY, **case.options, **kwargs)  # type: ignore[arg-type]


def _expected(case: Case, response: Response) -> Response:
    codec = get_codec(case.codec)
    return codec.decode_response(codec.encode_response(response))


@pytest.mark.parametrize("case", cases())
async def test_complete_sends_the_codec_body_with_auth_headers(case: Case) -> None:
    scripted = call_reply()
    with ScriptedServer([scripted]) as server:
        async with _connect(server, case, max_tokens=256) as client:
            response = await client.complete(MESSAGES, tools=[WEATHER], tool_choice="auto", temperature=0.0)
            expected_body = client.codec.encode_request(
                client.build_request(MESSAGES, tools=[WEATHER], tool_choice="auto", temperature=0.0)
            )
    assert response == _expected(case, scripted)  # type: ignore[arg-type]
    assert [c.arguments for c in response.tool_calls] == [{"city": "Paris"}, {"city": "Tokyo"}]
    [recorded] = server.requests
    assert recorded.path == case.path
    assert recorded.body == expected_body
    assert recorded.stream is False
    for name, value in case.auth.items():
        assert recorded.headers[name] == value
    if case.provider == "ollama":
        assert "authorization" not in recorded.headers
    assert recorded.request is not None and recorded.request.max_tokens == 256


@pytest.mark.parametrize("case", cases())
async def test_stream_end_to_end(case: Case) -> None:
    scripted = call_reply()
    with ScriptedServer([scripted]) as server:
        async with _connect(server, case) as client:
            events = [e async for e in client.stream(MESSAGES, tools=[WEATHER])]
            expected_body = client.codec.encode_request(client.build_request(MESSAGES, tools=[WEATHER], stream=True))
    [recorded] = server.requests
    assert recorded.path == case.stream_path
    assert recorded.body == expected_body
    assert recorded.stream is True
    dones = [e for e in events if isinstance(e, Done)]
    assert len(dones) == 1 and events[-1] is dones[0]
    assert dones[0].response == _expected(case, scripted)  # type: ignore[arg-type]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Checking both."
    starts = [e for e in events if isinstance(e, ToolCallDelta) and e.id is not None]
    assert [(e.index, e.name) for e in starts] == [(0, "get_weather"), (1, "get_weather")]


@pytest.mark.parametrize("case", cases("openai", "anthropic"))
def test_sync_twins_outside_an_event_loop(case: Case) -> None:
    with ScriptedServer([text_reply("one"), text_reply("two"), text_reply("three")]) as server:
        with _connect(server, case) as client:
            assert client.complete_sync("hi").text == "one"
            events = list(client.stream_sync("hi"))
            assert client.complete_sync("again").text == "three"  # the pool survives across sync calls
    assert isinstance(events[-1], Done) and events[-1].response.text == "two"
    assert len(server.requests) == 3


@pytest.mark.parametrize("case", cases("openai", "anthropic"))
async def test_sync_twins_inside_a_running_loop(case: Case) -> None:
    with ScriptedServer([text_reply("inside"), text_reply("streamed")]) as server:
        client = _connect(server, case)
        try:
            assert client.complete_sync("hi").text == "inside"
            events = list(client.stream_sync("hi"))
            assert events[-1] == Done(events[-1].response)  # type: ignore[union-attr]
            assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "streamed"
        finally:
            await client.aclose()


@pytest.mark.parametrize("case", cases("openai", "anthropic"))
async def test_breaking_out_of_a_stream_closes_it(case: Case) -> None:
    with ScriptedServer([text_reply("a long enough reply to split"), text_reply("next")]) as server:
        async with _connect(server, case) as client:
            async for _event in client.stream("hi"):
                break
            assert (await client.complete("again")).text == "next"


async def test_tool_objects_and_named_choice_are_accepted() -> None:
    class FakeTool:
        definition = WEATHER

    with ScriptedServer([text_reply()]) as server:
        async with server.connect("openai:m-1") as client:
            await client.complete("hi", tools=[FakeTool()], tool_choice="get_weather", parallel_tool_calls=False)
    request = server.requests[0].request
    assert request is not None
    assert [t.name for t in request.tools] == ["get_weather"]
    assert request.tool_choice == NamedToolChoice("get_weather")
    assert server.requests[0].body["parallel_tool_calls"] is False


# connect()


def test_provider_table_defaults() -> None:
    assert PROVIDERS["vllm"].base_url == "http://localhost:8000/v1"
    assert PROVIDERS["llamacpp"].base_url == "http://localhost:8080/v1"
    assert PROVIDERS["openai-compatible"].base_url is None
    assert {p.codec for p in PROVIDERS.values()} == {
        "openai",
        "openai-responses",
        "anthropic",
        "bedrock",
        "gemini",
        "ollama",
    }


_GEMINI = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
_VERTEX = "https://us-east5-aiplatform.googleapis.com/v1/projects/p1/locations/us-east5/publishers/google/models/g"
_GLOBAL = "https://aiplatform.googleapis.com/v1/projects/p1/locations/global/publishers/google/models/g"
URLS = [
    ("openai:gpt-x", {}, "https://api.openai.com/v1/chat/completions", None),
    ("vllm:qwen", {}, "http://localhost:8000/v1/chat/completions", None),
    ("llamacpp:any", {}, "http://localhost:8080/v1/chat/completions", None),
    ("anthropic:claude", {}, "https://api.anthropic.com/v1/messages", None),
    ("openai-responses:gpt-x", {}, "https://api.openai.com/v1/responses", None),
    ("ollama:llama3", {}, "http://localhost:11434/api/chat", None),
    (
        "gemini:gemini-2.5-flash",
        {},
        _GEMINI + ":generateContent",
        _GEMINI + ":streamGenerateContent?alt=sse",
    ),
    ("vertex:g", {"project": "p1", "location": "us-east5"}, _VERTEX + ":generateContent", None),
    ("vertex:g", {"project": "p1", "location": "global"}, _GLOBAL + ":generateContent", None),
]


@pytest.mark.parametrize(
    ("target", "options", "url", "stream_url"),
    [
        pytest.param(
            *u,
            id=u[0] + "-" + "-".join(u[1].values()),
            marks=pytest.mark.skipif(
                not codec_available(PROVIDERS[u[0].split(":")[0]].codec), reason="codec not written yet"
            ),
        )
        for u in URLS
    ],
)
def test_default_urls(
    monkeypatch: pytest.MonkeyPatch, target: str, options: dict[str, str], url: str, stream_url: str | None
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "VERTEX_ACCESS_TOKEN"):
        monkeypatch.setenv(name, KEY)
    client = connect(target, **options)
    assert client.url == url
    if stream_url is not None:
        assert client.stream_url == stream_url


def test_connect_errors_are_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "GOOGLE_CLOUD_PROJECT", "VERTEX_ACCESS_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(
        ValueError, match=r"Unknown provider 'nope' in 'nope:m'; use one of: anthropic, bedrock, gemini"
    ):
        connect("nope:m")
    with pytest.raises(ValueError, match=r"No model in 'openai'"):
        connect("openai")
    with pytest.raises(ValueError, match=r"openai-compatible needs base_url"):
        connect("openai-compatible:m")
    with pytest.raises(AuthenticationError, match=r"No API key for openai: pass api_key=\.\.\. .* OPENAI_API_KEY"):
        connect("openai:m")
    with pytest.raises(
        ValueError, match=r"vertex needs the 'project' option; pass project=\.\.\. .* GOOGLE_CLOUD_PROJECT"
    ):
        connect("vertex:m", access_token="t")
    with pytest.raises(ValueError, match=r"Unknown option\(s\) 'colour' for openai"):
        connect("openai:m", api_key="k", colour="red")


def test_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "anthropic-key")
    assert connect("anthropic:c").transport.secrets == ("anthropic-key",)
    assert connect("vllm:q").transport.secrets == ()
    if codec_available("gemini"):
        monkeypatch.delenv("GEMINI_API_KEY", raising=False)
        monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
        assert connect("gemini:g").transport.secrets == ("google-key",)
        monkeypatch.setenv("GOOGLE_OAUTH_ACCESS_TOKEN", "oauth-token")
        monkeypatch.delenv("VERTEX_ACCESS_TOKEN", raising=False)
        assert connect("vertex:g", project="p").transport.secrets == ("oauth-token",)
    if codec_available("ollama"):
        assert connect("ollama:llama3").transport.secrets == ()


def test_openai_compatible_servers_get_their_profile() -> None:
    for name in ("vllm", "llamacpp", "openai-compatible"):
        client = connect(f"{name}:m", base_url="http://127.0.0.1:9/v1")
        assert getattr(client.codec, "profile").name == name  # noqa: B009 - profile is codec-specific


def test_import_toolwire_does_not_import_httpx2() -> None:
    code = "import sys, toolwire, toolwire.client; print('httpx2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_repr_shows_no_key() -> None:
    client = connect("openai:gpt-x", api_key=KEY)
    assert KEY not in repr(client) and KEY not in repr(client.transport)
    assert repr(client) == "Client(openai:gpt-x)"


async def test_clients_on_two_loops_do_not_share_connections() -> None:
    with ScriptedServer([text_reply("a"), text_reply("b")]) as server:
        client = server.connect("openai:m-1")
        assert (await client.complete("hi")).text == "a"
        result = await asyncio.to_thread(client.complete_sync, "hi")
        assert result.text == "b"
        await client.aclose()


async def test_connect_options_become_headers_and_default_params() -> None:
    with ScriptedServer([text_reply(), text_reply()]) as server:
        async with server.connect("openai:m-1", headers={"x-trace": "t-1"}, extra={"seed": 7}, max_tokens=99) as c:
            await c.complete("hi")
            await c.complete("hi", max_tokens=5, extra={"seed": 8})
    first, second = server.requests
    assert first.headers["x-trace"] == "t-1"
    assert first.body["seed"] == 7 and second.body["seed"] == 8
    assert first.request is not None and first.request.max_tokens == 99
    assert second.request is not None and second.request.max_tokens == 5


@pytest.mark.parametrize(
    ("provider", "suffix", "path"),
    [
        ("anthropic", "", "/v1/messages"),  # anthropic.Anthropic(base_url=...) adds /v1 itself
        ("anthropic", "/v1", "/v1/messages"),
        ("anthropic", "/v1/", "/v1/messages"),
        ("anthropic", "/proxy", "/proxy/v1/messages"),
        ("gemini", "", "/v1beta/models/m-1:generateContent"),  # genai's http_options base_url
        ("gemini", "/v1beta", "/v1beta/models/m-1:generateContent"),
        ("gemini", "/v1alpha", "/v1alpha/models/m-1:generateContent"),  # a version given is kept
        ("openai", "", "/chat/completions"),  # the OpenAI SDK's base_url carries /v1 itself
        ("openai", "/v1", "/v1/chat/completions"),
        ("ollama", "", "/api/chat"),
    ],
)
async def test_base_urls_work_in_the_official_sdks_form_and_with_the_version(
    provider: str, suffix: str, path: str
) -> None:
    with ScriptedServer([text_reply()]) as server:
        async with client_module.connect_http(
            f"{provider}:m-1", api_key=KEY, base_url=server.base_url + suffix, max_retries=0
        ) as client:
            await client.complete(MESSAGES)
    [recorded] = server.requests
    assert recorded.path == path


@pytest.mark.parametrize("url", ["localhost:8000/v1", "ftp://example.com", "http://", "127.0.0.1"])
def test_a_base_url_that_is_not_http_is_refused_at_once(url: str) -> None:
    with pytest.raises(ValueError) as caught:
        client_module.connect_http("vllm:m", base_url=url)
    assert str(caught.value).startswith(f"base_url {url!r} for vllm is not an http(s) URL; OpenAI-compatible")


@pytest.mark.parametrize("case", cases())
async def test_a_lone_surrogate_in_the_conversation_is_sent_escaped_and_arrives_unchanged(case: Case) -> None:
    # A reply may carry one (`"\ud800"` is valid JSON); the next request sends it back, as JSON text.
    with ScriptedServer([text_reply("ok")]) as server:
        async with _connect(server, case) as client:
            await client.complete([UserMessage(content="a\ud800b")])
    [recorded] = server.requests
    assert recorded.request is not None and recorded.request.messages == [UserMessage(content="a\ud800b")]


_AWS_VARIABLES = (
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


def test_bedrock_needs_a_region_and_names_the_credentials_it_looked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match=r"bedrock needs the 'region' option; .* set AWS_REGION or AWS_DEFAULT_REGION"):
        connect("bedrock:amazon.nova-pro-v1:0", api_key="k")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-3")
    with pytest.raises(AuthenticationError) as raised:
        connect("bedrock:amazon.nova-pro-v1:0")
    assert raised.value.message == (
        "No credentials for bedrock: pass api_key=... (a Bedrock API key) or set AWS_BEARER_TOKEN_BEDROCK, or set "
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary credentials) to sign "
        "with SigV4; looked at AWS_BEARER_TOKEN_BEDROCK, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN."
    )


def test_bedrock_model_ids_profiles_and_arns_are_encoded_in_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    client = connect(f"bedrock:{arn}", region="us-east-1")
    assert client.url == (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3A"
        "inference-profile%2Fus.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    )
    assert client.stream_url.endswith("-v1%3A0/converse-stream")
    assert client.transport.signer is None  # the API key wins, as botocore prefers it too
    assert client.transport.secrets == ("bedrock-api-key",)


def test_bedrock_signs_with_sigv4_when_there_is_no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-access-key")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")
    client = connect("bedrock:amazon.nova-lite-v1:0")
    assert client.url == "https://bedrock-runtime.ap-south-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse"
    assert client.transport.signer is not None
    assert set(client.transport.secrets) == {"secret-access-key", "session-token"}
