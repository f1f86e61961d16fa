"""CopilotClient against the scripted fake CLI: every protocol path over real pipes and sockets."""

from __future__ import annotations

import asyncio
import logging

import pytest

from tests.copilot._fake import Fake, alive, tool_turn, until
from toolwire import AuthenticationError, ProviderError, RateLimitError, StopReason, StreamError, TimeoutError
from toolwire.agent import Agent
from toolwire.reviewers import DenyAll
from toolwire.tools import tool
from toolwire.types import (
    AssistantMessage,
    Done,
    SystemMessage,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallDelta,
    ToolDefinition,
    ToolResult,
    Usage,
    UserMessage,
)

LOOKUP = ToolDefinition(
    name="lookup",
    description="Look a key up.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)


@tool(risk="low")
def lookup(key: str) -> str:
    """Look a key up."""
    if key == "missing":
        raise KeyError(key)
    return f"value of {key}"


@tool(risk="high")
def delete(key: str) -> str:
    """Delete a key."""
    return f"deleted {key}"


async def test_text_reply_and_the_wire_format(fake: Fake) -> None:
    async with fake.client({"sends": [[{"text": "Hello there.", "chunks": ["Hel", "lo there."]}]]}) as client:
        response = await client.complete(
            [SystemMessage(content="Be brief."), UserMessage(content="hi")], tools=[LOOKUP]
        )
        assert client.cli_version == "1.0.102-fake"
    assert response.text == "Hello there."
    assert response.stop_reason == StopReason.END_TURN and response.raw_stop_reason == "session.idle"
    assert response.usage == Usage(input_tokens=10, output_tokens=5, cache_read_tokens=2)
    assert response.model == "fake-model" and response.id == "M2"
    assert fake.methods() == [
        "connect",
        "auth.getStatus",
        "session.create",
        "session.permissions.setApproveAll",
        "session.send",
        "session.destroy",
    ]
    create = fake.received("session.create")[0]["params"]
    assert create == {
        "sessionId": create["sessionId"],
        "model": "fake-model",
        "streaming": True,
        "tools": [
            {
                "name": "lookup",
                "description": "Look a key up.",
                "parameters": LOOKUP.parameters,
                "overridesBuiltInTool": True,
            }
        ],
        "availableTools": ["lookup"],
        "systemMessage": {"mode": "append", "content": "Be brief."},
    }
    assert fake.received("session.setApproveAll") == []
    assert fake.received("session.permissions.setApproveAll")[0]["params"] == {
        "sessionId": create["sessionId"],
        "enabled": True,
    }
    assert fake.received("session.send")[0]["params"] == {"sessionId": create["sessionId"], "prompt": "hi"}


async def test_agent_runs_parallel_calls_through_the_cli(fake: Fake) -> None:
    script = [
        [
            tool_turn(("c1", "lookup", {"key": "a"}), ("c2", "lookup", {"key": "missing"}), text="Checking."),
            tool_turn(("c3", "nonexistent", {})),
            {"text": "a is known, missing is not."},
        ]
    ]
    async with fake.client({"sends": script}) as client:
        result = await Agent(client, [lookup], system="Use tools.").run("What are a and missing?")
    assert result.stop_reason == "end_turn" and result.text == "a is known, missing is not."
    assert result.turns == 2
    assert [(r.call.id, r.result.kind) for r in result.calls] == [("c1", "text"), ("c2", "error")]
    assert isinstance(result.messages[2], AssistantMessage)
    assert result.messages[2].tool_calls == [
        ToolCall(id="c1", name="lookup", arguments={"key": "a"}),
        ToolCall(id="c2", name="lookup", arguments={"key": "missing"}),
    ]
    saw = fake.model_saw()
    assert saw[0] == ("c1", "value of a", "success")
    assert saw[1][0] == "c2" and saw[1][2] == "failure" and "KeyError" in saw[1][1]
    # A tool the session never registered is settled by the CLI itself; the agent never saw it.
    assert saw[2][0] == "c3" and saw[2][2] == "denied"
    answers = [f["params"] for f in fake.received("session.tools.handlePendingToolCall")]
    assert [a["result"]["resultType"] for a in answers] == ["success", "failure"]
    assert answers[1]["result"]["textResultForLlm"] == answers[1]["result"]["error"] == result.calls[1].result.value
    assert len(fake.received("session.create")) == 1 and len(fake.received("session.send")) == 1


async def test_reviewer_rejection_goes_back_as_rejected(fake: Fake) -> None:
    script = [[tool_turn(("d1", "delete", {"key": "x"})), {"text": "Not allowed, fine."}]]
    async with fake.client({"sends": script}) as client:
        result = await Agent(client, [delete], reviewer=DenyAll()).run("delete x")
    assert result.text == "Not allowed, fine." and result.calls[0].approved is False
    (saw,) = fake.model_saw()
    assert saw[2] == "failure" and saw[1].startswith("The call was rejected by the reviewer")


async def test_stream_yields_deltas_then_calls_then_done(fake: Fake) -> None:
    script = [
        [
            tool_turn(("c1", "lookup", {"key": "a"}), text="Let me look."),
            {"text": "Found it.", "chunks": ["Fou", "nd it."]},
        ]
    ]
    async with fake.client({"sends": script}) as client:
        first = [e async for e in client.stream("find a", tools=[LOOKUP])]
        assert first[:-1] == [
            TextDelta("Let "),
            TextDelta("me l"),
            TextDelta("ook."),
            ToolCallDelta(0, "c1", "lookup", '{"key":"a"}'),
        ]
        done = first[-1]
        assert isinstance(done, Done) and done.response.stop_reason == StopReason.TOOL_USE
        history = [UserMessage(content="find a"), done.response.message]
        history.append(ToolResult.text(done.response.tool_calls[0], "a=1"))
        second = [e async for e in client.stream(history, tools=[LOOKUP])]
    assert second[:-1] == [TextDelta("Fou"), TextDelta("nd it.")]
    assert isinstance(second[-1], Done) and second[-1].response.text == "Found it."
    assert fake.model_saw() == [("c1", "a=1", "success")]


async def test_session_shape_and_one_cli_session_per_conversation(fake: Fake) -> None:
    script = [
        [tool_turn(("c1", "lookup", {"key": "a"})), {"text": "a=1"}],
        [{"text": "Second answer."}],
    ]
    async with fake.client({"sends": script}) as client:
        session = client.session(system="sys")
        response = await session.send_with_tools("look a up", [LOOKUP])
        assert response.stop_reason == StopReason.TOOL_USE and response.tool_calls[0].id == "c1"
        final = await session.send_tool_results([ToolResult.data(response.tool_calls[0], {"a": 1})])
        assert final.text == "a=1" and final.stop_reason == StopReason.END_TURN
        assert await session.send("and now?") == "Second answer."
    assert fake.model_saw() == [("c1", '{"a":1}', "success")]
    # The tool set changed (send() offers the session's own, empty, tools): a new CLI session
    # that gets the earlier turns replayed as a transcript.
    creates = fake.received("session.create")
    assert [c["params"]["availableTools"] for c in creates] == [["lookup"], []]
    prompt = fake.received("session.send")[1]["params"]["prompt"]
    assert prompt.startswith("Earlier conversation (replayed as a transcript):\n\n[user] look a up\n")
    assert '[tool result lookup c1] {"a":1}' in prompt and prompt.endswith("Now: and now?")


async def test_follow_up_text_reuses_the_cli_session(fake: Fake) -> None:
    async with fake.client({"sends": [[{"text": "One."}], [{"text": "Two."}]]}) as client:
        first = await client.complete("1")
        second = await client.complete([UserMessage(content="1"), first.message, UserMessage(content="2")])
    assert second.text == "Two."
    assert len(fake.received("session.create")) == 1
    assert [f["params"]["prompt"] for f in fake.received("session.send")] == ["1", "2"]


async def test_connect_unhandled_falls_back_to_ping(fake: Fake) -> None:
    async with fake.client({"connect": "unhandled", "sends": [[{"text": "ok"}]]}) as client:
        assert (await client.complete("hi")).text == "ok"
    assert fake.methods()[:3] == ["connect", "ping", "auth.getStatus"]


async def test_other_protocol_version_is_refused_and_the_cli_stopped(fake: Fake) -> None:
    client = fake.client({"protocol_version": 2})
    with pytest.raises(ProviderError, match="protocol version 2, toolwire needs 3"):
        await client.complete("hi")
    assert client.pid is None
    await client.aclose()


async def test_not_signed_in_fails_fast(fake: Fake) -> None:
    async with fake.client({"authenticated": False}) as client:
        with pytest.raises(AuthenticationError, match="not signed in \\('Not authenticated'\\)"):
            await client.complete("hi")
    assert "session.create" not in fake.methods()


async def test_auth_error_event_then_idle_is_an_authentication_error(fake: Fake) -> None:
    error = {
        "errorType": "query",
        "message": "Execution failed: InvalidArg, No GitHub OAuth token or Copilot HMAC key provided",
    }
    async with fake.client({"sends": [[{"error": error}]]}, check_auth=False) as client:
        with pytest.raises(AuthenticationError, match="No GitHub OAuth token") as caught:
            await client.complete("hi")
    assert caught.value.provider == "copilot" and caught.value.body == error


async def test_upstream_rate_limit_is_typed(fake: Fake) -> None:
    error = {"errorType": "rate_limit", "message": "Too many requests", "statusCode": 429}
    async with fake.client({"sends": [[{"text": "partial"}, {"error": error}]]}) as client:
        with pytest.raises(RateLimitError) as caught:
            await client.complete("hi")
    assert caught.value.status == 429
    assert fake.methods()[-2:] == ["session.abort", "session.destroy"]


async def test_exit_mid_turn_raises_with_stderr_and_answers_nothing_forever(fake: Fake) -> None:
    script = [[tool_turn(("c1", "lookup", {"key": "a"})), {"exit": 3, "stderr": "fatal: model crashed"}]]
    async with fake.client({"sends": script}) as client:
        response = await client.complete("go", tools=[LOOKUP])
        pid = client.pid
        assert pid is not None
        history = [UserMessage(content="go"), response.message, ToolResult.text(response.tool_calls[0], "a")]
        with pytest.raises(StreamError, match="exit code 3") as caught:
            await client.complete(history, tools=[LOOKUP])
        assert "fatal: model crashed" in str(caught.value)
    assert not alive(pid)


async def test_never_idle_times_out_and_aborts(fake: Fake) -> None:
    # The limit also bounds each request: it must outlast the fake CLI's answers on a loaded machine.
    async with fake.client({"sends": [[{"text": "thinking"}, {"hang": True}]]}, timeout=2) as client:
        with pytest.raises(TimeoutError, match=r"no event for 2 s"):
            await client.complete("hi")
        assert client.pid is not None
    assert fake.methods()[-2:] == ["session.abort", "session.destroy"]
    assert fake.sent_events()[-3:] == ["assistant.idle", "session.idle", "session.shutdown"]


async def test_cancellation_aborts_the_cli_turn(fake: Fake) -> None:
    async with fake.client({"sends": [[{"hang": True}], [{"text": "fresh"}]]}) as client:
        turn = asyncio.create_task(client.complete("hi"))
        await until(lambda: "session.send" in fake.methods())  # cancel mid-turn, not while starting
        turn.cancel()
        with pytest.raises(asyncio.CancelledError):
            await turn
        assert (await client.complete("again")).text == "fresh"
    methods = fake.methods()
    assert methods.index("session.abort") < methods.index("session.destroy") < len(methods) - 1


async def test_garbage_frames_are_a_stream_error(fake: Fake) -> None:
    async with fake.client({"sends": [[{"garbage": "Hello world\r\n\r\n"}]]}) as client:
        with pytest.raises(StreamError, match="not a JSON-RPC frame"):
            await client.complete("hi")


async def test_unknown_response_id_and_cli_requests_are_handled(fake: Fake, caplog: pytest.LogCaptureFixture) -> None:
    steps = [
        {"respond_unknown_id": True},
        {"request": {"method": "tool.call", "params": {"toolName": "lookup"}}},
        {"request": {"method": "ui.prompt", "params": {}}},
        {"text": "still fine"},
    ]
    with caplog.at_level(logging.WARNING, "toolwire.copilot"):
        async with fake.client({"sends": [steps]}) as client:
            assert (await client.complete("hi")).text == "still fine"
    assert "unknown request id 987654" in caplog.text
    replies = [f for f in fake.received() if "method" not in f]
    assert replies[0]["result"]["result"]["resultType"] == "failure"
    assert replies[1]["error"] == {"code": -32601, "message": "Unhandled method ui.prompt"}


async def test_dropped_pipe_between_turns_then_restart(fake: Fake) -> None:
    import os
    import signal

    async with fake.client({"sends": [[tool_turn(("c1", "lookup", {"key": "a"}))], [{"text": "new"}]]}) as client:
        response = await client.complete("go", tools=[LOOKUP])
        first_pid = client.pid
        assert first_pid is not None
        os.kill(first_pid, signal.SIGKILL)
        history = [UserMessage(content="go"), response.message, ToolResult.text(response.tool_calls[0], "a")]
        with pytest.raises(StreamError, match="exit code -9"):
            await client.complete(history, tools=[LOOKUP])
        # The next call starts a fresh CLI (the script restarts with it).
        again = await client.complete("go", tools=[LOOKUP])
        assert client.pid not in (None, first_pid)
    assert again.tool_calls[0].id == "c1"


async def test_permission_modes(fake: Fake) -> None:
    script = [[tool_turn(("c1", "lookup", {"key": "a"})), {"text": "done"}]]
    async with fake.client({"sends": script}, permission_mode="request") as client:
        result = await Agent(client, [lookup]).run("go")
    assert result.text == "done" and fake.model_saw() == [("c1", "value of a", "success")]
    answer = fake.received("session.permissions.handlePendingPermissionRequest")[0]["params"]
    assert answer["result"] == {"kind": "approve-once"}
    assert fake.received("session.create")[0]["params"]["requestPermission"] is True
    assert "session.permissions.setApproveAll" not in fake.methods()


async def test_permission_mode_skip_and_none(fake: Fake) -> None:
    script = [[tool_turn(("c1", "lookup", {"key": "a"})), {"text": "done"}]]
    async with fake.client({"sends": script}, permission_mode="skip") as client:
        assert (await Agent(client, [lookup]).run("go")).text == "done"
    assert fake.received("session.create")[0]["params"]["tools"][0]["skipPermission"] is True
    fake.transcript_path.unlink()
    async with fake.client({"sends": script}, permission_mode="none") as client:
        result = await Agent(client, [lookup]).run("go")
    # The CLI's gate denies the call before toolwire sees it; the CLI's loop goes on alone.
    assert result.text == "done" and result.calls == []
    assert fake.model_saw()[0][2] == "denied"


async def test_tcp_transport_and_early_events(fake: Fake) -> None:
    scenario = {"early_events": True, "sends": [[tool_turn(("c1", "lookup", {"key": "a"})), {"text": "tcp ok"}]]}
    async with fake.client(scenario, transport="tcp") as client:
        result = await Agent(client, [lookup]).run("go")
    assert result.text == "tcp ok"


async def test_tcp_port_line_never_printed_times_out(fake: Fake) -> None:
    client = fake.client({"port_line": False}, transport="tcp", startup_timeout=0.5)
    with pytest.raises(TimeoutError, match=r"no 'listening on port' line within 0\.5 s"):
        await client.complete("hi")
    await client.aclose()


async def test_missing_results_are_answered_as_failures(fake: Fake) -> None:
    script = [[tool_turn(("c1", "lookup", {"key": "a"}), ("c2", "lookup", {"key": "b"})), {"text": "ok"}]]
    async with fake.client({"sends": script}) as client:
        response = await client.complete("go", tools=[LOOKUP])
        history = [UserMessage(content="go"), response.message, ToolResult.text(response.tool_calls[1], "b")]
        assert (await client.complete(history, tools=[LOOKUP])).text == "ok"
    assert fake.model_saw() == [("c1", "No result was given for this call.", "failure"), ("c2", "b", "success")]


async def test_close_while_calls_are_pending_answers_them(fake: Fake) -> None:
    async with fake.client({"sends": [[tool_turn(("c1", "lookup", {"key": "a"})), {"text": "never"}]]}) as client:
        await client.complete("go", tools=[LOOKUP])
    assert fake.model_saw() == [("c1", "The conversation was stopped.", "failure")]
    assert fake.methods()[-3:] == ["session.tools.handlePendingToolCall", "session.abort", "session.destroy"]


def test_sync_twins_and_close_kill_the_process(fake: Fake) -> None:
    client = fake.client({"sends": [[{"text": "sync ok"}]]})
    assert client.complete_sync("hi").text == "sync ok"
    pid = client.pid
    assert pid is not None and alive(pid)
    client.close()
    assert not alive(pid) and client.pid is None


def test_child_dies_at_interpreter_exit(fake: Fake) -> None:
    import subprocess
    import sys
    import time

    code = (
        "import asyncio, sys; sys.path.insert(0, '.')\n"
        "from pathlib import Path\n"
        "from tests.copilot._fake import Fake\n"
        f"client = Fake(Path({str(fake.folder)!r})).client({{'sends': [[{{'text': 'x'}}]]}})\n"
        "async def main():\n"
        "    await client.complete('hi')\n"
        "    print(client.pid, flush=True)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    pid = int(out.stdout.strip())
    deadline = time.monotonic() + 30  # the loop ends as soon as it is gone; the bound is for a loaded machine
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


async def test_unsupported_parameters_warn_once(fake: Fake, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "toolwire.copilot"):
        async with fake.client({"sends": [[{"text": "a"}], [{"text": "b"}]]}) as client:
            await client.complete("x", temperature=0.2)
            await client.complete("y", temperature=0.2)
    assert caplog.text.count("no temperature setting") == 1


async def test_assistant_history_from_elsewhere_is_replayed(fake: Fake) -> None:
    history = [
        UserMessage(content="hi"),
        AssistantMessage(parts=[TextPart(text="hello"), ToolCall(id="x1", name="lookup", arguments={"key": "k"})]),
        ToolResult.error(ToolCall(id="x1", name="lookup"), "boom"),
        UserMessage(content="again"),
    ]
    async with fake.client({"sends": [[{"text": "ok"}]]}) as client:
        assert (await client.complete(history, tools=[LOOKUP])).text == "ok"
    prompt = fake.received("session.send")[0]["params"]["prompt"]
    assert prompt == (
        "Earlier conversation (replayed as a transcript):\n\n"
        "[user] hi\n"
        '[assistant] hello [called lookup x1 with {"key":"k"}]\n'
        "[tool result lookup x1] boom\n\n"
        "Now: again"
    )


async def test_toolwire_connect_dispatches_copilot_targets(fake: Fake) -> None:
    import toolwire
    from tests.copilot._fake import FAKE_CLI

    env = fake.scenario(sends=[[{"text": "Hi from the CLI."}]])
    async with toolwire.connect("copilot:fake-model", cli_path=FAKE_CLI, env=env, startup_timeout=10.0) as client:
        assert (await client.complete([UserMessage(content="hi")])).text == "Hi from the CLI."
    with pytest.raises(ValueError, match=r"No model in 'copilot:'; write 'copilot:<model>'"):
        toolwire.connect("copilot:")
