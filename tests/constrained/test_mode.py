"""`tool_mode="constrained"` end to end: the body each server profile gets, calls back, tool_choice, streaming.

Every test talks to a real `ScriptedServer` on 127.0.0.1 that answers with the JSON a server
holding the model to the schema would write.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from tests.constrained._shapes import AREA as SHARED_AREA
from tests.constrained._shapes import WEATHER, call_schema, listed
from toolwire import Agent, tool, toolmodes
from toolwire.testing import ScriptedServer, reply
from toolwire.types import (
    AssistantMessage,
    Done,
    NamedToolChoice,
    StopReason,
    TextDelta,
    TextPart,
    ToolCallDelta,
    ToolDefinition,
    Usage,
    UserMessage,
)

# base >= 0: the schema sent keeps the bound only where the server's engine enforces it
AREA = dataclasses.replace(
    SHARED_AREA,
    parameters={
        "type": "object",
        "properties": {"base": {"type": "integer", "minimum": 0}, "height": {"type": "number"}},
        "required": ["base", "height"],
    },
)


def area_arguments(bounds: bool) -> dict[str, Any]:
    base = {"type": "integer", "minimum": 0} if bounds else {"type": "integer"}
    return {
        "type": "object",
        "properties": {"base": base, "height": {"type": "number"}},
        "required": ["base", "height"],
        "additionalProperties": False,
    }


def area_list(bounds: bool) -> dict[str, Any]:
    return listed(call_schema("triangle_area", area_arguments(bounds)), 0, 4)


def calls(*pairs: tuple[str, dict[str, Any]]) -> str:
    return json.dumps([{"name": name, "arguments": arguments} for name, arguments in pairs])


def ask(target: str, server: ScriptedServer, tools: list[ToolDefinition], choice: Any = None) -> Any:
    with server.connect(target) as client:
        messages = [UserMessage(content="Area of 3 by 4?")]
        state = toolmodes.ModeState("constrained")
        request = client.build_request(messages, tools=tools, tool_choice=choice)
        response = client.run_sync(toolmodes.complete(client, request, state))
    assert state.mode == "constrained"
    return response


# the schema, in the form each server profile names


@pytest.mark.parametrize(
    ("target", "key", "wire"),
    [
        ("llama-cpp-python:m", "response_format", {"type": "json_object", "schema": area_list(False)}),
        (
            "llamacpp:m",
            "response_format",
            {"type": "json_schema", "json_schema": {"name": "tool_reply", "schema": area_list(False), "strict": True}},
        ),
        (
            "openai:m",
            "response_format",
            {"type": "json_schema", "json_schema": {"name": "tool_reply", "schema": area_list(True), "strict": True}},
        ),
        ("ollama:m", "format", area_list(False)),
    ],
)
def test_each_server_profile_gets_the_reply_schema_in_its_own_form(target: str, key: str, wire: Any) -> None:
    with ScriptedServer([calls(("triangle_area", {"base": 3, "height": 4}))]) as server:
        response = ask(target, server, [AREA])
    (recorded,) = server.requests
    assert recorded.body[key] == wire
    assert "tools" not in recorded.body and "tool_choice" not in recorded.body
    # llama-cpp-python's server penalizes repeats unless told (bench/bfcl/README.md: 39 → 50 % simple_python)
    assert recorded.body.get("repeat_penalty") == (1.05 if target.startswith("llama-cpp-python") else None)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("triangle_area", {"base": 3, "height": 4})]
    assert response.stop_reason == StopReason.TOOL_USE


def test_tool_choice_none_sends_no_schema_and_no_tools() -> None:
    with ScriptedServer(["Six."]) as server:
        response = ask("llama-cpp-python:m", server, [AREA, WEATHER], "none")
    (recorded,) = server.requests
    assert recorded.body["messages"] == [{"role": "user", "content": "Area of 3 by 4?"}]
    assert not {"response_format", "tools", "tool_choice", "repeat_penalty"} & set(recorded.body)
    assert (response.text, response.tool_calls) == ("Six.", [])


def test_tool_choice_required_leaves_out_the_answer_and_a_named_tool_leaves_only_that_tool() -> None:
    script = [calls(("weather", {"city": "Oslo"})), calls(("weather", {"city": "Rome"}))]
    with ScriptedServer(script) as server:
        required = ask("llama-cpp-python:m", server, [AREA, WEATHER], "required")
        named = ask("llama-cpp-python:m", server, [AREA, WEATHER], NamedToolChoice("weather"))
    first, second = (r.body["response_format"]["schema"] for r in server.requests)
    area, weather = (
        call_schema("triangle_area", area_arguments(False)),
        call_schema("weather", {**(WEATHER.parameters or {}), "additionalProperties": False}),
    )
    assert first == listed({"anyOf": [area, weather]}, 1, 4)
    assert second == listed(weather, 1, 4)
    assert [c.arguments for c in required.tool_calls + named.tool_calls] == [{"city": "Oslo"}, {"city": "Rome"}]
    prompt = server.requests[1].body["messages"][0]["content"]
    assert '<tools>[{"name": "weather", "description": "Weather in a city."' in prompt
    assert "triangle_area" not in prompt and "empty list" not in prompt


def test_no_call_brings_the_answer_from_a_plain_request_and_broken_arguments_are_flagged() -> None:
    script = ["[]", "It is 6.", calls(("triangle_area", {"base": -3, "height": 4}))]
    with ScriptedServer(script) as server:
        said = ask("llama-cpp-python:m", server, [AREA])
        broken = ask("llama-cpp-python:m", server, [AREA])
    assert (said.text, said.tool_calls, said.stop_reason) == ("It is 6.", [], StopReason.END_TURN)
    constrained, plain, _ = (r.body for r in server.requests)
    assert "response_format" in constrained
    assert plain["messages"] == [{"role": "user", "content": "Area of 3 by 4?"}]
    assert not {"response_format", "tools", "tool_choice"} & set(plain)
    (call,) = broken.tool_calls
    assert call.arguments == {"base": -3, "height": 4}
    assert "arguments_error" in call.metadata and "-3 is less than the minimum of 0" in call.metadata["arguments_error"]


# the agent and sessions, unchanged


@tool
def triangle_area(base: int, height: float) -> str:
    """Area of a triangle."""
    return str(base * height / 2)


def test_an_agent_in_constrained_mode_runs_the_call_and_sends_the_history_as_json() -> None:
    script = [calls(("triangle_area", {"base": 3, "height": 4})), "[]", "The area is 6."]
    with ScriptedServer(script) as server, server.connect("llama-cpp-python:m") as client:
        agent = Agent(client, [triangle_area], tool_mode="constrained")
        result = client.run_sync(agent.run("Area of 3 by 4?"))
    assert result.text == "The area is 6."
    assert [c.result.value for c in result.calls] == ["6.0"]
    sent = server.requests[1].body["messages"]
    assert sent[1:] == [
        {"role": "user", "content": "Area of 3 by 4?"},
        {"role": "assistant", "content": calls(("triangle_area", {"base": 3, "height": 4}))},
        {"role": "user", "content": f"TOOL_RESULT (result) for triangle_area [{result.calls[0].call.id}]:\n6.0"},
    ]
    assert sent[0]["role"] == "system" and '<tools>[{"name": "triangle_area"' in sent[0]["content"]
    assert server.requests[2].body["messages"] == sent[1:]  # the answer's request: the history, no tools


def test_a_streamed_session_gets_calls_whole_at_the_end_and_the_answer_text_as_it_comes() -> None:
    long_answer = "The area of a triangle is half its base times its height, so 3 by 4 gives 6."
    two = calls(("triangle_area", {"base": 3, "height": 4}), ("triangle_area", {"base": 5, "height": 2}))
    with ScriptedServer([two, "[]", long_answer]) as server, server.connect("llama-cpp-python:m") as client:
        called = list(client.session(tools=[AREA], tool_mode="constrained").send_streaming_sync("3 by 4, 5 by 2?"))
        session = client.session(tools=[AREA], tool_mode="constrained")
        said = list(session.send_streaming_sync("How is it computed?"))
    assert [r.stream for r in server.requests] == [True, True, True]
    assert ["response_format" in r.body for r in server.requests] == [True, True, False]
    assert [type(e) for e in called] == [ToolCallDelta, ToolCallDelta, Done]
    assert [(e.index, e.name, e.arguments_delta) for e in called if isinstance(e, ToolCallDelta)] == [
        (0, "triangle_area", '{"base":3,"height":4}'),
        (1, "triangle_area", '{"base":5,"height":2}'),
    ]
    done = called[-1]
    assert isinstance(done, Done) and [c.arguments["base"] for c in done.response.tool_calls] == [3, 5]
    deltas = [e.text for e in said if isinstance(e, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == long_answer  # several pieces: it streamed
    assert isinstance(said[-1], Done) and said[-1].response.text == long_answer
    assert session.messages[-1] == AssistantMessage(parts=[TextPart(text=long_answer)])


def test_a_reply_that_took_two_requests_counts_the_tokens_of_both() -> None:
    spent, answered = Usage(input_tokens=300, output_tokens=2), Usage(input_tokens=120, output_tokens=9)
    script = [reply("[]", usage=spent), reply("It is 6.", usage=answered)] * 2
    with ScriptedServer(script) as server, server.connect("llama-cpp-python:m") as client:
        whole = ask("llama-cpp-python:m", server, [AREA])
        streamed = list(client.session(tools=[AREA], tool_mode="constrained").send_streaming_sync("Area?"))
    total = Usage(input_tokens=420, output_tokens=11)
    assert (whole.text, whole.usage) == ("It is 6.", total)
    done = streamed[-1]
    assert isinstance(done, Done) and (done.response.text, done.response.usage) == ("It is 6.", total)
