"""The anthropic codec: golden bodies, the mapping tables, thinking, ids, streams, error payloads."""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from tests.codecs._fast_paths import runs_read_differently
from tests.sdk_types import drain
from toolwire import (
    AssistantMessage,
    Done,
    ImagePart,
    NamedToolChoice,
    Request,
    Response,
    StopReason,
    SystemMessage,
    TextDelta,
    TextPart,
    ThinkingDelta,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)
from toolwire.codecs import get_codec
from toolwire.codecs.anthropic import blocks as anthropic_blocks
from toolwire.errors import CodecError, ProviderError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "anthropic"
CODEC = get_codec("anthropic")
MODEL = "claude-sonnet-4-5-20250929"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
SIG = (
    "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds5bDk9HsZ1vx7kLQ8h/UKA0qbGw7+ObvHmW5fj7iBQO1hmXRsTOjw5pA2EOp"
    "nyoFrKHVn0b7ZDpcEQ=="
)
REDACTED = (
    "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pabYUbM6dIjm+"
    "XyeYu/Vq"
)
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"],
    },
)


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _events(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _feed(events: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    decoder = CODEC.stream_decoder()
    out = [e for event in events for e in decoder.feed(copy.deepcopy(event))]
    return out, decoder


# Request cases: the neutral conversations behind the *.request.json goldens.


def _tool_loop_parallel() -> Request:
    sf = ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="get_weather", arguments={"location": "San Francisco, CA"})
    ny = ToolCall(id="toolu_01B7Mk3uXbTnJqEzVgR2pWcF", name="get_weather", arguments={"location": "New York, NY"})
    return Request(
        model=MODEL,
        messages=[
            SystemMessage(content="You are a weather assistant."),
            SystemMessage(content="Answer in one sentence."),
            UserMessage(content="Weather in SF and NYC?"),
            AssistantMessage(parts=[TextPart(text="I'll check both cities."), sf, ny]),
            ToolResult.text(sf, "18°C, fog"),
            ToolResult.data(ny, {"temp_c": 24, "sky": "clear"}),
            UserMessage(content="Also, which is warmer?"),
        ],
        tools=[WEATHER],
        tool_choice="auto",
    )


def _result_kinds() -> Request:
    calls = [ToolCall(id=f"toolu_0{i}", name=n, arguments={}) for i, n in enumerate(["read", "stat", "rm", "shot"])]
    return Request(
        model=MODEL,
        messages=[
            UserMessage(content=[TextPart(text="Inspect the repo."), ImagePart(url="https://example.com/a.png")]),
            AssistantMessage(parts=calls),
            ToolResult.text(calls[0], "hello\n"),
            ToolResult.data(calls[1], [1, "two", None, {"é": True}]),
            ToolResult.error(calls[2], "Permission denied: /etc; pick a path inside the project."),
            ToolResult.multimodal(
                calls[3], [TextPart(text="Screenshot:"), ImagePart(data=PNG), ImagePart(url="https://x.test/s.jpg")]
            ),
            UserMessage(content=[ImagePart(data=PNG, media_type="image/png"), TextPart(text="Compare with this.")]),
        ],
        tools=[ToolDefinition(name=n) for n in ["read", "stat", "rm", "shot"]],
        max_tokens=1024,
    )


def _thinking_replay() -> Request:
    call = ToolCall(id="toolu_01CxJsH8zV9cPqZ3rTm4fWyE", name="get_weather", arguments={"location": "Paris, France"})
    return Request(
        model=MODEL,
        messages=[
            UserMessage(content="Weather in Paris?"),
            AssistantMessage(
                parts=[
                    ThinkingPart(text="The user wants Paris.", signature=SIG, provider="anthropic"),
                    ThinkingPart(text="", signature=REDACTED, redacted=True, provider="anthropic"),
                    ThinkingPart(text="foreign reasoning", signature="rs_enc_1", provider="openai-responses"),
                    ThinkingPart(text="unsigned", signature=None, provider="anthropic"),
                    ThinkingPart(text="a local model's thoughts", provider="ollama"),
                    call,
                ]
            ),
            ToolResult.text(call, "21°C, sunny"),
        ],
        tools=[WEATHER],
        max_tokens=16000,
        extra={"thinking": {"type": "enabled", "budget_tokens": 8000}},
    )


def _foreign_ids() -> Request:
    a = ToolCall(id="fc_1|call_2", name="lookup", arguments={"q": "x"})
    b = ToolCall(id="functions.lookup:1", name="lookup", arguments={"q": "y"})
    return Request(
        model=MODEL,
        messages=[
            UserMessage(content="Look up x and y."),
            AssistantMessage(parts=[a, b]),
            ToolResult.text(a, "x found"),
            ToolResult.error(b, "y missing"),
        ],
        tools=[ToolDefinition(name="lookup", parameters={"properties": {"q": {"type": "string"}}}, strict=True)],
        tool_choice=NamedToolChoice("lookup"),
        parallel_tool_calls=False,
        temperature=0.0,
    )


REQUEST_CASES: dict[str, Callable[[], Request]] = {
    "tool_loop_parallel": _tool_loop_parallel,
    "result_kinds": _result_kinds,
    "thinking_replay": _thinking_replay,
    "foreign_ids": _foreign_ids,
}


REQUEST_PARAMS = pydantic.TypeAdapter(MessageCreateParamsNonStreaming)
STREAM_EVENT = pydantic.TypeAdapter(RawMessageStreamEvent)


# Fixtures are valid against the official SDK types.


@pytest.mark.parametrize("case", sorted(REQUEST_CASES))
def test_request_golden(case: str) -> None:
    body = CODEC.encode_request(REQUEST_CASES[case]())
    assert body == _load(f"{case}.request.json")
    validated = drain(REQUEST_PARAMS.validate_python(copy.deepcopy(body)))
    assert len(validated["messages"]) == len(body["messages"])
    again = CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body)))
    assert again == body


