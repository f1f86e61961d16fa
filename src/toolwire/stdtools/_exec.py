"""`exec`: run a shell command in the root directory, with a timeout and an output cap.

`exec` is not confined to the root: the command runs with the user's rights and can touch
anything they can. That is why it is a high-risk tool that a person (or `--yes`) approves.
When the command ends, times out or is cancelled, everything it started is stopped: it runs
under a supervisor (`_supervisor.py`) that every orphan is reparented to and that kills all
its descendants, daemons included; then the process group and any process still holding the
output are killed too, for a platform where the supervisor cannot see its descendants.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

from toolwire.stdtools._paths import ROOT
from toolwire.tools import Depends, ToolError, tool

__all__ = ["exec_command"]

MAX_OUTPUT_CHARS = 30_000
_MAX_TIMEOUT = 600.0


@tool(risk="high", name="exec")
async def exec_command(command: str, timeout: float = 60.0, root: Path = Depends(ROOT)) -> str:
    """Run a shell command in the project root; returns its exit code and combined output.

    Args:
        command: The shell command line, e.g. "pytest -q tests/test_a.py".
        timeout: Seconds before the command is stopped (at most 600).
        root: The project root (injected).
    """
    if not command.strip():
        raise ToolError("The command is empty; give a shell command line.")
    if not 0 < timeout <= _MAX_TIMEOUT:
        raise ToolError(f"timeout must be between 0 and {_MAX_TIMEOUT:g} seconds, got {timeout!r}.")
    process = await asyncio.create_subprocess_exec(
        *_supervised(command),
        cwd=root.resolve(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own session and process group, so a stop reaches its children
    )
    try:
        output, timed_out = await _collect(process, timeout)
    except asyncio.CancelledError:
        await _stop(process)
        await process.wait()
        raise
    text = _cap(output.decode("utf-8", errors="replace"))
    if timed_out:
        raise ToolError(f"The command timed out after {timeout:g} s and was stopped. Output so far:\n{text}")
    return f"exit code: {process.returncode}\n{text}"


async def _collect(process: asyncio.subprocess.Process, timeout: float) -> tuple[bytes, bool]:
    """Read output until the command itself exits (or times out), then stop whatever it left.

    Waiting for the end of the output is not enough: a background or daemonised child
    (`setsid sleep 555 &`) keeps the pipe open, and outlives a kill of the process group.
    So the direct child's exit ends the command; then the group and every process still
    holding the output pipe are killed, and the output read so far is kept.
    """
    output = _Output()
    reader = asyncio.create_task(output.pump(process))
    timed_out = False
    try:
        await asyncio.wait_for(_exited(process), timeout)
    except TimeoutError:
        timed_out = True
    finally:
        await _stop(process)
        try:
            await asyncio.wait_for(asyncio.shield(reader), _DRAIN_SECONDS)
        except TimeoutError:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
    await process.wait()
    return output.bytes(), timed_out


async def _exited(process: asyncio.subprocess.Process) -> None:
    # Not `process.wait()`: before Python 3.12 it also waits for the pipes to close, which a
    # daemonised grandchild prevents. `returncode` is set as soon as the child itself exits.
    while process.returncode is None:
        await asyncio.sleep(0.02)


_DRAIN_SECONDS = 5.0  # after the kills the pipe ends at once; this only bounds a process we could not find
_STOP_SECONDS = 10.0  # the supervisor's clean-up takes milliseconds; this only bounds a stuck one


class _Output:
    """A bounded head and tail of the output (memory stays bounded whatever the command prints)."""

    def __init__(self) -> None:
        self.head, self.tail = bytearray(), bytearray()
        self.limit = MAX_OUTPUT_CHARS * 4  # bytes; a character is at most four

    async def pump(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None
        while data := await process.stdout.read(65536):
            room = self.limit - len(self.head)
            if room > 0:
                self.head.extend(data[:room])
                data = data[room:]
            if data:
                self.tail.extend(data)
                del self.tail[: -self.limit]

    def bytes(self) -> bytes:
        return bytes(self.head + self.tail)


def _supervised(command: str) -> list[str]:
    """The command line that runs `command` in a shell under `_supervisor.py` (see there why)."""
    return [sys.executable, "-I", "-S", str(Path(__file__).with_name("_supervisor.py")), command]


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Have the supervisor stop everything the command started, then kill whatever is left.

    SIGTERM first: the supervisor knows every descendant, daemons included. The kills after
    are for a supervisor that could not clean up in time (or a platform without `/proc`).
    """
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_exited(process), _STOP_SECONDS)
    _kill_all(process)


def _kill_all(process: asyncio.subprocess.Process) -> None:
    """SIGKILL the command's process group and any process still writing to its output pipe."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid in _pipe_holders(process):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def _pipe_holders(process: asyncio.subprocess.Process) -> list[int]:
    """Processes with the command's output pipe open (Linux `/proc`; elsewhere none are found)."""
    transport = getattr(process, "_transport", None)
    pipe = transport.get_pipe_transport(1) if transport is not None else None
    handle = pipe.get_extra_info("pipe") if pipe is not None else None
    if handle is None:
        return []
    try:
        target = f"pipe:[{os.fstat(handle.fileno()).st_ino}]"
    except (OSError, ValueError):
        return []
    holders = []
    for entry in _proc_pids():
        with contextlib.suppress(OSError):
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") == target for fd in os.listdir(f"/proc/{entry}/fd")):
                holders.append(entry)
    return holders


def _proc_pids() -> list[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    own = os.getpid()
    return [int(name) for name in names if name.isdigit() and int(name) != own]


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    half = MAX_OUTPUT_CHARS // 2
    skipped = len(text) - 2 * half
    return f"{text[:half]}\n[... {skipped} characters of output omitted ...]\n{text[-half:]}"
