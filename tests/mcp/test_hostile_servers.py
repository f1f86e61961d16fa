"""MCP against servers and clients that misbehave (issue 21.16-21.19): stalls, broken schemas, bad requests."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolwire.mcp import MCPServer, MCPServerError

RAW = str(Path(__file__).with_name("_raw_server.py"))


def raw_server(mode: str, **options: float) -> MCPServer:
    return MCPServer.stdio(sys.executable, [RAW, mode], name=f"raw-{mode}", **options)  # type: ignore[arg-type]


async def test_a_server_that_hangs_in_its_handshake_fails_after_start_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(MCPServerError) as caught:
        async with raw_server("hang", start_timeout=2):
            pass
    assert time.monotonic() - started < 50  # not the fixed 60 s
    assert str(caught.value) == (
        f"The MCP server '{sys.executable} {RAW} hang' failed to start: it did not finish the MCP handshake "
        "within 2 s; raise start_timeout= if it is only slow."
    )


async def test_one_tool_with_a_broken_input_schema_is_skipped_with_a_warning_and_the_rest_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolwire.mcp"):
        async with raw_server("schemas") as server:
            names = [tool.name for tool in server.tools]
            echoed = await server.tools[0].execute_raw({"word": "hi"})
    assert (names, echoed.value) == (["echo"], '{"word": "hi"}')
    label = f"'raw-schemas' ({sys.executable} {RAW} schemas)"
    assert [record.getMessage() for record in caplog.records] == [
        f"MCP server {label}: tool 'broken_properties' was skipped: its inputSchema is invalid "
        "(5 is not of type 'object').",
        f"MCP server {label}: tool 'broken_type' was skipped: its inputSchema is invalid "
        "('nonsense' is not valid under any of the given schemas).",
    ]


def test_mcp_server_answers_unreadable_requests_with_json_rpc_errors(tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    lines = ["{not json", '{"jsonrpc": "2.0", "id": 3}', "[1, 2]", json.dumps(initialize)]
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "mcp-server", "--root", str(tmp_path)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[:3] == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
    ]
    assert answers[3]["id"] == 1 and answers[3]["result"]["serverInfo"]["name"] == "toolwire"
