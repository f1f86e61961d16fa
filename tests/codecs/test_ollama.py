from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

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
from toolwire.codecs.common.ids import derived_call_id
from toolwire.codecs.ollama import OllamaCodec
from toolwire.errors import CodecError, ProviderError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ollama"
CODEC = get_codec("ollama")
MODEL = "qwen3:8b"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
PNG_B64 = "iVBORw0KGgoAAAANSUhEUg=="


def load(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return result


def load_stream(case: str) -> list[dict[str, Any]]:
    lines = (FIXTURES / f"{case}.stream.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def feed_all(lines: list[dict[str, Any]]) -> list[Any]:
    decoder = CODEC.stream_decoder()
    return [event for line in lines for event in decoder.feed(copy.deepcopy(line))]


def issued(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments, metadata={"ollama": {"id": call_id}})


WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "City name"}},
        "required": ["city"],
    },
)
LOOKUP = ToolDefinition(
    name="lookup",
    description="Search an encyclopedia.",
    parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
)


def tool_loop_request() -> Request:
    calls = [
        issued("call_k3x9a2bq", "get_weather", {"city": "Paris"}),
        issued("call_p0m4z7ty", "get_weather", {"city": "Oslo"}),
        issued("call_a1b2c3d4", "lookup", {"q": "population of Paris"}),
        issued("call_z9y8x7w6", "screenshot", {}),
    ]
    foreign = ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="get_weather", arguments={"city": "Rome"})
    return Request(
        model=MODEL,
        messages=[
            SystemMessage(content="You are a helpful assistant."),
            UserMessage(
                content=[
                    TextPart(text="What's the weather here and in Paris and Oslo?"),
                    ImagePart(data=PNG, media_type="image/png"),
                ]
            ),
            AssistantMessage(
                parts=[
                    ThinkingPart(text="I need the weather for both cities.", provider="ollama"),
                    TextPart(text="Checking."),
                    *calls,
                ]
            ),
            ToolResult.text(calls[0], "18°C, sunny"),
            ToolResult.data(calls[1], {"temp_c": 4, "sky": "snow"}),
            ToolResult.error(calls[2], "lookup service unavailable"),
            ToolResult.multimodal(
                calls[3], [TextPart(text="Screenshot attached."), ImagePart(data=PNG, media_type="image/png")]
            ),
            AssistantMessage(
                parts=[ThinkingPart(text="signed elsewhere", signature="sig", provider="anthropic"), foreign]
            ),
            ToolResult.text(foreign, "21°C, clear"),
        ],
        tools=[WEATHER, LOOKUP, ToolDefinition(name="screenshot")],
        temperature=0.2,
        max_tokens=512,
        extra={"think": True, "keep_alive": "5m", "options": {"num_ctx": 8192}},
    )


# Requests


def test_tool_loop_request_matches_the_golden_body() -> None:
    assert OllamaCodec().encode_request(tool_loop_request()) == load("tool_loop.request.json")


def test_tool_loop_request_decodes_to_the_neutral_conversation() -> None:
    request = CODEC.decode_request(load("tool_loop.request.json"))
    rome_id = derived_call_id("request\x007", 0)
    assert request.model == MODEL
    assert (request.temperature, request.max_tokens, request.stream) == (0.2, 512, False)
    assert request.extra == {"think": True, "keep_alive": "5m", "options": {"num_ctx": 8192}}
    assert request.tools == [
        WEATHER,
        LOOKUP,
        ToolDefinition(name="screenshot", parameters={"type": "object", "properties": {}}),
    ]
    assert request.messages[1] == UserMessage(
        content=[
            TextPart(text="What's the weather here and in Paris and Oslo?"),
            ImagePart(data=PNG, media_type="image/png"),
        ]
    )
    assert request.messages[2] == AssistantMessage(
        parts=[
            ThinkingPart(text="I need the weather for both cities.", provider="ollama"),
            TextPart(text="Checking."),
            issued("call_k3x9a2bq", "get_weather", {"city": "Paris"}),
            issued("call_p0m4z7ty", "get_weather", {"city": "Oslo"}),
            issued("call_a1b2c3d4", "lookup", {"q": "population of Paris"}),
            issued("call_z9y8x7w6", "screenshot", {}),
        ]
    )
    assert request.messages[3:7] == [
        ToolResult(tool_call_id="call_k3x9a2bq", name="get_weather", kind="text", value="18°C, sunny"),
        ToolResult(tool_call_id="call_p0m4z7ty", name="get_weather", kind="text", value='{"temp_c":4,"sky":"snow"}'),
        ToolResult(tool_call_id="call_a1b2c3d4", name="lookup", kind="error", value="lookup service unavailable"),
        ToolResult(
            tool_call_id="call_z9y8x7w6",
            name="screenshot",
            kind="multimodal",
            value=[TextPart(text="Screenshot attached."), ImagePart(data=PNG, media_type="image/png")],
        ),
    ]
    assert request.messages[7:] == [
        AssistantMessage(parts=[ToolCall(id=rome_id, name="get_weather", arguments={"city": "Rome"})]),
        ToolResult(tool_call_id=rome_id, name="get_weather", kind="text", value="21°C, clear"),
    ]


