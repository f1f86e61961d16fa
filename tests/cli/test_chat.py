"""`toolwire chat` under a pseudo-terminal, answering its questions as a person would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pexpect

from toolwire import ToolCall
from toolwire.testing import ScriptedServer, reply
from toolwire.types import SystemMessage, ToolResult, UserMessage


def spawn(cwd: Path, *args: str) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
    env |= {"TERM": "dumb", "NO_COLOR": "1", "OPENAI_API_KEY": "sk-test", "XDG_CONFIG_HOME": str(cwd / ".none")}
    return pexpect.spawn(
        sys.executable,
        ["-m", "toolwire.cli", "chat", *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=60,
        preexec_fn=_default_sigint,
    )


def _default_sigint() -> None:
    # A shell starts background jobs with SIGINT ignored, and children inherit that: pytest run
    # as `make test &` (or by a CI runner that does so) would spawn a chat that Ctrl-C cannot reach.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def write_call(id: str, content: str) -> ToolCall:
    return ToolCall(id=id, name="write", arguments={"path": "note.txt", "content": content})


def test_chat_asks_before_high_risk_calls_and_keeps_the_conversation(tmp_path: Path) -> None:
    script = [
        reply("I will write it.", [write_call("call_1", "first")]),
        reply("Wrote note.txt."),
        reply("", [write_call("call_2", "second")]),
        reply("Left it alone."),
        reply("Hello again."),
    ]
    with ScriptedServer(script) as server:
        args = ["--provider", "openai", "--model", "test-model", "--base-url", server.base_url + "/v1"]
        chat = spawn(tmp_path, *args)
        chat.expect_exact(f"openai:test-model at {server.base_url}/v1/chat/completions, tools in {tmp_path}")
        chat.expect_exact("you> ")
        chat.sendline("make a note")
        chat.expect_exact("I will write it.")
        chat.expect(r"\r?\n[^\n]*write wants to run \(high risk\)")  # on a line of its own
        chat.expect_exact('"content": "first"')
        chat.expect_exact("Run this tool? [y/N] ")
        chat.sendline("y")
        chat.expect_exact('→ write(path="note.txt", content="first")')
        chat.expect_exact("← write ok, 1 line")
        chat.expect_exact("Wrote note.txt.")
        chat.expect_exact("you> ")
        assert (tmp_path / "note.txt").read_text(encoding="utf-8") == "first"

        chat.sendline("write it again")
        chat.expect_exact("Run this tool? [y/N] ")
        chat.sendline("n: keep the first one")
        chat.expect_exact("✗ write rejected: keep the first one")
        chat.expect_exact("Left it alone.")
        chat.expect_exact("you> ")
        assert (tmp_path / "note.txt").read_text(encoding="utf-8") == "first"

        chat.sendline("/tools")
        chat.expect_exact("write (high risk) Create or overwrite a text file")
        chat.expect_exact("you> ")
        chat.sendline("/reset")
        chat.expect_exact("The conversation was cleared.")
        chat.expect_exact("you> ")
        chat.sendline("hello")
        chat.expect_exact("Hello again.")
        chat.expect_exact("you> ")
        chat.sendline("/exit")
        chat.expect(pexpect.EOF)
        chat.close()
        assert chat.exitstatus == 0

    third = server.requests[2].request
    assert third is not None
    assert [type(m).__name__ for m in third.messages] == [
        "SystemMessage",
        "UserMessage",
        "AssistantMessage",
        "ToolResult",
        "AssistantMessage",
        "UserMessage",
    ]
    assert third.messages[1] == UserMessage(content="make a note")
    assert third.messages[3] == ToolResult.text(
        write_call("call_1", "first"), "Created note.txt (5 characters, 1 lines)."
    )
    fourth = server.requests[3].request
    assert fourth is not None
    rejected = "The call was rejected by the reviewer and did not run: keep the first one"
    assert fourth.messages[-1] == ToolResult.error(write_call("call_2", "second"), rejected)
    fifth = server.requests[4].request
    assert fifth is not None
    assert fifth.messages[1:] == [UserMessage(content="hello")]
    assert isinstance(fifth.messages[0], SystemMessage)


def test_chat_on_the_offline_model_with_yes_and_ctrl_d(tmp_path: Path) -> None:
    chat = spawn(tmp_path, "--yes")
    chat.expect_exact("offline scripted model (no network, no key): openai wire protocol over HTTP at")
    chat.expect_exact("you> ")
    chat.sendline("look around")
    chat.expect_exact('→ glob(pattern="**/*.md")')
    chat.expect_exact("← write ok")
    chat.expect_exact("Done: I wrote SUMMARY.md and found 2 TODO comments in the code")
    chat.expect_exact("you> ")
    chat.sendeof()
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0
    assert "Run this tool?" not in (chat.before or "")


CANCELLED = "(cancelled: the conversation is as it was before that prompt; Ctrl-C at the prompt leaves)"


def server_args(server: ScriptedServer) -> list[str]:
    return ["--provider", "openai", "--model", "test-model", "--base-url", server.base_url + "/v1"]


def test_ctrl_c_at_the_approval_prompt_cancels_the_turn_and_ctrl_c_at_the_prompt_leaves(tmp_path: Path) -> None:
    script = [reply("", [write_call("call_1", "first")]), reply("Hello again.")]
    with ScriptedServer(script) as server:
        chat = spawn(tmp_path, *server_args(server))
        chat.expect_exact("you> ")
        chat.sendline("write a note")
        chat.expect_exact("Run this tool? [y/N] ")
        chat.sendintr()
        chat.expect_exact(CANCELLED)
        chat.expect_exact("you> ")
        chat.sendline("hello")  # read by the new prompt, not by the abandoned approval question
        chat.expect_exact("Hello again.")
        chat.expect_exact("you> ")
        chat.sendintr()
        chat.expect_exact("toolwire: interrupted")
        chat.expect(pexpect.EOF)
        chat.close()
    assert chat.exitstatus == 130
    assert "Traceback" not in (chat.before or "")
    assert not (tmp_path / "note.txt").exists()
    # The cancelled prompt is not part of the conversation the next prompt continues.
    second = server.requests[1].request
    assert second is not None
    assert [m for m in second.messages if not isinstance(m, SystemMessage)] == [UserMessage(content="hello")]


def test_ctrl_c_while_the_model_answers_cancels_and_the_chat_goes_on(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    def slow(_: object) -> str:
        started.set()
        release.wait(60)
        return "too late"

    with ScriptedServer([slow, "Quick answer.", slow]) as server:
        try:
            chat = spawn(tmp_path, *server_args(server))
            chat.expect_exact("you> ")
            chat.sendline("think hard")
            assert started.wait(60)
            chat.sendintr()
            chat.expect_exact(CANCELLED)
            chat.expect_exact("you> ")
            chat.sendline("quick")
            chat.expect_exact("Quick answer.")
            started.clear()
            chat.sendline("think again")
            assert started.wait(60)
            chat.sendintr()
            # Two presses sent back to back can reach Python as one signal (a pending signal is not
            # queued twice), so the second waits until the first has cancelled the turn.
            chat.expect_exact(CANCELLED)
            chat.expect_exact("you> ")
            chat.sendintr()  # at the prompt, Ctrl-C leaves
            chat.expect_exact("toolwire: interrupted")
            chat.expect(pexpect.EOF)
            chat.close()
        finally:
            release.set()
    assert chat.exitstatus == 130
    assert "Traceback" not in (chat.before or "")


def test_chat_fed_by_a_pipe_refuses_high_risk_calls_and_reads_the_next_line_as_a_prompt(tmp_path: Path) -> None:
    script = [reply("", [write_call("call_1", "first")]), reply("Could not write it."), reply("Bye then.")]
    with ScriptedServer(script) as server:
        args = ["--provider", "openai", "--model", "test-model", "--base-url", server.base_url + "/v1"]
        env = {k: v for k, v in os.environ.items() if k != "DEBUG"}
        env |= {"NO_COLOR": "1", "OPENAI_API_KEY": "sk-test", "XDG_CONFIG_HOME": str(tmp_path / ".none")}
        done = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "chat", *args],
            cwd=tmp_path,
            input="make a note\nsay bye\n/exit\n",
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        last = [r.body["messages"][-1] for r in server.requests]
    prompts = [m["content"] for m in last if m["role"] == "user"]
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("No terminal to ask: high-risk calls are refused; pass --yes to allow them.") == 1
    assert "Run this tool?" not in done.stdout
    assert "Bye then." in done.stdout
    assert not (tmp_path / "note.txt").exists()
    assert prompts == ["make a note", "say bye"]
