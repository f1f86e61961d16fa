"""MCP in the `toolwire` command: `--mcp`, `[[mcp]]` tables, `toolwire tools`, a server that fails to start."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.cli.test_cli import at, toolwire
from toolwire import ToolCall
from toolwire.config import ConfigError, McpServerSettings, load_config
from toolwire.testing import ScriptedServer, reply
from toolwire.types import ToolResult


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "hello.txt").write_text("hi from the file\n", encoding="utf-8")
    return folder


def test_tools_lists_mcp_tools_with_their_risk(project: Path, filesystem_server: str, time_server: str) -> None:
    flags = ["--mcp", shlex.join([filesystem_server, str(project)]), "--mcp", time_server]
    done = toolwire("tools", "--json", *flags, cwd=project)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    listed = {entry["name"]: entry["risk"] for entry in out["mcp"]}
    assert (listed["read_text_file"], listed["write_file"], listed["get_current_time"]) == ("low", "high", "low")
    assert len(listed) == 16
    sent = [tool["function"]["name"] for tool in out["request"]["tools"]]
    assert sent[:8] == ["read", "write", "edit", "exec", "grep", "glob", "done", "write_todos"]
    assert sent[8:10] == ["tool_output_cache", "tool_output_cache_grep"]  # where a clipped MCP result's rest is
    assert sent[10:] == [entry["name"] for entry in out["mcp"]]

    plain = toolwire("tools", *flags, cwd=project).stdout.splitlines()
    heading = plain.index("# Tools from MCP servers (risk: low = read-only, runs without review; high = reviewed)")
    assert plain[heading + 1].startswith("read_file  low  ")
    assert any(line.startswith("get_current_time  low  Get current time in a specific timezone") for line in plain)


def test_run_uses_mcp_tools_from_a_flag_and_the_settings_file(
    project: Path, filesystem_server: str, time_server: str
) -> None:
    (project / "toolwire.toml").write_text(
        f'[[mcp]]\nname = "clock"\ncommand = {json.dumps(time_server)}\n', encoding="utf-8"
    )
    calls = [
        ToolCall(id="c1", name="read_text_file", arguments={"path": str(project / "hello.txt")}),
        ToolCall(id="c2", name="get_current_time", arguments={"timezone": "Etc/UTC"}),
        ToolCall(id="c3", name="write_file", arguments={"path": str(project / "new.txt"), "content": "x"}),
    ]
    with ScriptedServer([reply("Looking.", calls), reply("Done looking.")]) as server:
        done = toolwire("run", *at(server), "--mcp", shlex.join([filesystem_server, str(project)]), "go", cwd=project)
    assert done.stdout == "Done looking.\n"
    assert done.returncode == 3  # write_file is high risk: refused without a terminal to ask
    assert "Refused for lack of a terminal to ask: write_file; pass --yes." in done.stderr
    first, second = server.requests
    assert first.request is not None and second.request is not None
    names = [t.name for t in first.request.tools]
    assert names[8] == "get_current_time" and "read_text_file" in names
    assert names[-2:] == ["tool_output_cache", "tool_output_cache_grep"]
    got = {m.tool_call_id: m for m in second.request.messages if isinstance(m, ToolResult)}
    # data results travel as JSON text on the openai wire
    assert json.loads(got["c1"].value) == {"content": "hi from the file\n"}
    assert json.loads(got["c2"].value)["timezone"] == "Etc/UTC"
    assert got["c3"].kind == "error" and "rejected" in got["c3"].value
    assert not (project / "new.txt").exists()


def test_a_server_that_fails_to_start_is_one_line_with_its_stderr_and_status_1(project: Path) -> None:
    command = "sh -c 'echo starting >&2; echo no token in GITHUB_TOKEN >&2; exit 1'"
    with ScriptedServer(["never asked"]) as server:
        done = toolwire("run", *at(server), "--mcp", command, "hi", cwd=project)
    assert (done.returncode, done.stdout, server.requests) == (1, "", [])
    assert done.stderr == (
        f"toolwire: error: The MCP server {shlex.join(shlex.split(command))!r} failed to start: it closed the "
        "connection before the MCP handshake was over (its stderr ended with: starting no token in GITHUB_TOKEN).\n"
    )
    missing = toolwire("tools", "--mcp", "no-such-mcp-server --flag", cwd=project)
    assert (missing.returncode, missing.stderr) == (
        1,
        "toolwire: error: The MCP server 'no-such-mcp-server --flag' failed to start: the command was not found.\n",
    )
    unquoted = toolwire("run", "--mcp", "'unbalanced", "hi", cwd=project)
    assert unquoted.returncode == 2
    assert unquoted.stderr.startswith('toolwire: error: --mcp "\'unbalanced" is not a command line: No closing')


def test_mcp_tables_in_the_settings_file(tmp_path: Path) -> None:
    path = tmp_path / "toolwire.toml"
    path.write_text(
        '[[mcp]]\nname = "fs"\ncommand = "npx"\nargs = ["-y", "srv", "."]\nenv = { A = "1" }\n'
        '[[mcp]]\nurl = "http://127.0.0.1:9/mcp"\nheaders = { Authorization = "Bearer t" }\n',
        encoding="utf-8",
    )
    assert load_config(path).mcp == (
        McpServerSettings(name="fs", command="npx", args=("-y", "srv", "."), env=(("A", "1"),)),
        McpServerSettings(url="http://127.0.0.1:9/mcp", headers=(("Authorization", "Bearer t"),)),
    )
    for text, message in [
        ('[[mcp]]\ncommand = "a"\nurl = "http://x"\n', "needs either command (a server to run) or url"),
        ("[[mcp]]\nname = 'x'\n", "needs either command (a server to run) or url"),
        ('[[mcp]]\ncommand = "a"\nargs = "b"\n', "'mcp.args' in [[mcp]] number 1 in"),
        ('[[mcp]]\ncommand = "a"\nport = 1\n', "Unknown key 'port' in [[mcp]] number 1"),
        ('mcp = "a"\n', "'mcp' in"),
    ]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=None) as error:
            load_config(path)
        assert message in str(error.value), (text, str(error.value))