def test_response_and_stream_fixtures_match_sdk_types() -> None:
    responses = sorted(FIXTURES.glob("*.response.json"))
    streams = sorted(FIXTURES.glob("*.jsonl"))
    assert len(responses) == 7 and len(streams) == 8
    for path in responses:
        Message.model_validate(_load(path.name))
    for path in streams:
        for event in _events(path.name):
            if event["type"] not in ("ping", "error"):  # not in the SDK's RawMessageStreamEvent union
                STREAM_EVENT.validate_python(event)


# Encoding requests


def test_tool_loop_groups_results_then_user_text() -> None:
    body = CODEC.encode_request(_tool_loop_parallel())
    assert body["system"] == "You are a weather assistant.\n\nAnswer in one sentence."
    assert body["max_tokens"] == 4096
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "18°C, fog"},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01B7Mk3uXbTnJqEzVgR2pWcF",
            "content": '{"temp_c":24,"sky":"clear"}',
        },
        {"type": "text", "text": "Also, which is warmer?"},
    ]
    assert body["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": WEATHER.parameters,
        }
    ]
    assert body["tool_choice"] == {"type": "auto"}


def test_every_result_kind() -> None:
    results = CODEC.encode_request(_result_kinds())["messages"][2]["content"]
    assert results == [
        {"type": "tool_result", "tool_use_id": "toolu_00", "content": "hello\n"},
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": '[1,"two",null,{"é":true}]'},
        {
            "type": "tool_result",
            "tool_use_id": "toolu_02",
            "content": "Permission denied: /etc; pick a path inside the project.",
            "is_error": True,
        },
        {
            "type": "tool_result",
            "tool_use_id": "toolu_03",
            "content": [
                {"type": "text", "text": "Screenshot:"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="},
                },
                {"type": "image", "source": {"type": "url", "url": "https://x.test/s.jpg"}},
            ],
        },
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="},
        },
        {"type": "text", "text": "Compare with this."},
    ]


def test_no_argument_tools_get_an_object_schema() -> None:
    tools = CODEC.encode_request(_result_kinds())["tools"]
    assert tools[0] == {"name": "read", "input_schema": {"type": "object", "properties": {}}}


