"""Constrained mode over a conversation: what goes on the wire (a real loopback server records it), what returns."""

from __future__ import annotations

import dataclasses
import json

from toolwire.constrained import (
    answer_request,
    calls_from_reply,
    constrained_request,
    render_constrained_prompt,
    reply_schema,
    with_usage_of,
)
from toolwire.testing import ScriptedServer
from toolwire.types import (
    AssistantMessage,
    NamedToolChoice,
    Request,
    Response,
    StopReason,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)

AREA = ToolDefinition(
    name="triangle_area",
    description="Area of a triangle.",
    parameters={
        "type": "object",
        "properties": {"base": {"type": "integer"}, "height": {"type": "number"}, "unit": {"enum": ["cm", "m"]}},
        "required": ["base", "height"],
    },
)


def test_the_prompt_is_the_function_calling_prompt_small_models_learned_with_the_tools_as_json() -> None:
    reply = reply_schema([AREA])
    assert reply is not None
    tools = json.dumps([{"name": "triangle_area", "description": "Area of a triangle.", "parameters": AREA.parameters}])
    assert render_constrained_prompt(reply) == (
        "You are an expert in composing functions. You are given a question and a set of possible functions.\n"
        "Based on the question, you will need to make one or more function/tool calls to achieve the purpose.\n"
        "If none of the functions can be used, point it out and refuse to answer.\n"
        "If the given question lacks the parameters required by the function, also point it out.\n"
        "You have access to the following tools:\n"
        f"<tools>{tools}</tools>\n"
        "The output MUST strictly adhere to the following format, and NO other text MUST be included.\n"
        "The example format is as follows. Please make sure the parameter type is correct. "
        "If no function call is needed, please make the tool calls an empty list '[]'.\n"
        "<tool_call>[\n"
        '{"name": "func_name1", "arguments": {"argument1": "value1", "argument2": "value2"}},\n'
        "(more tool calls as required)\n"
        "]</tool_call>"
    )
    one = reply_schema([AREA], "required", parallel_tool_calls=False)
    assert one is not None
    assert render_constrained_prompt(one).endswith(
        "Please make sure the parameter type is correct.\n<tool_call>[\n"
        '{"name": "func_name1", "arguments": {"argument1": "value1", "argument2": "value2"}}\n]</tool_call>'
    )
    assert "If none of the functions" not in render_constrained_prompt(one)


def test_the_request_carries_the_schema_not_the_tools_and_the_history_in_the_reply_shape() -> None:
    call = ToolCall(id="call_1", name="triangle_area", arguments={"base": 3, "height": 4})
    request = Request(
        model="m",
        messages=[
            SystemMessage(content="Be brief."),
            UserMessage(content="Area of 3 by 4?"),
            AssistantMessage(parts=[call]),
            ToolResult.text(call, "6"),
            AssistantMessage(parts=[TextPart(text="It is 6.")]),
            UserMessage(content="And 5 by 2?"),
        ],
        tools=[AREA],
        tool_choice="auto",
        parallel_tool_calls=True,
    )
    sent, reply = constrained_request(request)
    assert reply is not None
    assert (sent.tools, sent.tool_choice, sent.parallel_tool_calls) == ([], None, None)
    assert sent.response_format is not None and sent.response_format.schema == reply.schema
    assert sent.response_format.name == "tool_reply"
    as_sent = {"name": "triangle_area", "arguments": {"base": 3, "height": 4}}
    assert sent.messages == [
        SystemMessage(content="Be brief.\n\n" + render_constrained_prompt(reply)),
        UserMessage(content="Area of 3 by 4?"),
        AssistantMessage(parts=[TextPart(text=json.dumps([as_sent]))]),
        UserMessage(content="TOOL_RESULT (result) for triangle_area [call_1]:\n6"),
        AssistantMessage(parts=[TextPart(text="It is 6.")]),
        UserMessage(content="And 5 by 2?"),
    ]


