"""Bedrock at the gateway: boto3's bedrock-runtime client as a real client, Bedrock targets behind any client.

The tool loops of every client protocol against every upstream (Bedrock's included) are in
test_tool_loop.py; here: both ways boto3 authenticates, its errors, a mid-stream failure, model
ids that are ARNs, and a Bedrock upstream reached with SigV4 whose signature botocore agrees with.
"""

from __future__ import annotations

import datetime
import json
import re
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from botocore.exceptions import ClientError, EventStreamError

from tests.gateway._clients import GATEWAY_KEY, TOOLS, bedrock_client, bedrock_stream_message
from tests.gateway.conftest import KEY_ENV, UPSTREAM_KEY, Gateway
from tests.http.test_sigv4 import botocore_signature
from toolwire.gateway import Route, Target, create_app
from toolwire.http import AwsCredentials
from toolwire.testing import DropStream, ErrorReply, ScriptedServer, reply
from toolwire.types import ToolCall

ARN = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOL_CONFIG = {
    "tools": [
        {"toolSpec": {"name": t["name"], "description": t["description"], "inputSchema": {"json": t["parameters"]}}}
        for t in TOOLS
    ]
}
HELLO = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]


@pytest.fixture(scope="module")
def anthropic_upstream() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(anthropic_upstream: ScriptedServer, upstream_key: str) -> Iterator[Gateway]:
    url = anthropic_upstream.base_url
    routes = [
        Route(model="arn:aws:bedrock:*", target="anthropic:claude-up", base_url=url, api_key_env=KEY_ENV),
        Route(model="anthropic.*", target="anthropic:claude-up", base_url=url, api_key_env=KEY_ENV),
    ]
    with Gateway(create_app(routes, keys=[GATEWAY_KEY])) as running:
        yield running


def test_a_bedrock_api_key_is_a_gateway_key(gateway: Gateway, anthropic_upstream: ScriptedServer) -> None:
    # botocore sends AWS_BEARER_TOKEN_BEDROCK as `Authorization: Bearer` (over HTTPS only: behind a
    # TLS-terminating proxy); the same request over plain HTTP here.
    anthropic_upstream.add(reply("Sunny.", [ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})]))
    path = f"/model/{urllib.parse.quote(ARN, safe='')}/converse"
    body = {"messages": HELLO, "toolConfig": TOOL_CONFIG}
    response = httpx2.post(gateway.url + path, json=body, headers={"authorization": f"Bearer {GATEWAY_KEY}"})
    assert response.status_code == 200
    assert anthropic_upstream.requests[-1].headers["x-api-key"] == UPSTREAM_KEY  # the client's key stays here
    answer = response.json()
    assert answer["output"]["message"]["content"] == [
        {"text": "Sunny."},
        {"toolUse": {"toolUseId": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}},
    ]
    assert answer["stopReason"] == "tool_use"


@pytest.fixture
def boto3_client(gateway: Gateway) -> Iterator[Any]:
    client = bedrock_client(gateway.url)
    yield client
    client.close()  # its connection pool, or a later test sees an unclosed socket


def test_a_sigv4_signature_offers_its_access_key_id(boto3_client: Any, anthropic_upstream: ScriptedServer) -> None:
    anthropic_upstream.add(reply("Hi."))
    answer = boto3_client.converse(modelId="anthropic.claude-3-haiku-20240307-v1:0", messages=HELLO)
    assert answer["output"]["message"]["content"] == [{"text": "Hi."}]
    # The model id reached the router decoded, ':' and all.
    assert anthropic_upstream.requests[-1].request.model == "claude-up"  # type: ignore[union-attr]


def test_the_readme_boto3_example_runs_through_the_gateway(
    gateway: Gateway, anthropic_upstream: ScriptedServer
) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```python\n(.*?)^```", readme, re.DOTALL | re.MULTILINE) if "boto3" in b]
    local = block.replace("http://127.0.0.1:4000", gateway.url).replace("my-gateway-key", GATEWAY_KEY)
    anthropic_upstream.add(reply("Hello through the gateway."))
    done = subprocess.run([sys.executable, "-c", local], capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "Hello through the gateway.\n", "")


def test_a_wrong_key_is_refused_in_bedrocks_terms(gateway: Gateway) -> None:
    client = bedrock_client(gateway.url, aws_access_key_id="AKIDWRONG", aws_secret_access_key="x")
    with pytest.raises(ClientError) as raised:
        client.converse(modelId=ARN, messages=HELLO)
    client.close()
    error = raised.value.response
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 401
    assert error["Error"]["Code"] == "UnrecognizedClientException"
    assert "Missing or wrong gateway key" in error["Error"]["Message"]