def test_thinking_replayed_only_when_signed_by_anthropic() -> None:
    body = CODEC.encode_request(_thinking_replay())
    assert body["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "The user wants Paris.", "signature": SIG},
        {"type": "redacted_thinking", "data": REDACTED},
        {
            "type": "tool_use",
            "id": "toolu_01CxJsH8zV9cPqZ3rTm4fWyE",
            "name": "get_weather",
            "input": {"location": "Paris, France"},
        },
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert body["max_tokens"] == 16000


def test_foreign_ids_rewritten_and_results_stay_paired() -> None:
    body = CODEC.encode_request(_foreign_ids())
    calls = body["messages"][1]["content"]
    results = body["messages"][2]["content"]
    assert [c["id"] for c in calls] == ["fc_1_call_2_0b6137f785", "functions_lookup_1_42d4be4fe3"]
    assert [r["tool_use_id"] for r in results] == ["fc_1_call_2_0b6137f785", "functions_lookup_1_42d4be4fe3"]
    assert results[1]["is_error"] is True
    assert body["tool_choice"] == {"type": "tool", "name": "lookup", "disable_parallel_tool_use": True}
    assert body["tools"] == [
        {"name": "lookup", "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}}, "strict": True}
    ]
    assert body["temperature"] == 0.0


@pytest.mark.parametrize(
    ("choice", "parallel", "expected"),
    [
        ("auto", None, {"type": "auto"}),
        ("none", None, {"type": "none"}),
        ("required", None, {"type": "any"}),
        (NamedToolChoice("get_weather"), None, {"type": "tool", "name": "get_weather"}),
        ("auto", False, {"type": "auto", "disable_parallel_tool_use": True}),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}),
        ("required", True, {"type": "any", "disable_parallel_tool_use": False}),
        ("none", False, {"type": "none"}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
        (None, None, None),
        (None, True, None),
    ],
)
def test_tool_choice_table(choice: Any, parallel: bool | None, expected: dict[str, Any] | None) -> None:
    request = Request(
        model=MODEL,
        messages=[UserMessage(content="hi")],
        tools=[WEATHER],
        tool_choice=choice,
        parallel_tool_calls=parallel,
    )
    body = CODEC.encode_request(request)
    assert body.get("tool_choice") == expected
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body


def test_minimal_request_body() -> None:
    body = CODEC.encode_request(Request(model=MODEL, messages=[UserMessage(content="hi")], stream=True))
    assert body == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
    }


def test_consecutive_messages_merge_and_empty_parts_drop() -> None:
    request = Request(
        model=MODEL,
        messages=[
            UserMessage(content="one"),
            UserMessage(content=[TextPart(text="two")]),
            AssistantMessage(parts=[TextPart(text="")]),
            UserMessage(content="three"),
            AssistantMessage(parts=[TextPart(text="a")]),
            AssistantMessage(parts=[ThinkingPart(text="x", signature="s", provider="gemini"), TextPart(text="b")]),
        ],
        extra={"metadata": {"user_id": "u1"}},
    )
    assert CODEC.encode_request(request) == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "one"},
                    {"type": "text", "text": "two"},
                    {"type": "text", "text": "three"},
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        ],
        "metadata": {"user_id": "u1"},
    }


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (PNG, "image/png"),
        (b"\xff\xd8\xff\xe0JFIF", "image/jpeg"),
        (b"GIF89a....", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"unknown", "image/png"),
    ],
)
def test_image_media_type_sniffed_when_missing(data: bytes, media_type: str) -> None:
    body = CODEC.encode_request(Request(model=MODEL, messages=[UserMessage(content=[ImagePart(data=data)])]))
    assert body["messages"][0]["content"][0]["source"]["media_type"] == media_type


# Decoding requests


def test_decode_request_splits_grouped_user_message() -> None:
    request = CODEC.decode_request(_load("tool_loop_parallel.request.json"))
    assert request.messages[0] == SystemMessage(content="You are a weather assistant.\n\nAnswer in one sentence.")
    assert request.messages[3:] == [
        ToolResult(tool_call_id="toolu_01A09q90qw90lq917835lq9", name="get_weather", kind="text", value="18°C, fog"),
        ToolResult(
            tool_call_id="toolu_01B7Mk3uXbTnJqEzVgR2pWcF",
            name="get_weather",
            kind="text",
            value='{"temp_c":24,"sky":"clear"}',
        ),
        UserMessage(content=[TextPart(text="Also, which is warmer?")]),
    ]
    assert request.max_tokens == 4096
    assert request.tool_choice == "auto"
    assert request.tools == [WEATHER]
    assert request.extra == {}


def test_decode_request_result_kinds_and_images() -> None:
    request = CODEC.decode_request(_load("result_kinds.request.json"))
    assert request.messages[0] == UserMessage(
        content=[TextPart(text="Inspect the repo."), ImagePart(url="https://example.com/a.png")]
    )
    kinds = [(m.kind, m.name) for m in request.messages if isinstance(m, ToolResult)]
    assert kinds == [("text", "read"), ("text", "stat"), ("error", "rm"), ("multimodal", "shot")]
    shot = request.messages[5]
    assert isinstance(shot, ToolResult)
    assert shot.value == [
        TextPart(text="Screenshot:"),
        ImagePart(data=PNG, media_type="image/png"),
        ImagePart(url="https://x.test/s.jpg"),
    ]
    assert request.messages[6] == UserMessage(
        content=[ImagePart(data=PNG, media_type="image/png"), TextPart(text="Compare with this.")]
    )


