"""Typed results through every codec's loopback server, in each output strategy its provider supports.

The scripted model answers as the request asks: a call of the output tool when one is offered,
JSON text under a `response_format`, JSON in a fence when the schema is only in the prompt. What
each strategy sends is asserted on the wire body the server received.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from toolwire.agent import Agent, RunFinished
from toolwire.errors import OutputValidationError
from toolwire.testing import ScriptedServer, reply
from toolwire.toolmodes import OUTPUT_TOOL, OutputResult, PartialOutput, find_json
from toolwire.types import Request, Response, SystemMessage, ToolCall, ToolResult, UserMessage


class Invoice(BaseModel):
    number: str
    total: float
    currency: Literal["EUR", "USD"]


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Person(TypedDict):
    name: str
    age: int


INVOICE = {"number": "INV-7", "total": 12.5, "currency": "EUR"}

# provider -> the strategies it supports, its default first (the codecs' and profiles' data)
PROVIDERS: dict[str, tuple[str, ...]] = {
    "openai": ("native", "tool", "prompted"),
    "openai-responses": ("native", "tool", "prompted"),
    "anthropic": ("tool", "native", "prompted"),
    "gemini": ("native", "tool", "prompted"),
    "ollama": ("native", "constrained", "prompted", "tool"),
    "llama-cpp-python": ("constrained", "native", "tool", "prompted"),
    "vllm": ("native", "constrained", "tool", "prompted"),
    "bedrock": ("tool", "prompted"),
}
PAIRS = [(p, s) for p, strategies in PROVIDERS.items() for s in strategies]


def answering(*answers: Any) -> Any:
    """A turn function: each answer in turn, in the form the request asks for."""
    queue = list(answers)

    def turn(request: Request) -> Response:
        payload = queue.pop(0) if len(queue) > 1 else queue[0]
        if any(t.name == OUTPUT_TOOL for t in request.tools):
            return reply(tool_calls=[ToolCall(id=f"call_{len(queue)}", name=OUTPUT_TOOL, arguments=payload)])
        text = json.dumps(payload)
        return reply(text if request.response_format is not None else f"Here it is:\n```json\n{text}\n```")

    return turn


def sent_strategy(body: dict[str, Any]) -> str:
    """Which strategy a wire body shows: the output tool, a schema field, or the schema in the prompt."""
    if OUTPUT_TOOL in json.dumps([body.get("tools"), body.get("toolConfig")]):  # toolConfig: Bedrock
        return "tool"
    fields = (body.get("response_format"), body.get("text"), body.get("generationConfig"), body.get("format"))
    schema = body.get("output_config") or next((f for f in fields if f), None)
    prompted = "matches this JSON Schema" in json.dumps(body)
    if schema is None:
        return "prompted" if prompted else "none"
    return "constrained" if prompted else "native"


@pytest.mark.parametrize(("provider", "strategy"), PAIRS)
async def test_agent_returns_the_typed_value_in_each_strategy(provider: str, strategy: str) -> None:
    with ScriptedServer(answering(INVOICE)) as server:
        async with server.connect(f"{provider}:m-1") as client:
            agent = Agent(client, output_type=Invoice, output_strategy=strategy)  # type: ignore[arg-type]
            result = await agent.run("Read the invoice: INV-7, 12.50 EUR.")
    assert result.output == Invoice(number="INV-7", total=12.5, currency="EUR")
    assert find_json(result.text) == INVOICE  # the raw text kept: the JSON as written, fenced or not
    assert result.stop_reason == "end_turn"
    assert [sent_strategy(r.body) for r in server.requests] == [strategy]


@pytest.mark.parametrize("provider", list(PROVIDERS))
async def test_the_default_strategy_is_the_providers_first(provider: str) -> None:
    with ScriptedServer(answering(INVOICE)) as server:
        async with server.connect(f"{provider}:m-1") as client:
            result = await client.complete("INV-7, 12.50 EUR", output_type=Invoice)
    assert isinstance(result, OutputResult)
    assert result.output.total == 12.5
    assert [sent_strategy(r.body) for r in server.requests] == [PROVIDERS[provider][0]]


def test_the_tool_strategy_forces_the_output_tool_when_it_is_the_only_one() -> None:
    with ScriptedServer(answering(INVOICE)) as server, server.connect("anthropic:m-1") as client:
        result = client.complete_sync("INV-7", output_type=Invoice, output_strategy="tool")
    assert result.output.number == "INV-7"
    body = server.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": OUTPUT_TOOL}
    assert body["tools"][0]["input_schema"]["required"] == ["number", "total", "currency"]


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (Point, {"x": 1, "y": 2}, Point(x=1, y=2)),
        (Person, {"name": "Ada", "age": 36}, {"name": "Ada", "age": 36}),
        (int, {"value": 42}, 42),
        (Point | Invoice, {"value": INVOICE}, Invoice(number="INV-7", total=12.5, currency="EUR")),
        (list[int], {"value": [1, 2, 3]}, [1, 2, 3]),
    ],
)
@pytest.mark.parametrize("strategy", ["tool", "native", "prompted"])
async def test_dataclasses_typeddicts_scalars_and_unions(
    output_type: Any, answer: Any, expected: Any, strategy: str
) -> None:
    with ScriptedServer(answering(answer)) as server:
        async with server.connect("openai:m-1") as client:
            result = await client.complete("go", output_type=output_type, output_strategy=strategy)  # type: ignore[arg-type]
    assert result.output == expected
    sent = server.requests[0].body
    if strategy == "native":  # a non-object type travels wrapped, as an object
        assert sent["response_format"]["json_schema"]["schema"]["type"] == "object"


async def test_a_scalar_written_bare_is_taken_too() -> None:
    with ScriptedServer(["The answer:\n```json\n[1, 2]\n```"]) as server:
        async with server.connect("openai:m-1") as client:
            result = await client.complete("go", output_type=list[int], output_strategy="prompted")
    assert result.output == [1, 2]


@pytest.mark.parametrize("strategy", ["tool", "native", "prompted"])
async def test_an_invalid_answer_is_sent_back_with_its_errors(strategy: str) -> None:
    bad = {"number": "INV-7", "total": "lots", "currency": "GBP"}
    with ScriptedServer(answering(bad, INVOICE)) as server:
        async with server.connect("anthropic:m-1") as client:
            session = client.session()
            result = await session.send("INV-7", output_type=Invoice, output_strategy=strategy)  # type: ignore[arg-type]
    assert result.output.currency == "EUR"
    assert len(result.attempts) == 1
    text, errors = result.attempts[0]
    assert find_json(text) == bad
    assert errors.splitlines() == [
        "total: Input should be a valid number, unable to parse string as a number",
        "currency: Input should be 'EUR' or 'USD'",
    ]
    second = server.requests[1].request
    assert second is not None
    reask = second.messages[-1]
    if strategy == "tool":  # as the output tool's error result
        assert isinstance(reask, ToolResult) and reask.kind == "error"
    else:  # as a user turn
        assert isinstance(reask, UserMessage)
    assert "currency: Input should be 'EUR' or 'USD'" in str(reask.value if isinstance(reask, ToolResult) else reask)
    # the history holds both attempts, every call answered: the session can go on
    assert session.pending_calls == []


async def test_the_last_failure_carries_every_attempt() -> None:
    bad = {"number": 7}
    with ScriptedServer(answering(bad)) as server:
        async with server.connect("gemini:m-1") as client:
            agent = Agent(client, output_type=Invoice, output_retries=2)
            with pytest.raises(OutputValidationError) as caught:
                await agent.run("INV-7")
    assert len(caught.value.attempts) == 3
    assert [find_json(text) for text, _ in caught.value.attempts] == [bad, bad, bad]
    assert caught.value.attempts[0][1].splitlines()[0] == "number: Input should be a valid string"
    assert "No reply validated as Invoice in 3 attempt(s) with the 'native' output strategy" in str(caught.value)
    assert server.request_count == 3


async def test_a_strategy_the_server_lacks_is_refused_before_sending() -> None:
    with ScriptedServer([]) as server:
        async with server.connect("anthropic:m-1") as client:
            with pytest.raises(ValueError, match="anthropic does not support the 'constrained' output strategy"):
                Agent(client, output_type=Invoice, output_strategy="constrained")


STREAMED = [("openai", "native"), ("anthropic", "tool"), ("gemini", "prompted"), ("ollama", "constrained")]


@pytest.mark.parametrize(("provider", "strategy"), STREAMED)
async def test_streaming_yields_partial_objects_then_the_validated_one(provider: str, strategy: str) -> None:
    with ScriptedServer(answering(INVOICE)) as server:
        async with server.connect(f"{provider}:m-1") as client:
            items = [i async for i in client.stream("INV-7", output_type=Invoice, output_strategy=strategy)]  # type: ignore[arg-type]
    *partials, last = items
    assert isinstance(last, OutputResult)
    assert last.output == Invoice(**INVOICE)
    assert partials and all(isinstance(p, PartialOutput) for p in partials)
    final = list(INVOICE.items())
    for partial in partials:  # each holds a prefix of the final object's fields
        assert isinstance(partial, PartialOutput)
        assert list(partial.value.items()) == final[: len(partial.value)]
    assert server.requests[0].stream


async def test_the_agent_streams_partial_objects_and_ends_with_the_output() -> None:
    with ScriptedServer(answering(INVOICE)) as server:
        async with server.connect("anthropic:m-1") as client:
            agent = Agent(client, output_type=Invoice)
            events = [e async for e in agent.run_stream("INV-7")]
    partials = [e.value for e in events if isinstance(e, PartialOutput)]
    assert partials[-1] == INVOICE  # the JSON closed: every field is complete
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    assert finished.result.output == Invoice(**INVOICE)


async def test_with_other_tools_the_output_tool_is_offered_beside_them() -> None:
    from toolwire.tools import tool

    @tool
    def lookup(number: str) -> str:
        """Look an invoice up."""
        return "12.50 EUR"

    turns = [
        reply(tool_calls=[ToolCall(id="call_1", name="lookup", arguments={"number": "INV-7"})]),
        reply(tool_calls=[ToolCall(id="call_2", name=OUTPUT_TOOL, arguments=INVOICE)]),
    ]
    with ScriptedServer(turns) as server:
        async with server.connect("anthropic:m-1") as client:
            result = await Agent(client, [lookup], output_type=Invoice).run("INV-7?")
    assert result.output == Invoice(**INVOICE)
    assert [r.call.name for r in result.calls] == ["lookup"]
    first = server.requests[0].body
    assert [t["name"] for t in first["tools"]] == ["lookup", OUTPUT_TOOL]
    assert "tool_choice" not in first
    assert isinstance(result.messages[-1], ToolResult) and result.messages[-1].value == "The answer was taken."


async def test_prompted_and_constrained_put_the_schema_in_the_system_prompt() -> None:
    with ScriptedServer(answering(INVOICE)) as server:
        async with server.connect("llama-cpp-python:m-1") as client:
            session = client.session(system="Be exact.")
            await session.send("INV-7", output_type=Invoice)
    sent = server.requests[0].request
    assert sent is not None
    system = sent.messages[0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("Be exact.\n\nAnswer with a JSON object that matches this JSON Schema")
    body = server.requests[0].body
    assert body["response_format"]["type"] == "json_object"  # the profile's schema_form
    assert body["response_format"]["schema"]["properties"]["currency"] == {"enum": ["EUR", "USD"], "type": "string"}


def test_the_native_strategy_sends_openai_the_strict_form() -> None:
    with ScriptedServer(answering(INVOICE)) as server, server.connect("openai:m-1") as client:
        client.complete_sync("INV-7", output_type=Invoice)
    sent = server.requests[0].body["response_format"]
    assert sent["type"] == "json_schema"
    assert (sent["json_schema"]["name"], sent["json_schema"]["strict"]) == ("Invoice", True)
    assert sent["json_schema"]["schema"]["additionalProperties"] is False
    assert sent["json_schema"]["schema"]["required"] == ["number", "total", "currency"]


async def test_a_session_streams_the_typed_answer_and_keeps_it_in_the_history() -> None:
    with ScriptedServer(answering(INVOICE)) as server:
        async with server.connect("gemini:m-1") as client:
            session = client.session()
            items = [i async for i in session.send_typed_streaming("INV-7", Invoice)]
    last = items[-1]
    assert isinstance(last, OutputResult) and last.output == Invoice(**INVOICE)
    assert [type(m).__name__ for m in session.messages] == ["UserMessage", "AssistantMessage"]


async def test_the_tool_strategy_in_text_mode_has_the_output_tool_in_the_prompt() -> None:
    payload = json.dumps({"name": OUTPUT_TOOL, "arguments": INVOICE})
    with ScriptedServer([f"TOOL_CALL: {payload}"]) as server:
        async with server.connect("openai:m-1") as client:
            agent = Agent(client, output_type=Invoice, output_strategy="tool", tool_mode="text")
            result = await agent.run("INV-7")
    assert result.output == Invoice(**INVOICE)
    body = server.requests[0].body
    assert "tools" not in body
    assert OUTPUT_TOOL in body["messages"][0]["content"]