def test_request_round_trip() -> None:
    body = CODEC.encode_request(tool_loop_request())
    assert CODEC.encode_request(CODEC.decode_request(copy.deepcopy(body))) == body


@pytest.mark.parametrize(
    ("result", "wire"),
    [
        (ToolResult(tool_call_id="c", name="f", kind="text", value="ok"), {"content": "ok"}),
        (ToolResult(tool_call_id="c", name="f", kind="data", value=[1, "é"]), {"content": '[1,"é"]'}),
        (ToolResult(tool_call_id="c", name="f", kind="error", value="boom"), {"content": '{"error":"boom"}'}),
        (
            ToolResult(
                tool_call_id="c",
                name="f",
                kind="multimodal",
                value=[TextPart(text="a"), ImagePart(data=PNG), TextPart(text="b")],
            ),
            {"content": "a\nb", "images": [PNG_B64]},
        ),
    ],
)
def test_each_result_kind(result: ToolResult, wire: dict[str, Any]) -> None:
    body = CODEC.encode_request(Request(model=MODEL, messages=[result]))
    assert body["messages"] == [{"role": "tool", **wire, "tool_name": "f"}]


def test_results_pair_with_calls_by_name_and_order() -> None:
    body = {
        "model": MODEL,
        "messages": [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "a", "arguments": {}}},
                    {"function": {"name": "b", "arguments": {}}},
                    {"function": {"name": "a", "arguments": {"n": 2}}},
                ],
            },
            {"role": "tool", "content": "b1", "tool_name": "b"},
            {"role": "tool", "content": "a1", "tool_name": "a"},
            {"role": "tool", "content": "a2", "tool_name": "a"},
        ],
    }
    request = CODEC.decode_request(body)
    assistant, *results = request.messages
    assert isinstance(assistant, AssistantMessage)
    calls = assistant.tool_calls
    assert [(r.tool_call_id, r.value) for r in results if isinstance(r, ToolResult)] == [
        (calls[1].id, "b1"),
        (calls[0].id, "a1"),
        (calls[2].id, "a2"),
    ]
    assert len({c.id for c in calls}) == 3
    assert request.stream is True  # the server's default when the field is absent