def test_an_upstream_429_is_bedrocks_throttling(boto3_client: Any, anthropic_upstream: ScriptedServer) -> None:
    anthropic_upstream.add(ErrorReply(status=429, message="slow down", headers={"retry-after": "3"}))
    with pytest.raises(ClientError) as raised:
        boto3_client.converse(modelId=ARN, messages=HELLO)
    assert raised.value.response["Error"]["Code"] == "ThrottlingException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429


def test_a_failure_mid_stream_is_an_exception_event(boto3_client: Any, anthropic_upstream: ScriptedServer) -> None:
    anthropic_upstream.add(DropStream(response=reply("A long answer that never ends."), after=4, clean=False))
    stream = boto3_client.converse_stream(modelId=ARN, messages=HELLO)["stream"]
    with pytest.raises(EventStreamError) as raised:
        bedrock_stream_message(stream)
    stream.close()
    assert raised.value.response["Error"]["Code"] in ("internalServerException", "modelStreamErrorException")


def test_an_unknown_operation_is_a_404(gateway: Gateway) -> None:
    response = httpx2.post(
        gateway.url + "/model/anthropic.claude/invoke", json={}, headers={"authorization": f"Bearer {GATEWAY_KEY}"}
    )
    assert response.status_code == 404
    assert response.json() == {
        "__type": "ResourceNotFoundException",
        "message": "Unknown Bedrock operation 'invoke'; use converse or converse-stream.",
    }


# A Bedrock upstream signed with SigV4, behind an OpenAI client.


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> AwsCredentials:
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDGATEWAYUPSTREAM")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "gateway/upstream/secret/key")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "gateway-session-token")
    return AwsCredentials("AKIDGATEWAYUPSTREAM", "gateway/upstream/secret/key", "gateway-session-token")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_bedrock_target_signed_as_botocore_signs(
    aws_credentials: AwsCredentials, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    calls = [
        ToolCall(id="tooluse_a", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="tooluse_b", name="get_time", arguments={"tz": "CET"}),
    ]
    with ScriptedServer([reply("Both.", calls)]) as bedrock:
        route = Route(model="gpt-*", target=f"bedrock:{ARN}", base_url=bedrock.base_url)
        with Gateway(create_app([route], keys=[GATEWAY_KEY])) as gateway:
            client = openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0)
            tools: Any = [{"type": "function", "function": t} for t in TOOLS]
            messages: Any = [{"role": "user", "content": "Weather and time?"}]
            if stream:
                chunks = list(
                    client.chat.completions.create(model="gpt-x", messages=messages, tools=tools, stream=True)
                )
                deltas = [c for ch in chunks if ch.choices for c in ch.choices[0].delta.tool_calls or []]
                names = [c.function.name for c in deltas if c.function and c.function.name]
            else:
                answer = client.chat.completions.create(model="gpt-x", messages=messages, tools=tools)
                names = [c.function.name for c in answer.choices[0].message.tool_calls or []]  # type: ignore[union-attr]
            client.close()
        assert names == ["get_weather", "get_time"]
    recorded = bedrock.requests[0]
    action = "converse-stream" if stream else "converse"
    assert recorded.path == f"/model/{urllib.parse.quote(ARN, safe='')}/{action}"
    when = datetime.datetime.strptime(recorded.headers["x-amz-date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
    signed = {"content-type": recorded.headers["content-type"], "host": recorded.headers["host"]}
    url = f"http://{recorded.headers['host']}{recorded.path}"
    theirs = botocore_signature(
        "POST", url, recorded.raw_body, signed, aws_credentials, "eu-central-1", when, monkeypatch
    )
    assert recorded.headers["authorization"] == theirs
    assert recorded.headers["x-amz-security-token"] == "gateway-session-token"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_throttled_bedrock_target_hands_the_request_to_the_next(
    aws_credentials: AwsCredentials, anthropic_upstream: ScriptedServer, upstream_key: str, stream: bool
) -> None:
    with ScriptedServer([ErrorReply(status=429, message="Too many requests, please wait.")]) as bedrock:
        targets = [
            Target(f"bedrock:{ARN}", base_url=bedrock.base_url),
            Target("anthropic:claude-up", base_url=anthropic_upstream.base_url, api_key_env=KEY_ENV),
        ]
        anthropic_upstream.add(reply("From the second target."))
        with Gateway(create_app([Route("*", targets=targets)])) as gateway:
            body = {"model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
            answer = httpx2.post(gateway.url + "/v1/chat/completions", json=body, timeout=30)
    assert (answer.status_code, answer.headers["x-toolwire-target"]) == (200, "anthropic:claude-up")
    assert _openai_text(answer.text, stream) == "From the second target."
    assert bedrock.request_count == 1
    assert bedrock.requests[0].headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDGATEWAYUPSTREAM/")


def _openai_text(body: str, stream: bool) -> str:
    if not stream:
        return str(json.loads(body)["choices"][0]["message"]["content"])
    chunks = [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
