"""What coding agents send this year decodes: Anthropic, Responses and Gemini request features.

Each fixture is a body as the newest official SDK types it (validated with them), decoded and
encoded again for the same provider (the same body back), and encoded for other providers
(what has no place there is dropped, and the log says so once, word for word).
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming as BetaParams
from google.genai import types as genai
from openai.types.responses import Response as SDKResponse
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from openai.types.responses.response_input_item_param import ResponseInputItemParam

from toolwire import (
    AssistantMessage,
    Request,
    SystemMessage,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)
from toolwire.codecs import _anthropic_requests, _guard, _openai_responses_replies, get_codec, guarded
from toolwire.codecs._gemini import GeminiCodec

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BASH_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
EPHEMERAL = {"type": "ephemeral"}
ANTHROPIC_PARAMS = pydantic.TypeAdapter(BetaParams)
RESPONSES_PARAMS = pydantic.TypeAdapter(ResponseCreateParamsNonStreaming)
RESPONSES_ITEM = pydantic.TypeAdapter(ResponseInputItemParam)


def load(provider: str, name: str) -> Any:
    return json.loads((FIXTURES / provider / name).read_text(encoding="utf-8"))


def force(value: Any) -> Any:
    """Consume pydantic's lazy iterators (SDK params use `Iterable`) so nested blocks get validated."""
    if isinstance(value, dict):
        return {k: force(v) for k, v in value.items()}
    if isinstance(value, list | Iterator) and not isinstance(value, str):
        return [force(v) for v in value]
    return value


def check_anthropic_body(body: dict[str, Any]) -> None:
    """Valid for anthropic-sdk-python's beta `messages.create` (where `context_management` lives).

    The adapters live as long as the module: pydantic-core panics when a lazy iterator outlives
    the adapter that made it.
    """
    force(ANTHROPIC_PARAMS.validate_python(copy.deepcopy({k: v for k, v in body.items() if k != "stream"})))


def messages_of(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if r.name.startswith("toolwire")]


