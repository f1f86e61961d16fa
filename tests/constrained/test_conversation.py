"""Constrained mode over a conversation: what goes on the wire (a real loopback server records it), what returns."""

from __future__ import annotations

import json

from toolwire.constrained import calls_from_reply, constrained_request, render_constrained_prompt, reply_schema
from toolwire.testing import ScriptedServer
from toolwire.types import (
    AssistantMessage,
    NamedToolChoice,
    Request,
    StopReason,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolDefinition,
    ToolResult,
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


def test_the_prompt_names_each_tool_with_its_parameters_and_both_reply_shapes() -> None:
    reply = reply_schema([AREA])
    assert reply is not None
    assert render_constrained_prompt(reply) == (
        "You can use these tools:\n"
        "- no_tool_fits(reply: string): use this when none of the other tools fits the request\n"
        '- triangle_area(base: integer, height: number, unit?: "cm" | "m"): Area of a triangle.\n'
        "\n"
        'Reply {"call_count": <n>, "tool_calls": [<n calls like {"name": "<tool>", "arguments": {...}}>]} '
        "where n is the number of separate things the user asks for."
    )
    required = reply_schema([AREA], "required")
    assert required is not None and "no_tool_fits" not in render_constrained_prompt(required)


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
    answered = {"name": "no_tool_fits", "arguments": {"reply": "It is 6."}}
    assert sent.messages == [
        SystemMessage(content="Be brief.\n\n" + render_constrained_prompt(reply)),
        UserMessage(content="Area of 3 by 4?"),
        AssistantMessage(parts=[TextPart(text=json.dumps({"call_count": 1, "tool_calls": [as_sent]}))]),
        UserMessage(content="TOOL_RESULT (result) for triangle_area [call_1]:\n6"),
        AssistantMessage(parts=[TextPart(text=json.dumps({"call_count": 1, "tool_calls": [answered]}))]),
        UserMessage(content="And 5 by 2?"),
    ]


def test_tool_choice_none_sends_a_plain_request() -> None:
    request = Request(model="m", messages=[UserMessage(content="hi")], tools=[AREA], tool_choice="none")
    sent, reply = constrained_request(request)
    assert reply is None
    assert (sent.messages, sent.tools, sent.response_format) == ([UserMessage(content="hi")], [], None)


def test_a_round_trip_through_a_real_server_gives_ordinary_tool_calls() -> None:
    answer = json.dumps(
        {"call_count": 1, "tool_calls": [{"name": "triangle_area", "arguments": {"base": 5, "height": 2}}]}
    )
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


def test_an_answer_comes_back_as_text_with_the_stop_reason_unchanged() -> None:
    reply = reply_schema([AREA])
    assert reply is not None
    answer = {
        "call_count": 1,
        "tool_calls": [{"name": "no_tool_fits", "arguments": {"reply": "I cannot measure that."}}],
    }
    with ScriptedServer([json.dumps(answer)]) as server, server.connect("openai:m") as client:
        response = client.complete_sync("hi")
    decoded, found = calls_from_reply(response, reply)
    assert (decoded.text, decoded.tool_calls, decoded.stop_reason, found.parsed) == (
        "I cannot measure that.",
        [],
        StopReason.END_TURN,
        True,
    )
