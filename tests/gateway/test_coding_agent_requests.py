"""What coding agents send passes the gateway to another protocol, drops named."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.gateway._clients import GATEWAY_KEY
from tests.gateway.conftest import KEY_ENV, Gateway, routes_to
from toolwire.gateway import Route, create_app
from toolwire.testing import ScriptedServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BASH_SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def load(provider: str, name: str) -> Any:
    return json.loads((FIXTURES / provider / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def gateway(upstreams: dict[str, ScriptedServer], upstream_key: str) -> Iterator[Gateway]:
    text = Route(
        "to-openai-text",
        "openai:up-text",
        base_url=upstreams["openai"].base_url + "/v1",
        api_key_env=KEY_ENV,
        tool_mode="text",
    )
    with Gateway(create_app([*routes_to(upstreams), text], keys=[GATEWAY_KEY])) as running:
        yield running


@pytest.fixture
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=30, headers={"authorization": f"Bearer {GATEWAY_KEY}"}) as client:
        yield client


def test_a_claude_code_request_reaches_openai(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["openai"].add("Done.")
    body = load("anthropic", "coding_agent.request.json") | {"model": "to-openai", "stream": False}
    response = http.post(gateway.url + "/v1/messages?beta=true", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["content"] == [{"type": "text", "text": "Done."}]
    assert response.headers["x-toolwire-dropped"] == (
        "anthropic:thinking, anthropic:output_config, anthropic:context_management, anthropic:cache_control, "
        "anthropic:web_search_20250305"
    )
    system = [m["content"] for m in upstreams["openai"].requests[-1].body["messages"] if m["role"] == "system"]
    assert system == [  # in place where the client put them
        "You are a coding agent.",
        "Work in /repo.",
        "The user switched to plan mode: do not edit files.",
        "Plan mode is over.",
        "Edits are allowed again.",
    ]
    assert upstreams["openai"].requests[-1].body == {
        "model": "up-openai",
        "messages": [
            {"role": "system", "content": "You are a coding agent."},
            {"role": "system", "content": "Work in /repo."},
            {"role": "user", "content": [{"type": "text", "text": "Fix the failing test."}]},
            {
                "role": "assistant",
                "content": "Running them.",
                "tool_calls": [
                    {
                        "id": "toolu_01",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"command":"pytest -x"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "toolu_01", "content": "1 failed"},
            {"role": "system", "content": "The user switched to plan mode: do not edit files."},
            {"role": "assistant", "content": "Plan: fix the off-by-one in range()."},
            {"role": "user", "content": "Go ahead."},
            {"role": "system", "content": "Plan mode is over."},
            {"role": "system", "content": "Edits are allowed again."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "bash", "description": "Run a shell command.", "parameters": BASH_SCHEMA},
            }
        ],
        "tool_choice": "auto",
        "max_completion_tokens": 32000,
        "user": "user_1",  # Anthropic's metadata.user_id
    }


def test_a_codex_request_reaches_anthropic(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["anthropic"].add("Done.")
    body = load("openai-responses", "namespace_hosted_tools.request.json") | {"model": "to-anthropic"}
    response = http.post(gateway.url + "/v1/responses", json=body)
    assert response.status_code == 200, response.text
    hosted = "web_search file_search code_interpreter computer_use_preview image_generation mcp local_shell custom"
    assert response.headers["x-toolwire-dropped"] == ", ".join(
        [
            *(f"openai-responses:{k}" for k in ("store", "include", "reasoning", "text", "prompt_cache_key")),
            "openai-responses:mcp__github.custom",
            *(f"openai-responses:{k}" for k in hosted.split()),
            "anthropic:system-message-position",  # `up-anthropic` is no model known to take them in place
        ]
    )
    assert upstreams["anthropic"].requests[-1].body == {
        "model": "up-anthropic",
        "max_tokens": 4096,
        "system": "You are Codex, a coding agent.\n\n<permissions>sandbox: read-only</permissions>",
        "messages": [
            {"role": "user", "content": "List the open issues."},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call_01",
                        "name": "mcp__github__list_issues",
                        "input": {"state": "open"},
                    }
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_01", "content": "#12 gateway"}]},
        ],
        "tools": [
            {"name": "shell", "description": "Run a command.", "input_schema": BASH_SCHEMA, "strict": False},
            {
                "name": "mcp__github__list_issues",
                "description": "List issues.",
                "input_schema": {"type": "object", "properties": {"state": {"type": "string"}}},
                "strict": False,
            },
        ],
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": False},
    }


def test_a_gemini_request_reaches_openai(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["openai"].add("Done.")
    body = load("gemini", "coding_agent.request.json")
    response = http.post(gateway.url + "/v1beta/models/to-openai:generateContent", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["x-toolwire-dropped"] == ", ".join(
        "gemini:" + name
        for name in (
            "generationConfig.thinkingConfig",
            "responseJsonSchema",  # on a function declaration; the reply's JSON schema crosses (response_format)
            "codeExecution",
            "googleSearch",
            "urlContext",
            "executableCode",
            "codeExecutionResult",
            "VALIDATED",
        )
    )
    schema = {"type": "object", "properties": {"code": {"type": "string", "enum": ["EU", "US"]}}, "required": ["code"]}
    assert upstreams["openai"].requests[-1].body == {
        "model": "up-openai",
        "messages": [
            {"role": "system", "content": "You are a data assistant."},
            {"role": "user", "content": "Average of the sales column, then look up the region."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "fc_gem_1",
                        "type": "function",
                        "function": {"name": "lookup_region", "arguments": '{"code":"EU"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "fc_gem_1", "content": "Europe"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "lookup_region", "description": "Name of a region code.", "parameters": schema},
            }
        ],
        "tool_choice": "auto",
        "max_completion_tokens": 2048,
        "temperature": 0.2,
        "response_format": {
            "type": "json_schema",
            "json_schema": {
                "name": "response",
                "schema": {"type": "object", "properties": {"region": {"type": "string"}}},
            },
        },
    }


def test_text_mode_sends_no_tool_list_the_client_kept_in_extra(
    gateway: Gateway, http: httpx2.Client, upstreams: dict[str, ScriptedServer]
) -> None:
    upstreams["openai"].add("Nothing to call.")
    custom = {"type": "custom", "custom": {"name": "apply_patch"}}
    function = {"type": "function", "function": {"name": "bash", "parameters": BASH_SCHEMA}}
    body = {"model": "to-openai-text", "messages": [{"role": "user", "content": "hi"}], "tools": [function, custom]}
    response = http.post(gateway.url + "/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    sent = upstreams["openai"].requests[-1].body
    assert "tools" not in sent and sent["messages"][0]["role"] == "system"
    assert "bash" in sent["messages"][0]["content"]  # the function tool is described in the prompt