def test_decode_request_thinking_keeps_signatures() -> None:
    request = CODEC.decode_request(_load("thinking_replay.request.json"))
    assistant = request.messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.parts[:2] == [
        ThinkingPart(text="The user wants Paris.", signature=SIG, provider="anthropic"),
        ThinkingPart(text="", signature=REDACTED, redacted=True, provider="anthropic"),
    ]
    assert request.extra == {"thinking": {"type": "enabled", "budget_tokens": 8000}}


def test_decode_request_foreign_choice_and_rewritten_ids() -> None:
    request = CODEC.decode_request(_load("foreign_ids.request.json"))
    assert request.tool_choice == NamedToolChoice("lookup")
    assert request.parallel_tool_calls is False
    assert request.temperature == 0.0
    assert [m.tool_call_id for m in request.messages if isinstance(m, ToolResult)] == [
        "fc_1_call_2_0b6137f785",
        "functions_lookup_1_42d4be4fe3",
    ]
    assert request.tools[0].strict is True


def test_decode_request_other_shapes() -> None:
    body = {
        "model": MODEL,
        "max_tokens": 100,
        "system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "before"}, {"type": "tool_result", "tool_use_id": "t"}],
            },
            {"role": "assistant", "content": "plain"},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t2",
                        "is_error": True,
                        "content": [{"type": "text", "text": "bad"}],
                    },
                ],
            },
        ],
        "stream": False,
        "top_k": 5,
    }
    request = CODEC.decode_request(body)
    assert request.messages == [
        SystemMessage(content="A"),
        SystemMessage(content="B"),
        UserMessage(content=[TextPart(text="before")]),
        ToolResult(tool_call_id="t", name="", kind="text", value=""),
        AssistantMessage(parts=[TextPart(text="plain")]),
        ToolResult(
            tool_call_id="t2",
            name="",
            kind="multimodal",
            value=[TextPart(text="bad")],
            metadata={"anthropic": {"is_error": True}},
        ),
    ]
    assert request.extra == {"stream": False, "top_k": 5}
    assert request.stream is False
    again = CODEC.encode_request(request)
    assert again["system"] == "A\n\nB"
    assert [m["role"] for m in again["messages"]] == ["user", "user", "assistant", "user"]
    assert again["messages"][3]["content"] == [
        {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "bad"}], "is_error": True}
    ]
    assert again["stream"] is False and again["top_k"] == 5


def test_decode_request_keeps_cached_system_blocks_and_drops_server_tools(caplog: pytest.LogCaptureFixture) -> None:
    system = [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}]
    body = {
        "model": MODEL,
        "max_tokens": 10,
        "system": system,
        "messages": [{"role": "user", "content": [{"type": "document", "source": {}}]}],
        "tools": [
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "f", "input_schema": {"type": "object"}},
        ],
    }
    anthropic_blocks.warned.clear()  # each drop is logged once per process: another test may have logged it
    with caplog.at_level(logging.WARNING, logger="toolwire.codecs.anthropic"):
        request = CODEC.decode_request(body)
    assert [r.getMessage() for r in caplog.records] == [
        "anthropic: content block type 'document' has no neutral form and is dropped when decoding a request.",
        "anthropic: tool type 'web_search_20250305' has no neutral form and is dropped when decoding a request.",
    ]
    assert request.extra == {"system": system, "tools": body["tools"]}  # both go back as they are to Anthropic
    assert request.messages == [SystemMessage(content="S"), UserMessage(content=[])]  # the text reaches any target
    assert request.tools == [ToolDefinition(name="f", parameters={"type": "object"})]
    assert CODEC.encode_request(request)["system"] == system  # the cache hint goes back to Anthropic


