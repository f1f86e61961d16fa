"""The server profiles that real servers need: bodies as sent, refusals before sending, streams."""

from __future__ import annotations

import logging

import pytest

from toolwire import (
    AssistantMessage,
    CodecError,
    Done,
    NamedToolChoice,
    StreamError,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResult,
)
from toolwire.codecs.openai import OpenAICodec
from toolwire.codecs.openai.profiles import PROFILES
from toolwire.testing import DropStream, ScriptedServer, reply
from toolwire.types import Request, ToolChoice, ToolDefinition, UserMessage

WEATHER = ToolDefinition(name="get_weather", description="Weather.", parameters={"type": "object"})
CLOCK = ToolDefinition(name="clock", description="Time.", parameters={"type": "object"})
CALL = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})


def _request(choice: ToolChoice | None = None, tools: list[ToolDefinition] | None = None) -> Request:
    history = [
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(parts=[CALL]),
        ToolResult.text(CALL, "18 C"),
    ]
    return Request(model="m", messages=history, tools=[WEATHER, CLOCK] if tools is None else tools, tool_choice=choice)


def _codec(profile: str) -> OpenAICodec:
    return OpenAICodec(PROFILES[profile])


def test_llama_cpp_python_sends_auto_with_tools_and_empty_string_content() -> None:
    body = _codec("llama-cpp-python").encode_request(_request())
    assert body["tool_choice"] == "auto"
    assert body["messages"][1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
        ],
    }
    assert "tool_choice" not in _codec("llama-cpp-python").encode_request(_request(tools=[]))
    named = _codec("llama-cpp-python").encode_request(_request(NamedToolChoice("clock")))
    assert named["tool_choice"] == {"type": "function", "function": {"name": "clock"}}
    assert len(named["tools"]) == 2


def test_openai_keeps_null_content_and_sends_no_choice_of_its_own() -> None:
    body = _codec("openai").encode_request(_request())
    assert (body["messages"][1]["content"], "tool_choice" in body) == (None, False)


def test_llama_cpp_python_refuses_required_before_sending() -> None:
    with pytest.raises(CodecError) as raised:
        _codec("llama-cpp-python").encode_request(_request("required"))
    assert raised.value.message == (
        "The llama-cpp-python server cannot take tool_choice 'required' (profile flag required_tool_choice); "
        "name the tool to call (tool_choice='<tool name>') or send 'auto'."
    )


def test_vllm_without_a_tool_parser_takes_named_and_required_choices_only() -> None:
    codec = _codec("vllm-no-tool-parser")
    assert codec.encode_request(_request("required"))["tool_choice"] == "required"
    assert codec.encode_request(_request(NamedToolChoice("clock")))["tool_choice"]["function"] == {"name": "clock"}
    assert "tools" not in codec.encode_request(_request(tools=[]))
    for choice in (None, "auto"):
        with pytest.raises(CodecError, match=r"profile flag auto_tool_choice\): name the tool to call, use tool mode"):
            codec.encode_request(_request(choice))


def test_ollama_openai_emulates_a_named_choice_with_only_that_tool() -> None:
    body = _codec("ollama-openai").encode_request(_request(NamedToolChoice("clock")))
    assert ([t["function"]["name"] for t in body["tools"]], body["tool_choice"]) == (["clock"], "required")


@pytest.mark.parametrize(
    ("choice", "tools", "streams"),
    [
        (None, True, False),
        ("auto", True, False),
        (NamedToolChoice("clock"), True, True),
        ("none", True, True),
        (None, False, True),
    ],
)
def test_llama_cpp_python_streams_only_named_choices(choice: ToolChoice | None, tools: bool, streams: bool) -> None:
    reason = _codec("llama-cpp-python").unstreamable(_request(choice, None if tools else []))
    assert (reason is None) == streams
    if not streams:
        assert reason == (
            f"the llama-cpp-python server streams tool calls only for a named tool_choice, not "
            f"{'auto'!r} (profile flag streamed_tool_choices='named')"
        )
    assert _codec("openai").unstreamable(_request(choice)) is None


async def test_a_stream_the_server_cannot_give_is_asked_whole_and_replayed(caplog: pytest.LogCaptureFixture) -> None:
    call = ToolCall(id="call_9", name="get_weather", arguments={"city": "Oslo"})
    with ScriptedServer([reply("Checking.", [call]), reply("", [call])]) as server:
        async with server.connect("llama-cpp-python:m") as client:
            with caplog.at_level(logging.DEBUG, logger="toolwire.client"):
                events = [e async for e in client.stream("Weather?", tools=[WEATHER])]
            named = [e async for e in client.stream("Weather?", tools=[WEATHER], tool_choice="get_weather")]
    assert [r.stream for r in server.requests] == [False, True]
    assert [r.body.get("tool_choice") for r in server.requests] == [
        "auto",
        {"type": "function", "function": {"name": "get_weather"}},
    ]
    assert events[:-1] == [TextDelta("Checking."), ToolCallDelta(0, "call_9", "get_weather", '{"city":"Oslo"}')]
    assert isinstance(events[-1], Done) and events[-1].response.tool_calls == [call]
    assert isinstance(named[-1], Done) and named[-1].response.tool_calls == [call]
    assert [r.message for r in caplog.records if r.name == "toolwire.client"] == [
        "Asking llama-cpp-python for a whole reply instead of a stream: the llama-cpp-python server streams tool "
        "calls only for a named tool_choice, not 'auto' (profile flag streamed_tool_choices='named')."
    ]


async def test_an_empty_stream_for_a_request_with_tools_is_said_to_be_a_refusal() -> None:
    with ScriptedServer([DropStream(response=reply("never sent"), after=0, clean=True)] * 2) as server:
        async with server.connect("openai-compatible:m", max_retries=0) as client:
            with pytest.raises(StreamError) as refused:
                [e async for e in client.stream("Weather?", tools=[WEATHER], tool_choice="auto")]
            with pytest.raises(StreamError) as cut:
                [e async for e in client.stream("Weather?")]
    assert refused.value.message == (
        "The openai-compatible server accepted the stream and sent nothing, as servers that cannot stream tool "
        "calls do (llama-cpp-python unless a tool is named); retrying will not help: connect with the server's "
        "own provider (such as 'llama-cpp-python', profile flag streamed_tool_choices='named') or call without "
        "streaming."
    )
    assert cut.value.message == (
        "The openai-compatible stream ended before its end marker; the reply is incomplete, retry the request."
    )
