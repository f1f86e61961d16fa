"""The Copilot CLI child process: command line, start over stdio or TCP, stderr capture, cleanup.

The child never outlives its client: it runs in its own process group, and that group is
terminated on close, on error, when the client is garbage-collected (a `weakref.finalize`)
and at interpreter exit (`atexit`). quorum learnt this the hard way (commit `c3b254d`,
"prevent orphan copilot-cli processes"). Imports only `toolwire.errors`.
"""

from __future__ import annotations

import asyncio
import atexit
import builtins
import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from toolwire.errors import ProviderError, StreamError, TimeoutError, ToolwireError

__all__ = ["CliCommand", "CliProcess", "resolve_cli", "terminate_group"]

# The SDKs and quorum read the TCP port from this stdout line.
_PORT_LINE = re.compile(rb"listening on port (\d+)")
_STDERR_LINES = 40
_LIVE: set[int] = set()


def resolve_cli(cli_path: str | Sequence[str] | None) -> list[str]:
    """The command that starts the CLI: the option, `COPILOT_CLI_PATH`, `copilot` on PATH, or npx.

    Raises:
        ValueError: When none of them is available.
    """
    if cli_path is not None:
        argv = [cli_path] if isinstance(cli_path, str) else list(cli_path)
    elif os.environ.get("COPILOT_CLI_PATH"):
        argv = [os.environ["COPILOT_CLI_PATH"]]
    else:
        return _default_cli()
    if os.sep in argv[0]:
        argv[0] = os.path.abspath(argv[0])  # the child may start in another working directory
    return argv


def _default_cli() -> list[str]:
    found = shutil.which("copilot")
    if found:
        return [found]
    npx = shutil.which("npx")
    if npx:
        return [npx, "--yes", "@github/copilot"]
    raise ValueError(
        "No Copilot CLI found: install it (npm install -g @github/copilot), put `copilot` on PATH, "
        "set COPILOT_CLI_PATH, or pass cli_path=... to connect()."
    )


@dataclass(slots=True, kw_only=True)
class CliCommand:
    """How to start the CLI.

    Attributes:
        argv: The executable and its leading arguments (see `resolve_cli`).
        transport: `stdio` (the default: no port race, no open listener) or `tcp`.
        cwd: The session working directory; built-in tools resolve paths there.
        env: Extra environment variables for the child.
        token_env: Name of the variable holding a GitHub token (`--auth-token-env`).
        log_level: The CLI's `--log-level`.
        extra_args: More flags, appended last.
    """

    argv: list[str]
    transport: Literal["stdio", "tcp"] = "stdio"
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    token_env: str | None = None
    log_level: str = "error"
    extra_args: Sequence[str] = ()

    def arguments(self) -> list[str]:
        """The full command line."""
        args = [*self.argv, "--headless", "--no-auto-update", "--log-level", self.log_level]
        args += ["--stdio"] if self.transport == "stdio" else ["--port", "0"]
        if self.token_env:
            args += ["--auth-token-env", self.token_env, "--no-auto-login"]
        return [*args, *self.extra_args]


def terminate_group(pid: int, grace: float = 1.0) -> None:
    """SIGTERM the process group of `pid`, then SIGKILL what is left after `grace` seconds."""
    _LIVE.discard(pid)
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except FileNotFoundError:
        return False
    except OSError:
        return True


@atexit.register
def _terminate_all() -> None:
    for pid in list(_LIVE):
        terminate_group(pid, grace=0.5)


class CliProcess:
    """A running CLI and the byte streams to talk JSON-RPC with it.

    Start it with `await CliProcess.start(command, startup_timeout)`; `reader`/`writer` are
    the child's stdout/stdin (stdio) or a loopback socket (TCP).
    """

    def __init__(self, process: asyncio.subprocess.Process, command: CliCommand) -> None:
        self.process = process
        self.command = command
        self.stderr: deque[str] = deque(maxlen=_STDERR_LINES)
        self.reader: asyncio.StreamReader
        self.writer: asyncio.StreamWriter
        self._tasks: list[asyncio.Task[None]] = []
        _LIVE.add(process.pid)
        self._finalizer = weakref.finalize(self, terminate_group, process.pid, 0.5)

    @property
    def pid(self) -> int:
        """The child's process id (also its process group id)."""
        return self.process.pid

    @classmethod
    async def start(cls, command: CliCommand, startup_timeout: float | None) -> CliProcess:
        """Spawn the CLI and connect to it; the child is killed again if anything fails."""
        args = command.arguments()
        try:
            process = await asyncio.create_subprocess_exec(
                *args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=command.cwd,
                env={**os.environ, **command.env},
                start_new_session=True,  # its own process group, so cleanup reaches its children
                limit=1 << 20,
            )
        except OSError as exc:
            raise ProviderError(
                f"Could not start the Copilot CLI {args[0]!r} ({exc.strerror or exc}); "
                "install it or pass cli_path=... to connect().",
                provider="copilot",
            ) from None
        cli = cls(process, command)
        try:
            await cli._connect(startup_timeout)
        except BaseException:
            await cli.aclose()
            raise
        return cli

    async def _connect(self, startup_timeout: float | None) -> None:
        assert self.process.stderr is not None and self.process.stdout is not None and self.process.stdin is not None
        self._tasks.append(asyncio.create_task(self._collect_stderr(self.process.stderr)))
        if self.command.transport == "stdio":
            self.reader, self.writer = self.process.stdout, self.process.stdin
            return
        try:
            async with asyncio.timeout(startup_timeout):
                port = await self._read_port(self.process.stdout)
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        except builtins.TimeoutError:
            raise TimeoutError(
                f"The Copilot CLI printed no 'listening on port' line within {startup_timeout} s; "
                "use transport='stdio' or raise startup_timeout.",
                provider="copilot",
            ) from None
        self._tasks.append(asyncio.create_task(self._drain(self.process.stdout)))

    async def _read_port(self, stdout: asyncio.StreamReader) -> int:
        while line := await stdout.readline():
            match = _PORT_LINE.search(line)
            if match:
                return int(match.group(1))
        raise await self.exit_error("exited before printing its port")

    async def _collect_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.stderr.append(line.decode("utf-8", "replace").rstrip())

    @staticmethod
    async def _drain(stream: asyncio.StreamReader) -> None:
        while await stream.read(65536):
            pass

    async def exit_error(self, what: str) -> ToolwireError:
        """A `StreamError` for a CLI that `what` (e.g. "ended its output"), with its stderr tail.

        Waits a moment for the child to exit and its stderr to drain, so the message has both.
        """
        with contextlib.suppress(builtins.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.process.wait()), 1.0)
        if self._tasks:
            await asyncio.wait({self._tasks[0]}, timeout=0.5)
        code = self.process.returncode
        status = f" (exit code {code})" if code is not None else ""
        tail = " | ".join(line for line in self.stderr if line)[-600:]
        detail = f"; its stderr said: {tail!r}" if tail else ""
        return StreamError(
            f"The Copilot CLI {what}{status}{detail}; the turn is lost, check the CLI and retry.",
            provider="copilot",
        )

    async def aclose(self, grace: float = 2.0) -> None:
        """Terminate the process group and wait for the child."""
        self._finalizer.detach()
        _LIVE.discard(self.pid)
        with contextlib.suppress(Exception):
            self.writer.close()
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), grace)
            except builtins.TimeoutError:
                pass
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)  # whatever the group still holds
        if self.process.returncode is None:
            await self.process.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def kill_now(self) -> None:
        """Terminate from sync code or another loop (no waiting on the child's loop)."""
        self._finalizer.detach()
        terminate_group(self.pid, grace=0.5)