def test_extra_options_go_back_only_to_the_codec_they_came_from(caplog: pytest.LogCaptureFixture) -> None:
    system = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    body = {"model": MODEL, "max_tokens": 10, "system": system, "metadata": {"user_id": "u1"}, "messages": []}
    body["messages"] = [{"role": "user", "content": "hi"}]
    request = get_codec("anthropic").decode_request(body)
    assert (request.extra, request.extra_codec, request.user) == ({"system": system}, "anthropic", "u1")
    assert get_codec("anthropic").encode_request(request) == body
    with caplog.at_level(logging.WARNING, logger="toolwire.codecs"):
        openai_body = get_codec("openai").encode_request(request)
    assert openai_body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert "system" not in openai_body and "metadata" not in openai_body
    assert openai_body["user"] == "u1"  # metadata.user_id is the neutral user
    assert "openai: left out anthropic options it has no equivalent for: system." in caplog.text


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"model": MODEL},
        {"model": MODEL, "messages": [{"role": "tool", "content": "x"}]},
        {"model": MODEL, "messages": [{"role": "user", "content": 5}]},
        {"model": MODEL, "messages": [], "tool_choice": {"type": "tool"}},
        {"model": MODEL, "messages": [], "tools": [{"name": "bad name", "input_schema": {}}]},
        {
            "model": MODEL,
            "messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "%%"}}]}],
        },
    ],
)
def test_decode_request_rejects_non_anthropic_bodies(body: Any) -> None:
    with pytest.raises(CodecError) as info:
        CODEC.decode_request(body)
    assert info.value.provider == "anthropic"


# Decoding responses


PARALLEL = Response(
    message=AssistantMessage(
        parts=[
            TextPart(text="I'll check the weather in both cities."),
            ToolCall(
                id="toolu_01A09q90qw90lq917835lq9",
                name="get_weather",
                arguments={"location": "San Francisco, CA", "unit": "celsius"},
            ),
            ToolCall(
                id="toolu_01B7Mk3uXbTnJqEzVgR2pWcF",
                name="get_weather",
                arguments={"location": "New York, NY", "unit": "celsius"},
            ),
        ]
    ),
    stop_reason=StopReason.TOOL_USE,
    raw_stop_reason="tool_use",
    usage=Usage(input_tokens=472, output_tokens=118, cache_read_tokens=256),
    model=MODEL,
    id="msg_01Aq9w938a90dw8q",
)


def test_decode_text_reply() -> None:
    assert CODEC.decode_response(_load("text_reply.response.json")) == Response(
        message=AssistantMessage(parts=[TextPart(text="Hello! How can I help you today?")]),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="end_turn",
        usage=Usage(input_tokens=12, output_tokens=10, cache_read_tokens=0),
        model=MODEL,
        id="msg_01XFDUDYJgAACzvnptvVoYEL",
    )


def test_decode_parallel_tool_use() -> None:
    assert CODEC.decode_response(_load("parallel_tool_use.response.json")) == PARALLEL


def test_decode_thinking_and_redacted_thinking() -> None:
    thinking = CODEC.decode_response(_load("thinking_tool_use.response.json"))
    assert thinking.message.parts == [
        ThinkingPart(
            text="The user wants the weather in Paris. I should call get_weather with the city.",
            signature=SIG,
            provider="anthropic",
        ),
        ToolCall(id="toolu_01CxJsH8zV9cPqZ3rTm4fWyE", name="get_weather", arguments={"location": "Paris, France"}),
    ]
    redacted = CODEC.decode_response(_load("redacted_thinking.response.json"))
    assert redacted.message.parts == [
        ThinkingPart(text="", signature=REDACTED, redacted=True, provider="anthropic"),
        ThinkingPart(text="", signature=SIG, provider="anthropic"),
        TextPart(text="I can't share my reasoning for that, but the answer is 42."),
    ]
    assert redacted.stop_reason is StopReason.END_TURN


def test_decode_empty_input_unicode_and_max_tokens() -> None:
    empty = CODEC.decode_response(_load("empty_input_tool.response.json"))
    assert empty.tool_calls == [ToolCall(id="toolu_01NoArgsK7xQ2wPz", name="get_time", arguments={})]
    unicode = CODEC.decode_response(_load("unicode.response.json"))
    assert unicode.text == "東京は晴れ ☀️ — 気温は23°C。Ünïcödé 👋🏽!"
    assert unicode.tool_calls[0].arguments == {"text": "Grüße, 世界 👨‍👩‍👧", "target": "日本語"}
    truncated = CODEC.decode_response(_load("max_tokens.response.json"))
    assert (truncated.stop_reason, truncated.raw_stop_reason) == (StopReason.MAX_TOKENS, "max_tokens")


