"""`toolwire mcp-server` checked with the official `mcp` client: over stdio and streamable HTTP."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters, types

from toolwire.mcp import MCPServer

SERVED = ["read", "write", "edit", "exec", "grep", "glob", "write_todos"]
READ_ONLY = {"read", "grep", "glob", "write_todos"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    (folder / "link").symlink_to(tmp_path / "secret.txt")
    return folder


def stdio(root: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "toolwire.cli", "mcp-server", "--root", str(root)], cwd=str(root.parent)
    )


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def call(client: Client, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    result = await client.call_tool(name, arguments)
    assert isinstance(result, types.CallToolResult)
    return result


async def check_server(client: Client, root: Path) -> None:
    listed = (await client.list_tools()).tools
    assert [tool.name for tool in listed] == SERVED
    for tool in listed:
        assert tool.annotations is not None
        low = tool.name in READ_ONLY
        assert (tool.annotations.read_only_hint, tool.annotations.destructive_hint) == (low, not low)
        assert tool.input_schema["type"] == "object" and tool.description
    read = await call(client, "read", {"path": "notes.txt"})
    assert (read.is_error, text(read)) == (False, "     1\talpha\n     2\tbeta")
    wrote = await call(client, "write", {"path": "new/out.txt", "content": "one\ntwo\n"})
    assert not wrote.is_error and (root / "new" / "out.txt").read_text() == "one\ntwo\n"
    edited = await call(client, "edit", {"path": "new/out.txt", "old_text": "two", "new_text": "three"})
    assert not edited.is_error and (root / "new" / "out.txt").read_text() == "one\nthree\n"
    ran = await call(client, "exec", {"command": "cat notes.txt"})
    assert not ran.is_error and "alpha\nbeta" in text(ran)
    grep = await call(client, "grep", {"pattern": "beta"})
    assert not grep.is_error and text(grep) == "notes.txt:2: beta"
    found = await call(client, "glob", {"pattern": "**/*.txt"})
    assert not found.is_error and text(found).splitlines() == ["new/out.txt", "notes.txt"]
    todos = await call(client, "write_todos", {"todos": [{"content": "check", "status": "pending"}]})
    assert not todos.is_error
    for name, arguments in [
        ("read", {"path": "../secret.txt"}),
        ("read", {"path": str(root.parent / "secret.txt")}),
        ("read", {"path": "link"}),
        ("write", {"path": "../escaped.txt", "content": "x"}),
        ("edit", {"path": "../secret.txt", "old_text": "outside", "new_text": "inside"}),
        ("grep", {"pattern": "outside", "path": ".."}),
    ]:
        refused = await call(client, name, arguments)
        assert refused.is_error, (name, arguments, text(refused))
        assert "outside the project root" in text(refused) or "leaves the project root" in text(refused)
    assert not (root.parent / "escaped.txt").exists()
    assert (root.parent / "secret.txt").read_text() == "outside\n"
    unknown = await call(client, "nope", {})
    assert unknown.is_error and text(unknown).startswith("Unknown tool 'nope'. Available tools: read, write,")


async def test_stdio_passes_the_official_clients_checks(root: Path) -> None:
    async with Client(stdio(root)) as client:
        assert client.server_info is not None and client.server_info.name == "toolwire"
        await check_server(client, root)


@contextlib.contextmanager
def http_server(root: Path) -> Iterator[str]:
    command = [sys.executable, "-m", "toolwire.cli", "mcp-server", "--root", str(root), "--http", "0"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=os.environ | {"NO_COLOR": "1"})
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # printed once the port is bound, just before serving
        said = re.fullmatch(
            rf"toolwire: serving the standard tools in {re.escape(str(root))} at http://127\.0\.0\.1:(\d+)/mcp\n", line
        )
        assert said is not None, line
        port = int(said.group(1))
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            assert process.poll() is None and time.monotonic() < deadline, "the HTTP server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stderr is not None:
            process.stderr.close()


async def test_streamable_http_passes_the_official_clients_checks_and_feeds_toolwires_client(root: Path) -> None:
    with http_server(root) as url:
        async with Client(url) as client:
            await check_server(client, root)
        async with MCPServer.http(url, {"X-Test": "1"}) as server:
            assert server.name == "toolwire"
            assert [(t.name, t.risk) for t in server.tools][:2] == [("read", "low"), ("write", "high")]
            read = await server.tools[0].execute_raw({"path": "notes.txt"})
    assert (read.kind, read.value) == ("text", "     1\talpha\n     2\tbeta")


def test_a_root_that_is_not_a_folder_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolwire.cli", "mcp-server", "--root", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == f"toolwire: error: --root {str(tmp_path / 'missing')!r} is not a folder; pass an existing folder.\n"
    )
