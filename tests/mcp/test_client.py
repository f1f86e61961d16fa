"""`toolwire.mcp.MCPServer` driven by the agent over the scripted model, against MCP servers toolwire did not write.

The npm reference servers (`@modelcontextprotocol/server-filesystem`, `server-everything`), the PyPI
`mcp-server-time`, and a probe server on the official SDK for cancellation and list changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from toolwire import Request, ToolCall, ToolResult, UserMessage
from toolwire.agent import Agent, RunFinished, RunResult, ToolFinished, ToolStarted
from toolwire.codecs import CODEC_NAMES, get_codec
from toolwire.mcp import MCPServer, MCPServerError, open_servers
from toolwire.reviewers import AutoApprove, ReviewDecision, ReviewedTool
from toolwire.testing import ScriptedModel, reply


class Recorder:
    """Approves every call and remembers which ones it was asked about."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def review(self, call: ToolCall, tool: ReviewedTool) -> ReviewDecision:
        self.asked.append(f"{call.name}:{tool.risk}")
        return ReviewDecision(approved=True, reason="ok")


def call(name: str, i: int, **arguments: object) -> ToolCall:
    return ToolCall(id=f"c{i}", name=name, arguments=dict(arguments))


async def run_with_events(agent: Agent, prompt: str) -> tuple[RunResult, list[str]]:
    events: list[str] = []
    async for event in agent.run_stream(prompt):
        if isinstance(event, ToolStarted):
            events.append(f"start {event.call.id}")
        elif isinstance(event, ToolFinished):
            events.append(f"finish {event.call.id}")
        elif isinstance(event, RunFinished):
            return event.result, events
    raise AssertionError("no RunFinished")


def results(result: RunResult) -> dict[str, ToolResult]:
    return {m.tool_call_id: m for m in result.messages if isinstance(m, ToolResult)}