@pytest.mark.parametrize(
    ("raw", "calls", "expected"),
    [
        ("end_turn", False, StopReason.END_TURN),
        ("stop_sequence", False, StopReason.END_TURN),
        ("tool_use", True, StopReason.TOOL_USE),
        ("max_tokens", False, StopReason.MAX_TOKENS),
        ("model_context_window_exceeded", False, StopReason.MAX_TOKENS),
        ("refusal", False, StopReason.CONTENT_FILTER),
        ("pause_turn", False, StopReason.OTHER),
        ("brand_new_reason", False, StopReason.OTHER),
        (None, False, StopReason.OTHER),
        ("end_turn", True, StopReason.TOOL_USE),  # calls by presence
        ("max_tokens", True, StopReason.MAX_TOKENS),  # a truncated call stays visible
    ],
)
def test_stop_reason_table(raw: str | None, calls: bool, expected: StopReason) -> None:
    content: list[dict[str, Any]] = [{"type": "text", "text": "x"}]
    if calls:
        content.append({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}})
    response = CODEC.decode_response({"content": content, "stop_reason": raw})
    assert (response.stop_reason, response.raw_stop_reason) == (expected, raw)


def test_usage_with_thinking_tokens() -> None:
    usage = {"input_tokens": 5, "output_tokens": 50, "output_tokens_details": {"thinking_tokens": 30}}
    response = CODEC.decode_response({"content": [], "stop_reason": "end_turn", "usage": usage})
    assert response.usage == Usage(input_tokens=5, output_tokens=50, cache_read_tokens=None, reasoning_tokens=30)
    assert CODEC.decode_response({"content": []}).usage is None


def test_non_object_input_is_parsed_not_trusted() -> None:
    body = {
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "f", "input": '{"a": 1'},
            {"type": "tool_use", "id": "toolu_2", "name": "g", "input": [1, 2]},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        ],
        "stop_reason": "tool_use",
    }
    calls = CODEC.decode_response(body).tool_calls
    assert calls[0] == ToolCall(
        id="toolu_1",
        name="f",
        arguments={},
        metadata={
            "raw_arguments": '{"a": 1',
            "arguments_error": "the arguments were cut off before their end "
            """(...'{"a": 1'); send the whole call again""",
        },
    )
    assert calls[1].arguments == {}
    assert calls[1].metadata == {
        "raw_arguments": [1, 2],
        "arguments_error": "the arguments must be a JSON object, got list: '[1, 2]'",
    }
    assert len(calls) == 2


def test_error_body_raises_provider_error() -> None:
    body = _load("overloaded.error.json")
    with pytest.raises(ProviderError) as info:
        CODEC.decode_response(body)
    assert info.value.message == "Anthropic reported an error of type 'overloaded_error': Overloaded"
    assert info.value.provider == "anthropic"
    assert info.value.body == body


@pytest.mark.parametrize("body", [[], {"content": "text"}, {"id": "msg_1"}])
def test_non_message_bodies_raise_codec_error(body: Any) -> None:
    with pytest.raises(CodecError):
        CODEC.decode_response(body)


# Streaming


def test_stream_parallel_tool_use_events() -> None:
    events, decoder = _feed(_events("parallel_tool_use.stream.jsonl"))
    assert events == [
        TextDelta("I'll check the weather"),
        TextDelta(" in both cities."),
        ToolCallDelta(0, "toolu_01A09q90qw90lq917835lq9", "get_weather", ""),
        ToolCallDelta(0, None, None, '{"location": "San Fr'),
        ToolCallDelta(0, None, None, 'ancisco, CA", "un'),
        ToolCallDelta(0, None, None, 'it": "celsius"}'),
        ToolCallDelta(1, "toolu_01B7Mk3uXbTnJqEzVgR2pWcF", "get_weather", ""),
        ToolCallDelta(1, None, None, '{"locati'),
        ToolCallDelta(1, None, None, 'on": "New York, NY", '),
        ToolCallDelta(1, None, None, '"unit": "celsius"}'),
        Done(PARALLEL),
    ]
    assert decoder.finish() == PARALLEL


def test_stream_thinking_with_signature_delta() -> None:
    events, decoder = _feed(_events("thinking_tool_use.stream.jsonl"))
    assert events[:3] == [
        ThinkingDelta("The user wants the weather in Paris."),
        ThinkingDelta(" I should call get_weather"),
        ThinkingDelta(" with the city."),
    ]
    assert events[3] == ToolCallDelta(0, "toolu_01CxJsH8zV9cPqZ3rTm4fWyE", "get_weather", "")
    assert decoder.finish() == CODEC.decode_response(_load("thinking_tool_use.response.json"))
    assert decoder.finish().message.parts[0].signature == SIG


