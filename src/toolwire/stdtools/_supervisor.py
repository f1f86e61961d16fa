"""The small supervisor `exec` runs each command under, so that no process it starts outlives it.

Run as a script (`python -I -S _supervisor.py COMMAND`; stdlib only, nothing from toolwire).
On Linux it makes itself a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`): a daemon that
double-forks, `setsid`s and redirects its output away is orphaned back to this process rather
than to init. When the shell ends, or on SIGTERM (a timeout or a cancel), every descendant is
SIGKILLed, found through `/proc`, and reaped. The exit status is the shell's (a shell killed by
a signal is mirrored by dying of the same signal). Elsewhere it only runs the shell.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36


class _Stop(Exception):
    """SIGTERM arrived: stop everything now."""


def _become_subreaper() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _parents() -> dict[int, int]:
    """Every visible process and its parent, from `/proc/<pid>/stat` (empty without `/proc`)."""
    parents: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return parents
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                # The command name may hold spaces and parentheses: fields follow the last ")".
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents[int(name)] = int(fields[1])
    return parents


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _kill_descendants() -> None:
    """SIGKILL every descendant until none is left (orphans of the killed come back to us)."""
    for _ in range(10_000):  # each round kills all it sees; a fork bomb is bounded too
        pids = _descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
        _reap()


def _on_term(signum: int, frame: object) -> None:
    raise _Stop


def main(command: str) -> int:
    """Run `command` in a shell; stop every process it started once it ends; return its status."""
    signal.signal(signal.SIGTERM, _on_term)
    _become_subreaper()
    try:
        shell = subprocess.Popen(["/bin/sh", "-c", command])
        status = shell.wait()
    except _Stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _kill_descendants()
        return 128 + signal.SIGTERM
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_descendants()
    if status < 0:  # the shell died of a signal: die of it too, so the caller sees the same status
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP cannot be set, nor need to be
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