async def test_npm_and_pypi_servers_in_one_turn_with_risk_from_their_annotations(
    tmp_path: Path, filesystem_server: str, time_server: str
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    target = tmp_path / "out.txt"
    calls = [
        call("read_text_file", 0, path=str(tmp_path / "a.txt")),
        call("get_current_time", 1, timezone="Etc/UTC"),
        call("write_file", 2, path=str(target), content="written by the agent"),
        call("read_text_file", 3, path=str(tmp_path / "b.txt")),
    ]
    model = ScriptedModel([reply("working", calls), reply("all done")])
    servers = [MCPServer.stdio(filesystem_server, [str(tmp_path)], name="fs"), MCPServer.stdio(time_server)]
    reviewer = Recorder()
    async with open_servers(servers) as group:
        risks = {t.name: t.risk for t in group.tools}
        result, events = await run_with_events(Agent(model, group.tools, reviewer=reviewer), "go")

    assert (risks["read_text_file"], risks["get_current_time"], risks["write_file"]) == ("low", "low", "high")
    assert (risks["list_directory"], risks["move_file"], risks["convert_time"]) == ("low", "high", "low")
    assert reviewer.asked == ["write_file:high"]
    # The three read-only calls (two servers) all started before any of them finished; the write ran last.
    assert events[:3] == ["start c0", "start c1", "start c3"]
    assert events[-2:] == ["start c2", "finish c2"]
    got = results(result)
    # The filesystem server sends structuredContent next to the text: it wins, as data.
    assert [got[f"c{i}"].kind for i in range(4)] == ["data", "data", "data", "data"]
    assert (got["c0"].value, got["c3"].value) == ({"content": "alpha\n"}, {"content": "beta\n"})
    assert got["c1"].value["timezone"] == "Etc/UTC"
    assert target.read_text() == "written by the agent"
    assert result.text == "all done" and [r.approved for r in result.calls] == [True, True, True, True]


async def test_is_error_image_structured_and_resource_results_map_to_their_kinds(
    tmp_path: Path, filesystem_server: str, everything_server: str
) -> None:
    calls = [
        call("read_text_file", 0, path="/etc/hostname"),
        call("get-tiny-image", 1),
        call("get-structured-content", 2, location="Chicago"),
        call("get-resource-links", 3, count=1),
        call("get-resource-reference", 4, resourceType="Text", resourceId=2),
        call("toggle-simulated-logging", 5),
    ]
    model = ScriptedModel([reply("", calls), reply("seen")])
    servers = [MCPServer.stdio(filesystem_server, [str(tmp_path)]), MCPServer.stdio(everything_server)]
    reviewer = Recorder()
    async with open_servers(servers) as group:
        result, events = await run_with_events(Agent(model, group.tools, reviewer=reviewer), "go")
        definitions = [tool.definition for tool in group.tools]

    # server-everything's read-only tools ran together; its one tool without readOnlyHint was reviewed, last.
    assert sorted(events[:5]) == [f"start c{i}" for i in range(5)]
    assert events[-2:] == ["start c5", "finish c5"] and reviewer.asked == ["toggle-simulated-logging:high"]

    # Their schemas go through toolwire.schema like any tool's: every codec encodes all 27 tools.
    for name in CODEC_NAMES:
        body = get_codec(name).encode_request(
            Request(model="m", messages=[UserMessage(content="hi")], tools=definitions)
        )
        assert len(json.dumps(body)) > 1000
    gemini = get_codec("gemini").encode_request(Request(model="m", messages=[], tools=definitions))
    declared = gemini["tools"][0]["functionDeclarations"]
    assert len(declared) == len(definitions) == 27
    assert all("$schema" not in json.dumps(d) and "additionalProperties" not in json.dumps(d) for d in declared)
    strict = [dataclasses.replace(d, strict=True) for d in definitions]
    openai = get_codec("openai").encode_request(Request(model="m", messages=[], tools=strict))
    for tool in openai["tools"]:
        parameters = tool["function"]["parameters"]
        assert parameters["additionalProperties"] is False
        assert sorted(parameters["required"]) == sorted(parameters["properties"])

    got = results(result)
    assert got["c0"].kind == "error"
    assert got["c0"].value.startswith("Access denied - path outside allowed directories: /etc/hostname")
    assert got["c1"].kind == "multimodal"
    text, image, caption = got["c1"].value
    assert (text.text, caption.text) == ("Here's the image you requested:", "The image above is the MCP logo.")
    assert image.media_type == "image/png" and image.data is not None and image.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert got["c2"].kind == "data" and set(got["c2"].value) == {"temperature", "conditions", "humidity"}
    assert got["c3"].kind == "text" and "[resource demo://resource/dynamic/" in got["c3"].value
    assert got["c4"].kind == "text" and "[resource demo://resource/dynamic/text/2 (text/plain)]" in got["c4"].value
    assert got["c5"].kind == "text" and "logging" in got["c5"].value.lower()


async def test_a_server_killed_mid_run_becomes_an_error_result_and_the_run_goes_on(
    tmp_path: Path, everything_server: str, time_server: str
) -> None:
    pid_file = tmp_path / "pid"
    script = f'echo $$ > "{pid_file}"; exec "{everything_server}"'
    doomed = MCPServer.stdio("sh", ["-c", script], name="every")
    calls = [
        call("trigger-long-running-operation", 0, duration=120, steps=2),
        call("get_current_time", 1, timezone="UTC"),
    ]
    model = ScriptedModel([reply("", calls), reply("", [call("echo", 2, message="hi")]), reply("carried on")])
    async with open_servers([doomed, MCPServer.stdio(time_server)]) as group:
        agent = Agent(model, group.tools, reviewer=AutoApprove())  # the server's tools are not read-only
        async for event in agent.run_stream("go"):
            if isinstance(event, ToolStarted) and event.call.id == "c0":
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            if isinstance(event, RunFinished):
                result = event.result

    got = results(result)
    assert got["c0"].kind == "error" and got["c0"].value.startswith("MCP server 'every' (sh -c ")
    assert "tool 'trigger-long-running-operation'" in got["c0"].value
    assert got["c1"].kind == "data" and got["c1"].value["timezone"] == "UTC"
    assert got["c2"].kind == "error" and got["c2"].value.startswith("MCP server 'every' (sh -c ")
    assert result.text == "carried on" and result.stop_reason == "end_turn"


async def test_a_call_past_its_timeout_is_an_error_naming_the_server_and_the_server_hears_the_cancel(
    tmp_path: Path, probe_server: list[str]
) -> None:
    log = tmp_path / "probe.log"
    server = MCPServer.stdio(probe_server[0], probe_server[1:], env={"PROBE_LOG": str(log)}, name="probe", timeout=1)
    model = ScriptedModel([reply("", [call("wait", 0, tag="t")]), reply("gave up")])
    async with server:
        result = await Agent(model, server.tools, reviewer=AutoApprove()).run("go")
        # On a busy machine the cancellation may reach the server before the call started there;
        # a call that did start must hear it (the next test shows that without a timer).
        for _ in range(600):
            if log.exists() and "cancelled t" in log.read_text():
                break
            await asyncio.sleep(0.05)

    assert results(result)["c0"].kind == "error"
    assert results(result)["c0"].value.startswith("MCP server 'probe' (")
    assert "did not answer tool 'wait' within 1 s; the call was cancelled" in results(result)["c0"].value
    assert (log.read_text().splitlines() if log.exists() else []) in ([], ["started t", "cancelled t"])


async def test_cancelling_a_run_sends_the_cancellation_to_the_server(tmp_path: Path, probe_server: list[str]) -> None:
    log = tmp_path / "probe.log"
    server = MCPServer.stdio(probe_server[0], probe_server[1:], env={"PROBE_LOG": str(log)})
    async with server:
        agent = Agent(ScriptedModel([reply("", [call("wait", 0, tag="x")])]), server.tools, reviewer=AutoApprove())
        task = asyncio.create_task(agent.run("go"))
        for _ in range(600):
            if log.exists() and "started x" in log.read_text():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(600):
            if "cancelled x" in log.read_text():
                break
            await asyncio.sleep(0.05)
    assert log.read_text().splitlines() == ["started x", "cancelled x"]


async def test_list_changed_refreshes_the_tools(probe_server: list[str]) -> None:
    async with MCPServer.stdio(probe_server[0], probe_server[1:]) as server:
        assert [(t.name, t.risk) for t in server.tools] == [("wait", "low"), ("add_tool", "high")]
        add = server.tools[1]
        assert (await add.execute_raw({"name": "extra"})).value == {"result": "added extra"}
        for _ in range(600):
            if len(server.tools) == 3:
                break
            await asyncio.sleep(0.05)
        assert [(t.name, t.risk) for t in server.tools] == [("wait", "low"), ("add_tool", "high"), ("extra", "low")]
        assert (await server.tools[2].execute_raw({})).value == {"result": "extra ran"}


async def test_names_clashing_across_servers_or_with_reserved_names_get_the_server_prefix(
    tmp_path: Path, filesystem_server: str, time_server: str
) -> None:
    (tmp_path / "n.txt").write_text("x")
    servers = [
        MCPServer.stdio(filesystem_server, [str(tmp_path)], name="fs"),
        MCPServer.stdio(filesystem_server, [str(tmp_path)], name="docs"),
        MCPServer.stdio(time_server),
    ]
    async with open_servers(servers, reserved={"get_current_time"}) as group:
        names = [t.name for t in group.tools]
        by_name = {t.name: t for t in group.tools}
        read = await by_name["docs__read_text_file"].execute_raw({"path": str(tmp_path / "n.txt")})
    assert names[:2] == ["fs__read_file", "fs__read_text_file"]
    assert "docs__write_file" in names and "read_file" not in names
    assert "mcp-time__get_current_time" in names and "convert_time" in names
    assert read.kind == "data" and read.value == {"content": "x"}


async def test_a_server_that_fails_to_start_names_the_command_and_its_stderr(tmp_path: Path) -> None:
    with pytest.raises(MCPServerError) as missing:
        async with MCPServer.stdio(str(tmp_path / "no-such-server")):
            pass
    command = tmp_path / "no-such-server"
    assert str(missing.value) == f"The MCP server '{command}' failed to start: the command was not found."
    with pytest.raises(MCPServerError) as crashed:
        async with MCPServer.stdio("sh", ["-c", "echo first line >&2; echo missing API key >&2; exit 3"]):
            pass
    with pytest.raises(MCPServerError) as unreachable:
        async with MCPServer.http("http://127.0.0.1:9/mcp"):
            pass
    assert str(unreachable.value).startswith("The MCP server 'http://127.0.0.1:9/mcp' failed to start: ")
    message = str(crashed.value)
    assert message.startswith("The MCP server \"sh -c 'echo first line >&2; echo missing API key >&2; exit 3'\" failed")
    assert message.endswith("(its stderr ended with: first line missing API key).")


async def test_a_python_server_runs_under_the_current_interpreter_too(time_server: str) -> None:
    async with MCPServer.stdio(sys.executable, ["-m", "mcp_server_time"]) as server:
        assert [t.name for t in server.tools] == ["get_current_time", "convert_time"]
        assert server.name == "mcp-time"


async def test_streamable_http_server_everything_through_the_agent(everything_server: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [everything_server, "streamableHttp"],
        env=os.environ | {"PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    drain = threading.Thread(target=process.stderr.read, daemon=True)
    try:
        for line in process.stderr:  # the server says when it listens
            if f"listening on port {port}" in line:
                break
        drain.start()  # the server goes on writing to stderr; a full pipe would block it
        calls = [
            call("echo", 0, message="over http"),
            call("get-tiny-image", 1),
            call("get-sum", 2, a=2, b=3),
        ]
        model = ScriptedModel([reply("", calls), reply("done")])
        async with MCPServer.http(f"http://127.0.0.1:{port}/mcp", {"X-Client": "toolwire-test"}) as server:
            assert server.name == "mcp-servers_everything"
            result = await Agent(model, server.tools, reviewer=AutoApprove()).run("go")
    finally:
        process.terminate()
        process.wait(timeout=30)
        if drain.is_alive():
            drain.join(timeout=30)
        process.stderr.close()
    got = results(result)
    assert (got["c0"].kind, got["c0"].value) == ("text", "Echo: over http")
    assert got["c1"].kind == "multimodal" and got["c1"].value[1].media_type == "image/png"
    assert (got["c2"].kind, got["c2"].value) == ("text", "The sum of 2 and 3 is 5.")