def test_stream_redacted_and_empty_input() -> None:
    events, decoder = _feed(_events("redacted_thinking.stream.jsonl"))
    assert [e for e in events if not isinstance(e, Done)] == [
        TextDelta("I can't share my reasoning"),
        TextDelta(" for that, but the answer is 42."),
    ]
    assert decoder.finish() == CODEC.decode_response(_load("redacted_thinking.response.json"))
    events, decoder = _feed(_events("empty_input_tool.stream.jsonl"))
    assert events[0] == ToolCallDelta(0, "toolu_01NoArgsK7xQ2wPz", "get_time", "")
    assert len(events) == 2 and decoder.finish().tool_calls[0].arguments == {}


def _tool_stream(*deltas: str | None, start_input: Any = None) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_s", "model": MODEL, "usage": {"input_tokens": 3}}},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_9", "name": "f", "input": start_input or {}},
        },
    ]
    events += [
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": d}}
        for d in deltas
    ]
    events += [
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    return events


@pytest.mark.parametrize(
    ("deltas", "start_input", "arguments", "metadata"),
    [
        ((), None, {}, {}),  # no partial_json at all
        (("",), None, {}, {}),
        (("", ""), None, {}, {}),
        (("", '{"a":', " 1}"), None, {"a": 1}, {}),
        ((), {"b": 2}, {"b": 2}, {}),  # input given whole on the start block
        (('{"a": "unterminated',), None, {"a": "unterminated"}, {"raw_arguments": '{"a": "unterminated'}),
    ],
)
def test_stream_tool_arguments(
    deltas: tuple[str, ...], start_input: Any, arguments: dict[str, Any], metadata: dict[str, Any]
) -> None:
    events, decoder = _feed(_tool_stream(*deltas, start_input=start_input))
    response = decoder.finish()
    assert response.tool_calls == [ToolCall(id="toolu_9", name="f", arguments=arguments, metadata=metadata)]
    assert response.usage == Usage(input_tokens=3, output_tokens=9)
    assert (response.id, response.model, response.stop_reason) == ("msg_s", MODEL, StopReason.TOOL_USE)
    assert isinstance(events[-1], Done) and events[-1].response == response
    assert "" not in [e.arguments_delta for e in events[1:-1] if isinstance(e, ToolCallDelta)]


def test_stream_error_event_raises_provider_error() -> None:
    decoder = CODEC.stream_decoder()
    *ok, error = _events("overloaded_midstream.error.jsonl")
    assert [e for event in ok for e in decoder.feed(event)] == [TextDelta("Let me")]
    with pytest.raises(ProviderError) as info:
        decoder.feed(error)
    assert info.value.message == "Anthropic reported an error of type 'overloaded_error': Overloaded"
    assert info.value.body == error
    assert decoder.finish().text == "Let me"


def test_stream_ignores_ping_and_unknown_events_and_finish_is_stable() -> None:
    decoder = CODEC.stream_decoder()
    assert decoder.feed({"type": "ping"}) == []
    assert decoder.feed({"type": "some_future_event", "x": 1}) == []
    first = decoder.finish()
    assert first == decoder.finish()
    assert first == Response(message=AssistantMessage(), stop_reason=StopReason.OTHER)
    with pytest.raises(CodecError):
        decoder.feed([])  # type: ignore[arg-type]  # a non-object event is not the format


def _start(index: Any, **block: Any) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: Any, kind: str, piece: Any) -> dict[str, Any]:
    field = {"text_delta": "text", "input_json_delta": "partial_json", "thinking_delta": "thinking"}[kind]
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, field: piece}}


_ODD_EVENTS = [
    _start(0, type="text", text=""),
    _start(0, type="thinking", thinking="", signature=""),
    _start(0, type="tool_use", id="toolu_1", name="f", input={}),
    _start(0, type="tool_use", id="toolu_2", name="g", input={"a": 1}),
    _start(0, type="redacted_thinking", data="opaque"),
    _start(1, type="text", text="Hi"),
    _delta(0, "text_delta", "a"),
    _delta(0, "text_delta", ""),
    _delta(0, "text_delta", 1),
    _delta(0, "input_json_delta", '{"b":'),
    _delta(0, "input_json_delta", ""),
    _delta(0, "thinking_delta", "t"),
    _delta("0", "text_delta", "a"),
    _delta(True, "input_json_delta", "1}"),
    _delta(1, "text_delta", "é"),
    {"type": "content_block_delta", "index": 0, "delta": "text"},
    {"type": "content_block_stop", "index": 0},
]


