"""`--tool-choice`, `--max-tokens`, `--temperature` and `--timeout` on `toolwire run` and `chat`: what is sent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.cli.test_cli import at, cli_env, project, read_call, toolwire
from toolwire.testing import ScriptedServer, reply

__all__ = ["project"]  # the fixture, used by name


def test_run_forces_the_named_tool_on_the_first_turn_then_sends_auto(project: Path) -> None:
    with ScriptedServer([reply("", [read_call()]), reply("It says hi.")]) as server:
        done = toolwire("run", *at(server), "--tool-choice", "read", "--no-stream", "read", "it", cwd=project)
    assert (done.returncode, done.stdout) == (0, "It says hi.\n")
    assert [r.body.get("tool_choice") for r in server.requests] == [
        {"type": "function", "function": {"name": "read"}},
        "auto",
    ]


def test_chat_sends_auto_on_every_turn(project: Path) -> None:
    with ScriptedServer([reply("", [read_call()]), reply("It says hi.")]) as server:
        done = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "chat", *at(server), "--tool-choice", "auto", "--yes"],
            cwd=project,
            input="read hello.txt\n",
            capture_output=True,
            text=True,
            env=cli_env(project),
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert [r.body.get("tool_choice") for r in server.requests] == ["auto", "auto"]


def test_a_tool_choice_naming_no_tool_is_a_usage_error(project: Path) -> None:
    with ScriptedServer([]) as server:
        done = toolwire("run", *at(server), "--tool-choice", "weather", "hi", cwd=project)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "toolwire: error: --tool-choice must be auto, none, required or the name of one of the agent's tools "
        "(read, write, edit, exec, grep, glob, done, write_todos), got 'weather'.\n"
    )
    assert server.requests == []


def test_max_tokens_and_temperature_go_with_every_call_and_timeout_must_be_positive(project: Path) -> None:
    with ScriptedServer([reply("", [read_call()]), reply("It says hi.")]) as server:
        flags = ["--max-tokens", "77", "--temperature", "0", "--timeout", "300"]
        done = toolwire("run", *at(server), *flags, "read", "it", cwd=project)
    assert (done.returncode, done.stdout) == (0, "It says hi.\n")
    assert [(r.body.get("max_completion_tokens"), r.body.get("temperature")) for r in server.requests] == [(77, 0)] * 2
    refused = toolwire("run", "--timeout", "0", "hi", cwd=project)
    assert (refused.returncode, refused.stderr) == (
        2,
        "toolwire: error: argument --timeout: expected a number of seconds > 0, got '0' (see toolwire run --help)\n",
    )