def test_tool_choice_none_sends_a_plain_request() -> None:
    request = Request(model="m", messages=[UserMessage(content="hi")], tools=[AREA], tool_choice="none")
    sent, reply = constrained_request(request)
    assert reply is None
    assert (sent.messages, sent.tools, sent.response_format) == ([UserMessage(content="hi")], [], None)


def test_a_round_trip_through_a_real_server_gives_ordinary_tool_calls() -> None:
    answer = json.dumps([{"name": "triangle_area", "arguments": {"base": 5, "height": 2}}])
    request = Request(
        model="m", messages=[UserMessage(content="5 by 2?")], tools=[AREA], tool_choice=NamedToolChoice("triangle_area")
    )
    sent, reply = constrained_request(request)
    assert reply is not None
    with ScriptedServer([answer]) as server, server.connect("openai:m") as client:
        response = client.run_sync(client.complete_request(sent))
    (recorded,) = server.requests
    assert recorded.body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "tool_reply", "schema": reply.schema, "strict": True},
    }
    assert "tools" not in recorded.body and "tool_choice" not in recorded.body
    decoded, found = calls_from_reply(response, reply)
    assert found.parsed and decoded.stop_reason == StopReason.TOOL_USE
    assert [(c.name, c.arguments, c.metadata) for c in decoded.tool_calls] == [
        ("triangle_area", {"base": 5, "height": 2}, {"constrained": {"parsed": True}})
    ]
    assert decoded.text == ""


def test_no_call_comes_back_empty_with_the_answer_due_and_the_answer_request_is_plain() -> None:
    reply = reply_schema([AREA])
    assert reply is not None
    call = ToolCall(id="call_1", name="triangle_area", arguments={"base": 3, "height": 4})
    history = [
        SystemMessage(content="Be brief."),
        UserMessage(content="Area of 3 by 4?"),
        AssistantMessage(parts=[call]),
        ToolResult.text(call, "6"),
    ]
    request = Request(model="m", messages=history, tools=[AREA], tool_choice="auto", parallel_tool_calls=True)
    with ScriptedServer(["[]"]) as server, server.connect("openai:m") as client:
        response = client.run_sync(client.complete_request(constrained_request(request)[0]))
    decoded, found = calls_from_reply(response, reply)
    assert (decoded.text, decoded.tool_calls, decoded.stop_reason) == ("", [], StopReason.END_TURN)
    assert (found.answer_due, found.parsed, found.notes) == (True, True, [])
    answer = answer_request(request)
    assert (answer.tools, answer.tool_choice, answer.parallel_tool_calls, answer.response_format) == (
        [],
        None,
        None,
        None,
    )
    assert answer.messages == [
        SystemMessage(content="Be brief."),
        UserMessage(content="Area of 3 by 4?"),
        AssistantMessage(parts=[TextPart(text='[{"name": "triangle_area", "arguments": {"base": 3, "height": 4}}]')]),
        UserMessage(content="TOOL_RESULT (result) for triangle_area [call_1]:\n6"),
    ]
    required = reply_schema([AREA], "required")
    assert required is not None
    _, unasked = calls_from_reply(response, required)
    assert (unasked.answer_due, unasked.notes) == (False, ["no call, where tool_choice asked for one"])


def test_usage_of_two_requests_adds_up_counts_either_side_leaves_out() -> None:
    answer = Response(message=AssistantMessage(parts=[]), stop_reason=StopReason.END_TURN)
    assert with_usage_of(answer, None) is answer
    assert with_usage_of(answer, Usage(input_tokens=5)).usage == Usage(input_tokens=5)
    both = dataclasses.replace(answer, usage=Usage(input_tokens=7, output_tokens=2, reasoning_tokens=1))
    assert with_usage_of(both, Usage(input_tokens=5, output_tokens=1)).usage == Usage(
        input_tokens=12, output_tokens=3, cache_read_tokens=None, reasoning_tokens=1
    )