@pytest.fixture(autouse=True)
def fresh_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Each test sees every once-per-process warning, whatever ran before it."""
    sets = [_anthropic_requests._warned, _openai_responses_replies.warned, _guard._warned]
    saved = [set(s) for s in sets]
    for s in sets:
        s.clear()
    caplog.set_level(logging.WARNING, logger="toolwire")
    yield
    for s, old in zip(sets, saved, strict=True):
        s.clear()
        s.update(old)


# Anthropic


def test_anthropic_features_round_trip_and_decode_exactly(caplog: pytest.LogCaptureFixture) -> None:
    body = load("anthropic", "new_request_features.request.json")
    check_anthropic_body(body)
    codec = get_codec("anthropic")
    request = codec.decode_request(copy.deepcopy(body))
    assert request.messages == [
        SystemMessage(content="You are a coding agent."),
        SystemMessage(content="Work in /repo."),
        UserMessage(
            content=[
                TextPart(
                    text="Fix the failing test.", metadata={"anthropic": {"cache_control": EPHEMERAL | {"ttl": "1h"}}}
                )
            ]
        ),
        AssistantMessage(
            parts=[
                ThinkingPart(text="Run the tests first.", signature="EqQBCgIYAhIMsig", provider="anthropic"),
                TextPart(text="Running them."),
                ToolCall(
                    id="toolu_01",
                    name="bash",
                    arguments={"command": "pytest -x"},
                    metadata={"anthropic": {"caller": {"type": "direct"}}},
                ),
            ]
        ),
        ToolResult(
            tool_call_id="toolu_01",
            name="bash",
            kind="text",
            value="1 failed",
            metadata={"anthropic": {"cache_control": EPHEMERAL}},
        ),
        SystemMessage(content="The user switched to plan mode: do not edit files."),
        AssistantMessage(parts=[TextPart(text="Plan: fix the off-by-one in range().")]),
        UserMessage(content="Go ahead."),
        SystemMessage(content="Plan mode is over."),
        SystemMessage(content="Edits are allowed again."),
    ]
    assert request.tools == [ToolDefinition(name="bash", description="Run a shell command.", parameters=BASH_SCHEMA)]
    assert request.tool_choice == "auto" and request.stream is True and request.max_tokens == 32000
    assert sorted(request.extra) == [
        "cache_control",
        "context_management",
        "metadata",
        "output_config",
        "system",
        "thinking",
        "tools",
    ]
    assert request.extra["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert messages_of(caplog.records) == [
        "anthropic: tool type 'web_search_20250305' has no neutral form and is dropped when decoding a request."
    ]
    assert codec.encode_request(request) == body


def test_anthropic_unknown_blocks_are_dropped_visibly(caplog: pytest.LogCaptureFixture) -> None:
    body = load("anthropic", "unknown_blocks.client.json")
    check_anthropic_body(body)
    request = get_codec("anthropic").decode_request(copy.deepcopy(body))
    call = ToolCall(id="toolu_02", name="read_file", arguments={"path": "setup.cfg"})
    assert request.messages == [
        UserMessage(content=[TextPart(text="Which Python versions are supported?")]),
        AssistantMessage(parts=[TextPart(text="Python 3.10 and later."), call]),
        ToolResult.multimodal(call, [TextPart(text="python_requires = >=3.10")]),
        UserMessage(content=[TextPart(text="Thanks.")]),
    ]
    assert request.extra == {}
    dropped = "has no neutral form and is dropped when decoding a request."
    assert messages_of(caplog.records) == [
        f"anthropic: content block type {kind!r} {dropped}"
        for kind in (
            "document",
            "search_result",
            "container_upload",
            "server_tool_use",
            "web_search_tool_result",
            "tool_reference",
        )
    ]


def test_anthropic_system_message_fields_and_image_hints_are_named(caplog: pytest.LogCaptureFixture) -> None:
    png = "iVBORw0KGgo="
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}}
    body = {
        "model": "claude-opus-4-8",
        "max_tokens": 10,
        "messages": [
            {"role": "user", "content": [image | {"cache_control": EPHEMERAL}]},
            {"role": "system", "content": [{"type": "text", "text": "Be brief.", "cache_control": EPHEMERAL}]},
        ],
    }
    check_anthropic_body(body)
    request = get_codec("anthropic").decode_request(body)
    assert request.messages[1] == SystemMessage(content="Be brief.")
    assert messages_of(caplog.records) == [
        "anthropic: field of an image block 'cache_control' has no neutral form and is dropped when "
        "decoding a request.",
        "anthropic: field of a system message block 'cache_control' has no neutral form and is dropped when "
        "decoding a request.",
    ]


def test_mid_conversation_system_messages_in_every_target(caplog: pytest.LogCaptureFixture) -> None:
    request = Request(
        model="m",
        messages=[
            SystemMessage(content="Rules."),
            UserMessage(content="hi"),
            SystemMessage(content="Plan mode."),
            AssistantMessage(parts=[TextPart(text="ok")]),
            UserMessage(content="go"),
        ],
    )
    assert get_codec("anthropic").encode_request(request)["messages"] == [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": "Plan mode."},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": "go"},
    ]
    assert get_codec("anthropic").encode_request(request)["system"] == "Rules."
    responses = get_codec("openai-responses").encode_request(request)
    assert responses["instructions"] == "Rules."
    assert responses["input"][1] == {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "Plan mode."}],
    }
    assert [m["role"] for m in get_codec("openai").encode_request(request)["messages"]] == [
        "system",
        "user",
        "system",
        "assistant",
        "user",
    ]
    assert [m["role"] for m in get_codec("ollama").encode_request(request)["messages"]] == [
        "system",
        "user",
        "system",
        "assistant",
        "user",
    ]
    assert caplog.records == []
    gemini = guarded(GeminiCodec()).encode_request(request)
    assert gemini["systemInstruction"] == {"parts": [{"text": "Rules."}, {"text": "Plan mode."}]}
    assert messages_of(caplog.records) == [
        "gemini: a system message in the middle of the conversation is sent at the end of systemInstruction; "
        "Gemini takes instructions nowhere else."
    ]


def test_anthropic_features_encoded_for_openai_drop_what_has_no_place(caplog: pytest.LogCaptureFixture) -> None:
    request = get_codec("anthropic").decode_request(load("anthropic", "new_request_features.request.json"))
    caplog.clear()
    body = get_codec("openai").encode_request(request)
    assert "cache_control" not in json.dumps(body) and "caller" not in json.dumps(body)
    assert body["messages"][0] == {"role": "system", "content": "You are a coding agent."}
    assert body["messages"][5] == {"role": "system", "content": "The user switched to plan mode: do not edit files."}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "bash", "description": "Run a shell command.", "parameters": BASH_SCHEMA},
        }
    ]
    assert messages_of(caplog.records) == [
        "openai: left out anthropic options it has no equivalent for: cache_control, context_management, metadata, "
        "output_config, system, thinking, tools."
    ]


# OpenAI Responses

HOSTED = (
    "web_search",
    "file_search",
    "code_interpreter",
    "computer_use_preview",
    "image_generation",
    "mcp",
    "local_shell",
    "custom",
)


def test_responses_namespace_and_hosted_tools_round_trip(caplog: pytest.LogCaptureFixture) -> None:
    body = load("openai-responses", "namespace_hosted_tools.request.json")
    force(RESPONSES_PARAMS.validate_python(copy.deepcopy(body)))
    codec = get_codec("openai-responses")
    request = codec.decode_request(copy.deepcopy(body))
    call = ToolCall(
        id="call_01",
        name="mcp__github__list_issues",
        arguments={"state": "open"},
        metadata={"openai-responses": {"item_id": "fc_01", "namespace": "mcp__github"}},
    )
    assert request.messages == [
        SystemMessage(content="You are Codex, a coding agent."),
        UserMessage(content="List the open issues."),
        SystemMessage(content="<permissions>sandbox: read-only</permissions>"),
        AssistantMessage(parts=[call]),
        ToolResult.text(call, "#12 gateway"),
    ]
    assert request.tools == [
        ToolDefinition(name="shell", description="Run a command.", parameters=BASH_SCHEMA, strict=False),
        ToolDefinition(
            name="mcp__github__list_issues",
            description="List issues.",
            parameters={"type": "object", "properties": {"state": {"type": "string"}}},
            strict=False,
        ),
    ]
    assert sorted(request.extra) == ["include", "prompt_cache_key", "reasoning", "store", "text", "tools"]
    kept = "it has no neutral form (kept for Responses only)."
    assert messages_of(caplog.records) == [
        f"openai-responses: skipped tool in a namespace 'custom'; {kept}",
        *(f"openai-responses: skipped tool {kind!r}; {kept}" for kind in HOSTED),
    ]
    assert codec.encode_request(request) == body


def test_responses_namespace_tools_reach_anthropic_flat(caplog: pytest.LogCaptureFixture) -> None:
    request = get_codec("openai-responses").decode_request(
        load("openai-responses", "namespace_hosted_tools.request.json")
    )
    caplog.clear()
    body = get_codec("anthropic").encode_request(request)
    assert body["system"] == "You are Codex, a coding agent."
    assert body["messages"] == [
        {"role": "user", "content": "List the open issues."},
        {"role": "system", "content": "<permissions>sandbox: read-only</permissions>"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_01", "name": "mcp__github__list_issues", "input": {"state": "open"}}
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_01", "content": "#12 gateway"}]},
    ]
    assert [t["name"] for t in body["tools"]] == ["shell", "mcp__github__list_issues"]
    assert messages_of(caplog.records) == [
        "anthropic: left out openai-responses options it has no equivalent for: include, prompt_cache_key, "
        "reasoning, store, text, tools."
    ]


def test_responses_namespaced_call_in_a_reply_keeps_its_namespace() -> None:
    reply = SDKResponse.model_validate(
        {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "model": "gpt-5.5-codex",
            "status": "completed",
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "output": [
                {
                    "type": "function_call",
                    "id": "fc_9",
                    "call_id": "call_9",
                    "namespace": "mcp__github",
                    "name": "list_issues",
                    "arguments": "{}",
                    "status": "completed",
                }
            ],
        }
    ).model_dump(mode="json", exclude_none=True)
    response = get_codec("openai-responses").decode_response(reply)
    assert response.tool_calls == [
        ToolCall(
            id="call_9",
            name="mcp__github__list_issues",
            metadata={"openai-responses": {"item_id": "fc_9", "namespace": "mcp__github"}},
        )
    ]
    history = Request(model="m", messages=[UserMessage(content="hi"), response.message])
    assert get_codec("openai-responses").encode_request(history)["input"][1] == {
        "type": "function_call",
        "call_id": "call_9",
        "name": "list_issues",
        "namespace": "mcp__github",
        "arguments": "{}",
        "id": "fc_9",
    }


def test_responses_unknown_input_items_do_not_crash(caplog: pytest.LogCaptureFixture) -> None:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Patch it."}]},
        {"type": "custom_tool_call", "call_id": "ct_1", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "ct_1", "output": "done"},
        {
            "type": "local_shell_call",
            "id": "ls_1",
            "call_id": "lsc_1",
            "status": "completed",
            "action": {"type": "exec", "command": ["ls"], "env": {}},
        },
        {"type": "local_shell_call_output", "id": "lsc_1", "output": "a.py"},
        {"type": "item_reference", "id": "msg_0"},
    ]
    for item in items:
        force(RESPONSES_ITEM.validate_python(copy.deepcopy(item)))
    items.append({"type": "brand_new_item", "payload": 1})  # an item type added after this codec
    body = {"model": "gpt-5.5-codex", "input": items}
    request = get_codec("openai-responses").decode_request(body)
    assert request.messages == [UserMessage(content="Patch it.")]
    skipped = "openai-responses: skipped input item of type {!r}; it has no neutral form."
    assert messages_of(caplog.records) == [
        skipped.format(kind)
        for kind in (
            "custom_tool_call",
            "custom_tool_call_output",
            "local_shell_call",
            "local_shell_call_output",
            "item_reference",
            "brand_new_item",
        )
    ]


# Gemini


def test_gemini_features_round_trip_and_decode_exactly(caplog: pytest.LogCaptureFixture) -> None:
    body = load("gemini", "new_request_features.request.json")
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
    assert request.extra["generationConfig"] == {
        k: v for k, v in body["generationConfig"].items() if k not in ("maxOutputTokens", "temperature")
    }
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


def test_tool_names_other_providers_refuse_stay_with_their_own(caplog: pytest.LogCaptureFixture) -> None:
    long_name = "mcp__" + "x" * 60 + "__read"  # 71 characters: Anthropic takes 128, others 64
    anthropic_body = {
        "model": "claude-opus-4-8",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [{"name": long_name, "input_schema": {"type": "object"}}],
    }
    check_anthropic_body(anthropic_body)
    request = get_codec("anthropic").decode_request(copy.deepcopy(anthropic_body))
    assert (request.tools, request.extra) == ([], {"tools": anthropic_body["tools"]})
    assert get_codec("anthropic").encode_request(request) == anthropic_body
    gemini_body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "crm.lookup", "parametersJsonSchema": {"type": "object"}}]}],
    }
    request = guarded(GeminiCodec()).decode_request(copy.deepcopy(gemini_body))
    assert (request.tools, request.extra) == ([], {"tools": gemini_body["tools"]})
    assert messages_of(caplog.records) == [
        f"anthropic: tool named {long_name!r} has no neutral form and is dropped when decoding a request.",
        "gemini: function name 'crm.lookup' has no neutral form; it goes back to Gemini only (Request.extra).",
    ]
