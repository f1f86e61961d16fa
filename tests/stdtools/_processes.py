"""Whether a process a test started has died (Linux `/proc`)."""

from __future__ import annotations

import time


def dead(pid: int) -> bool:
    """The process is gone, or a zombie waiting for whoever adopted it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def gone(pid: int) -> bool:
    """The process dies within 30 s.

    SIGKILL is delivered asynchronously: right after `kill` the target may still be running.
    """
    deadline = time.monotonic() + 30
    while not dead(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
