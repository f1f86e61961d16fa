"""Each command's `--help` lists exactly the flags it takes, and the command reads every one of them.

The flags are read from the help text itself. That each is used is read from the code: the
attributes of `settings` and `args` that the command's function reads, following the calls it
makes into other functions of `toolwire.cli` (by name, so it errs on the side of "used").
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from toolwire.cli._app import build_parser

CLI = Path(__file__).resolve().parents[2] / "src" / "toolwire" / "cli"

_SETTINGS = ["--provider", "--model", "--base-url", "--tool-mode", "--max-tool-turns", "--config", "-y", "--yes"]
_AGENT = [*_SETTINGS, "--debug"]
_COPILOT = ["--copilot-byok", "--copilot-wire-api", "--copilot-record"]
_MODEL_CALL = ["--mcp", "--tool-choice", "--max-tokens", "--temperature", "--timeout"]
FLAGS: dict[str, list[str]] = {
    "chat": [*_AGENT, *_COPILOT, *_MODEL_CALL],
    "run": [*_AGENT, *_COPILOT, *_MODEL_CALL, "--json", "--no-stream"],
    "tools": ["--provider", "--model", "--base-url", "--config", "--debug", "--json", "--mcp"],
    "convert": ["--model", "--config", "--debug", "--from", "--to"],
    "batch": [*_AGENT, "--out", "--concurrency", "--timeout", "--retries", "--retry-failed", "--ray", "--ray-workers"],
    "serve": [
        *("--config", "--debug", "--host", "--port", "--workers", "--drain-timeout", "--max-body-mb"),
        *("--log-level", "--access-log", "--no-access-log"),
    ],
    "mcp-server": ["--debug", "--root", "--http"],
    "eval": [
        *("--provider", "--model", "--base-url", "--tool-mode", "--config", "--debug"),
        *("--categories", "--limit", "--json", "--plot", "--seed", "--max-tokens", "--stream", "--data-dir"),
    ],
}
COMMANDS = {
    "chat": "chat_command",
    "run": "run_command",
    "tools": "tools_command",
    "convert": "convert_command",
    "batch": "batch_command",
    "serve": "serve_command",
    "mcp-server": "mcp_server_command",
    "eval": "eval_command",
}
# Settings fields a flag ends up in, when not its own name; `--config` is used when the command
# reads anything the settings file can set.
SETTING_OF = {"mcp": "mcp_servers"}
FROM_THE_FILE = {
    *("provider", "model", "base_url", "api_key_env", "tool_mode", "max_tool_turns", "output_budget_chars"),
    *("system_prompt", "copilot_byok", "copilot_wire_api", "copilot_record", "mcp_servers", "config_path"),
}


def subcommands() -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices)


def subcommand(name: str) -> argparse.ArgumentParser:
    return subcommands()[name]


def listed_flags(help_text: str) -> list[str]:
    """The option strings of the help's option lines (`  -y, --yes   approve...`), in order."""
    flags: list[str] = []
    for line in help_text.splitlines():
        match = re.match(r"  (-.*?)(?:  |$)", line)
        if match:
            flags.extend(re.findall(r"(?:^|, )(--?[\w-]+)", match.group(1)))
    return flags


def test_every_command_has_its_flag_list_here() -> None:
    assert sorted(subcommands()) == sorted(FLAGS) == sorted(COMMANDS)


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_a_commands_help_lists_exactly_the_flags_it_takes(name: str) -> None:
    assert sorted(listed_flags(subcommand(name).format_help())) == sorted(["-h", "--help", *FLAGS[name]])


def _functions() -> dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    found: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    for path in sorted(CLI.glob("*.py")):
        if path.name == "_settings.py":
            continue  # it turns every flag into a setting; what a command then reads is the question
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.setdefault(node.name, []).append(node)
    return found


def reads(function: str) -> tuple[set[str], set[str]]:
    """The attributes of `settings` and of `args` that `function` and the cli functions it reaches read."""
    index = _functions()
    settings: set[str] = set()
    args: set[str] = set()
    seen, todo = {function}, [function]
    while todo:
        for definition in index[todo.pop()]:
            for node in ast.walk(definition):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    {"settings": settings, "args": args}.get(node.value.id, set()).add(node.attr)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
                    target, attribute = node.args[0], node.args[1]
                    if isinstance(target, ast.Name) and target.id == "args" and isinstance(attribute, ast.Constant):
                        args.add(str(attribute.value))
                elif isinstance(node, ast.Name) and node.id in index and node.id not in seen:
                    seen.add(node.id)
                    todo.append(node.id)
    return settings, args


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_a_command_reads_every_flag_its_help_lists(name: str) -> None:
    settings, args = reads(COMMANDS[name])
    _, every_command = reads("run_cli")
    unused = []
    for action in subcommand(name)._actions:
        dest = action.dest
        if not action.option_strings or dest == "help":
            continue
        if dest == "config":
            used = bool(settings & FROM_THE_FILE)
        else:
            used = dest in args or SETTING_OF.get(dest, dest) in settings or dest in every_command
        if not used:
            unused.append(action.option_strings[-1])
    assert unused == []
    assert "debug" in every_command  # run_cli sets up logging from --debug for every command


def test_the_check_of_use_sees_an_unused_flag() -> None:
    settings, args = reads("convert_command")
    assert "tool_mode" not in settings | args and "provider" not in settings | args
    assert {"source", "target", "file"} <= args and "model" in settings
