"""`exec` stops every process a command starts, daemons that redirect their output included."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from tests.stdtools._processes import gone
from toolwire import ToolCall, ToolResult
from toolwire.stdtools import ROOT, exec_command
from toolwire.tools import ToolContext

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes through /proc")

_RECORD = "echo $$ > daemon.pid; exec sleep 555"
_DOUBLE_FORK = (
    "import os, sys, time\n"
    "if os.fork(): sys.exit()\n"
    "os.setsid()\n"
    "if os.fork(): sys.exit()\n"
    "open('daemon.pid', 'w').write(f'{os.getpid()}\\n')\n"
    "time.sleep(555)\n"
)
# Each leaves a `sleep 555` (or a Python sleeping as long) that holds none of the command's output.
DAEMONS = {
    "setsid": f"setsid sh -c '{_RECORD}' >/dev/null 2>&1 </dev/null &",
    "nohup": f"nohup sh -c '{_RECORD}' >/dev/null 2>&1 </dev/null &",
    "subshell": f"( sh -c '{_RECORD}' >/dev/null 2>&1 </dev/null & )",
    "setsid-fork": f"setsid -f sh -c '{_RECORD}' >/dev/null 2>&1 </dev/null",
    "double-fork": f'{sys.executable} -c "{_DOUBLE_FORK}" >/dev/null 2>&1 </dev/null',
}
_AWAIT_DAEMON = "while [ ! -s daemon.pid ]; do sleep 0.01; done"


def _daemon_pid(root: Path) -> int:
    return int((root / "daemon.pid").read_text(encoding="ascii"))


async def run(root: Path, command: str, timeout: float = 120) -> ToolResult:
    arguments = {"command": command, "timeout": timeout}
    call = ToolCall(id="c1", name="exec", arguments=arguments)
    return await exec_command.execute_raw(arguments, ToolContext(overrides={ROOT.id: root}), call=call)


@pytest.mark.parametrize("daemon", DAEMONS.values(), ids=DAEMONS.keys())
async def test_a_daemon_is_stopped_when_the_command_ends(tmp_path: Path, daemon: str) -> None:
    result = await run(tmp_path, f"{daemon}\n{_AWAIT_DAEMON}; echo ended")
    assert result.value == "exit code: 0\nended\n"
    assert gone(_daemon_pid(tmp_path))


@pytest.mark.parametrize("daemon", DAEMONS.values(), ids=DAEMONS.keys())
async def test_a_daemon_is_stopped_when_the_command_times_out(tmp_path: Path, daemon: str) -> None:
    result = await run(tmp_path, f"{daemon}\n{_AWAIT_DAEMON}; echo started; sleep 60", timeout=3)
    assert result.value == "The command timed out after 3 s and was stopped. Output so far:\nstarted\n"
    assert gone(_daemon_pid(tmp_path))


@pytest.mark.parametrize("daemon", DAEMONS.values(), ids=DAEMONS.keys())
async def test_a_daemon_is_stopped_when_the_call_is_cancelled(tmp_path: Path, daemon: str) -> None:
    task = asyncio.create_task(run(tmp_path, f"{daemon}\n{_AWAIT_DAEMON}; sleep 60"))
    pid_file = tmp_path / "daemon.pid"
    while not (pid_file.exists() and pid_file.read_text(encoding="ascii").endswith("\n")):
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert gone(_daemon_pid(tmp_path))


async def test_exit_codes_and_signals_are_the_commands_own(tmp_path: Path) -> None:
    assert (await run(tmp_path, "echo out; echo err >&2; exit 7")).value == "exit code: 7\nout\nerr\n"
    assert (await run(tmp_path, "kill -9 $$")).value == "exit code: -9\n"
