"""'The server refused the tools parameter', decided once, and the same through every door.

The error bodies are the servers' own (OpenAI, Ollama, vLLM, llama.cpp's server, DeepSeek,
Gemini). An `auto` caller switches to text mode only on a refusal of tools; a context-length
400, a bad parameter, a malformed tool schema or a 404 reaches the caller unchanged and leaves
the mode native.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import openai
import pytest

from tests.gateway.conftest import KEY_ENV, Gateway
from toolwire import toolmodes
from toolwire.agent import Agent
from toolwire.errors import BadRequestError
from toolwire.evals._bfcl_data import BfclCase
from toolwire.evals._runner import run_case
from toolwire.gateway import Route, create_app
from toolwire.testing import ErrorReply, ScriptedServer, reply
from toolwire.tools import tool
from toolwire.types import ToolDefinition, UserMessage

CONTEXT_LENGTH = {
    "error": {
        "message": "This model's maximum context length is 16385 tokens. However, your messages resulted in "
        "17210 tokens (including 312 in the functions). Please reduce the length of the messages or functions.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
BAD_TEMPERATURE = {
    "error": {
        "message": "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 5 instead.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "decimal_above_max_value",
    }
}
BAD_TOOL_SCHEMA = {
    "error": {
        "message": "Invalid schema for function 'clock': In context=(), 'additionalProperties' is required to be "
        "supplied and to be false.",
        "type": "invalid_request_error",
        "param": "tools[0].function.parameters",
        "code": "invalid_function_parameters",
    }
}
NOT_FOUND = {"error": {"message": "The model `gpt-9` does not exist.", "code": "model_not_found"}}

KEPT: list[tuple[str, int, Any]] = [
    ("context length", 400, CONTEXT_LENGTH),
    ("bad temperature", 400, BAD_TEMPERATURE),
    ("bad tool schema", 400, BAD_TOOL_SCHEMA),
    ("404", 404, NOT_FOUND),
    ("404 that names tools", 404, {"error": "this model does not support tools"}),
    ("413", 413, {"error": "tools: request too large"}),
]
REFUSED: list[tuple[str, Any]] = [
    ("ollama", {"error": "registry.ollama.ai/library/gemma:2b does not support tools"}),
    (
        "vllm",
        {
            "object": "error",
            "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    ("llama.cpp server", {"error": {"code": 400, "message": "tools param requires --jinja flag", "type": "x"}}),
    (
        "openai",
        {
            "error": {
                "message": "Unsupported parameter: 'tools' is not supported with this model.",
                "type": "invalid_request_error",
                "param": "tools",
                "code": "unsupported_parameter",
            }
        },
    ),
    ("deepseek", {"error": {"message": "deepseek-reasoner does not support Function Calling", "code": "x"}}),
    ("gemini", {"error": {"code": 400, "message": "Function calling is not enabled for models/gemini-1.0-pro"}}),
    ("fastapi extra field", {"detail": [{"type": "extra_forbidden", "loc": ["body", "tools"], "msg": "Extra"}]}),
]


@tool(risk="low")
def clock(tz: str) -> str:
    """The time in a time zone."""
    return f"12:00 in {tz}"


CALL_TEXT = 'TOOL_CALL: {"name": "clock", "args": {"tz": "UTC"}}'


def _error(status: int, body: Any) -> BadRequestError:
    return BadRequestError("refused", status=status, body=body)


@pytest.mark.parametrize(("status", "body"), [(s, b) for _, s, b in KEPT], ids=[n for n, _, _ in KEPT])
def test_errors_about_something_else_are_no_refusal(status: int, body: Any) -> None:
    assert toolmodes.refuses_tools(_error(status, body)) is False


@pytest.mark.parametrize("body", [b for _, b in REFUSED], ids=[n for n, _ in REFUSED])
def test_each_servers_refusal_of_tools_is_one(body: Any) -> None:
    assert toolmodes.refuses_tools(_error(400, body)) is True


def test_only_the_servers_words_count_not_toolwires_hint() -> None:
    hinted = BadRequestError("openai answered HTTP 400: 'Bad input'; check the request (model name, tools, parameters)")
    assert toolmodes.refuses_tools(hinted) is False
    assert toolmodes.refuses_tools(_error(400, "Bad input")) is False


# the session and the agent


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "toolwire.toolmodes"]


@pytest.mark.parametrize(("status", "body"), [(s, b) for _, s, b in KEPT], ids=[n for n, _, _ in KEPT])
async def test_session_and_agent_keep_native_mode_and_raise_other_errors(
    status: int, body: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with ScriptedServer([ErrorReply(status=status, body=body)] * 3) as server:
        async with server.connect("openai:m", max_retries=0) as client:
            session = client.session(tools=[clock], tool_mode="auto")
            with pytest.raises(BadRequestError) as raised:
                await session.send("time?")
            streamed = client.session(tools=[clock], tool_mode="auto")
            with pytest.raises(BadRequestError):
                [e async for e in streamed.send_streaming("time?")]
            agent = Agent(client, [clock], tool_mode="auto")
            with pytest.raises(BadRequestError):
                await agent.run("time?")
    assert raised.value.status == status and raised.value.body == body
    assert (session.tool_mode, streamed.tool_mode, agent.tool_mode) == ("auto", "auto", "auto")
    assert ["tools" in r.body for r in server.requests] == [True, True, True]
    assert session.messages == [] and streamed.messages == []
    assert _warnings(caplog) == []


@pytest.mark.parametrize("body", [b for _, b in REFUSED], ids=[n for n, _ in REFUSED])
async def test_session_switches_to_text_once_when_the_server_refuses_tools(
    body: Any, caplog: pytest.LogCaptureFixture
) -> None:
    script = [ErrorReply(status=400, body=body), reply(CALL_TEXT), reply("noon"), reply(CALL_TEXT)]
    with ScriptedServer(script) as server:
        async with server.connect("openai:m", max_retries=0) as client:
            session = client.session(tools=[clock], tool_mode="auto")
            with caplog.at_level(logging.WARNING, logger="toolwire.toolmodes"):
                first = await session.send_with_tools("time?", [clock])
                result = await clock.execute_raw(first.tool_calls[0].arguments, call=first.tool_calls[0])
                assert (await session.send_tool_results([result])).text == "noon"
                events = [e async for e in session.send_streaming("again?")]
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("clock", {"tz": "UTC"})]
    assert first.tool_calls[0].metadata["textcalls"]["path"] == "text"
    assert session.tool_mode == "text"
    assert ["tools" in r.body for r in server.requests] == [True, False, False, False]
    assert events[-1].response.tool_calls[0].name == "clock"  # type: ignore[union-attr]
    assert len(_warnings(caplog)) == 1
    assert "switching to text mode for this client" in _warnings(caplog)[0]


async def test_agent_switches_to_text_once_streamed_too(caplog: pytest.LogCaptureFixture) -> None:
    refusal = ErrorReply(status=400, body=REFUSED[0][1])
    with ScriptedServer([refusal, reply(CALL_TEXT), reply("It is noon.")]) as server:
        async with server.connect("openai:m", max_retries=0) as client:
            agent = Agent(client, [clock], tool_mode="auto")
            with caplog.at_level(logging.WARNING, logger="toolwire.toolmodes"):
                events = [e async for e in agent.run_stream("What time is it?")]
    result = events[-1].result  # type: ignore[union-attr]
    assert (result.text, agent.tool_mode, result.calls[0].result.value) == ("It is noon.", "text", "12:00 in UTC")
    assert ["tools" in r.body for r in server.requests] == [True, False, False]
    assert len(_warnings(caplog)) == 1


# toolwire eval

CLOCK = ToolDefinition(name="clock", description="The time.", parameters={"type": "object", "properties": {}})
CASE = BfclCase(
    "simple_0",
    "simple",
    [UserMessage(content="Time?")],
    [{"name": "clock", "parameters": {"type": "dict", "properties": {}, "required": []}}],
    [CLOCK],
    [{"clock": {}}],
)


async def test_eval_keeps_native_on_a_context_length_error_and_switches_on_a_refusal() -> None:
    with ScriptedServer([ErrorReply(status=400, body=CONTEXT_LENGTH)]) as server:
        async with server.connect("openai:m", max_retries=0) as client:
            kept = await run_case(client, CASE, "auto")
    assert (kept.correct, kept.parsed, len(server.requests)) == (False, False, 1)
    assert kept.error.startswith("BadRequestError: ") and "maximum context length" in kept.error
    script = [ErrorReply(status=400, body=REFUSED[0][1]), reply('TOOL_CALL: {"name": "clock", "args": {}}')]
    with ScriptedServer(script) as server:
        async with server.connect("openai:m", max_retries=0) as client:
            switched = await run_case(client, CASE, "auto")
    assert (switched.parsed, switched.calls) == (True, [{"clock": {}}])
    assert ["tools" in r.body for r in server.requests] == [True, False]


# a gateway route, with the official OpenAI SDK as the client

TOOLS = [{"type": "function", "function": {"name": "clock", "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture(autouse=True)
def _upstream_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "upstream-key")


def _gateway(upstream: ScriptedServer) -> Gateway:
    route = Route("auto-route", "openai:up", base_url=upstream.base_url, api_key_env=KEY_ENV, tool_mode="auto")
    return Gateway(create_app([route]))


def _ask(gateway: Gateway, stream: bool) -> Any:
    client = openai.OpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0)
    messages: Any = [{"role": "user", "content": "time?"}]
    if not stream:
        return client.chat.completions.create(model="auto-route", messages=messages, tools=TOOLS)  # type: ignore[arg-type]
    chunks = client.chat.completions.create(model="auto-route", messages=messages, tools=TOOLS, stream=True)  # type: ignore[arg-type]
    return list(chunks)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("status", "body"), [(s, b) for _, s, b in KEPT[:4]], ids=[n for n, _, _ in KEPT[:4]])
def test_gateway_auto_route_hands_other_errors_to_the_client_and_stays_native(
    status: int, body: Any, stream: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with ScriptedServer([ErrorReply(status=status, body=body), reply("fine")]) as upstream, _gateway(upstream) as gw:
        with pytest.raises(openai.APIStatusError) as raised:
            _ask(gw, stream)
        after = _ask(gw, stream=False)
    assert raised.value.status_code == status
    assert json.dumps(body["error"]["message"])[1:-1] in raised.value.message
    assert after.choices[0].message.content == "fine"
    assert ["tools" in r.body for r in upstream.requests] == [True, True]
    assert _warnings(caplog) == []


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_gateway_auto_route_switches_its_target_to_text_once(stream: bool, caplog: pytest.LogCaptureFixture) -> None:
    script = [ErrorReply(status=400, body=REFUSED[0][1]), reply(CALL_TEXT), reply(CALL_TEXT)]
    with ScriptedServer(script) as upstream, _gateway(upstream) as gw:
        with caplog.at_level(logging.WARNING, logger="toolwire.toolmodes"):
            replies = [_ask(gw, stream), _ask(gw, stream)]
    for answer in replies:
        if stream:
            calls = [c.function for chunk in answer for choice in chunk.choices for c in choice.delta.tool_calls or []]
            names, arguments = [c.name for c in calls if c.name], "".join(c.arguments or "" for c in calls)
            assert (names, json.loads(arguments)) == (["clock"], {"tz": "UTC"})
        else:
            call = answer.choices[0].message.tool_calls[0].function
            assert (call.name, json.loads(call.arguments)) == ("clock", {"tz": "UTC"})
    assert ["tools" in r.body for r in upstream.requests] == [True, False, False]
    assert len(_warnings(caplog)) == 1
    assert "gateway target openai:up" in _warnings(caplog)[0]
