"""The standard tools on real temporary directories, including escape attempts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.stdtools._processes import gone
from toolwire import ToolCall, ToolResult
from toolwire.agent import Agent
from toolwire.stdtools import ROOT, done, edit, exec_command, glob, grep, read, standard_tools, write, write_todos
from toolwire.testing import ScriptedModel, reply
from toolwire.tools import Tool, ToolContext


async def run(tool: Tool, root: Path, **arguments: object) -> ToolResult:
    call = ToolCall(id="c1", name=tool.name, arguments=dict(arguments))
    return await tool.execute_raw(dict(arguments), ToolContext(overrides={ROOT.id: root}), call=call)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    (project / "notes.txt").write_text("alpha\nbeta\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    return project


def test_risks_and_names() -> None:
    assert {t.name: t.risk for t in standard_tools()} == {
        "read": "low",
        "write": "high",
        "edit": "high",
        "exec": "high",
        "grep": "low",
        "glob": "low",
        "done": "low",
        "write_todos": "low",
    }
    assert sorted(read.definition.parameters["properties"]) == ["limit", "offset", "path"]


async def test_read_numbers_lines_and_pages(root: Path) -> None:
    result = await run(read, root, path="src/a.py", offset=3, limit=1)
    assert result == ToolResult.text(
        ToolCall(id="c1", name="read"), "     3\tdef main():\n[lines 3-3 of 4; use offset=4 for more]"
    )


@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd", "src/../../secret.txt", "link/secret.txt", "out"])
async def test_paths_outside_the_root_are_refused(root: Path, path: str) -> None:
    (root / "link").symlink_to(root.parent)
    (root / "out").symlink_to(root.parent / "secret.txt")
    result = await run(read, root, path=path)
    assert result.kind == "error"
    assert "is outside the project root" in result.value
    written = await run(write, root, path=path, content="pwned")
    assert written.kind == "error" and "outside the project root" in written.value
    assert (root.parent / "secret.txt").read_text() == "top secret\n"


async def test_write_then_edit(root: Path) -> None:
    created = await run(write, root, path="new/dir/file.txt", content="one\ntwo\ntwo\n")
    assert created.value == "Created new/dir/file.txt (12 characters, 4 lines)."
    ambiguous = await run(edit, root, path="new/dir/file.txt", old_text="two", new_text="2")
    assert ambiguous.kind == "error" and ambiguous.value.startswith("old_text matches 2 times in 'new/dir/file.txt'")
    missing = await run(edit, root, path="new/dir/file.txt", old_text="three", new_text="3")
    assert missing.value == "old_text was not found in 'new/dir/file.txt'; read the file and copy the text exactly."
    once = await run(edit, root, path="new/dir/file.txt", old_text="one", new_text="1")
    assert once.value == "Replaced 1 occurrence in new/dir/file.txt."
    every = await run(edit, root, path="new/dir/file.txt", old_text="two", new_text="2", replace_all=True)
    assert every.value == "Replaced 2 occurrences in new/dir/file.txt."
    assert (root / "new/dir/file.txt").read_text() == "1\n2\n2\n"


async def test_grep_and_glob(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "x.py").write_text("import os\n")
    (root / "bin.dat").write_bytes(b"\0import os")
    found = await run(grep, root, pattern=r"os\.", glob="*.py")
    assert found.value == "src/a.py:4:     return os.getcwd()"
    assert (await run(grep, root, pattern="(")).value.startswith("Invalid regular expression '('")
    assert (await run(glob, root, pattern="**/*.py")).value == "src/a.py"
    assert (await run(glob, root, pattern="../*")).kind == "error"


async def test_exec_reports_exit_code_and_output(root: Path) -> None:
    ok = await run(exec_command, root, command="echo hi; ls src; exit 3")
    assert ok.value == "exit code: 3\nhi\na.py\n"


async def test_exec_timeout_stops_the_command(root: Path) -> None:
    # The limit must outlast starting a shell and its first echo on a loaded machine.
    result = await run(exec_command, root, command="echo started; sleep 60", timeout=2)
    assert result == ToolResult.error(
        ToolCall(id="c1", name="exec"), "The command timed out after 2 s and was stopped. Output so far:\nstarted\n"
    )


async def test_exec_caps_huge_output(root: Path) -> None:
    result = await run(exec_command, root, command="python3 -c \"print('x' * 200000)\"")
    assert result.value.startswith("exit code: 0\nxxx")
    assert "characters of output omitted" in result.value
    assert len(result.value) < 31_000


async def test_write_todos_keeps_the_plan_in_the_run_state_and_done_ends(root: Path) -> None:
    plan = [{"content": "read the code", "status": "completed"}, {"content": "fix the bug", "status": "in_progress"}]
    model = ScriptedModel(
        [
            reply("", [ToolCall(id="t1", name="write_todos", arguments={"todos": plan})]),
            reply("", [ToolCall(id="t2", name="done", arguments={"summary": "fixed"})]),
        ]
    )
    result = await Agent(model, [write_todos, done], context=ToolContext(overrides={ROOT.id: root})).run("go")
    assert result.calls[0].result.value == (
        "Plan updated:\n1. [x] read the code\n2. [~] fix the bug\n(1 of 2 done, 1 in progress)"
    )
    assert (result.stop_reason, result.text) == ("done", "fixed")


def test_root_defaults_to_the_current_directory(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    assert os.getcwd() == str(root)
    call = ToolCall(id="c1", name="read", arguments={"path": "notes.txt"})
    import asyncio

    result = asyncio.run(read.execute_raw(call.arguments, ToolContext(), call=call))
    assert result.value == "     1\talpha\n     2\tbeta"


# The shell goes on only once the daemon has written its pid (a background job may start late).
_AWAIT_DAEMON = "while [ ! -s daemon.pid ]; do sleep 0.01; done"


def _pid_written(path: Path) -> bool:
    """`echo $$ > file` has finished: the number and its newline are there."""
    return path.exists() and path.read_text(encoding="ascii").endswith("\n")


async def test_exec_returns_when_the_command_exits_and_stops_a_daemonised_grandchild(root: Path) -> None:
    command = f"setsid sh -c 'echo $$ > daemon.pid; exec sleep 555' & {_AWAIT_DAEMON}; echo started; echo ended"
    result = await run(exec_command, root, command=command, timeout=60)
    assert result.value == "exit code: 0\nstarted\nended\n"
    pid = int((root / "daemon.pid").read_text(encoding="ascii"))
    assert gone(pid)


async def test_exec_timeout_also_stops_a_daemonised_grandchild(root: Path) -> None:
    command = f"setsid sh -c 'echo $$ > daemon.pid; exec sleep 555' & {_AWAIT_DAEMON}; echo started; sleep 60"
    result = await run(exec_command, root, command=command, timeout=3)  # outlasts the start-up on a loaded machine
    assert result.value == "The command timed out after 3 s and was stopped. Output so far:\nstarted\n"
    assert gone(int((root / "daemon.pid").read_text(encoding="ascii")))


async def test_cancelling_exec_stops_everything_it_started(root: Path) -> None:
    command = "setsid sh -c 'echo $$ > daemon.pid; exec sleep 555' & echo $$ > shell.pid; sleep 60"
    task = asyncio.create_task(run(exec_command, root, command=command, timeout=120))
    while not all(_pid_written(root / name) for name in ("daemon.pid", "shell.pid")):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(int((root / "shell.pid").read_text(encoding="ascii")))
    assert gone(int((root / "daemon.pid").read_text(encoding="ascii")))
