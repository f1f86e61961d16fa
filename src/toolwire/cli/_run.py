"""`toolwire run PROMPT`: one task, tool calls shown on stderr, the answer (or `--json`) on stdout."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from toolwire.agent import Agent, RunFinished, RunResult, ToolFinished, ToolRejected, ToolStarted
from toolwire.cli._mcp import STANDARD_NAMES, mcp_servers, mcp_tools
from toolwire.cli._output import EventView, print_json
from toolwire.cli._settings import Settings, UsageError
from toolwire.cli._setup import build_agent, open_model
from toolwire.cli._terminal import Loop, ask_line
from toolwire.reviewers import AutoApprove, ConsoleReviewer, DenyAll, Reviewer
from toolwire.types import Message

__all__ = ["NO_TERMINAL", "drive", "run_command"]

UNFINISHED = 3
"""Exit status of a run that did not finish its task (see the CLI module's docstring)."""

NO_TERMINAL = "no one can approve it: run without a terminal; pass --yes to allow high-risk tools"


def run_command(settings: Settings, args: argparse.Namespace) -> int:
    """Run one prompt to the end; exit status 0 unless something failed."""
    prompt = " ".join(args.prompt)
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        raise UsageError("The prompt is empty; give a task, e.g. toolwire run 'list the Python files'.")
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with open_model(settings) as model:
        if model.report is not None:  # the offline model always says what it is; real runs keep stderr for events
            err.print(Text(model.banner, style="bold magenta"))
        with Loop(model.client) as loop, mcp_tools(mcp_servers(settings), loop, STANDARD_NAMES) as extra:
            agent = build_agent(model, settings, _reviewer(settings, err), extra, **_output_options(args))
            view = EventView(err, live_text=False)
            result = loop.run(agent.run(prompt) if args.no_stream else drive(agent, prompt, view))
            if args.no_stream:
                _replay_calls(result, view)
        if model.report is not None:
            err.print(Text(model.report(), style="dim"))
    unfinished = result.stop_reason not in ("end_turn", "done")
    if unfinished:
        err.print(Text(f"The run stopped early: {result.stop_reason}.", style="yellow"))
    unasked = (
        [] if settings.yes or sys.stdin.isatty() else [r.call.name for r in result.calls if r.review and not r.approved]
    )
    if unasked:
        err.print(Text(f"Refused for lack of a terminal to ask: {', '.join(unasked)}; pass --yes.", style="yellow"))
    if args.json:
        print_json(Console(), result.to_dict())
    elif args.output_schema is not None and result.output is not None:
        sys.stdout.write(json.dumps(result.output, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    else:
        sys.stdout.write(result.text + ("\n" if not result.text.endswith("\n") else ""))
        sys.stdout.flush()
    return UNFINISHED if unfinished or unasked else 0


def _output_options(args: argparse.Namespace) -> dict[str, Any]:
    """`--output-schema` and its options as the agent takes them (none without a schema)."""
    if args.output_schema is None:
        return {}
    try:
        schema = json.loads(args.output_schema.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"--output-schema {str(args.output_schema)!r} cannot be read as JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise UsageError(f"--output-schema {str(args.output_schema)!r} must hold a JSON Schema object.")
    return {"output_type": schema, "output_strategy": args.output_strategy, "output_retries": args.output_retries}


def _reviewer(settings: Settings, err: Console) -> Reviewer:
    if settings.yes:
        return AutoApprove()
    if not sys.stdin.isatty():
        return DenyAll(NO_TERMINAL)
    return ConsoleReviewer(ask=lambda p: ask_line(p, sys.stderr), show=lambda t: err.print(Text(t, style="yellow")))


async def drive(agent: Agent, prompt: str | Sequence[Message], view: EventView) -> RunResult:
    """Run the agent, showing each event as it arrives; return the result."""
    async for event in agent.run_stream(prompt):
        if isinstance(event, RunFinished):
            view.end_line()
            return event.result
        view.show(event)
    raise RuntimeError("The agent's event stream ended without RunFinished.")


def _replay_calls(result: RunResult, view: EventView) -> None:
    """Show the calls of a run made without streaming, as the streamed view would have."""
    for record in result.calls:
        if record.approved:
            view.show(ToolStarted(record.call))
            view.show(ToolFinished(record.call, record.result, record.duration_s))
        else:
            view.show(ToolRejected(record.call, str(record.result.value)))
    view.end_line()