def test_stream_is_always_sent_and_options_merge_with_extra() -> None:
    for stream in (False, True):
        body = CODEC.encode_request(Request(model=MODEL, messages=[UserMessage(content="hi")], stream=stream))
        assert body == {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    body = CODEC.encode_request(
        Request(model=MODEL, messages=[], temperature=0.0, extra={"options": {"top_k": 40}, "format": "json"})
    )
    assert body == {
        "model": MODEL,
        "messages": [],
        "stream": False,
        "options": {"temperature": 0.0, "top_k": 40},
        "format": "json",
    }


def test_foreign_thinking_is_dropped_and_issued_ids_only_are_sent() -> None:
    message = AssistantMessage(
        parts=[
            ThinkingPart(text="mine", provider="ollama"),
            ThinkingPart(text="theirs", signature="s", provider="anthropic"),
            ToolCall(id="call_x", name="f", arguments={"a": 1}),
            ToolCall(id="call_y", name="f", arguments={}, metadata={"gemini": {"id": "call_y"}}),
            issued("call_z", "f", {}),
        ]
    )
    [wire] = CODEC.encode_request(Request(model=MODEL, messages=[message]))["messages"]
    assert wire == {
        "role": "assistant",
        "content": "",
        "thinking": "mine",
        "tool_calls": [
            {"function": {"name": "f", "arguments": {"a": 1}}},
            {"function": {"name": "f", "arguments": {}}},
            {"id": "call_z", "function": {"name": "f", "arguments": {}}},
        ],
    }


def test_image_urls_are_sent_as_text_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    codec = OllamaCodec()
    user = UserMessage(content=[TextPart(text="look"), ImagePart(url="https://example.com/a.png")])
    with caplog.at_level(logging.WARNING):
        body = codec.encode_request(Request(model=MODEL, messages=[user, user]))
    assert body["messages"][0] == {"role": "user", "content": "look\n[image: https://example.com/a.png]"}
    assert len(caplog.records) == 1 and "ImagePart(data=...)" in caplog.records[0].getMessage()


# Tool choice (docs/wire-formats.md, Ollama: auto default, none omits tools, required warns, named sends one tool)


def choice_body(codec: OllamaCodec, **kwargs: Any) -> dict[str, Any]:
    return codec.encode_request(Request(model=MODEL, messages=[], tools=[WEATHER, LOOKUP], **kwargs))


def test_tool_choice_auto_and_none(caplog: pytest.LogCaptureFixture) -> None:
    codec = OllamaCodec()
    with caplog.at_level(logging.WARNING):
        auto = choice_body(codec, tool_choice="auto")
        default = choice_body(codec)
        none = choice_body(codec, tool_choice="none")
    assert auto == default
    assert [t["function"]["name"] for t in auto["tools"]] == ["get_weather", "lookup"]
    assert "tool_choice" not in auto
    assert none == {"model": MODEL, "messages": [], "stream": False}
    assert caplog.records == []


def test_tool_choice_required_warns_once_per_codec(caplog: pytest.LogCaptureFixture) -> None:
    codec = OllamaCodec()
    with caplog.at_level(logging.WARNING):
        body = choice_body(codec, tool_choice="required")
        choice_body(codec, tool_choice="required")
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather", "lookup"]
    assert len(caplog.records) == 1 and "'required'" in caplog.records[0].getMessage()
    with caplog.at_level(logging.WARNING):
        choice_body(OllamaCodec(), tool_choice="required")
    assert len(caplog.records) == 2


def test_tool_choice_named_sends_only_that_tool(caplog: pytest.LogCaptureFixture) -> None:
    codec = OllamaCodec()
    with caplog.at_level(logging.WARNING):
        body = choice_body(codec, tool_choice=NamedToolChoice("lookup"))
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "description": "Search an encyclopedia.",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
            },
        }
    ]
    assert len(caplog.records) == 1 and "'lookup'" in caplog.records[0].getMessage()
    with pytest.raises(ValueError, match="'missing'"):
        choice_body(codec, tool_choice=NamedToolChoice("missing"))


def test_parallel_off_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    codec = OllamaCodec()
    with caplog.at_level(logging.WARNING):
        body = choice_body(codec, parallel_tool_calls=False)
        choice_body(codec, parallel_tool_calls=False)
        choice_body(codec, parallel_tool_calls=True)
    assert "parallel_tool_calls" not in body
    assert len(caplog.records) == 1 and "parallel_tool_calls" in caplog.records[0].getMessage()


# Replies


def test_text_reply() -> None:
    assert CODEC.decode_response(load("text.response.json")) == Response(
        message=AssistantMessage(parts=[TextPart(text="The sky is blue because of Rayleigh scattering.")]),
        stop_reason=StopReason.END_TURN,
        raw_stop_reason="stop",
        usage=Usage(input_tokens=14, output_tokens=12),
        model=MODEL,
    )


def test_parallel_identical_calls_keep_the_server_ids() -> None:
    response = CODEC.decode_response(load("parallel_calls.response.json"))
    assert response.message == AssistantMessage(
        parts=[
            issued("call_k3x9a2bq", "get_weather", {"city": "Paris"}),
            issued("call_p0m4z7ty", "get_weather", {"city": "Paris"}),
        ]
    )
    assert (response.stop_reason, response.raw_stop_reason) == (StopReason.TOOL_USE, "stop")


