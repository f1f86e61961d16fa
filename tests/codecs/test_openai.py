"""The openai codec (Chat Completions and compatible servers): golden bodies, tables, quirks."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import openai.types.chat as oai
import pytest
from hypothesis import HealthCheck, given, settings
from openai.types.chat import completion_create_params as ccp
from pydantic import TypeAdapter

from tests.codecs._fast_paths import runs_read_differently
from tests.sdk_types import drain
from tests.strategies import requests
from toolwire import (
    AssistantMessage,
    Done,
    ImagePart,
    NamedToolChoice,
    ProviderError,
    Request,
    Response,
    ResponseFormat,
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
from toolwire.codecs.openai import CODEC, OpenAICodec
from toolwire.codecs.openai.profiles import PROFILES, OpenAIProfile
from toolwire.errors import BadRequestError, CodecError
from toolwire.schema import PORTABLE, SchemaSupport, openai_strict_schema

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "openai"
LOGGER = "toolwire.codecs.openai"
PNG = b"\x89PNG\r\n\x1a\n"


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return result


def load_stream(case: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / f"{case}.stream.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def feed_all(case: str, codec: OpenAICodec = CODEC) -> tuple[list[Any], Response]:
    decoder = codec.stream_decoder()
    events = [e for chunk in load_stream(case) for e in decoder.feed(chunk)]
    return events, decoder.finish()


def call(call_id: str, name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


def user(text: str = "hi") -> UserMessage:
    return UserMessage(content=text)


WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


# Registry and profiles


def test_registry_returns_this_codec() -> None:
    assert get_codec("openai")._codec is CODEC  # behind the decoding boundary (codecs/common/guard.py)
    assert CODEC.name == "openai"
    assert CODEC.profile is PROFILES["openai"]


def test_profiles_are_data() -> None:
    from toolwire.providers import PROVIDERS

    # Every provider on this codec has its own profile, and every profile a provider.
    assert sorted(PROFILES) == sorted(p.profile for p in PROVIDERS.values() if p.codec == "openai")
    assert PROFILES["llamacpp"] == OpenAIProfile(
        name="llamacpp",
        named_tool_choice=False,
        strict_tools=True,
        parallel_tool_calls_default=True,
        max_tokens_field="max_tokens",
        reasoning_field="reasoning_content",
        schema_support=SchemaSupport(pattern=True, formats=frozenset({"date", "time", "date-time", "uuid"})),
        output_strategies=("constrained", "native", "tool", "prompted"),
        tool_mode="constrained",
    )
    assert {p.tool_mode for name, p in PROFILES.items() if name != "llamacpp"} == {"native"}
    assert (PROFILES["llama-cpp-python"].schema_form, PROFILES["openai"].schema_form) == ("json_object", "json_schema")
    assert PROFILES["ollama-openai"].schema_support == PORTABLE
    assert PROFILES["openai"].max_tokens_field == "max_completion_tokens"
    assert PROFILES["openai"].max_call_id_length == 40
    assert PROFILES["vllm"].max_tokens_field == "max_tokens"
    assert PROFILES["openai-compatible"].strict_tools is False
    with pytest.raises(AttributeError):
        PROFILES["openai"].strict_tools = False  # type: ignore[misc]


def test_a_json_reply_goes_without_the_sampling_the_profile_turns_off() -> None:
    llama = OpenAICodec(PROFILES["llama-cpp-python"])
    json_reply = Request(model="m", messages=[UserMessage(content="hi")], response_format=ResponseFormat(schema={}))
    plain = replace(json_reply, response_format=None)
    assert llama.encode_request(json_reply)["repeat_penalty"] == 1.05
    assert "repeat_penalty" not in llama.encode_request(plain)  # prose keeps the server's default
    assert "repeat_penalty" not in CODEC.encode_request(json_reply)
    chosen = replace(json_reply, extra={"repeat_penalty": 1.3})
    assert llama.encode_request(chosen)["repeat_penalty"] == 1.3  # the caller's value wins
    assert PROFILES["llama-cpp-python"].schema_sampling == {"repeat_penalty": 1.05}
    with pytest.raises(TypeError):
        PROFILES["llama-cpp-python"].schema_sampling["repeat_penalty"] = 2.0  # type: ignore[index]


# Golden request bodies


def tool_loop_request() -> Request:
    calls = [
        call("call_weather1", "get_weather", city="Paris"),
        call("call_order2", "lookup_order", order_id=42),
        call("call_delete3", "delete_file", path="tmp.txt"),
        call("call_chart4", "render_chart"),
    ]
    return Request(
        model="gpt-4.1",
        messages=[
            SystemMessage(content="You are a helpful assistant. Use the tools when they help."),
            UserMessage(
                content=[
                    TextPart(text="Weather in Paris, the status of order 42, delete tmp.txt, and chart this receipt."),
                    ImagePart(url="https://example.com/receipt.png"),
                ]
            ),
            AssistantMessage(parts=[TextPart(text="I'll do all four at once."), *calls]),
            ToolResult.text(calls[0], "18°C and sunny"),
            ToolResult.data(calls[1], {"order_id": 42, "status": "shipped", "items": ["book", "lamp"]}),
            ToolResult.error(calls[2], "permission denied: tmp.txt is read-only"),
            ToolResult.multimodal(
                calls[3], [TextPart(text="Sales chart for Q3."), ImagePart(data=PNG, media_type="image/png")]
            ),
        ],
        tools=[
            WEATHER,
            ToolDefinition(
                name="lookup_order",
                description="Look up an order by its number.",
                parameters={
                    "type": "object",
                    "properties": {"order_id": {"type": "integer"}},
                    "required": ["order_id"],
                },
            ),
            ToolDefinition(
                name="delete_file",
                parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            ),
            ToolDefinition(name="render_chart", description="Render the sales chart."),
        ],
        tool_choice="auto",
        parallel_tool_calls=True,
        max_tokens=1024,
        temperature=0.2,
    )


def strict_request() -> Request:
    return Request(
        model="gpt-4.1",
        messages=[user("Book lunch with Ana tomorrow at noon.")],
        tools=[
            ToolDefinition(
                name="create_event",
                description="Create a calendar event.",
                parameters=load("strict_tool.request.json")["tools"][0]["function"]["parameters"],
                strict=True,
            )
        ],
        tool_choice="required",
    )


def named_request() -> Request:
    return Request(
        model="gpt-4.1",
        messages=[user("What's the weather in Berlin?")],
        tools=[WEATHER, ToolDefinition(name="get_time", description="The current time.")],
        tool_choice=NamedToolChoice("get_weather"),
        parallel_tool_calls=False,
    )


def stream_request() -> Request:
    return Request(
        model="gpt-4.1-mini",
        messages=[SystemMessage(content="Be brief."), user("Say hello.")],
        max_tokens=256,
        stream=True,
        seed=7,
    )


def reasoning_replay_request() -> Request:
    get_weather = call("chatcmpl-tool-3f9e8c1d2b7a4e6f", "get_weather", city="Paris")
    thought = "The user wants the weather in Paris. I should call get_weather with city Paris."
    return Request(
        model="Qwen/Qwen3-8B",
        messages=[
            user("Weather in Paris?"),
            AssistantMessage(
                parts=[
                    ThinkingPart(text=thought, provider="openai", metadata={"openai": {"field": "reasoning_content"}}),
                    get_weather,
                ]
            ),
            ToolResult.text(get_weather, "18°C and sunny"),
        ],
        tools=[ToolDefinition(name="get_weather", parameters=WEATHER.parameters)],
    )


GOLDEN = {
    "tool_loop": tool_loop_request,
    "strict_tool": strict_request,
    "named_choice": named_request,
    "stream": stream_request,
    "reasoning_replay": reasoning_replay_request,
}


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_golden_request_bodies(case: str) -> None:
    body = load(f"{case}.request.json")
    request = GOLDEN[case]()
    # Reasoning goes back only to compatible servers that read it (vLLM, llama.cpp), never to OpenAI.
    codec = OpenAICodec(PROFILES["openai-compatible"]) if case == "reasoning_replay" else CODEC
    assert codec.encode_request(request) == body
    if case == "tool_loop":  # the wire has no data kind: a data result comes back as its JSON text
        data = request.messages[4]
        assert isinstance(data, ToolResult)
        request.messages[4] = ToolResult(
            tool_call_id=data.tool_call_id, name=data.name, kind="text", value=body["messages"][4]["content"]
        )
    assert codec.decode_request(copy.deepcopy(body)) == request
    assert codec.encode_request(codec.decode_request(copy.deepcopy(body))) == body


# Module-level: pydantic validates `Iterable[...]` lazily and needs its adapter alive while draining.
PARAMS: dict[bool, TypeAdapter[Any]] = {
    False: TypeAdapter(ccp.CompletionCreateParamsNonStreaming),
    True: TypeAdapter(ccp.CompletionCreateParamsStreaming),
}


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_request_fixtures_match_the_sdk_params(case: str) -> None:
    body = load(f"{case}.request.json")
    validated = drain(PARAMS[bool(body.get("stream"))].validate_python(copy.deepcopy(body)))
    if case == "reasoning_replay":  # the compat servers' reasoning field is not in the SDK's types
        del body["messages"][1]["reasoning_content"]
    assert validated == body


def test_sdk_param_check_catches_an_image_in_a_tool_message() -> None:
    body = {"model": "m", "messages": [{"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url"}]}]}
    with pytest.raises(ValueError, match="text"):
        drain(PARAMS[False].validate_python(body))


def test_max_tokens_field_and_reasoning_field_come_from_the_profile() -> None:
    thinking = ThinkingPart(text="hmm", provider="openai")  # no field recorded: the profile decides
    request = Request(
        model="m", messages=[user(), AssistantMessage(parts=[thinking, TextPart(text="ok")])], max_tokens=9
    )
    assert CODEC.encode_request(request) == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}],
        "max_completion_tokens": 9,
    }
    vllm = OpenAICodec(PROFILES["vllm"]).encode_request(request)
    assert vllm["max_tokens"] == 9 and "max_completion_tokens" not in vllm
    assert vllm["messages"][1] == {"role": "assistant", "content": "ok", "reasoning": "hmm"}


# Messages and results


def test_every_result_kind_maps_per_the_spec_table() -> None:
    c = call("c1", "f")
    cases = {
        "text": (ToolResult.text(c, "plain"), "plain"),
        "data": (ToolResult.data(c, {"a": [1, "é"], "b": None}), '{"a":[1,"é"],"b":null}'),
        "error": (ToolResult.error(c, "no such file"), '{"error":"no such file"}'),
        "list data": (ToolResult.data(c, [1, 2]), "[1,2]"),
    }
    for result, content in cases.values():
        body = CODEC.encode_request(Request(model="m", messages=[result]))
        assert body["messages"] == [{"role": "tool", "tool_call_id": "c1", "content": content}]


def test_error_decodes_only_from_its_exact_encoding() -> None:
    c = call("c1", "f")
    assistant = CODEC.encode_request(Request(model="m", messages=[AssistantMessage(parts=[c])]))["messages"][0]
    wire = [
        assistant,
        {"role": "tool", "tool_call_id": "c1", "content": '{"error":"boom"}'},
        {"role": "tool", "tool_call_id": "c1", "content": '{"error": "boom"}'},
        {"role": "tool", "tool_call_id": "c1", "content": '{"error":"boom","code":1}'},
        {"role": "tool", "tool_call_id": "c1", "content": '{"error":3}'},
    ]
    decoded = CODEC.decode_request({"model": "m", "messages": wire}).messages
    assert decoded[1:] == [
        ToolResult(tool_call_id="c1", name="f", kind="error", value="boom"),
        ToolResult(tool_call_id="c1", name="f", kind="text", value='{"error": "boom"}'),
        ToolResult(tool_call_id="c1", name="f", kind="text", value='{"error":"boom","code":1}'),
        ToolResult(tool_call_id="c1", name="f", kind="text", value='{"error":3}'),
    ]


def test_multimodal_images_follow_all_tool_messages_in_one_user_message() -> None:
    a, b, c = call("ca", "shot"), call("cb", "shot"), call("cc", "echo")
    request = Request(
        model="m",
        messages=[
            AssistantMessage(parts=[a, b, c]),
            ToolResult.multimodal(a, [TextPart(text="first"), ImagePart(url="https://x.test/1.png")]),
            ToolResult.multimodal(b, [ImagePart(data=b"GIF89a", media_type=None), ImagePart(data=PNG)]),
            ToolResult.text(c, "done"),
            user("thanks"),
        ],
    )
    body = CODEC.encode_request(request)
    assert body["messages"][1:] == [
        {"role": "tool", "tool_call_id": "ca", "content": [{"type": "text", "text": "first"}]},
        {
            "role": "tool",
            "tool_call_id": "cb",
            "content": [{"type": "text", "text": "(The images of this result follow in the next user message.)"}],
        },
        {"role": "tool", "tool_call_id": "cc", "content": "done"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Images from tool call ca (shot):"},
                {"type": "image_url", "image_url": {"url": "https://x.test/1.png"}},
                {"type": "text", "text": "Images from tool call cb (shot):"},
                {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0lGODlh"}},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            ],
        },
        {"role": "user", "content": "thanks"},
    ]
    decoded = CODEC.decode_request(copy.deepcopy(body))
    assert decoded.messages[2] == ToolResult.multimodal(
        b, [ImagePart(data=b"GIF89a", media_type="image/gif"), ImagePart(data=PNG, media_type="image/png")]
    )
    assert decoded.messages[4] == user("thanks")
    assert CODEC.encode_request(decoded) == body


def test_a_user_message_that_only_looks_like_images_stays_a_user_message() -> None:
    wire = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "text result"},
        {"role": "user", "content": [{"type": "text", "text": "Images from tool call c1 (f):"}]},
    ]
    decoded = CODEC.decode_request({"model": "m", "messages": copy.deepcopy(wire)}).messages
    assert decoded[2] == UserMessage(content=[TextPart(text="Images from tool call c1 (f):")])


def test_tool_names_come_from_the_matching_call() -> None:
    wire = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "x", "type": "function", "function": {"name": "g", "arguments": ""}}],
        },
        {"role": "tool", "tool_call_id": "x", "content": "ok"},
        {"role": "tool", "tool_call_id": "unknown", "content": "ok"},
    ]
    decoded = CODEC.decode_request({"model": "m", "messages": wire}).messages
    assert decoded == [
        AssistantMessage(parts=[TextPart(text=""), ToolCall(id="x", name="g", arguments={})]),
        ToolResult(tool_call_id="x", name="g", kind="text", value="ok"),
        ToolResult(tool_call_id="unknown", name="", kind="text", value="ok"),
    ]


def test_assistant_turns_encode_content_null_and_compact_arguments() -> None:
    broken = ToolCall(id="b", name="f", arguments={"q": "ü"}, metadata={"raw_arguments": '{"q": "ü"'})
    message = AssistantMessage(parts=[ThinkingPart(text="t", signature="sig", provider="anthropic"), broken])
    body = CODEC.encode_request(Request(model="m", messages=[message]))
    assert body["messages"] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "b", "type": "function", "function": {"name": "f", "arguments": '{"q":"ü"}'}}],
        }
    ]


def test_thinking_goes_back_under_the_field_it_came_in_and_foreign_thinking_is_dropped() -> None:
    parts: list[TextPart | ThinkingPart | ToolCall] = [
        ThinkingPart(text="a", provider="openai", metadata={"openai": {"field": "reasoning"}}),
        ThinkingPart(text="b", provider="anthropic", signature="s"),
        ThinkingPart(text="c", provider="gemini", metadata={"openai": {"field": "reasoning_content"}}),
        TextPart(text="answer"),
    ]
    compatible = OpenAICodec(PROFILES["openai-compatible"])
    body = compatible.encode_request(Request(model="m", messages=[AssistantMessage(parts=parts)]))
    assert body["messages"] == [{"role": "assistant", "content": "answer", "reasoning": "a"}]
    # OpenAI's own API has no reasoning field on requests (ChatCompletionAssistantMessageParam):
    body = CODEC.encode_request(Request(model="m", messages=[AssistantMessage(parts=parts)]))
    assert body["messages"] == [{"role": "assistant", "content": "answer"}]


def test_gemini_compat_extra_content_round_trips_on_calls() -> None:
    extra = {"google": {"thought_signature": "CiQB"}}
    c = ToolCall(id="function-call-1", name="f", arguments={}, metadata={"openai": {"extra_content": extra}})
    foreign = ToolCall(id="g", name="f", arguments={}, metadata={"gemini": {"thought_signature": "zz"}})
    body = CODEC.encode_request(Request(model="m", messages=[AssistantMessage(parts=[c, foreign])]))
    assert body["messages"][0]["tool_calls"] == [
        {
            "id": "function-call-1",
            "type": "function",
            "function": {"name": "f", "arguments": "{}"},
            "extra_content": extra,
        },
        {"id": "g", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    ]
    assert CODEC.decode_request(copy.deepcopy(body)).messages[0] == AssistantMessage(
        parts=[c, ToolCall(id="g", name="f", arguments={})]
    )


def test_refusal_in_history_round_trips() -> None:
    refusal = TextPart(text="I can't.", metadata={"openai": {"refusal": True}})
    body = CODEC.encode_request(Request(model="m", messages=[AssistantMessage(parts=[refusal])]))
    assert body["messages"] == [{"role": "assistant", "content": None, "refusal": "I can't."}]
    assert CODEC.decode_request(body).messages == [AssistantMessage(parts=[refusal])]


def test_developer_and_list_system_content_decode_as_system() -> None:
    wire = [{"role": "developer", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "kind."}]}]
    assert CODEC.decode_request({"model": "m", "messages": wire}).messages == [SystemMessage(content="Be kind.")]


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ([], "must be a JSON object"),
        ({"messages": []}, "needs a str 'model'"),
        ({"model": "m", "messages": "hi"}, "needs a 'messages' list"),
        ({"model": "m", "messages": [{"role": "function", "content": "x"}]}, "role 'function'"),
        ({"model": "m", "messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}, "input_audio"),
        ({"model": "m", "messages": [], "tools": [{"type": "function", "function": {}}]}, "function tools only"),
        ({"model": "m", "messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
        (
            {
                "model": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}}],
                    }
                ],
            },
            "not valid base64",
        ),
    ],
)
def test_decode_request_rejects_what_is_not_the_format(body: Any, match: str) -> None:
    with pytest.raises(CodecError, match=match) as info:
        CODEC.decode_request(body)
    assert info.value.provider == "openai"


# Tools, tool choice, parameters


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        (NamedToolChoice("get_weather"), {"type": "function", "function": {"name": "get_weather"}}),
    ],
)
def test_tool_choice_table(choice: Any, wire: Any) -> None:
    request = Request(model="m", messages=[user()], tools=[WEATHER], tool_choice=choice)
    body = CODEC.encode_request(request)
    assert body["tool_choice"] == wire
    assert CODEC.decode_request(body).tool_choice == choice


def test_unmodelled_tool_choice_stays_in_extra() -> None:
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}
    body = {"model": "m", "messages": [], "tool_choice": allowed}
    request = CODEC.decode_request(copy.deepcopy(body))
    assert (request.tool_choice, request.extra) == (None, {"tool_choice": allowed})
    assert CODEC.encode_request(request) == body


def test_llamacpp_emulates_named_choice_and_sends_parallel_true(caplog: pytest.LogCaptureFixture) -> None:
    codec = OpenAICodec(PROFILES["llamacpp"])
    request = Request(
        model="m",
        messages=[user()],
        tools=[WEATHER, ToolDefinition(name="get_time")],
        tool_choice=NamedToolChoice("get_weather"),
        max_tokens=50,
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        body = codec.encode_request(request)
        codec.encode_request(request)
    assert body == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [CODEC.encode_request(Request(model="m", messages=[], tools=[WEATHER]))["tools"][0]],
        "tool_choice": "required",
        "parallel_tool_calls": True,
        "max_tokens": 50,
    }
    assert [r.getMessage() for r in caplog.records] == [
        "The llamacpp server cannot force a named tool; toolwire sends only tool 'get_weather' "
        "with tool_choice 'required' instead."
    ]
    assert codec.encode_request(codec.decode_request(copy.deepcopy(body))) == body


def test_parallel_tool_calls_default_applies_only_with_tools() -> None:
    codec = OpenAICodec(PROFILES["llamacpp"])
    assert "parallel_tool_calls" not in codec.encode_request(Request(model="m", messages=[user()]))
    explicit = Request(model="m", messages=[user()], tools=[WEATHER], parallel_tool_calls=False)
    assert codec.encode_request(explicit)["parallel_tool_calls"] is False
    assert "parallel_tool_calls" not in CODEC.encode_request(Request(model="m", messages=[user()], tools=[WEATHER]))


def test_strict_tools_go_through_the_strict_schema() -> None:
    loose = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    }
    tool = ToolDefinition(name="forecast", parameters=loose, strict=True)
    body = CODEC.encode_request(Request(model="m", messages=[], tools=[tool, ToolDefinition(name="ping", strict=True)]))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "forecast", "parameters": openai_strict_schema(loose), "strict": True},
        },
        {
            "type": "function",
            "function": {
                "name": "ping",
                "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
                "strict": True,
            },
        },
    ]
    assert body["tools"][0]["function"]["parameters"]["required"] == ["city", "days"]
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body


def test_strict_false_is_sent_as_given() -> None:
    tool = ToolDefinition(name="f", parameters={"type": "object"}, strict=False)
    body = CODEC.encode_request(Request(model="m", messages=[], tools=[tool]))
    assert body["tools"] == [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}, "strict": False}}
    ]


def test_unsupported_strict_is_dropped_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    codec = OpenAICodec(PROFILES["openai-compatible"])
    tools = [
        ToolDefinition(name="a", parameters={"type": "object"}, strict=True),
        ToolDefinition(name="b", strict=True),
    ]
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        body = codec.encode_request(Request(model="m", messages=[], tools=tools))
    assert body["tools"] == [
        {"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "b"}},
    ]
    assert [r.getMessage() for r in caplog.records] == [
        "The openai-compatible server does not accept strict tools; toolwire sends tool 'a' and any other "
        "strict tool without 'strict'."
    ]


def test_stream_asks_for_usage_and_decode_consumes_it() -> None:
    body = CODEC.encode_request(Request(model="m", messages=[], stream=True))
    assert body == {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}}
    request = CODEC.decode_request(body)
    assert (request.stream, request.extra) == (True, {})
    other = {"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True, "x": 1}}
    assert CODEC.decode_request(copy.deepcopy(other)).extra == {"stream_options": {"include_usage": True, "x": 1}}
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(other))) == other


def test_extra_is_merged_last_and_unknown_keys_come_back_in_extra() -> None:
    request = Request(model="m", messages=[], temperature=0.5, extra={"temperature": 0.1, "logprobs": True})
    body = CODEC.encode_request(request)
    assert body == {"model": "m", "messages": [], "temperature": 0.1, "logprobs": True}
    assert CODEC.decode_request(dict(body)) == Request(
        model="m", messages=[], temperature=0.1, extra={"logprobs": True}
    )


def test_max_tokens_is_read_from_either_field() -> None:
    assert CODEC.decode_request({"model": "m", "messages": [], "max_tokens": 5}).max_tokens == 5
    vllm = OpenAICodec(PROFILES["vllm"])
    assert vllm.decode_request({"model": "m", "messages": [], "max_completion_tokens": 6}).max_tokens == 6


@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_a_same_codec_round_trip_keeps_the_max_tokens_field_the_caller_wrote(field: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], field: 7}
    request = get_codec("openai").decode_request(body)
    assert request.max_tokens == 7
    assert get_codec("openai").encode_request(request) == body
    # Changed in between, the neutral value wins, in the profile's field.
    changed = get_codec("openai").encode_request(replace(request, max_tokens=9))
    assert {k: v for k, v in changed.items() if "tokens" in k} == {"max_completion_tokens": 9}
    # Another provider never sees the OpenAI field.
    anthropic = get_codec("anthropic").encode_request(request)
    assert (anthropic["max_tokens"], "max_completion_tokens" in anthropic) == (7, False)


# Responses


EXPECTED_RESPONSES: dict[str, Response] = {
    "text": Response(
        message=AssistantMessage(parts=[TextPart(text="Hello! How can I help you today?")]),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=19, output_tokens=10, cache_read_tokens=0, reasoning_tokens=0),
        model="gpt-4.1-2025-04-14",
        id="chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
    ),
    "parallel_calls": Response(
        message=AssistantMessage(
            parts=[
                TextPart(text="Let me check both cities."),
                call("call_a1B2c3D4e5F6g7H8i9J0kLmN", "get_weather", city="Paris", unit="celsius"),
                call("call_Z9y8X7w6V5u4T3s2R1q0PoNm", "get_weather", city="Tokyo", unit="celsius"),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_calls",
        usage=Usage(input_tokens=82, output_tokens=64, cache_read_tokens=0, reasoning_tokens=0),
        model="gpt-4.1-2025-04-14",
        id="chatcmpl-BKq3ZJ1vYtL7fXo2mPq9sRr4TuWxV",
    ),
    "named_choice_stop": Response(
        message=AssistantMessage(parts=[call("call_Qm4Rt7Yu1Io3Pa6Sd9Fg2Hj5", "get_weather", city="Berlin")]),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=64, output_tokens=15, cache_read_tokens=0, reasoning_tokens=0),
        model="gpt-4.1-2025-04-14",
        id="chatcmpl-BNf0cR2aQ8dLx1Yp7WmT3kVz9HsJe",
    ),
    "empty_arguments": Response(
        message=AssistantMessage(parts=[call("call_Empty0Args1Xyz2", "get_time")]),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_calls",
        usage=Usage(input_tokens=40, output_tokens=7, cache_read_tokens=0, reasoning_tokens=0),
        model="gpt-4.1-2025-04-14",
        id="chatcmpl-BPz8Lk2Jh4Gf6Ds8Aq0Wv1Ec3Rt",
    ),
    "broken_arguments": Response(
        message=AssistantMessage(
            parts=[
                ToolCall(  # cut off before its end: not guessed at, the model is asked again
                    id="chatcmpl-tool-0a1b2c3d4e5f",
                    name="search",
                    arguments={},
                    metadata={
                        "raw_arguments": '{"query": "weather in Paris", "limit": 5',
                        "arguments_error": "the arguments were cut off before their end "
                        """(...'{"query": "weather in Paris", "limit": 5'); send the whole call again""",
                    },
                ),
                ToolCall(
                    id="chatcmpl-tool-6a7b8c9d0e1f",
                    name="lookup",
                    arguments={},
                    metadata={
                        "raw_arguments": "I will call lookup now",
                        "arguments_error": "the arguments are not valid JSON and could not be repaired: "
                        "'I will call lookup now'",
                    },
                ),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_calls",
        usage=Usage(input_tokens=120, output_tokens=30, cache_read_tokens=0, reasoning_tokens=0),
        model="meta-llama/Llama-3.1-8B-Instruct",
        id="chatcmpl-5c0e9a3b7f1d4e2a8b6c9d0e1f2a3b4c",
    ),
    "unicode": Response(
        message=AssistantMessage(
            parts=[
                TextPart(text="Voilà — 東京の天気は晴れです ☀️ 🌸"),
                call("call_Un1c0deTr4nsl8", "translate", text="こんにちは 👋", target="français"),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_calls",
        usage=Usage(input_tokens=55, output_tokens=40, cache_read_tokens=0, reasoning_tokens=0),
        model="gpt-4.1-2025-04-14",
        id="chatcmpl-BUn1c0d3Xy7Zq9Wv2Ts4Rp6Om8Lk",
    ),
    "reasoning_content": Response(
        message=AssistantMessage(
            parts=[
                ThinkingPart(
                    text="The user wants the weather in Paris. I should call get_weather with city Paris.",
                    provider="openai",
                    metadata={"openai": {"field": "reasoning_content"}},
                ),
                call("chatcmpl-tool-3f9e8c1d2b7a4e6f", "get_weather", city="Paris"),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_calls",
        usage=Usage(input_tokens=210, output_tokens=48, cache_read_tokens=0, reasoning_tokens=0),
        model="Qwen/Qwen3-8B",
        id="chatcmpl-8f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f",
    ),
    "reasoning": Response(
        message=AssistantMessage(
            parts=[
                ThinkingPart(
                    text="Simple arithmetic: 17 * 3 = 51.",
                    provider="openai",
                    metadata={"openai": {"field": "reasoning"}},
                ),
                TextPart(text="17 \u00d7 3 = 51."),
            ]
        ),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=75, output_tokens=30, cache_read_tokens=0, reasoning_tokens=0),
        model="openai/gpt-oss-20b",
        id="chatcmpl-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d",
    ),
    "usage_details": Response(
        message=AssistantMessage(parts=[TextPart(text="42")]),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=1200, output_tokens=350, cache_read_tokens=1024, reasoning_tokens=320),
        model="o4-mini-2025-04-16",
        id="chatcmpl-BXu5aGe6Ca7cHe8dR9eAs0oNi1Ng",
    ),
    "ollama_index_reuse": Response(
        message=AssistantMessage(
            parts=[
                call("call_k2x9vq7d", "get_weather", city="Paris"),
                call("call_m8w3zr1p", "get_time", timezone="Europe/Paris"),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="tool_calls",
        usage=Usage(input_tokens=180, output_tokens=42),
        model="qwen3:8b",
        id="chatcmpl-532",
    ),
    "missing_index": Response(
        message=AssistantMessage(
            parts=[
                ToolCall(
                    id="function-call-15785823562916347421",
                    name="get_weather",
                    arguments={"city": "Paris"},
                    metadata={
                        "openai": {
                            "extra_content": {
                                "google": {"thought_signature": "CiQBVKhc7iX0vW2zL8mQ5nR3tY6uP1oA9sD4fG7hJ2kL"}
                            }
                        }
                    },
                ),
                call("function-call-15785823562916347422", "get_weather", city="Rome"),
            ]
        ),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=96, output_tokens=24),
        model="gemini-2.5-flash",
        id="eyJ0Ijoi7mMKQ3x",
    ),
    "refusal": Response(
        message=AssistantMessage(
            parts=[TextPart(text="I'm sorry, I can't help with that.", metadata={"openai": {"refusal": True}})]
        ),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=30, output_tokens=12, cache_read_tokens=0, reasoning_tokens=0),
        model="gpt-4.1-2025-04-14",
        id="chatcmpl-BRe7fUs4LxQ2mN8vK1jH5gF3dS9a",
    ),
}


@pytest.mark.parametrize("case", sorted(EXPECTED_RESPONSES))
def test_response_fixtures_decode_exactly(case: str) -> None:
    assert CODEC.decode_response(load(f"{case}.response.json")) == EXPECTED_RESPONSES[case]


@pytest.mark.parametrize("case", sorted(EXPECTED_RESPONSES))
def test_stream_fixtures_decode_to_the_same_response(case: str) -> None:
    events, final = feed_all(case)
    assert final == EXPECTED_RESPONSES[case]
    assert not any(isinstance(e, Done) for e in events)  # the client adds Done at [DONE]


@pytest.mark.parametrize("case", sorted(EXPECTED_RESPONSES))
def test_fixtures_match_the_sdk_models(case: str) -> None:
    body = load(f"{case}.response.json")
    assert oai.ChatCompletion.model_validate(body).id == body["id"]
    chunks = load_stream(case)
    if case == "missing_index":  # Gemini's endpoint omits the index the SDK requires
        assert all("index" not in tc for c in chunks[:-1] for tc in c["choices"][0]["delta"]["tool_calls"])
        return
    assert [oai.ChatCompletionChunk.model_validate(c).id for c in chunks] == [body["id"]] * len(chunks)


def test_parallel_stream_events_interleave_by_index() -> None:
    events, _ = feed_all("parallel_calls")
    assert events == [
        TextDelta("Let me check"),
        TextDelta(" both cities."),
        ToolCallDelta(0, "call_a1B2c3D4e5F6g7H8i9J0kLmN", "get_weather", ""),
        ToolCallDelta(1, "call_Z9y8X7w6V5u4T3s2R1q0PoNm", "get_weather", ""),
        ToolCallDelta(0, None, None, '{"city'),
        ToolCallDelta(1, None, None, '{"city'),
        ToolCallDelta(0, None, None, '": "Paris"'),
        ToolCallDelta(1, None, None, '": "Tokyo"'),
        ToolCallDelta(0, None, None, ', "unit": "celsius"}'),
        ToolCallDelta(1, None, None, ', "unit": "celsius"}'),
    ]


def test_index_reuse_with_a_new_id_starts_a_new_call() -> None:
    events, _ = feed_all("ollama_index_reuse")
    assert events == [
        ToolCallDelta(0, "call_k2x9vq7d", "get_weather", '{"city":"Paris"}'),
        ToolCallDelta(1, "call_m8w3zr1p", "get_time", '{"timezone":"Europe/Paris"}'),
    ]


def test_missing_index_new_id_is_a_new_call_and_no_id_continues() -> None:
    events, _ = feed_all("missing_index")
    assert [(e.index, e.id) for e in events if isinstance(e, ToolCallDelta)] == [
        (0, "function-call-15785823562916347421"),
        (1, "function-call-15785823562916347422"),
    ]
    decoder = CODEC.stream_decoder()
    chunks = [
        {
            "id": "r",
            "choices": [{"delta": {"tool_calls": [{"id": "a", "function": {"name": "f", "arguments": '{"x"'}}]}}],
        },
        {"id": "r", "choices": [{"delta": {"tool_calls": [{"function": {"arguments": ": 1}"}}]}}]},
        {"id": "r", "choices": [{"delta": {"tool_calls": [{"id": "a", "function": {"arguments": ""}}]}}]},
        {"id": "r", "choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "g"}}]}}]},
        {"id": "r", "choices": [{"delta": {"tool_calls": [{"function": {"arguments": "{}"}}]}}]},
    ]
    events = [e for c in chunks for e in decoder.feed(c)]
    assert events == [
        ToolCallDelta(0, "a", "f", '{"x"'),
        ToolCallDelta(0, None, None, ": 1}"),
        ToolCallDelta(1, "b", "g", ""),
        ToolCallDelta(1, None, None, "{}"),
    ]
    final = decoder.finish()
    assert final.tool_calls[0] == ToolCall(id="a", name="f", arguments={"x": 1})
    assert final.tool_calls[1] == ToolCall(id="b", name="g", arguments={})
    assert final.stop_reason is StopReason.OTHER and final.raw_stop_reason is None


def test_reasoning_stream_emits_thinking_deltas() -> None:
    events, _ = feed_all("reasoning")
    assert events == [
        ThinkingDelta("Simple arithmetic:"),
        ThinkingDelta(" 17 * 3 = 51."),
        TextDelta("17 \u00d7 3"),
        TextDelta(" = 51."),
    ]


def test_calls_without_ids_get_the_same_derived_id_streamed_or_not() -> None:
    body = {
        "id": "chatcmpl-x",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    whole = CODEC.decode_response(body)
    decoder = CODEC.stream_decoder()
    decoder.feed(
        {
            "id": "chatcmpl-x",
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]}}
            ],
        }
    )
    decoder.feed({"id": "chatcmpl-x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    assert decoder.finish() == whole
    assert whole.tool_calls[0].id.startswith("call_") and len(whole.tool_calls[0].id) == 29


def test_text_after_calls_in_a_stream_still_comes_first() -> None:
    decoder = CODEC.stream_decoder()
    decoder.feed(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}]},
                }
            ]
        }
    )
    decoder.feed({"choices": [{"index": 0, "delta": {"content": "late text"}, "finish_reason": "tool_calls"}]})
    assert decoder.finish().message == AssistantMessage(parts=[TextPart(text="late text"), call("c", "f")])
    assert decoder.finish() == decoder.finish()


@pytest.mark.parametrize(
    ("raw", "with_call", "stop"),
    [
        ("stop", False, StopReason.END_TURN),
        ("stop", True, StopReason.TOOL_USE),
        ("length", False, StopReason.MAX_TOKENS),
        ("length", True, StopReason.MAX_TOKENS),
        ("tool_calls", True, StopReason.TOOL_USE),
        ("function_call", False, StopReason.TOOL_USE),
        ("content_filter", True, StopReason.CONTENT_FILTER),
        ("eos_token", False, StopReason.OTHER),
        (None, False, StopReason.OTHER),
    ],
)
def test_stop_reason_table(raw: str | None, with_call: bool, stop: StopReason) -> None:
    message: dict[str, Any] = {"role": "assistant", "content": "x"}
    if with_call:
        message["tool_calls"] = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    response = CODEC.decode_response({"choices": [{"index": 0, "message": message, "finish_reason": raw}]})
    assert (response.stop_reason, response.raw_stop_reason) == (stop, raw)


def test_usage_absent_and_content_empty() -> None:
    body = {
        "id": "r",
        "model": "m",
        "choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}],
    }
    assert CODEC.decode_response(body) == Response(
        message=AssistantMessage(), stop_reason=StopReason.END_TURN, raw_stop_reason="stop", model="m", id="r"
    )


def test_error_bodies_raise_provider_error() -> None:
    body = load("error.response.json")
    with pytest.raises(ProviderError) as info:
        CODEC.decode_response(body)
    assert info.value.message == (
        "Invalid 'tools': array too long. Expected an array with maximum length 128, "
        "but got an array with length 130 instead."
    )
    assert (info.value.provider, info.value.status, info.value.body) == ("openai", None, body)
    vllm = load("vllm_error.response.json")
    with pytest.raises(BadRequestError) as info:  # its code says 400: typed as an HTTP 400 would be
        CODEC.decode_response(vllm)
    assert (
        info.value.message == '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
    )
    assert info.value.status == 400


def test_error_chunk_raises_provider_error_mid_stream() -> None:
    decoder = CODEC.stream_decoder()
    chunks = load_stream("stream_error")
    assert decoder.feed(chunks[0]) == []
    assert decoder.feed(chunks[1]) == [TextDelta("Partial")]
    with pytest.raises(ProviderError, match="The server had an error") as info:
        decoder.feed(chunks[2])
    assert info.value.body == chunks[2] and info.value.provider == "openai"


@pytest.mark.parametrize("body", [[], {"choices": "x"}, {"id": "r"}])
def test_decode_response_rejects_non_bodies(body: Any) -> None:
    with pytest.raises(CodecError):
        CODEC.decode_response(body)


# Rendering replies (test server)


def test_encode_response_renders_a_chat_completion() -> None:
    response = EXPECTED_RESPONSES["reasoning_content"]
    body = CODEC.encode_response(response)
    assert isinstance(body.pop("created"), int)
    assert body == {
        "id": "chatcmpl-8f1c2d3e4a5b6c7d8e9f0a1b2c3d4e5f",
        "object": "chat.completion",
        "model": "Qwen/Qwen3-8B",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": response.message.parts[0].text,  # type: ignore[union-attr]
                    "tool_calls": [
                        {
                            "id": "chatcmpl-tool-3f9e8c1d2b7a4e6f",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 210,
            "completion_tokens": 48,
            "total_tokens": 258,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }
    assert oai.ChatCompletion.model_validate({**body, "created": 1}).choices[0].finish_reason == "tool_calls"


def test_encode_stream_splits_arguments_and_ends_with_usage() -> None:
    response = EXPECTED_RESPONSES["parallel_calls"]
    chunks = CODEC.encode_stream(response)
    deltas = [c["choices"][0]["delta"] if c["choices"] else None for c in chunks]
    assert deltas == [
        {"role": "assistant", "content": ""},
        {"content": "Let me ch"},
        {"content": "eck both "},
        {"content": "cities."},
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_a1B2c3D4e5F6g7H8i9J0kLmN",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},  # as OpenAI opens a call
                }
            ]
        },
        *[
            {"tool_calls": [{"index": 0, "function": {"arguments": p}}]}
            for p in ['{"city":"Pa', 'ris","unit"', ':"celsius"}']
        ],
        {
            "tool_calls": [
                {
                    "index": 1,
                    "id": "call_Z9y8X7w6V5u4T3s2R1q0PoNm",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            ]
        },
        *[
            {"tool_calls": [{"index": 1, "function": {"arguments": p}}]}
            for p in ['{"city":"To', 'kyo","unit"', ':"celsius"}']
        ],
        {},
        None,
    ]
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"] == {
        "prompt_tokens": 82,
        "completion_tokens": 64,
        "total_tokens": 146,
        "prompt_tokens_details": {"cached_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    for chunk in chunks:
        oai.ChatCompletionChunk.model_validate(chunk)
    decoder = CODEC.stream_decoder()
    for chunk in chunks:
        decoder.feed(chunk)
    assert decoder.finish() == response


@pytest.mark.parametrize("case", sorted(EXPECTED_RESPONSES))
def test_rendered_fixture_replies_decode_back_exactly(case: str) -> None:
    response = EXPECTED_RESPONSES[case]
    assert CODEC.decode_response(CODEC.encode_response(response)) == response
    decoder = CODEC.stream_decoder()
    for chunk in CODEC.encode_stream(response):
        decoder.feed(chunk)
    assert decoder.finish() == response


def test_rendering_without_id_usage_or_raw_reason() -> None:
    response = Response(message=AssistantMessage(parts=[TextPart(text="hi")]), stop_reason=StopReason.END_TURN)
    body = CODEC.encode_response(response)
    assert "id" not in body and "usage" not in body and "model" not in body
    assert body["choices"][0]["finish_reason"] == "stop"
    assert CODEC.decode_response(body) == Response(
        message=response.message, stop_reason=StopReason.END_TURN, raw_stop_reason="stop"
    )


# Ids OpenAI rejects


def test_long_call_ids_are_shortened_the_same_way_in_calls_results_and_markers() -> None:
    long_id = "fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f"  # 53 characters (agno #5382)
    c = call(long_id, "shot")
    request = Request(
        model="m",
        messages=[AssistantMessage(parts=[c]), ToolResult.multimodal(c, [TextPart(text="t"), ImagePart(url="u")])],
    )
    body = CODEC.encode_request(request)
    short = "call_" + hashlib.sha256(long_id.encode()).hexdigest()[:35]
    assert len(short) == 40
    assert body["messages"][0]["tool_calls"][0]["id"] == short
    assert body["messages"][1]["tool_call_id"] == short
    assert body["messages"][2]["content"][0] == {"type": "text", "text": f"Images from tool call {short} (shot):"}
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body
    vllm = OpenAICodec(PROFILES["vllm"]).encode_request(request)  # vLLM's own ids are 46 characters
    assert vllm["messages"][1]["tool_call_id"] == long_id


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests(provider="openai"))
def test_random_encoded_bodies_match_the_sdk_params(request: Request) -> None:
    body = CODEC.encode_request(request)
    assert drain(PARAMS[False].validate_python(copy.deepcopy(body))) == body


def _chunk(delta: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": None, **extra}]}


def test_chunks_with_null_keys_decode_like_chunks_without_them() -> None:
    call = {"index": 0, "id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}
    start = {"id": "x", "model": "m", **_chunk({"role": "assistant", "tool_calls": [call]})}
    pieces = ['{"ci', 'ty": "Pa', 'ris"}']
    plain = [_chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces]
    nulls = [
        _chunk(
            {
                "role": None,
                "content": None,
                "reasoning_content": None,
                "tool_calls": [{"index": 0, "id": None, "type": None, "function": {"name": None, "arguments": p}}],
            },
            logprobs=None,
        )
        for p in pieces
    ]
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    results = []
    for chunks in (plain, nulls):
        decoder = CODEC.stream_decoder()
        events = [e for chunk in [start, *chunks, end] for e in decoder.feed(chunk)]
        results.append((events, decoder.finish()))
    assert results[0] == results[1]
    assert results[1][1].tool_calls[0].arguments == {"city": "Paris"}


def test_a_same_codec_round_trip_sends_argument_text_as_the_caller_wrote_it() -> None:
    written = '{ "city": "Paris",\n  "unit": "celsius" }'
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": written}}
    body = {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]}
    request = CODEC.decode_request(copy.deepcopy(body))
    decoded = request.messages[0]
    assert isinstance(decoded, AssistantMessage)
    assert decoded.tool_calls[0].arguments == {"city": "Paris", "unit": "celsius"}
    assert CODEC.encode_request(request) == body
    # Arguments changed in between are sent as they are now, compact.
    decoded.tool_calls[0].arguments["unit"] = "kelvin"
    sent = CODEC.encode_request(request)["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"city":"Paris","unit":"kelvin"}'
    # Another provider gets the arguments, never the OpenAI text.
    anthropic = get_codec("anthropic").encode_request(request)
    assert anthropic["messages"][0]["content"][0]["input"] == {"city": "Paris", "unit": "kelvin"}


def _piece(delta: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {"id": "c", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": None, **choice}]}


def _fragment(index: Any, arguments: Any, **more: Any) -> dict[str, Any]:
    return _piece({"tool_calls": [{"index": index, "function": {"arguments": arguments}, **more}]})


_ODD_CHUNKS = [
    _piece({"content": "a"}),
    _piece({"content": ""}),
    _piece({"content": 1}),
    _piece({"content": "b", "role": None, "tool_calls": None}),  # vLLM's nulls
    _piece({"content": "c", "reasoning_content": "r"}),
    _piece({"content": "d"}, finish_reason="stop"),
    _piece({"refusal": "no"}),
    _fragment(0, '{"x":'),
    _fragment(0, ""),
    _fragment(0, 5),
    _fragment(1, "1}"),
    _fragment("0", "1}"),
    _fragment(0, "2}", id="call_2"),
    _fragment(0, "3}", type="function"),
    _piece({"tool_calls": [{"index": 0, "function": {"arguments": "4", "name": "g"}}]}),
    {"id": "c", "model": "m", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}},
    {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": "e"}, "finish_reason": None}] * 2},
]


def test_stream_fast_path_reads_what_the_full_path_reads() -> None:
    """Text and argument pieces skip the decoder's dispatch and the boundary's checks: every run of three odd
    chunks after a call's header reads the same either way."""
    header = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": ""}}
    opening = [_piece({"role": "assistant", "content": ""}), _piece({"tool_calls": [header]})]
    differ = runs_read_differently(CODEC, opening, _ODD_CHUNKS)
    assert differ[:1] == []
