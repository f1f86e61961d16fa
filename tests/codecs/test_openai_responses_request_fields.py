"""OpenAI Responses request fields coding agents send decode: namespace and hosted tools, new item types."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from openai.types.responses import Response as SDKResponse

from tests.codecs._request_fields import (
    BASH_SCHEMA,
    CHAT_PARAMS,
    RESPONSES_ITEM,
    RESPONSES_PARAMS,
    fresh_warnings,
    load,
    messages_of,
)
from tests.sdk_types import drain
from toolwire import (
    AssistantMessage,
    Request,
    SystemMessage,
    ToolCall,
    ToolDefinition,
    ToolResult,
    UserMessage,
)
from toolwire.codecs import get_codec


@pytest.fixture(autouse=True)
def _fresh_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with fresh_warnings(caplog):
        yield


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
    drain(RESPONSES_PARAMS.validate_python(copy.deepcopy(body)))
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
    request.model = "claude-opus-4-8"  # takes system messages in place
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
        drain(RESPONSES_ITEM.validate_python(copy.deepcopy(item)))
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


# OpenAI Chat Completions: custom tools (free-form input, GPT-5) do not fail a request either.


def test_chat_custom_tools_stay_with_openai(caplog: pytest.LogCaptureFixture) -> None:
    custom = {"type": "custom", "custom": {"name": "apply_patch", "format": {"type": "text"}}}
    function = {"type": "function", "function": {"name": "shell", "parameters": BASH_SCHEMA}}
    body = {"model": "gpt-5.5", "messages": [{"role": "user", "content": "hi"}], "tools": [function, custom]}
    CHAT_PARAMS.validate_python(copy.deepcopy(body))
    request = get_codec("openai").decode_request(copy.deepcopy(body))
    assert request.tools == [ToolDefinition(name="shell", parameters=BASH_SCHEMA)]
    assert request.extra == {"tools": body["tools"]}
    assert get_codec("openai").encode_request(request) == body
    assert messages_of(caplog.records) == [
        "openai: skipped tool of type 'custom'; it has no neutral form (kept for OpenAI only)."
    ]