def test_calls_without_ids_get_distinct_ids_derived_from_model_and_created_at() -> None:
    response = CODEC.decode_response(load("legacy_calls.response.json"))
    seed = f"{MODEL}\x002025-06-01T10:02:00.000000Z"
    assert response.message == AssistantMessage(
        parts=[
            TextPart(text="Checking twice."),
            ToolCall(id=derived_call_id(seed, 0), name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id=derived_call_id(seed, 1), name="get_weather", arguments={"city": "Paris"}),
        ],
        metadata={"ollama": {"created_at": "2025-06-01T10:02:00.000000Z"}},
    )
    assert response.tool_calls[0].id != response.tool_calls[1].id
    assert CODEC.decode_response(load("legacy_calls.response.json")) == response


def test_calls_without_ids_or_timestamp_get_random_distinct_ids() -> None:
    body = load("legacy_calls.response.json")
    del body["created_at"]
    first, second = CODEC.decode_response(body).tool_calls
    assert first.id != second.id and first.id.startswith("call_")
    assert CODEC.decode_response(body).message.metadata == {}


def test_string_arguments_are_parsed_or_repaired() -> None:
    calls = CODEC.decode_response(load("string_arguments.response.json")).tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "Paris"}),
        ("get_time", {"tz": "Europe/Par"}),
        ("noop", {}),
    ]
    assert [{k: v for k, v in c.metadata.items()} for c in calls] == [{}, {"raw_arguments": '{"tz": "Europe/Par'}, {}]


def test_thinking_reply() -> None:
    response = CODEC.decode_response(load("thinking.response.json"))
    assert response.message.parts == [
        ThinkingPart(text="The user wants the weather in Oslo. I should call get_weather.", provider="ollama"),
        TextPart(text="Let me check."),
        issued("call_8fj2kq0z", "get_weather", {"city": "Oslo", "unit": "celsius"}),
    ]
    assert response.usage == Usage(input_tokens=80, output_tokens=60)


@pytest.mark.parametrize(
    ("done_reason", "calls", "expected"),
    [
        ("stop", False, StopReason.END_TURN),
        ("stop", True, StopReason.TOOL_USE),
        ("length", False, StopReason.MAX_TOKENS),
        ("length", True, StopReason.MAX_TOKENS),
        ("load", False, StopReason.OTHER),
        (None, False, StopReason.END_TURN),
        (None, True, StopReason.TOOL_USE),
    ],
)
def test_stop_reason_table(done_reason: str | None, calls: bool, expected: StopReason) -> None:
    message: dict[str, Any] = {"role": "assistant", "content": "x"}
    if calls:
        message["tool_calls"] = [{"id": "call_1", "function": {"name": "f", "arguments": {}}}]
    body: dict[str, Any] = {"model": MODEL, "message": message, "done": True}
    if done_reason is not None:
        body["done_reason"] = done_reason
    response = CODEC.decode_response(body)
    assert (response.stop_reason, response.raw_stop_reason, response.usage) == (expected, done_reason, None)


def test_length_reply() -> None:
    response = CODEC.decode_response(load("length.response.json"))
    assert (response.text, response.stop_reason) == ("Once upon a time, in a land", StopReason.MAX_TOKENS)


def test_error_payloads_raise_provider_error() -> None:
    body = load("error.response.json")
    with pytest.raises(ProviderError) as caught:
        CODEC.decode_response(body)
    assert caught.value.message == 'model "qwen9:1b" not found, try pulling it first'
    assert (caught.value.provider, caught.value.body) == ("ollama", body)


def test_bodies_that_are_not_ollama_raise_codec_error() -> None:
    with pytest.raises(CodecError, match="ollama"):
        CODEC.decode_response(json.loads("[]"))
    with pytest.raises(CodecError, match="'message'"):
        CODEC.decode_response({"model": MODEL, "done": True})
    with pytest.raises(CodecError, match="'developer'"):
        CODEC.decode_request({"model": MODEL, "messages": [{"role": "developer", "content": "x"}]})


# Streams


def test_thinking_stream_events() -> None:
    events = feed_all(load_stream("thinking"))
    call = issued("call_8fj2kq0z", "get_weather", {"city": "Oslo", "unit": "celsius"})
    assert events == [
        ThinkingDelta("The user wants the weather"),
        ThinkingDelta(" in Oslo. I should"),
        ThinkingDelta(" call get_weather."),
        TextDelta("Let me"),
        TextDelta(" check."),
        ToolCallDelta(0, "call_8fj2kq0z", "get_weather", '{"city":"Oslo","unit":"celsius"}'),
        Done(CODEC.decode_response(load("thinking.response.json"))),
    ]
    assert events[-1].response.tool_calls == [call]


