"""The stateful session, over the loopback server and with the in-process model."""

from __future__ import annotations

import json

import pytest

from tests._providers import KEY, WEATHER, Case, call_reply, cases, text_reply
from toolwire.errors import BadRequestError
from toolwire.testing import ErrorReply, ScriptedModel, ScriptedServer, reply
from toolwire.types import (
    AssistantMessage,
    Done,
    SystemMessage,
    TextDelta,
    ToolCall,
    ToolResult,
    UserMessage,
)

PARIS = ToolCall(id="call_a1", name="get_weather", arguments={"city": "Paris"})
TOKYO = ToolCall(id="call_b2", name="get_weather", arguments={"city": "Tokyo"})


@pytest.mark.parametrize("case", cases())
async def test_a_tool_round_trip_keeps_the_history(case: Case) -> None:
    turns = [call_reply(), text_reply("Paris 18C, Tokyo 22C.")]
    with ScriptedServer(turns) as server:
        async with server.connect(f"{case.provider}:m-1", api_key=KEY, **case.options) as client:
            session = client.session(system="Be brief.", tool_mode="native")  # (llamacpp's own is constrained)
            first = await session.send_with_tools("Weather in Paris and Tokyo?", [WEATHER])
            assert [c.arguments["city"] for c in session.pending_calls] == ["Paris", "Tokyo"]
            calls = first.tool_calls
            results = [ToolResult.data(calls[1], {"temp_c": 22}), ToolResult.text(calls[0], "18C")]
            final = await session.send_tool_results(results)
    assert final.text == "Paris 18C, Tokyo 22C."
    assert session.pending_calls == []
    kinds = [type(m).__name__ for m in session.messages]
    assert kinds == ["SystemMessage", "UserMessage", "AssistantMessage", "ToolResult", "ToolResult", "AssistantMessage"]
    # results go back in the order the model asked for them
    assert [m.tool_call_id for m in session.messages if isinstance(m, ToolResult)] == [calls[0].id, calls[1].id]
    second = server.requests[1].request
    assert second is not None
    assert [t.name for t in second.tools] == ["get_weather"]
    assert len(second.messages) == 5


async def test_send_returns_text_and_grows_history() -> None:
    with ScriptedServer(["Hi there.", "Still here."]) as server:
        async with server.connect("anthropic:m-1") as client:
            session = client.session(system="Be brief.")
            assert await session.send("Hello") == "Hi there."
            assert await session.send("Still?") == "Still here."
    assert session.messages[0] == SystemMessage(content="Be brief.")
    assert [m.content for m in session.messages if isinstance(m, UserMessage)] == ["Hello", "Still?"]
    assert len(server.requests[1].body["messages"]) == 3


async def test_send_streaming_records_the_reply_at_done() -> None:
    with ScriptedServer([text_reply("streamed words here")]) as server:
        async with server.connect("openai:m-1") as client:
            session = client.session()
            events = [e async for e in session.send_streaming("Go")]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "streamed words here"
    assert isinstance(events[-1], Done)
    assert session.messages[-1] == events[-1].response.message


async def test_results_must_answer_every_pending_call_before_anything_is_sent() -> None:
    model = ScriptedModel([reply("", [PARIS, TOKYO]), "done"])
    session = model.session(tools=[WEATHER])
    await session.send("Weather?")
    with pytest.raises(ValueError, match=r"missing: 'call_b2'\); pending calls are 'call_a1', 'call_b2'"):
        await session.send_tool_results([ToolResult.text(PARIS, "18C")])
    with pytest.raises(ValueError, match=r"unknown: 'call_zz'"):
        await session.send_tool_results(
            [
                ToolResult.text(PARIS, "18C"),
                ToolResult.text(TOKYO, "22C"),
                ToolResult.error(ToolCall(id="call_zz", name="get_weather"), "no"),
            ]
        )
    with pytest.raises(ValueError, match=r"repeated: 'call_a1'"):
        await session.send_tool_results([ToolResult.text(PARIS, "1"), ToolResult.text(PARIS, "2")])
    with pytest.raises(ValueError, match=r"waiting for results of tool call\(s\) 'call_a1', 'call_b2'"):
        await session.send("Never mind")
    assert len(model.requests) == 1
    assert len(session.messages) == 2
    assert await session.send_tool_results([ToolResult.text(PARIS, "18C"), ToolResult.text(TOKYO, "22C")])
    assert len(model.requests) == 2


async def test_results_with_nothing_pending_are_refused() -> None:
    session = ScriptedModel(["hi"]).session()
    with pytest.raises(ValueError, match="No tool calls are pending"):
        await session.send_tool_results([ToolResult.text(PARIS, "18C")])


async def test_a_failed_exchange_leaves_the_history_unchanged() -> None:
    with ScriptedServer([ErrorReply(status=400, message="bad"), "ok"]) as server:
        async with server.connect("openai:m-1") as client:
            session = client.session(system="s")
            with pytest.raises(BadRequestError):
                await session.send("first try")
            assert session.messages == [SystemMessage(content="s")]
            assert await session.send("second try") == "ok"
    assert [type(m) for m in session.messages] == [SystemMessage, UserMessage, AssistantMessage]


def test_sync_twins() -> None:
    model = ScriptedModel([reply("", [PARIS]), "It is 18C.", "bye"])
    session = model.session()
    response = session.send_with_tools_sync("Weather?", [WEATHER])
    assert response.tool_calls == [PARIS]
    assert session.send_tool_results_sync([ToolResult.text(PARIS, "18C")]).text == "It is 18C."
    events = list(session.send_streaming_sync("Thanks"))
    assert isinstance(events[-1], Done) and events[-1].response.text == "bye"
    assert session.send_sync is not None
    assert len(session.messages) == 6
    # the turn's tools travel with the results, then the session's own tools (none) again
    assert [t.name for t in model.requests[1].tools] == ["get_weather"]
    assert model.requests[2].tools == []
    model.close()


async def test_a_client_that_knows_its_server_picks_the_tool_mode_that_works_there() -> None:
    """llama-server drops tools a model's template cannot render: its profile says constrained."""
    from toolwire.agent import Agent

    with ScriptedServer([json.dumps([{"name": "get_weather", "arguments": {"city": "Paris"}}])]) as server:
        async with server.connect("llamacpp:m-1") as client:
            assert (client.preferred_tool_mode, client.session().tool_mode) == ("constrained", "constrained")
            assert Agent(client, []).tool_mode == "constrained"
            first = await client.session().send_with_tools("Weather in Paris?", [WEATHER])
        async with server.connect("openai:m-1", api_key=KEY) as other:
            assert (other.preferred_tool_mode, Agent(other, []).tool_mode) == ("native", "native")
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert server.requests[0].body["response_format"]["type"] == "json_schema"
    assert "tools" not in server.requests[0].body
