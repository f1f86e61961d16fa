"""A client's JSON output format reaches upstreams without that field, through their output strategy.

The official OpenAI SDK asks for `response_format: json_schema` (and the Responses API for
`text.format`, a Gemini client for `responseJsonSchema`); the upstreams are loopback servers
speaking Anthropic (the `tool` strategy: a forced final-answer tool), Gemini (`native`:
`responseJsonSchema`) and llama-cpp-python (`constrained`: the schema cut to its grammar and
described in the prompt). The client gets schema-valid JSON where its protocol puts it,
whole and streamed; a schema that is not one is a 400.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

import httpx2
import jsonschema
import pytest
from pydantic import BaseModel

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import KEY_ENV, Gateway
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer, reply
from toolwire.toolmodes import OUTPUT_TOOL
from toolwire.types import Request, Response, ToolCall


class Invoice(BaseModel):
    number: str
    total: float
    currency: Literal["EUR", "USD"]


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "number": {"type": "string"},
        "total": {"type": "number"},
        "currency": {"type": "string", "enum": ["EUR", "USD"]},
    },
    "required": ["number", "total", "currency"],
    "additionalProperties": False,
}
ANSWER = {"number": "INV-7", "total": 12.5, "currency": "EUR"}
UPSTREAMS = {
    "anthropic": "anthropic:claude",
    "gemini": "gemini:gemini-2.5-flash",
    "small": "llama-cpp-python:smollm2",
    "bedrock": "bedrock:anthropic.claude-3-haiku",
}


def answer(request: Request) -> Response:
    """The upstream model: the answer as the request asks for it (the output tool, or JSON text)."""
    if any(t.name == OUTPUT_TOOL for t in request.tools):
        return reply(tool_calls=[ToolCall(id="toolu_1", name=OUTPUT_TOOL, arguments=ANSWER)])
    return reply(json.dumps(ANSWER))


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedServer]:
    with ScriptedServer(answer) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(upstream: ScriptedServer, upstream_key: str) -> Iterator[Gateway]:
    routes = [
        Route(f"to-{name}", target, base_url=upstream.base_url, api_key_env=KEY_ENV)
        for name, target in UPSTREAMS.items()
    ]
    with Gateway(create_app(routes, keys=[GATEWAY_KEY])) as running:
        yield running


def openai_json(url: str, model: str, stream: bool) -> str:
    import openai

    response_format: Any = {"type": "json_schema", "json_schema": {"name": "invoice", "schema": SCHEMA, "strict": True}}
    messages: Any = [{"role": "user", "content": "INV-7, 12.50 EUR"}]
    with openai.OpenAI(base_url=url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        if not stream:
            reply = client.chat.completions.create(model=model, messages=messages, response_format=response_format)
            return reply.choices[0].message.content or ""
        chunks = client.chat.completions.create(
            model=model, messages=messages, response_format=response_format, stream=True
        )
        return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("name", list(UPSTREAMS))
def test_an_openai_sdk_json_schema_comes_back_as_valid_json_in_message_content(
    gateway: Gateway, upstream: ScriptedServer, name: str, stream: bool
) -> None:
    start = len(upstream.requests)
    content = openai_json(gateway.url, f"to-{name}", stream)
    jsonschema.validate(json.loads(content), SCHEMA)
    assert json.loads(content) == ANSWER
    (sent,) = (r.body for r in upstream.requests[start:])
    if name == "anthropic":  # the tool strategy: a forced final-answer tool with the client's schema
        assert sent["tool_choice"] == {"type": "tool", "name": OUTPUT_TOOL}
        assert sent["tools"][0]["input_schema"]["properties"] == SCHEMA["properties"]
        assert "output_config" not in sent
    elif name == "bedrock":  # the tool strategy, in Converse's toolConfig
        assert sent["toolConfig"]["toolChoice"] == {"tool": {"name": OUTPUT_TOOL}}
        assert sent["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"]["properties"] == SCHEMA["properties"]
    elif name == "gemini":  # native: responseJsonSchema
        assert sent["generationConfig"]["responseJsonSchema"] == SCHEMA
        assert sent["generationConfig"]["responseMimeType"] == "application/json"
    else:  # constrained: llama-cpp-python's json_object form, and the schema in the prompt
        assert sent["response_format"]["type"] == "json_object"
        assert sent["response_format"]["schema"]["properties"]["currency"]["enum"] == ["EUR", "USD"]
        assert "matches this JSON Schema" in sent["messages"][0]["content"]


def test_the_sdks_parse_helper_gets_a_validated_model_through_anthropic(gateway: Gateway) -> None:
    import openai

    with openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        completion = client.chat.completions.parse(
            model="to-anthropic", messages=[{"role": "user", "content": "INV-7"}], response_format=Invoice
        )
    assert completion.choices[0].message.parsed == Invoice(number="INV-7", total=12.5, currency="EUR")
    assert completion.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_responses_client_text_format_reaches_anthropic(gateway: Gateway, stream: bool) -> None:
    import openai

    text: Any = {"format": {"type": "json_schema", "name": "invoice", "schema": SCHEMA, "strict": True}}
    with openai.OpenAI(base_url=gateway.url + "/v1", api_key=GATEWAY_KEY, max_retries=0) as client:
        if stream:
            events = client.responses.create(model="to-anthropic", input="INV-7", text=text, stream=True)
            output = "".join(e.delta for e in events if e.type == "response.output_text.delta")
        else:
            output = client.responses.create(model="to-anthropic", input="INV-7", text=text).output_text
    assert json.loads(output) == ANSWER


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_a_gemini_client_response_json_schema_reaches_anthropic(gateway: Gateway, stream: bool) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "INV-7"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": SCHEMA},
    }
    verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
    url = f"{gateway.url}/v1beta/models/to-anthropic:{verb}"
    got = httpx2.post(url, json=body, headers={"x-goog-api-key": GATEWAY_KEY}, timeout=60)
    assert got.status_code == 200, got.text
    if stream:
        chunks = [json.loads(line[5:]) for line in got.text.splitlines() if line.startswith("data:")]
        parts = [
            p for c in chunks for cand in c.get("candidates", []) for p in cand.get("content", {}).get("parts", [])
        ]
    else:
        parts = got.json()["candidates"][0]["content"]["parts"]
    assert json.loads("".join(p.get("text", "") for p in parts)) == ANSWER


def test_a_schema_that_is_not_one_is_a_400(gateway: Gateway, upstream: ScriptedServer) -> None:
    start = len(upstream.requests)
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "objekt"}}}
    got = httpx2.post(
        f"{gateway.url}/v1/chat/completions",
        json={"model": "to-anthropic", "messages": [{"role": "user", "content": "hi"}], "response_format": bad},
        headers={"authorization": f"Bearer {GATEWAY_KEY}"},
        timeout=60,
    )
    assert got.status_code == 400
    assert got.json()["error"]["message"].startswith(
        "The response format cannot be honoured: The output schema is not a valid JSON Schema: 'objekt' is not valid"
    )
    assert len(upstream.requests) == start
