"""One rule for calls read out of a reply's text, in every tool mode, whole and streamed.

A call cut inside a string never runs (it carries an `arguments_error`); with `runnable_only`
(the gateway) a cut call or a call of a tool the request never offered comes back as text. A
reply nested deeper than any call list stays text in constrained mode, as in text and auto.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire import toolmodes
from toolwire.agent import Agent
from toolwire.testing import ScriptedModel
from toolwire.tools import tool
from toolwire.types import (
    AssistantMessage,
    Done,
    Request,
    Response,
    StopReason,
    TextPart,
    ToolCallDelta,
    ToolDefinition,
    UserMessage,
)

WRITE = ToolDefinition(
    name="write",
    description="Write a file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
)
MODES = ["text", "auto", "constrained"]
CUT_STRING = '{"name": "write", "arguments": {"path": "out.txt", "content": "line1\\nline2\\nli'
WHOLE = '{"name": "write", "arguments": {"path": "out.txt", "content": "line1"}}'
UNOFFERED = '{"name": "delete_everything", "arguments": {"path": "/"}}'


def _written(mode: str, call: str) -> str:
    """How the model writes one call in `mode` (constrained mode: as its JSON list)."""
    return (
        f"[{call}" + ("" if call.count("{") > call.count("}") else "]")
        if mode == "constrained"
        else f"TOOL_CALL: {call}"
    )


def _text(text: str, stop: StopReason = StopReason.END_TURN) -> Response:
    return Response(message=AssistantMessage(parts=[TextPart(text=text)]), stop_reason=stop)


async def _ask(mode: str, reply: Response, *, stream: bool, runnable_only: bool) -> Response:
    model = ScriptedModel([reply, "the answer"])
    request = Request(model="scripted", messages=[UserMessage(content="write it")], tools=[WRITE])
    state = toolmodes.ModeState(mode)  # type: ignore[arg-type]
    if not stream:
        return await toolmodes.complete(model, request, state, runnable_only=runnable_only)
    events = [e async for e in toolmodes.stream(model, request, state, runnable_only=runnable_only)]
    done = events[-1]
    assert isinstance(done, Done)
    deltas = [e for e in events if isinstance(e, ToolCallDelta) and e.id is not None]
    assert [(d.index, d.name) for d in deltas] == [(i, c.name) for i, c in enumerate(done.response.tool_calls)]
    return done.response


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", MODES)
async def test_a_call_cut_inside_a_string_is_marked_and_never_whole(mode: str, stream: bool) -> None:
    response = await _ask(mode, _text(_written(mode, CUT_STRING)), stream=stream, runnable_only=False)
    [call] = response.tool_calls
    assert call.metadata["arguments_error"].startswith("the arguments were cut off before their end")


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", MODES)
async def test_missing_closing_brackets_at_a_natural_end_stay_repaired_but_not_at_the_token_limit(
    mode: str, stream: bool
) -> None:
    unclosed = WHOLE[:-1]  # the last brace left out
    natural = await _ask(mode, _text(_written(mode, unclosed)), stream=stream, runnable_only=False)
    limit = await _ask(mode, _text(_written(mode, unclosed), StopReason.MAX_TOKENS), stream=stream, runnable_only=False)
    assert [(c.arguments, "arguments_error" in c.metadata) for c in natural.tool_calls] == [
        ({"path": "out.txt", "content": "line1"}, False)
    ]
    assert ["arguments_error" in c.metadata for c in limit.tool_calls] == [True]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", MODES)
async def test_for_a_caller_that_runs_nothing_cut_and_unoffered_calls_come_back_as_text(
    mode: str, stream: bool
) -> None:
    for written, name in ((CUT_STRING, "write"), (UNOFFERED, "delete_everything")):
        response = await _ask(mode, _text(_written(mode, written)), stream=stream, runnable_only=True)
        assert response.tool_calls == []
        assert response.stop_reason == StopReason.END_TURN
        assert f"[toolwire: a call of {name!r} was not passed on (" in response.text
    whole = await _ask(mode, _text(_written(mode, WHOLE)), stream=stream, runnable_only=True)
    assert [(c.name, c.arguments) for c in whole.tool_calls] == [("write", {"path": "out.txt", "content": "line1"})]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "reply",
    ["[" * 1_000_000, '[{"name": "write", "arguments": {"path": ' + "[" * 5000 + "]" * 5000 + "}}]"],
    ids=["1MB-of-brackets", "5000-levels-in-arguments"],
)
async def test_deep_nesting_is_text_in_every_mode(mode: str, stream: bool, reply: str) -> None:
    response = await _ask(mode, _text(reply), stream=stream, runnable_only=False)  # before: RecursionError
    assert response.tool_calls == [] or all("arguments_error" in c.metadata for c in response.tool_calls)


async def test_the_agent_never_runs_a_cut_write(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"

    @tool
    def write(path: str, content: str) -> str:
        """Write a file."""
        out.write_text(content)
        return "written"

    reply = _text(_written("constrained", CUT_STRING))
    agent = Agent(ScriptedModel([reply, "[]", "I could not write it."]), [write], tool_mode="constrained")
    result = await agent.run("write it")
    assert not out.exists()
    [record] = result.calls
    assert record.result.kind == "error"
    assert "cut off before their end" in record.result.value
