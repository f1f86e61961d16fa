"""The agent over real loopback sockets, in every wire protocol: a 10-turn run with parallel tools, and tool modes."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from toolwire import BadRequestError, Done, Request, ToolCall, ToolResult
from toolwire.agent import Agent
from toolwire.reviewers import DenyAll
from toolwire.stdtools import ROOT, glob, grep, read, write
from toolwire.testing import ErrorReply, ScriptedServer, reply
from toolwire.tools import ToolContext, tool

PROVIDERS = ["openai", "openai-responses", "anthropic", "gemini", "ollama"]
TURNS = 10


@tool(risk="low")
async def weather(city: str) -> dict[str, object]:
    """Current weather for a city."""
    await asyncio.sleep(0.01)
    return {"city": city, "temp_c": len(city) + 10}


@tool(risk="low")
async def clock(tz: str) -> str:
    """Current time in a time zone."""
    await asyncio.sleep(0.01)
    return f"12:00 in {tz}"


def ten_turn_script() -> object:
    def turn(request: Request) -> object:
        done_turns = sum(1 for m in request.messages if isinstance(m, ToolResult)) // 2
        if done_turns < TURNS:
            n = done_turns
            return reply(
                f"turn {n}",
                [
                    ToolCall(id=f"call_w{n}", name="weather", arguments={"city": f"City{n} é"}),
                    ToolCall(id=f"call_c{n}", name="clock", arguments={"tz": f"Zone/{n}"}),
                ],
            )
        return reply(f"finished after {done_turns} tool turns")

    return turn


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_ten_turn_run_with_parallel_tools_over_every_protocol(provider: str) -> None:
    with ScriptedServer([ten_turn_script()] * (TURNS + 1)) as server:
        client = server.connect(f"{provider}:m-1")
        async with client:
            result = await Agent(client, [weather, clock], max_tool_turns=TURNS).run("Weather and time, ten times.")
    assert (result.stop_reason, result.turns, result.text) == ("end_turn", TURNS + 1, "finished after 10 tool turns")
    assert [r.call.name for r in result.calls] == ["weather", "clock"] * TURNS
    assert result.calls[-2].result.value == {"city": "City9 é", "temp_c": 17}
    assert len(server.requests) == TURNS + 1
    last = server.requests[-1].request
    assert last is not None
    results = [m for m in last.messages if isinstance(m, ToolResult)]
    # Every result reached the server paired with its call, whatever the protocol did to the ids.
    calls = {c.id: c.name for m in last.messages for c in getattr(m, "tool_calls", [])}
    assert [calls[r.tool_call_id] for r in results] == ["weather", "clock"] * TURNS
    assert "12:00 in Zone/9" in json.dumps(results[-1].value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_streaming_run_with_standard_tools_on_a_real_folder(provider: str, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def main():\n    return 'TODO'\n")
    script = [
        reply(
            "",
            [
                ToolCall(id="g1", name="glob", arguments={"pattern": "*.py"}),
                ToolCall(id="r1", name="read", arguments={"path": "app.py"}),
            ],
        ),
        reply("", [ToolCall(id="w1", name="write", arguments={"path": "out.txt", "content": "hello"})]),
        reply("", [ToolCall(id="s1", name="grep", arguments={"pattern": "TODO"})]),
        reply("All done."),
    ]
    context = ToolContext(overrides={ROOT.id: tmp_path})
    with ScriptedServer(script) as server:
        async with server.connect(f"{provider}:m-1") as client:
            agent = Agent(client, [glob, read, write, grep], reviewer=DenyAll("not in this test"), context=context)
            events = [e async for e in agent.run_stream("tidy up")]
    result = events[-1].result  # type: ignore[union-attr]
    assert result.text == "All done."
    assert [(r.call.name, r.approved) for r in result.calls] == [
        ("glob", True),
        ("read", True),
        ("write", False),
        ("grep", True),
    ]
    assert result.calls[3].result.value == "app.py:2:     return 'TODO'"
    assert not (tmp_path / "out.txt").exists()


async def test_text_mode_sends_no_tools_and_parses_calls_from_the_reply() -> None:
    def model(request: Request) -> object:
        last = str(getattr(request.messages[-1], "content", ""))
        if not last.startswith("TOOL_RESULT"):  # in text mode, results come back as user text
            return reply('Let me check.\nTOOL_CALL: {"name": "weather", "args": {"city": "Oslo"}}')
        return reply(f"Seen: {last[:60]}")

    with ScriptedServer([model, model]) as server:
        async with server.connect("openai:m-1") as client:
            result = await Agent(client, [weather], tool_mode="text").run("Weather in Oslo?")
    first, second = server.requests
    assert "tools" not in first.body
    assert "Available tools" in first.body["messages"][0]["content"]
    assert result.calls[0].call.arguments == {"city": "Oslo"}
    assert result.calls[0].call.metadata["textcalls"]["path"] == "text"
    assert second.body["messages"][-1]["role"] == "user"
    assert result.text.startswith("Seen: TOOL_RESULT (result) for weather [")


async def test_auto_mode_switches_to_text_when_the_server_rejects_tools(caplog: pytest.LogCaptureFixture) -> None:
    rejection = ErrorReply(status=400, message="this model does not support tools")
    script = [rejection, reply('TOOL_CALL: {"name": "clock", "args": {"tz": "UTC"}}'), reply("It is noon.")]
    with ScriptedServer(script) as server:
        async with server.connect("openai:m-1", max_retries=0) as client:
            agent = Agent(client, [clock], tool_mode="auto")
            with caplog.at_level(logging.WARNING, logger="toolwire.session"):
                result = await agent.run("What time is it?")
    assert (result.text, agent.tool_mode) == ("It is noon.", "text")
    assert ["tools" in r.body for r in server.requests] == [True, False, False]
    assert sum("switching to text mode for this client" in r.message for r in caplog.records) == 1


async def test_auto_mode_keeps_native_tools_when_a_400_is_about_something_else() -> None:
    # toolwire's own hint in every 400 message names "tools"; only the server's words may count.
    too_long = ErrorReply(status=400, message="This model's maximum context length is 4096 tokens.")
    with ScriptedServer([too_long]) as server:
        async with server.connect("openai:m-1", max_retries=0) as client:
            agent = Agent(client, [clock], tool_mode="auto")
            with pytest.raises(BadRequestError, match="maximum context length"):
                await agent.run("What time is it?")
    assert (agent.tool_mode, len(server.requests)) == ("auto", 1)


async def test_auto_mode_parses_text_calls_when_the_reply_has_no_native_ones() -> None:
    script = [reply('<tool_call>{"name": "clock", "arguments": {"tz": "CET"}}</tool_call>'), reply("ok")]
    with ScriptedServer(script) as server:
        async with server.connect("anthropic:m-1") as client:
            result = await Agent(client, [clock], tool_mode="auto").run("time?")
    assert result.calls[0].result.value == "12:00 in CET"
    assert result.calls[0].call.metadata["textcalls"]["path"] == "auto-text"
    assert "tools" in server.requests[1].body


async def test_session_text_mode_and_streaming_auto_mode() -> None:
    call_text = 'TOOL_CALL: {"name": "clock", "args": {"tz": "UTC"}}'
    with ScriptedServer([reply(call_text), reply("noon"), reply(call_text)]) as server:
        async with server.connect("anthropic:m-1") as client:
            session = client.session(tools=[clock], tool_mode="text")
            first = await session.send_with_tools("time?", [clock])
            assert [(c.name, c.arguments) for c in first.tool_calls] == [("clock", {"tz": "UTC"})]
            result = await clock.execute_raw(first.tool_calls[0].arguments, call=first.tool_calls[0])
            assert (await session.send_tool_results([result])).text == "noon"
            assert "tools" not in server.requests[0].body
            assert server.requests[1].body["messages"][-1]["content"].startswith("TOOL_RESULT (result) for clock")

            streamed = client.session(tools=[clock], tool_mode="auto")
            events = [e async for e in streamed.send_streaming("again?")]
            done = events[-1]
            assert isinstance(done, Done) and done.response.tool_calls[0].metadata["textcalls"]["path"] == "auto-text"
            assert streamed.pending_calls == done.response.tool_calls
