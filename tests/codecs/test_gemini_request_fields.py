"""Gemini request fields coding agents send decode: VALIDATED, responseJsonSchema, thinkingConfig, new parts."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from google.genai import types as genai

from tests.codecs._request_fields import (
    fresh_warnings,
    load,
    messages_of,
)
from toolwire import (
    AssistantMessage,
    ResponseFormat,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)
from toolwire.codecs import get_codec, guarded
from toolwire.codecs.gemini import GeminiCodec


@pytest.fixture(autouse=True)
def _fresh_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with fresh_warnings(caplog):
        yield


# Gemini


def test_gemini_features_round_trip_and_decode_exactly(caplog: pytest.LogCaptureFixture) -> None:
    body = load("gemini", "coding_agent.request.json")
    for content in [body["systemInstruction"], *body["contents"]]:
        genai.Content.model_validate(content)
    for tool in body["tools"]:
        genai.Tool.model_validate(tool)
    genai.ToolConfig.model_validate(body["toolConfig"])
    genai.GenerationConfig.model_validate(body["generationConfig"])
    codec = guarded(GeminiCodec())
    request = codec.decode_request(copy.deepcopy(body))
    call = ToolCall(
        id="fc_gem_1",
        name="lookup_region",
        arguments={"code": "EU"},
        metadata={"gemini": {"id": "fc_gem_1", "thought_signature": "CiwBjz1rX8pQ"}},
    )
    assert request.messages == [
        SystemMessage(content="You are a data assistant."),
        UserMessage(content="Average of the sales column, then look up the region."),
        AssistantMessage(parts=[call]),
        ToolResult.text(call, "Europe"),
    ]
    schema = body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"]
    assert request.tools == [
        ToolDefinition(name="lookup_region", description="Name of a region code.", parameters=schema)
    ]
    assert (request.tool_choice, request.max_tokens, request.temperature) == ("auto", 2048, 0.2)
    assert request.extra["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
    neutral = ("maxOutputTokens", "temperature", "responseMimeType", "responseJsonSchema")
    assert request.extra["generationConfig"] == {k: v for k, v in body["generationConfig"].items() if k not in neutral}
    assert request.response_format == ResponseFormat(schema=body["generationConfig"]["responseJsonSchema"])
    only = "has no neutral form; it goes back to Gemini only (Request.extra)."
    assert messages_of(caplog.records) == [
        f"gemini: function declaration field 'responseJsonSchema' {only}",
        f"gemini: tool 'codeExecution' {only}",
        f"gemini: tool 'googleSearch' {only}",
        f"gemini: tool 'urlContext' {only}",
        f"gemini: part type 'executableCode' {only}",
        f"gemini: part type 'codeExecutionResult' {only}",
        "gemini: functionCallingConfig mode 'VALIDATED' reads as tool_choice 'auto'; its schema enforcement goes "
        "back to Gemini only (Request.extra).",
    ]
    assert codec.encode_request(request) == body


def test_gemini_sdk_built_history_reaches_openai(caplog: pytest.LogCaptureFixture) -> None:
    contents = [
        genai.Content(role="user", parts=[genai.Part(text="Weather in Paris?")]),
        genai.Content(
            role="model",
            parts=[
                genai.Part(function_call=genai.FunctionCall(name="get_weather", args={"city": "Paris"})),
                genai.Part(code_execution_result=genai.CodeExecutionResult(outcome="OUTCOME_OK", output="ok")),
            ],
        ),
        genai.Content(
            role="user",
            parts=[genai.Part(function_response=genai.FunctionResponse(name="get_weather", response={"output": "9C"}))],
        ),
    ]
    declaration = genai.FunctionDeclaration(
        name="get_weather", parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}}
    )
    body = {
        "contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in contents],
        "tools": [
            genai.Tool(function_declarations=[declaration]).model_dump(mode="json", by_alias=True, exclude_none=True)
        ],
        "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}},
    }
    request = guarded(GeminiCodec()).decode_request(body)
    caplog.clear()
    openai = get_codec("openai").encode_request(request)
    assert openai["tool_choice"] == "auto"
    assert openai["tools"][0]["function"]["parameters"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
    }
    call_id = openai["messages"][1]["tool_calls"][0]["id"]
    assert openai["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "9C"},
    ]
    assert messages_of(caplog.records) == [
        "openai: left out gemini options it has no equivalent for: contents, toolConfig."
    ]


def test_a_dotted_function_name_stays_with_gemini(caplog: pytest.LogCaptureFixture) -> None:
    gemini_body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "crm.lookup", "parametersJsonSchema": {"type": "object"}}]}],
    }
    request = guarded(GeminiCodec()).decode_request(copy.deepcopy(gemini_body))
    assert (request.tools, request.extra) == ([], {"tools": gemini_body["tools"]})
    assert messages_of(caplog.records) == [
        "gemini: function name 'crm.lookup' has no neutral form; it goes back to Gemini only (Request.extra)."
    ]


def test_upper_case_types_in_response_json_schema_become_json_schema() -> None:
    """Gemini CLI's model router asks for JSON with OpenAPI's upper-case types; OpenAI rejects those."""
    schema = {
        "type": "OBJECT",
        "properties": {"reason": {"type": "STRING"}, "score": {"type": "INTEGER", "description": "1-100."}},
        "required": ["reason", "score"],
    }
    body = {
        "contents": [{"role": "user", "parts": [{"text": "Rate it."}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema},
    }
    request = GeminiCodec().decode_request(copy.deepcopy(body))
    assert request.response_format == ResponseFormat(
        schema={
            "type": "object",
            "properties": {"reason": {"type": "string"}, "score": {"type": "integer", "description": "1-100."}},
            "required": ["reason", "score"],
        }
    )
