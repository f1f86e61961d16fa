"""What the transport tests need to know per provider: paths, auth headers, codec availability."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import pytest

from toolwire.testing import reply
from toolwire.types import ToolCall, ToolDefinition, Usage

KEY = "sk-test-SECRET-1234567890"


@dataclass(frozen=True)
class Case:
    provider: str
    codec: str
    path: str
    stream_path: str
    auth: dict[str, str]
    options: dict[str, str] = field(default_factory=dict)


CASES = [
    Case("openai", "openai", "/chat/completions", "/chat/completions", {"authorization": f"Bearer {KEY}"}),
    Case("vllm", "openai", "/chat/completions", "/chat/completions", {"authorization": f"Bearer {KEY}"}),
    Case("llamacpp", "openai", "/chat/completions", "/chat/completions", {"authorization": f"Bearer {KEY}"}),
    Case("openai-compatible", "openai", "/chat/completions", "/chat/completions", {"authorization": f"Bearer {KEY}"}),
    Case("openai-responses", "openai-responses", "/responses", "/responses", {"authorization": f"Bearer {KEY}"}),
    Case(
        "anthropic",
        "anthropic",
        "/v1/messages",
        "/v1/messages",
        {"x-api-key": KEY, "anthropic-version": "2023-06-01"},
    ),
    Case(
        "gemini",
        "gemini",
        "/v1beta/models/m-1:generateContent",
        "/v1beta/models/m-1:streamGenerateContent?alt=sse",
        {"x-goog-api-key": KEY},
    ),
    Case(
        "vertex",
        "gemini",
        "/v1/projects/proj/locations/europe-west4/publishers/google/models/m-1:generateContent",
        "/v1/projects/proj/locations/europe-west4/publishers/google/models/m-1:streamGenerateContent?alt=sse",
        {"authorization": f"Bearer {KEY}"},
        {"project": "proj", "location": "europe-west4"},
    ),
    Case("ollama", "ollama", "/api/chat", "/api/chat", {}),
    Case(
        "bedrock",
        "bedrock",
        "/model/m-1/converse",
        "/model/m-1/converse-stream",
        {"authorization": f"Bearer {KEY}"},
        {"region": "us-west-2"},
    ),
]

_MODULES = {
    "openai": "openai",
    "openai-responses": "openai_responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "ollama": "ollama",
    "bedrock": "bedrock",
}


def codec_available(codec: str) -> bool:
    return importlib.util.find_spec(f"toolwire.codecs.{_MODULES[codec]}") is not None


def cases(*names: str) -> list[object]:
    """Cases as pytest params, skipped (with the reason) while their codec is not written yet."""
    chosen = [c for c in CASES if not names or c.provider in names]
    return [
        pytest.param(
            c,
            id=c.provider,
            marks=pytest.mark.skipif(not codec_available(c.codec), reason=f"codec {c.codec!r} not written yet"),
        )
        for c in chosen
    ]


WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather in a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


def text_reply(text: str = "Hello from the script.") -> object:
    return reply(text, usage=Usage(input_tokens=10, output_tokens=5), id="resp_1", model="m-1")


def call_reply() -> object:
    calls = [
        ToolCall(id="call_a1", name="get_weather", arguments={"city": "Paris"}),
        ToolCall(id="call_b2", name="get_weather", arguments={"city": "Tokyo"}),
    ]
    return reply("Checking both.", calls, usage=Usage(input_tokens=12, output_tokens=20), id="resp_2", model="m-1")
