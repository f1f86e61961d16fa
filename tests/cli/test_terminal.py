"""The terminal plumbing under a real pseudo-terminal: a cancelled turn's late question never takes a line."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect

from tests.cli.test_chat import _default_sigint

LATE_QUESTION = """
import asyncio, os, signal, threading, time
from toolwire.cli._terminal import Loop, TurnCancelled, ask_line

cancelled = threading.Event()

def late_question(prompt):
    cancelled.wait()  # its thread gets to the question only after the turn was cancelled
    return ask_line(prompt)

async def turn():
    asyncio.get_running_loop().call_later(0.2, os.kill, os.getpid(), signal.SIGINT)
    return await asyncio.to_thread(late_question, "Run this tool? [y/N] ")

with Loop() as loop:
    try:
        loop.run_turn(turn())
    except TurnCancelled:
        cancelled.set()
        print("cancelled", flush=True)
    time.sleep(0.5)  # the late question is asked (and would be waiting) before the next prompt
    print("next prompt got:", repr(ask_line("you> ")), flush=True)
"""


def test_a_question_asked_after_its_turn_was_cancelled_leaves_the_next_line_alone(tmp_path: Path) -> None:
    script = tmp_path / "late.py"
    script.write_text(LATE_QUESTION, encoding="utf-8")
    child = pexpect.spawn(
        sys.executable, [str(script)], encoding="utf-8", timeout=60, preexec_fn=_default_sigint, cwd=str(tmp_path)
    )
    child.expect_exact("cancelled")
    child.expect_exact("you> ")
    child.sendline("hello")
    child.expect_exact("next prompt got: 'hello'")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
