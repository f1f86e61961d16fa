"""Anthropic request fields coding agents send decode: system role messages, cache hints, server blocks."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import replace

import pytest

from tests.codecs._request_fields import (
    BASH_SCHEMA,
    EPHEMERAL,
    check_anthropic_body,
    fresh_warnings,
    load,
    messages_of,
)
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
from toolwire.codecs import get_codec, guarded
from toolwire.codecs.gemini import GeminiCodec


@pytest.fixture(autouse=True)
def _fresh_warnings(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    with fresh_warnings(caplog):
        yield


# Anthropic


def test_anthropic_features_round_trip_and_decode_exactly(caplog: pytest.LogCaptureFixture) -> None:
    body = load("anthropic", "coding_agent.request.json")
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
        "output_config",
        "system",
        "thinking",
        "tools",
    ]
    assert request.extra["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert request.user == "user_1"  # metadata.user_id is the neutral user
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
        model="claude-opus-4-8",
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
    older = get_codec("anthropic").encode_request(replace(request, model="claude-sonnet-4-5-20250929"))
    assert older["system"] == "Rules.\n\nPlan mode."
    assert [m["role"] for m in older["messages"]] == ["user", "assistant", "user"]
    assert messages_of(caplog.records) == [
        "anthropic: 'claude-sonnet-4-5-20250929' is not known to take system messages in the middle of a "
        "conversation (Claude Opus 4.8 and later do); they are sent at the end of the top-level system prompt."
    ]
    caplog.clear()
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
    request = get_codec("anthropic").decode_request(load("anthropic", "coding_agent.request.json"))
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
        "openai: left out anthropic options it has no equivalent for: cache_control, context_management, "
        "output_config, system, thinking, tools."
    ]


def test_a_tool_name_only_anthropic_takes_stays_with_anthropic(caplog: pytest.LogCaptureFixture) -> None:
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
    assert messages_of(caplog.records) == [
        f"anthropic: tool named {long_name!r} has no neutral form and is dropped when decoding a request."
    ]


def test_an_unknown_tool_choice_kind_goes_back_to_anthropic_only(caplog: pytest.LogCaptureFixture) -> None:
    body = {
        "model": "claude-opus-4-8",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}],
        "tool_choice": {"type": "some_later_kind", "disable_parallel_tool_use": True},
    }
    request = get_codec("anthropic").decode_request(copy.deepcopy(body))
    assert (request.tool_choice, request.parallel_tool_calls) == (None, None)
    assert request.extra == {"tool_choice": body["tool_choice"]}
    assert get_codec("anthropic").encode_request(request) == body
    assert messages_of(caplog.records) == [
        "anthropic: tool_choice type 'some_later_kind' has no neutral form and is dropped when decoding a request."
    ]
