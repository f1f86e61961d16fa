"""Native tool calls against a real model (SmolLM2-135M on llama-cpp-python): protocol shapes, not wisdom.

Temperature 0 and a fixed seed; the assertions are on what came back (a call to the named
tool whose arguments are a JSON object, a loop that runs it and ends), never on whether the
135M model said something clever. `connect("llama-cpp-python:...")` applies that server's
profile (codecs/openai/profiles.py); `openai-compatible` shows what happens without it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import toolwire
from tests.e2e.llama_server import MODEL_NAME, LlamaServer
from toolwire import Client, CodecError, Done, StopReason, ToolCall, ToolResult, UserMessage
from toolwire.agent import Agent
from toolwire.tools import tool

SEED = 42
QUESTION = "What is the weather in Paris?"


@tool(risk="low")
async def get_weather(city: str) -> dict[str, object]:
    """Current weather for a city.

    Args:
        city: The city name, e.g. "Paris".
    """
    return {"city": city, "temp_c": 18, "sky": "clear"}


def connect(server: LlamaServer, provider: str = "llama-cpp-python", seed: int = SEED) -> Client:
    """A client of the real server at temperature 0 with a fixed seed."""
    return toolwire.connect(
        f"{provider}:{MODEL_NAME}",
        base_url=server.base_url,
        temperature=0,
        max_tokens=128,
        extra={"seed": seed},
        timeout=300,
    )


@pytest.fixture
async def client(native_server: LlamaServer) -> AsyncIterator[Client]:
    async with connect(native_server) as client:
        yield client


def _assert_one_weather_call(calls: list[ToolCall]) -> None:
    assert [call.name for call in calls] == ["get_weather"]
    assert isinstance(calls[0].arguments, dict) and calls[0].id


async def test_a_named_tool_call_comes_back_whole_unstreamed(client: Client) -> None:
    response = await client.complete(QUESTION, tools=[get_weather], tool_choice="get_weather")
    print(f"named, unstreamed: {response.tool_calls}")
    _assert_one_weather_call(response.tool_calls)
    assert response.stop_reason == StopReason.TOOL_USE


async def test_a_named_tool_call_comes_back_whole_streamed(client: Client) -> None:
    events = [e async for e in client.stream(QUESTION, tools=[get_weather], tool_choice="get_weather")]
    done = events[-1]
    assert isinstance(done, Done) and sum(isinstance(e, Done) for e in events) == 1
    print(f"named, streamed in {len(events)} events: {done.response.tool_calls}")
    assert len(events) > 2  # really streamed: the call arrived in pieces
    _assert_one_weather_call(done.response.tool_calls)


async def test_without_the_profile_the_tools_never_reach_the_prompt(native_server: LlamaServer) -> None:
    # No tool_choice: the reply is the same, token for token, as a request without tools.
    async with connect(native_server, "openai-compatible") as plain:
        bare = await plain.complete(QUESTION)
        unchosen = await plain.complete(QUESTION, tools=[get_weather])
    assert (unchosen.text, unchosen.tool_calls) == (bare.text, [])


async def test_auto_unstreamed_and_streamed_give_a_call(client: Client) -> None:
    response = await client.complete(QUESTION, tools=[get_weather])  # the profile sends tool_choice auto
    print(f"auto, unstreamed: {response.tool_calls}")
    _assert_one_weather_call(response.tool_calls)
    # The server cannot stream `auto` (200, then nothing): the profile asks for the whole reply.
    events = [e async for e in client.stream(QUESTION, tools=[get_weather], tool_choice="auto")]
    assert isinstance(events[-1], Done)
    _assert_one_weather_call(events[-1].response.tool_calls)


async def test_required_is_refused_before_sending(client: Client) -> None:
    with pytest.raises(CodecError, match=r"cannot take tool_choice 'required' \(profile flag required_tool_choice\)"):
        await client.complete(QUESTION, tools=[get_weather], tool_choice="required")


async def test_a_second_turn_with_the_tool_result_is_answered(client: Client) -> None:
    first = await client.complete(QUESTION, tools=[get_weather], tool_choice="get_weather")
    call = first.tool_calls[0]
    result = await get_weather.execute_raw(call.arguments, call=call)
    assert isinstance(result, ToolResult)
    history = [UserMessage(content=QUESTION), first.message, result]
    second = await client.complete(history, tools=[get_weather], tool_choice="none")
    print(f"second turn: {second.text!r}")
    assert second.text.strip() and second.tool_calls == []
    streamed = [e async for e in client.stream(history, tools=[get_weather], tool_choice="none")]
    assert isinstance(streamed[-1], Done) and streamed[-1].response.text.strip()


@pytest.mark.parametrize("seed", range(10))
async def test_an_agent_executes_a_real_tool_call_in_every_seeded_run(native_server: LlamaServer, seed: int) -> None:
    async with connect(native_server, seed=seed) as client:
        result = await Agent(client, [get_weather], max_tool_turns=1).run(QUESTION)
    print(f"seed {seed}: {result.stop_reason} after {result.turns} turns, calls {[r.call for r in result.calls]}")
    assert result.calls and result.calls[0].call.name == "get_weather"
    assert result.calls[0].result.kind == "data"
    assert result.stop_reason in ("end_turn", "max_turns")
