"""One contract test suite for every kind of client: the HTTP client over each wire protocol, the
scripted model, the Copilot CLI client (against the fake CLI), the offline scripted model from
`connect("scripted:...")`, and a model a user writes by subclassing `BaseClient`.

Each kind is driven by the same script: conversations of turns, a turn being text or one tool call.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import toolwire
from tests.copilot._fake import Fake, tool_turn
from toolwire import toolmodes
from toolwire.agent import Agent
from toolwire.client import BaseClient, connect_http
from toolwire.contract import ModelClient
from toolwire.reviewers import QuorumReviewer
from toolwire.schema import SchemaSupport
from toolwire.testing import ScriptedModel, ScriptedServer, reply
from toolwire.tools import tool
from toolwire.types import (
    Done,
    Request,
    Response,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolResult,
)

Turn = tuple[str, Any]  # ("text", "...") or ("call", (id, name, arguments))
Script = list[list[Turn]]  # conversations, each the turns that answer one prompt


@tool(risk="low")
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


class UserModel(BaseClient):
    """A model a user writes: `complete_request` and `stream_request`, over whatever they like."""

    def __init__(self, replies: list[Response]) -> None:
        super().__init__()
        self.provider, self.model = "mine", "mine-1"
        self.replies = deque(replies)

    async def complete_request(self, request: Request) -> Response:
        return self.replies.popleft()

    async def stream_request(self, request: Request) -> AsyncIterator[StreamEvent]:
        response = self.replies.popleft()
        if response.text:
            yield TextDelta(response.text)
        for index, call in enumerate(response.tool_calls):
            yield ToolCallDelta(index, call.id, call.name, json.dumps(call.arguments))
        yield Done(response)


def _response(turn: Turn) -> Response:
    kind, value = turn
    if kind == "text":
        return reply(value)
    call_id, name, arguments = value
    return reply("", [ToolCall(id=call_id, name=name, arguments=arguments)])


def _copilot_turn(turn: Turn) -> dict[str, Any]:
    kind, value = turn
    return {"text": value} if kind == "text" else tool_turn(value)


HTTP_WIRES = ["openai", "openai-responses", "anthropic", "gemini", "ollama"]
KINDS = [*(f"http-{wire}" for wire in HTTP_WIRES), "scripted-model", "copilot", "user-model"]


@contextmanager
def opened(kind: str, script: Script, folder: Path) -> Iterator[BaseClient]:
    """A client of `kind` that answers `script`."""
    flat = [_response(turn) for conversation in script for turn in conversation]
    if kind.startswith("http-"):
        with ScriptedServer(flat) as server:
            yield server.connect(f"{kind.removeprefix('http-')}:m-1", max_retries=0)
    elif kind == "scripted-model":
        yield ScriptedModel(flat)
    elif kind == "user-model":
        yield UserModel(flat)
    else:
        sends = [[_copilot_turn(turn) for turn in conversation] for conversation in script]
        yield Fake(folder).client({"sends": sends})


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_every_kind_is_a_model_client(kind: str, tmp_path: Path) -> None:
    with opened(kind, [[("text", "unused")]], tmp_path) as client:
        async with client:
            assert isinstance(client, ModelClient)
            assert isinstance(client.provider, str) and isinstance(client.model, str)
            assert isinstance(client.schema_support, SchemaSupport)
            request = client.build_request("hi", tools=[lookup], tool_choice="lookup", max_tokens=7)
            assert (request.model, request.max_tokens, request.tool_choice) == (
                client.model,
                7,
                toolwire.NamedToolChoice("lookup"),
            )
            assert [t.name for t in request.tools] == ["lookup"]


async def test_whole_streamed_and_request_calls_give_the_same_reply(kind: str, tmp_path: Path) -> None:
    script: Script = [[("text", "Hello there.")]] * 3
    with opened(kind, script, tmp_path) as client:
        async with client:
            whole = await client.complete("hi")
            events = [event async for event in client.stream("hi")]
            direct = await client.complete_request(client.build_request("hi"))
    assert whole.text == direct.text == "Hello there."
    assert [type(e) for e in events].count(Done) == 1 and isinstance(events[-1], Done)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there."
    assert events[-1].response.text == "Hello there."


def test_sync_twins(kind: str, tmp_path: Path) -> None:
    with opened(kind, [[("text", "Hello there.")]] * 2, tmp_path) as client, client:
        assert client.complete_sync("hi").text == "Hello there."
        events = list(client.stream_sync("hi"))
    assert isinstance(events[-1], Done) and events[-1].response.text == "Hello there."


async def test_a_session_takes_every_kind(kind: str, tmp_path: Path) -> None:
    script: Script = [[("call", ("c1", "lookup", {"key": "a"})), ("text", "a is 1.")]]
    with opened(kind, script, tmp_path) as client:
        async with client:
            session = client.session(tools=[lookup])
            first = await session.send_with_tools("look a up", [lookup])
            (call,) = first.tool_calls
            final = await session.send_tool_results([ToolResult.text(call, "1")])
    assert (call.id, call.name, call.arguments) == ("c1", "lookup", {"key": "a"})
    assert final.text == "a is 1." and session.pending_calls == []


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
async def test_the_agent_takes_every_kind(kind: str, stream: bool, tmp_path: Path) -> None:
    script: Script = [[("call", ("c1", "lookup", {"key": "a"})), ("text", "a is known.")]]
    with opened(kind, script, tmp_path) as client:
        async with client:
            agent = Agent(client, [lookup])
            if stream:
                result = [e async for e in agent.run_stream("what is a?")][-1].result  # type: ignore[union-attr]
            else:
                result = await agent.run("what is a?")
    assert (result.text, result.turns, result.stop_reason) == ("a is known.", 2, "end_turn")
    assert [r.result.value for r in result.calls] == ["value of a"]


async def test_text_mode_reads_written_calls_from_every_kind(kind: str, tmp_path: Path) -> None:
    script: Script = [[("text", 'TOOL_CALL: {"name": "lookup", "args": {"key": "b"}}')]] * 2
    with opened(kind, script, tmp_path) as client:
        async with client:
            request = client.build_request("look b up", tools=[lookup])
            whole = await toolmodes.complete(client, request, toolmodes.ModeState("text"))
            streamed = [e async for e in toolmodes.stream(client, request, toolmodes.ModeState("text"))]
    for response in (whole, streamed[-1].response):  # type: ignore[union-attr]
        assert [(c.name, c.arguments) for c in response.tool_calls] == [("lookup", {"key": "b"})]


async def test_a_quorum_votes_with_every_kind(kind: str, tmp_path: Path) -> None:
    script: Script = [[("call", ("v1", "vote", {"approve": True, "reason": "safe"}))]]
    with opened(kind, script, tmp_path) as client:
        async with client:
            decision = await QuorumReviewer([client]).review(ToolCall(id="x", name="lookup", arguments={}), lookup)
    assert decision.approved is True and decision.votes[0].reason == "safe"


async def test_connect_scripted_starts_the_offline_model_and_stops_it_on_close() -> None:
    client = toolwire.connect("scripted:demo")
    async with client:
        assert isinstance(client, ModelClient) and client.model == "demo"
        said = await client.complete("hi")
        events = [e async for e in client.stream("hi")]
        url = client.url
    assert said.text == "Hello from the offline scripted model (no model, no key). You said: 'hi'"
    assert isinstance(events[-1], Done) and events[-1].response.text == said.text
    base_url = url.removesuffix("/chat/completions")
    async with connect_http("openai:x", base_url=base_url, api_key="k", max_retries=0) as again:
        with pytest.raises(toolwire.ToolwireError, match=r"cannot connect|refused"):  # stopped with the client
            await again.complete("hi")
    with pytest.raises(ValueError, match="offline scripted model, served in-process: base_url does not apply"):
        toolwire.connect("scripted:demo", base_url="http://localhost:1/v1")
