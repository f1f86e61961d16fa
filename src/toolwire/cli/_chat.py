"""`toolwire chat`: an interactive agent over the standard tools, the answer streamed as it comes.

The conversation carries over from prompt to prompt (each run starts from the previous run's
messages). High-risk calls wait for the person's y/n unless `--yes`. Commands: `/tools`,
`/reset`, `/exit` (Ctrl-D works too). Ctrl-C during a turn cancels that turn (the
conversation stays as it was before the prompt); Ctrl-C at the prompt, or twice, leaves.
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.text import Text

from toolwire.agent import Agent
from toolwire.cli._error_messages import in_cli_terms
from toolwire.cli._mcp import STANDARD_NAMES, mcp_servers, mcp_tools
from toolwire.cli._output import EventView
from toolwire.cli._run import NO_TERMINAL, drive
from toolwire.cli._settings import Settings
from toolwire.cli._setup import build_agent, open_model
from toolwire.cli._terminal import Loop, TurnCancelled, ask_line
from toolwire.errors import ToolwireError
from toolwire.reviewers import AutoApprove, ConsoleReviewer, DenyAll, Reviewer
from toolwire.types import Message, UserMessage

__all__ = ["chat_command"]

_HELP = "Type a task; /tools lists the tools, /reset starts over, /exit (or Ctrl-D) quits; Ctrl-C stops a turn."
_CANCELLED = "(cancelled: the conversation is as it was before that prompt; Ctrl-C at the prompt leaves)"
_PROMPT = "you> "


def chat_command(settings: Settings, args: argparse.Namespace) -> int:
    """Talk to the agent until `/exit` or the end of input."""
    console = Console(highlight=False, soft_wrap=True)
    with open_model(settings) as model:
        console.print(Text(model.banner, style="bold magenta"))
        console.print(Text(_HELP, style="dim"))
        view = EventView(console, live_text=True)
        with Loop(model.client) as loop, mcp_tools(mcp_servers(settings), loop, STANDARD_NAMES) as extra:
            agent = build_agent(model, settings, _reviewer(settings, console, view), extra)
            _converse(agent, loop, console, view)
    return 0


def _reviewer(settings: Settings, console: Console, view: EventView) -> Reviewer:
    if settings.yes:
        return AutoApprove()
    if not sys.stdin.isatty():  # a piped prompt line must never be read as the answer to "Run this tool?"
        console.print(
            Text("No terminal to ask: high-risk calls are refused; pass --yes to allow them.", style="yellow")
        )
        return DenyAll(NO_TERMINAL)

    def show(text: str) -> None:
        view.end_line()  # the approval question starts on its own line, never after streamed text
        console.print(Text(text.strip("\n"), style="yellow"))

    return ConsoleReviewer(ask=ask_line, show=show)


def _converse(agent: Agent, loop: Loop, console: Console, view: EventView) -> None:
    history: list[Message] = []
    while True:
        try:
            line = ask_line(_PROMPT).strip()
        except EOFError:
            console.print()
            return
        if line in ("/exit", "/quit"):
            return
        if line == "/reset":
            history = []
            console.print(Text("The conversation was cleared.", style="dim"))
        elif line == "/tools":
            _show_tools(agent, console)
        elif line.startswith("/"):
            console.print(Text(f"Unknown command {line!r}. {_HELP}", style="red"))
        elif line:
            history = _turn(agent, loop, view, [*history, UserMessage(content=line)], console) or history


def _turn(agent: Agent, loop: Loop, view: EventView, messages: list[Message], console: Console) -> list[Message]:
    """One prompt; the new history, or an empty list (keep the old one) when the run failed."""
    try:
        result = loop.run_turn(drive(agent, messages, view))
    except TurnCancelled:
        view.end_line()
        console.print(Text(_CANCELLED, style="yellow"))
        return []
    except ToolwireError as exc:
        view.end_line()
        console.print(Text(f"error: {in_cli_terms(str(exc))}", style="red"))
        return []
    if result.stop_reason not in ("end_turn", "done"):
        console.print(Text(f"(the run stopped early: {result.stop_reason})", style="yellow"))
    elif result.stop_reason == "done":
        console.print(Text(result.text))
    return result.messages


def _show_tools(agent: Agent, console: Console) -> None:
    for tool in agent.tools.values():
        line = Text(f"  {tool.name}", style="bold") + Text(f" ({tool.risk} risk) ", style="dim")
        line.append((tool.description or "").split("\n", 1)[0])
        console.print(line)