def test_legacy_stream_derives_the_same_ids_as_the_body() -> None:
    events = feed_all(load_stream("legacy_calls"))
    expected = CODEC.decode_response(load("legacy_calls.response.json"))
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [(d.index, d.id) for d in deltas] == [(i, c.id) for i, c in enumerate(expected.tool_calls)]
    assert events[-1] == Done(expected)


def test_parallel_calls_in_one_line_are_appended() -> None:
    events = feed_all(load_stream("parallel_calls"))
    assert events[:2] == [
        ToolCallDelta(0, "call_k3x9a2bq", "get_weather", '{"city":"Paris"}'),
        ToolCallDelta(1, "call_p0m4z7ty", "get_weather", '{"city":"Paris"}'),
    ]


def test_error_line_mid_stream_raises() -> None:
    decoder = CODEC.stream_decoder()
    first, error = load_stream("error_midstream")
    assert decoder.feed(first) == [TextDelta("Partial")]
    with pytest.raises(ProviderError, match="unexpected EOF") as caught:
        decoder.feed(error)
    assert caught.value.body == error
    assert decoder.finish().text == "Partial"


def test_finish_is_idempotent_and_equals_done() -> None:
    decoder = CODEC.stream_decoder()
    events = [e for line in load_stream("text") for e in decoder.feed(line)]
    assert decoder.finish() == decoder.finish() == events[-1].response


# Rendering replies


def test_encode_response_and_stream_golden() -> None:
    response = CODEC.decode_response(load("thinking.response.json"))
    assert CODEC.encode_response(response) == {
        "model": MODEL,
        "created_at": "1970-01-01T00:00:00Z",
        "message": {
            "role": "assistant",
            "content": "Let me check.",
            "thinking": "The user wants the weather in Oslo. I should call get_weather.",
            "tool_calls": [
                {
                    "id": "call_8fj2kq0z",
                    "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius"}},
                }
            ],
        },
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": 80,
        "eval_count": 60,
    }
    lines = CODEC.encode_stream(response)
    assert [line["done"] for line in lines] == [False] * 7 + [True]
    thinking = "The user wants the weather in Oslo. I should call get_weather."
    assert "".join(line["message"].get("thinking", "") for line in lines) == thinking
    assert "".join(line["message"]["content"] for line in lines) == "Let me check."


@pytest.mark.parametrize("case", ["text", "parallel_calls", "legacy_calls", "string_arguments", "thinking", "length"])
def test_rendered_fixtures_decode_back(case: str) -> None:
    response = CODEC.decode_response(load(f"{case}.response.json"))
    assert CODEC.decode_response(CODEC.encode_response(response)) == response
    decoder = CODEC.stream_decoder()
    events = [e for line in CODEC.encode_stream(response) for e in decoder.feed(line)]
    assert events[-1] == Done(response) and decoder.finish() == response


def test_foreign_ids_are_rendered_explicitly() -> None:
    response = Response(
        message=AssistantMessage(parts=[ToolCall(id="toolu_1", name="f", arguments={})]),
        stop_reason=StopReason.TOOL_USE,
        raw_stop_reason="stop",
        model=MODEL,
    )
    body = CODEC.encode_response(response)
    assert body["message"]["tool_calls"] == [{"id": "toolu_1", "function": {"index": 0, "name": "f", "arguments": {}}}]
    assert CODEC.decode_response(body).tool_calls == [issued("toolu_1", "f", {})]


def test_tool_schemas_have_their_refs_inlined_because_ollama_drops_them() -> None:
    nested = {
        "type": "object",
        "properties": {"owner": {"$ref": "#/$defs/Person"}},
        "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    tool = ToolDefinition(name="adopt", parameters=nested)
    body = get_codec("ollama").encode_request(Request(model="m", messages=[UserMessage(content="hi")], tools=[tool]))
    assert body["tools"][0]["function"]["parameters"] == {
        "type": "object",
        "properties": {"owner": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
