"""MCP against servers and clients that misbehave: stalls, broken schemas, bad requests."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp._raw_server import big_text
from toolwire.cache import CACHE, ToolOutputCache
from toolwire.mcp import MCPServer, MCPServerError
from toolwire.tools import ToolContext

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


async def test_a_16_mib_result_arrives_capped_and_whole_in_the_output_cache() -> None:
    size = 16 << 20
    cache = ToolOutputCache()
    async with raw_server("big") as server:
        result = await server.tools[0].execute_raw({"size": size}, ToolContext(deps={CACHE.id: cache}))
    whole = big_text(size)
    assert result.kind == "text"
    assert result.value == whole[:30_000] + (
        f"\n[result clipped: the first 30000 of {size} characters are shown; the whole result (1677722 lines of at "
        "most 2000 characters) is out_1 in the tool output cache: tool_output_cache(ref_id='out_1', offset=3001) "
        "reads on from line 3001, tool_output_cache_grep(ref_id='out_1', pattern=...) searches it]"
    )
    assert cache.get("out_1") == whole
    assert cache.read("out_1", offset=3001, limit=2) == (
        "  3001\t000003001\n  3002\t000003002\n[lines 3001-3002 of 1677722; use offset=3003 for more]"
    )


async def test_a_message_over_the_cap_fails_that_call_with_the_cap_and_the_server_stays_usable() -> None:
    async with raw_server("big", max_message_bytes=1 << 20) as server:
        big = server.tools[0]
        over = await big.execute_raw({"size": 2 << 20})
        after = await big.execute_raw({"size": 25})
    assert over.kind == "error"
    # The line: 2 MiB of text whose 209,715 newlines JSON writes as two bytes each, in its envelope.
    assert over.value == (
        f"MCP server 'raw-big' ({sys.executable} {RAW} big) answered tool 'big' with a message of 2306949 bytes, "
        "over the cap of 1048576 bytes on one MCP message (max_message_bytes=); the answer was dropped. Ask for "
        "less at a time (a narrower query, a smaller page)."
    )
    assert (after.kind, after.value) == ("text", "000000001\n000000002\n00000")


async def test_the_default_cap_on_one_message_is_32_mib() -> None:
    async with raw_server("big") as server:
        over = await server.tools[0].execute_raw({"size": 40 << 20, "plain": True})
    assert over.kind == "error"
    assert "answered tool 'big' with a message of 41943122 bytes, over the cap of 33554432 bytes" in over.value


def test_the_caps_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_message_bytes must be at least 1, got 0"):
        MCPServer.stdio("server", max_message_bytes=0)
    with pytest.raises(ValueError, match="max_result_chars must be at least 1 or None, got 0"):
        MCPServer.http("http://127.0.0.1:1/mcp", max_result_chars=0)


def running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


async def test_closing_a_server_that_ignores_its_stdin_closing_stops_it_and_its_children() -> None:
    async with raw_server("stubborn") as server:
        found = re.search(r"server (\d+) child (\d+)", server.stderr_tail())
        assert found is not None, server.stderr_tail()
        pids = [int(found.group(1)), int(found.group(2))]
        assert [running(pid) for pid in pids] == [True, True]
    for _ in range(600):  # the child is reaped by init once its parent is gone: give it time
        if not any(running(pid) for pid in pids):
            break
        await asyncio.sleep(0.05)
    assert [running(pid) for pid in pids] == [False, False]


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
