"""The bedrock codec: golden bodies checked by botocore's service model, stop reasons, the peers' bugs."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.session import get_session

from tests.codecs._conversion_helpers import check_bedrock_request
from toolwire import (
    AssistantMessage,
    Done,
    ImagePart,
    NamedToolChoice,
    Request,
    StopReason,
    SystemMessage,
    TextDelta,
    TextPart,
    ThinkingPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)
from toolwire.codecs import get_codec
from toolwire.errors import BadRequestError, CodecError, ProviderError, RateLimitError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bedrock"
CODEC = get_codec("bedrock")
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
SIG = "ErcBCkgIBxABGAIiQMdL7gT9V2hRkV1oQ3uSyF0"
WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
SERVICE = get_session().get_service_model("bedrock-runtime")


def _load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _events(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _feed(events: list[dict[str, Any]]) -> list[Any]:
    decoder = CODEC.stream_decoder()
    return [e for event in events for e in decoder.feed(copy.deepcopy(event))]


# Request cases: the neutral conversations behind the *.request.json goldens.


def _tool_loop() -> Request:
    paris = ToolCall(id="tooluse_paris0000000000001", name="get_weather", arguments={"city": "Paris"})
    rome = ToolCall(id="tooluse_rome00000000000002", name="get_weather", arguments={"city": "Rome"})
    clock = ToolCall(id="tooluse_clock0000000000003", name="get_time", arguments={})
    messages = [
        SystemMessage(content="You are terse."),
        UserMessage(content=[TextPart(text="Weather in Paris and Rome, and the time?"), ImagePart(data=PNG)]),
        AssistantMessage(
            parts=[
                ThinkingPart(text="Three calls.", signature=SIG, provider="bedrock"),
                TextPart(text="Checking."),
                paris,
                rome,
                clock,
            ]
        ),
        ToolResult.text(paris, "Sunny, 21 °C"),
        ToolResult.data(rome, {"sky": "rain", "temp_c": 14}),
        ToolResult.error(clock, "The clock is broken."),
        UserMessage(content="Be brief."),
    ]
    return Request(
        model="anthropic.claude-sonnet-4-5-20250929-v1:0",
        messages=messages,
        tools=[WEATHER, ToolDefinition(name="get_time", description="The time now.")],
        tool_choice="auto",
        max_tokens=512,
        temperature=0.2,
        top_p=0.9,
        stop=["END"],
    )


def _history_without_tools() -> Request:
    # Peer bug: "The toolConfig field must be defined when using toolUse and toolResult content blocks".
    call = ToolCall(id="tooluse_0000000000000000001", name="get_time", arguments={})
    messages = [
        UserMessage(content="Time?"),
        AssistantMessage(parts=[call]),
        ToolResult.multimodal(call, [TextPart(text="Noon, see:"), ImagePart(data=PNG, media_type="image/png")]),
        UserMessage(content="Thanks; now just chat."),
    ]
    return Request(model="amazon.nova-pro-v1:0", messages=messages, tool_choice="none")


def _mistral_ids() -> Request:
    first = ToolCall(id="fc_1|call_2", name="get_weather", arguments={"city": "Oslo"})
    second = ToolCall(id="functions.lookup:1", name="get_weather", arguments={"city": "Bergen"})
    messages = [
        UserMessage(content="Oslo and Bergen?"),
        AssistantMessage(parts=[first, second]),
        ToolResult.text(second, "Bergen: rain"),
        ToolResult.text(first, "Oslo: snow"),
    ]
    return Request(model="mistral.mistral-large-2407-v1:0", messages=messages, tools=[WEATHER])


REQUEST_CASES: dict[str, Callable[[], Request]] = {
    "tool_loop": _tool_loop,
    "history_without_tools": _history_without_tools,
    "mistral_ids": _mistral_ids,
}


def test_request_cases_have_goldens() -> None:
    assert sorted(p.name.removesuffix(".request.json") for p in FIXTURES.glob("*.request.json")) == sorted(
        [*REQUEST_CASES, "cache_points"]
    )


@pytest.mark.parametrize("case", sorted(REQUEST_CASES))
def test_request_golden(case: str) -> None:
    body = CODEC.encode_request(REQUEST_CASES[case]())
    assert body == _load(f"{case}.request.json")
    check_bedrock_request(body)
    # The model id travels in the path: the body read back names none, so it is given again.
    decoded = dataclasses.replace(CODEC.decode_request(copy.deepcopy(body)), model=REQUEST_CASES[case]().model)
    assert CODEC.encode_request(decoded) == body


def test_cache_points_and_documents_go_back_to_bedrock_unchanged() -> None:
    body = _load("cache_points.request.json")
    check_bedrock_request(body)
    request = CODEC.decode_request(copy.deepcopy(body))
    assert CODEC.encode_request(request) == body
    # Other providers read the system text and the text document's content.
    assert request.messages[0] == SystemMessage(content="You answer from the handbook.")
    user = request.messages[1]
    assert isinstance(user, UserMessage) and isinstance(user.content, list)
    assert [p.text for p in user.content if isinstance(p, TextPart)] == [
        "Refunds take 5 days.",
        "[document: report]",
        "How long do refunds take?",
    ]


def test_the_tool_loop_body_groups_results_and_keeps_signed_reasoning() -> None:
    body = CODEC.encode_request(_tool_loop())
    user = body["messages"][2]
    assert user["role"] == "user"
    assert [next(iter(b)) for b in user["content"]] == ["toolResult", "toolResult", "toolResult", "text"]
    assert user["content"][1]["toolResult"]["content"] == [{"json": {"sky": "rain", "temp_c": 14}}]
    assert user["content"][2]["toolResult"]["status"] == "error"
    assert body["messages"][1]["content"][0] == {
        "reasoningContent": {"reasoningText": {"text": "Three calls.", "signature": SIG}}
    }


# The peers' bugs, one test each.


def test_tool_config_stays_when_the_history_holds_tool_blocks() -> None:
    body = CODEC.encode_request(_history_without_tools())
    assert body["toolConfig"] == {
        "tools": [{"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object", "properties": {}}}}}]
    }
    with_tools = CODEC.encode_request(Request(model="m", messages=_history_without_tools().messages, tools=[WEATHER]))
    assert [t["toolSpec"]["name"] for t in with_tools["toolConfig"]["tools"]] == ["get_weather"]
    # Without tool blocks in the history, `none` withholds the tools altogether.
    plain = CODEC.encode_request(
        Request(model="m", messages=[UserMessage(content="hi")], tools=[WEATHER], tool_choice="none")
    )
    assert "toolConfig" not in plain


@pytest.mark.parametrize("case", ["empty_input_tool", "empty_string_input_tool"])
def test_a_tool_without_input_deltas_has_empty_arguments(case: str) -> None:
    events = _feed(_events(f"{case}.stream.jsonl"))
    done = events[-1]
    assert isinstance(done, Done)
    assert [(c.name, c.arguments, c.metadata) for c in done.response.tool_calls] == [
        (done.response.tool_calls[0].name, {}, {})
    ]
    assert done.response == CODEC.decode_response(_load(f"{case}.response.json"))


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"auto": {}}),
        ("required", {"any": {}}),
        (NamedToolChoice("get_weather"), {"tool": {"name": "get_weather"}}),
        ("none", None),
    ],
)
def test_tool_choice_has_no_none(choice: Any, wire: dict[str, Any] | None) -> None:
    call = ToolCall(id="tooluse_1", name="get_weather", arguments={"city": "Oslo"})
    history = [UserMessage(content="Oslo?"), AssistantMessage(parts=[call]), ToolResult.text(call, "snow")]
    body = CODEC.encode_request(Request(model="m", messages=history, tools=[WEATHER], tool_choice=choice))
    check_bedrock_request(body)
    assert body["toolConfig"].get("toolChoice") == wire
    assert set(SERVICE.shape_for("ToolChoice").members) == {"auto", "any", "tool"}


def test_mistral_models_get_nine_character_ids_with_results_matched() -> None:
    body = CODEC.encode_request(_mistral_ids())
    calls = [b["toolUse"]["toolUseId"] for b in body["messages"][1]["content"]]
    results = [b["toolResult"]["toolUseId"] for b in body["messages"][2]["content"]]
    assert all(re.fullmatch(r"[a-zA-Z0-9]{9}", i) for i in calls)
    assert results == [calls[1], calls[0]] and len(set(calls)) == 2
    # Other models keep ids Bedrock accepts as they are ("functions.lookup:1" fits [a-zA-Z0-9_.:-]).
    other = CODEC.encode_request(
        Request(model="anthropic.claude-3-haiku", messages=_mistral_ids().messages, tools=[WEATHER])
    )
    assert [b["toolUse"]["toolUseId"] for b in other["messages"][1]["content"]][1] == "functions.lookup:1"


def test_an_empty_tool_name_or_description_is_a_codec_error() -> None:
    hello = [UserMessage(content="hi")]
    with pytest.raises(CodecError, match=re.escape("empty description of tool 'get_weather'")):
        CODEC.encode_request(
            Request(model="m", messages=hello, tools=[ToolDefinition(name="get_weather", description="")])
        )
    body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    nameless = {"tools": [{"toolSpec": {"name": "", "inputSchema": {"json": {"type": "object"}}}}]}
    with pytest.raises(CodecError, match=re.escape("bedrock toolSpec '' is not usable")):
        CODEC.decode_request(body | {"toolConfig": nameless})


# Replies and streams


def test_parallel_calls_and_cache_usage() -> None:
    response = CODEC.decode_response(_load("parallel_tool_use.response.json"))
    assert response.text == "I'll check both cities."
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", {"city": "Paris", "units": "celsius"}),
        ("tooluse_0aB1cD2eF3gH4iJ5kL6mN7", {"city": "Zürich"}),
    ]
    assert response.usage == Usage(input_tokens=410, output_tokens=96, cache_read_tokens=320, cache_write_tokens=64)
    assert (response.stop_reason, response.raw_stop_reason) == (StopReason.TOOL_USE, "tool_use")


def test_stream_events_in_order() -> None:
    events = _feed(_events("parallel_tool_use.stream.jsonl"))
    assert events[:3] == [
        TextDelta("I'll check"),
        TextDelta(" both cities."),
        ToolCallDelta(0, "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "get_weather", ""),
    ]
    assert isinstance(events[-1], Done)


STOP_REASONS = {
    "end_turn": StopReason.END_TURN,
    "tool_use": StopReason.TOOL_USE,
    "max_tokens": StopReason.MAX_TOKENS,
    "stop_sequence": StopReason.END_TURN,
    "guardrail_intervened": StopReason.CONTENT_FILTER,
    "content_filtered": StopReason.CONTENT_FILTER,
    "malformed_model_output": StopReason.ERROR,
    "malformed_tool_use": StopReason.ERROR,
    "model_context_window_exceeded": StopReason.MAX_TOKENS,
}


def test_every_stop_reason_of_the_service_model_is_mapped() -> None:
    assert sorted(SERVICE.shape_for("StopReason").enum) == sorted(STOP_REASONS)


@pytest.mark.parametrize(("raw", "neutral"), sorted(STOP_REASONS.items()))
def test_stop_reason(raw: str, neutral: StopReason) -> None:
    body = {"output": {"message": {"role": "assistant", "content": [{"text": "x"}]}}, "stopReason": raw}
    response = CODEC.decode_response(body)
    assert (response.stop_reason, response.raw_stop_reason) == (neutral, raw)
    assert CODEC.encode_response(response)["stopReason"] == raw  # rendered back as it came
    streamed = _feed(CODEC.encode_stream(response))[-1]
    assert isinstance(streamed, Done) and streamed.response.raw_stop_reason == raw


def test_an_unknown_stop_reason_is_other_and_never_rendered() -> None:
    body = {"output": {"message": {"role": "assistant", "content": []}}, "stopReason": "new_reason"}
    response = CODEC.decode_response(body)
    assert (response.stop_reason, response.raw_stop_reason) == (StopReason.OTHER, "new_reason")
    assert CODEC.encode_response(response)["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    ("name", "error", "status"),
    [
        ("throttlingException", RateLimitError, 429),
        ("validationException", BadRequestError, 400),
        ("modelStreamErrorException", ProviderError, 424),
        ("internalServerException", ProviderError, 500),
        ("serviceUnavailableException", ProviderError, 503),
    ],
)
def test_exception_events_are_typed_errors(name: str, error: type[Exception], status: int) -> None:
    decoder = CODEC.stream_decoder()
    decoder.feed({"messageStart": {"role": "assistant"}})
    with pytest.raises(error) as raised:
        decoder.feed({name: {"message": "it failed"}})
    assert raised.value.status == status  # type: ignore[attr-defined]
    assert str(raised.value.message) == f"Bedrock sent {name} mid-stream: it failed"  # type: ignore[attr-defined]
    assert name in SERVICE.shape_for("ConverseStreamOutput").members


def test_throttled_mid_stream_fixture() -> None:
    decoder = CODEC.stream_decoder()
    events = _events("throttled_midstream.error.jsonl")
    out = [e for event in events[:-1] for e in decoder.feed(event)]
    assert out == [TextDelta("Partial")]
    with pytest.raises(RateLimitError, match="Too many tokens"):
        decoder.feed(events[-1])


def test_an_error_body_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="The provided model identifier is invalid"):
        CODEC.decode_response({"message": "The provided model identifier is invalid."})


def test_redacted_reasoning_round_trips() -> None:
    response = CODEC.decode_response(_load("redacted_reasoning.response.json"))
    thinking = response.message.parts[0]
    assert isinstance(thinking, ThinkingPart) and thinking.redacted and thinking.provider == "bedrock"
    assert CODEC.encode_response(response)["output"] == _load("redacted_reasoning.response.json")["output"]
