"""`Agent(tool_choice=...)`: what reaches the server on each turn, over real loopback sockets."""

from __future__ import annotations

import pytest

from toolwire import NamedToolChoice, ToolCall
from toolwire.agent import Agent
from toolwire.testing import ScriptedServer, reply
from toolwire.tools import tool


@tool(risk="low")
async def clock(tz: str) -> str:
    """Current time in a time zone."""
    return f"12:00 in {tz}"


def _two_calls_then_answer() -> list[object]:
    return [
        reply("", [ToolCall(id="c1", name="clock", arguments={"tz": "UTC"})]),
        reply("", [ToolCall(id="c2", name="clock", arguments={"tz": "CET"})]),
        reply("It is noon."),
    ]


async def _choices_sent(provider: str, stream: bool = False, **agent_options: object) -> list[object]:
    with ScriptedServer(_two_calls_then_answer()) as server:
        async with server.connect(f"{provider}:m-1") as client:
            agent = Agent(client, [clock], **agent_options)  # type: ignore[arg-type]
            if stream:
                events = [e async for e in agent.run_stream("time?")]
                result = events[-1].result  # type: ignore[union-attr]
            else:
                result = await agent.run("time?")
    assert (result.text, len(result.calls)) == ("It is noon.", 2)
    return [r.request.tool_choice for r in server.requests if r.request is not None]


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic", "gemini"])
async def test_a_named_choice_forces_the_first_turn_and_later_turns_send_auto(provider: str) -> None:
    assert await _choices_sent(provider, tool_choice="clock") == [NamedToolChoice("clock"), "auto", "auto"]


async def test_the_openai_body_carries_the_named_choice_then_auto_streamed_too() -> None:
    with ScriptedServer(_two_calls_then_answer()) as server:
        async with server.connect("openai:m-1") as client:
            agent = Agent(client, [clock], tool_choice="clock")
            [e async for e in agent.run_stream("time?")]
    assert [r.body.get("tool_choice") for r in server.requests] == [
        {"type": "function", "function": {"name": "clock"}},
        "auto",
        "auto",
    ]
    assert [r.stream for r in server.requests] == [True, True, True]


async def test_required_every_turn_is_sent_on_every_turn() -> None:
    sent = await _choices_sent("anthropic", stream=True, tool_choice="required", tool_choice_turns="every")
    assert sent == ["required", "required", "required"]


async def test_auto_and_none_apply_to_every_turn_by_default() -> None:
    assert await _choices_sent("openai", tool_choice="auto") == ["auto", "auto", "auto"]
    agent = Agent(object(), [clock], tool_choice="none")  # type: ignore[arg-type]
    assert (agent.tool_choice, agent.tool_choice_turns) == ("none", "every")


async def test_required_on_the_first_turn_only_unless_asked() -> None:
    assert await _choices_sent("openai", tool_choice="required") == ["required", "auto", "auto"]
    sent = await _choices_sent("openai", tool_choice=NamedToolChoice("clock"), tool_choice_turns="every")
    assert sent == [NamedToolChoice("clock")] * 3


async def test_without_a_choice_none_is_sent() -> None:
    with ScriptedServer(_two_calls_then_answer()) as server:
        async with server.connect("openai:m-1") as client:
            await Agent(client, [clock]).run("time?")
    assert ["tool_choice" in r.body for r in server.requests] == [False, False, False]


async def test_text_mode_sends_no_choice_since_it_sends_no_tools() -> None:
    script = [reply('TOOL_CALL: {"name": "clock", "args": {"tz": "UTC"}}'), reply("It is noon.")]
    with ScriptedServer(script) as server:
        async with server.connect("openai:m-1") as client:
            result = await Agent(client, [clock], tool_mode="text", tool_choice="clock").run("time?")
    assert result.calls[0].result.value == "12:00 in UTC"
    assert [sorted(set(r.body) & {"tools", "tool_choice"}) for r in server.requests] == [[], []]


def test_a_choice_naming_no_tool_of_the_agent_is_refused() -> None:
    with pytest.raises(ValueError) as raised:
        Agent(object(), [clock], tool_choice="weather")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "tool_choice must be auto, none, required or the name of one of the agent's tools (clock), got 'weather'."
    )
    with pytest.raises(ValueError, match=r"tool_choice_turns must be 'first', 'every' or None, got 'all'\."):
        Agent(object(), [clock], tool_choice="auto", tool_choice_turns="all")  # type: ignore[arg-type]
