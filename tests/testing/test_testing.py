"""toolwire.testing itself: the loopback server's routing and recording, the scripted model, the fixture."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Callable

import pytest

from toolwire.errors import ProviderError, RateLimitError
from toolwire.testing import ScriptedModel, ScriptedServer, reply, stream_events
from toolwire.testing.fixtures import scripted_server
from toolwire.types import Done, Request, TextDelta, ThinkingDelta, ThinkingPart, ToolCall, ToolCallDelta, ToolResult

__all__ = ["scripted_server"]  # the fixture, imported so pytest finds it here

CALL = ToolCall(id="call_1", name="lookup", arguments={"q": "x"})


def _post(url: str, body: object) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def test_unknown_paths_and_an_exhausted_script_answer_with_errors() -> None:
    with ScriptedServer() as server:
        status, body = _post(server.base_url + "/v2/nothing", {})
        assert status == 404 and "no route for '/v2/nothing'" in json.dumps(body)
        status, body = _post(server.base_url + "/v1/chat/completions", {"model": "m", "messages": []})
        assert status == 500 and "script is exhausted" in json.dumps(body)
    assert [r.codec for r in server.requests] == [None, "openai"]


def test_base_url_needs_a_running_server() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = ScriptedServer().base_url


async def test_callable_turns_see_the_decoded_request() -> None:
    seen: list[Request] = []

    def answer(request: Request) -> str:
        seen.append(request)
        return f"{len(request.messages)} messages"

    with ScriptedServer([answer]) as server:
        async with server.connect("anthropic:m-1") as client:
            assert (await client.complete("hi")).text == "1 messages"
    assert seen[0].model == "m-1"
    assert server.requests[0].request == seen[0]
    assert server.remaining == 0


async def test_the_fixture_starts_and_stops_servers(scripted_server: Callable[..., ScriptedServer]) -> None:
    server = scripted_server("from the fixture")
    server.add("second")
    async with server.connect("openai:m-1") as client:
        assert (await client.complete("hi")).text == "from the fixture"
        assert (await client.complete("hi")).text == "second"


# the in-process model


async def test_scripted_model_replays_turns_and_records_requests() -> None:
    model = ScriptedModel(["one", reply("", [CALL]), RateLimitError("slow down", status=429)])
    assert (await model.complete("hi")).text == "one"
    response = await model.complete("again", tools=[], tool_choice="lookup")
    assert response.tool_calls == [CALL]
    with pytest.raises(RateLimitError):
        await model.complete("third")
    with pytest.raises(RuntimeError, match="script is exhausted"):
        await model.complete("fourth")
    assert [r.messages[0].content for r in model.requests] == ["hi", "again", "third", "fourth"]  # type: ignore[union-attr]


async def test_scripted_model_as_a_function_of_the_conversation() -> None:
    def echo(request: Request) -> str:
        return f"turn {len(request.messages)}"

    model = ScriptedModel(echo)
    session = model.session()
    assert await session.send("a") == "turn 1"
    assert await session.send("b") == "turn 3"


async def test_scripted_model_streams_like_a_provider() -> None:
    response = reply("Hello world, how are you?", [CALL])
    response.message.parts.insert(0, ThinkingPart(text="let me think"))
    model = ScriptedModel([response])
    events = [e async for e in model.stream("hi")]
    assert events == stream_events(response)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello world, how are you?"
    assert "".join(e.text for e in events if isinstance(e, ThinkingDelta)) == "let me think"
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0] == ToolCallDelta(0, "call_1", "lookup", "")
    assert "".join(d.arguments_delta for d in deltas) == '{"q":"x"}'
    assert events[-1] == Done(response)
    assert model.requests[0].stream is True


def test_scripted_model_sync_twins_inside_and_outside_a_loop() -> None:
    model = ScriptedModel(["a", "b", "c"])
    assert model.complete_sync("x").text == "a"
    assert isinstance(list(model.stream_sync("y"))[-1], Done)

    async def inside() -> str:
        return model.complete_sync("z").text

    assert asyncio.run(inside()) == "c"
    model.close()


async def test_scripted_model_with_the_session_tool_flow() -> None:
    model = ScriptedModel([reply("", [CALL]), "found it"])
    session = model.session()
    await session.send_with_tools("find x", [])
    assert (await session.send_tool_results([ToolResult.text(CALL, "x is 1")])).text == "found it"


async def test_errors_reach_scripted_clients_over_http() -> None:
    with ScriptedServer([reply("fine")]) as server:
        async with server.connect("gemini:m-1", max_retries=0) as client:
            assert (await client.complete("hi")).text == "fine"
            with pytest.raises(ProviderError, match="script is exhausted"):
                await client.complete("hi")


async def test_the_official_sdks_read_scripted_replies_whole() -> None:
    import anthropic
    import openai

    from toolwire import ToolCall
    from toolwire.testing import ScriptedServer, reply

    call = ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})
    with ScriptedServer(["hi", "hi", reply("", [call])]) as server:
        claude = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="k", max_retries=0)
        async with claude.messages.stream(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        ) as s:
            message = await s.get_final_message()
        assert (message.content[0].text, message.model, message.usage.input_tokens) == ("hi", "claude-x", 0)
        assert message.id.startswith("toolwire_req_")
        plain = await claude.messages.create(
            model="claude-x", max_tokens=10, messages=[{"role": "user", "content": "x"}]
        )
        assert (plain.content[0].text, plain.usage.output_tokens) == ("hi", 0)
        await claude.close()
        gpt = openai.AsyncOpenAI(base_url=f"{server.base_url}/v1", api_key="k", max_retries=0)
        done = []
        async with gpt.responses.stream(model="gpt-x", input="weather?") as events:
            async for event in events:
                if event.type == "response.function_call_arguments.done":
                    done.append((event.name, event.arguments))
        assert done == [("get_weather", '{"city":"Paris"}')]
        await gpt.close()