def test_stream_delta_fast_path_reads_what_the_full_path_reads() -> None:
    """Text and argument deltas skip the decoder's dispatch: every run of three odd events reads the same."""
    opening = {"type": "message_start", "message": {"id": "msg_f", "model": MODEL, "usage": {"input_tokens": 1}}}
    differ = runs_read_differently(CODEC, [opening], _ODD_EVENTS)
    assert differ[:1] == []


# Rendering replies (loopback test server)


def test_encode_response_fixture_round_trip() -> None:
    for path in sorted(FIXTURES.glob("*.response.json")):
        decoded = CODEC.decode_response(_load(path.name))
        rendered = CODEC.encode_response(decoded)
        Message.model_validate(rendered)
        assert CODEC.decode_response(rendered) == decoded, path.name
        stream = CODEC.encode_stream(decoded)
        for event in stream:
            if event["type"] != "ping":
                STREAM_EVENT.validate_python(event)
        events, decoder = _feed(stream)
        assert decoder.finish() == decoded and events[-1] == Done(decoded), path.name


def test_encode_stream_shape() -> None:
    response = Response(
        message=AssistantMessage(
            parts=[
                ThinkingPart(text="hmm", signature="sig", provider="anthropic"),
                TextPart(text="Hi there"),
                ToolCall(id="toolu_1", name="f", arguments={}),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input_tokens=7, output_tokens=12, reasoning_tokens=4),
        model=MODEL,
        id="msg_r",
    )
    assert CODEC.encode_stream(response) == [
        {
            "type": "message_start",
            "message": {
                "id": "msg_r",
                "type": "message",
                "role": "assistant",
                "model": MODEL,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 7, "cache_read_input_tokens": None, "output_tokens": 1},
            },
        },
        {"type": "ping"},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "h"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "m"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "m"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi "}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "the"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "re"}},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        },
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {
                "input_tokens": 7,
                "output_tokens": 12,
                "cache_read_input_tokens": None,
                "output_tokens_details": {"thinking_tokens": 4},
            },
        },
        {"type": "message_stop"},
    ]
    _, decoder = _feed(CODEC.encode_stream(response))
    expected = Response(
        message=AssistantMessage(
            parts=[
                ThinkingPart(text="hmm", signature="sig", provider="anthropic"),
                TextPart(text="Hi there"),
                ToolCall(id="toolu_1", name="f", arguments={}),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_use",
        usage=Usage(input_tokens=7, output_tokens=12, reasoning_tokens=4),
        model=MODEL,
        id="msg_r",
    )
    assert decoder.finish() == expected == CODEC.decode_response(CODEC.encode_response(response))


def test_broken_arguments_survive_rendering() -> None:
    call = ToolCall(
        id="toolu_b", name="f", arguments={}, metadata={"raw_arguments": "{{", "arguments_error": "not json"}
    )
    decoded = CODEC.decode_response(
        CODEC.encode_response(
            Response(
                message=AssistantMessage(parts=[call]), stop_reason=StopReason.TOOL_USE, raw_stop_reason="tool_use"
            )
        )
    )
    assert decoded.tool_calls[0].metadata["raw_arguments"] == "{{"
    _, decoder = _feed(CODEC.encode_stream(decoded))
    assert decoder.finish() == decoded


def test_ids_reused_across_turns_are_made_unique_and_results_follow() -> None:
    first = ToolCall(id="call_0", name="f", arguments={"n": 1})
    again = ToolCall(id="call_0", name="f", arguments={"n": 2})
    twin = ToolCall(id="call_0", name="f", arguments={"n": 3})
    request = Request(
        model="m",
        messages=[
            UserMessage(content="go"),
            AssistantMessage(parts=[first]),
            ToolResult.text(first, "one"),
            AssistantMessage(parts=[again, twin]),
            ToolResult.text(again, "two"),
            ToolResult.text(twin, "three"),
        ],
    )
    wire = CODEC.encode_request(request)["messages"]
    assert [b["id"] for b in wire[1]["content"]] == ["call_0"]
    assert [b["id"] for b in wire[3]["content"]] == ["call_0_t3", "call_0_t3x"]
    assert [(b["tool_use_id"], b["content"]) for b in wire[4]["content"]] == [
        ("call_0_t3", "two"),
        ("call_0_t3x", "three"),
    ]
