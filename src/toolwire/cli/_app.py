"""The argument parser, the settings order, and the one place errors become exit statuses.

Exit statuses: 0 success, 1 a runtime failure (server unreachable, key rejected, provider
error), 2 a usage or settings error, 3 a `run` that did not finish (the tool-turn limit, the
token limit, a high-risk call refused because nobody could approve it), 130 interrupted (Ctrl-C).
Every failure is one line on stderr, never a traceback (`--debug` logs the traceback of
unexpected ones).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, NoReturn

from toolwire.cli._settings import DEFAULT_PROVIDER, CommandFailed, Settings, UsageError, known_providers, resolve
from toolwire.codecs import CODEC_NAMES
from toolwire.config import ConfigError, load_config
from toolwire.errors import ToolwireError

__all__ = ["run_cli"]

logger = logging.getLogger("toolwire.cli")

_DESCRIPTION = "LLM tool calling that works the same way against every provider: an agent over the standard tools."
_EPILOG = f"""\
settings, highest first:
  1. command-line flags
  2. the settings file: ./toolwire.toml, else $XDG_CONFIG_HOME/toolwire/toolwire.toml
     (~/.config/toolwire/toolwire.toml); sections [provider] name, model, base_url,
     api_key_env (copilot: copilot_byok, copilot_wire_api, copilot_record) and
     [agent] max_tool_turns, tool_mode, output_budget_chars, system_prompt;
     [[mcp]] name, command, args, env, url, headers (one table per MCP server)
  3. built-in defaults: provider {DEFAULT_PROVIDER!r} (the offline scripted model), tool mode auto,
     10 tool turns
The environment only supplies API keys (api_key_env, or the provider's own variable such as
OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY); it never overrides a flag or the file.
DEBUG=1 is the same as --debug.

providers: {", ".join(known_providers())}
  scripted-<wire> runs the offline scripted model in one wire protocol (scripted = scripted-openai).

examples:
  toolwire run --yes "summarize the to-do list"                          # offline scripted model
  toolwire run --provider vllm --model Qwen/Qwen3-8B "list the Python files"
  toolwire run --provider ollama --model qwen3 --tool-mode auto "find the TODOs"
  toolwire chat --provider anthropic --model claude-sonnet-4-5
  toolwire chat --mcp "npx -y @modelcontextprotocol/server-filesystem ."  # plus an MCP server's tools
  toolwire convert --from openai --to anthropic request.json
  toolwire serve --port 4000                     # the gateway; routes from [[route]] in toolwire.toml
  toolwire eval bfcl --limit 50 --provider llamacpp --model m --tool-mode constrained --json out.json
"""

Command = Callable[[Settings, argparse.Namespace], int]


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line (argparse prints the whole usage block first), with a guess at a typo."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"toolwire: error: {message}{_did_you_mean(self, message)} (see {self.prog} --help)\n")


def _did_you_mean(parser: argparse.ArgumentParser, message: str) -> str:
    """`; did you mean 'tools'?` for a mistyped subcommand or option, else nothing."""
    import difflib

    if (choice := re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)) is not None:
        word, known = choice.group(1), re.findall(r"'([^']*)'", choice.group(2))
    elif (stray := re.match(r"unrecognized arguments: (\S+)", message)) is not None:
        word, known = stray.group(1).split("=", 1)[0], _options(parser)
    else:
        return ""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _options(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of `parser` and its subcommands (an unknown option is reported by the top parser)."""
    found: list[str] = []
    for action in parser._actions:
        found.extend(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_options(sub))
    return sorted(set(found))


_AGENT = ("provider", "model", "base_url", "api_key_env", "tool_mode", "max_tool_turns", "config", "yes", "debug")
COMMAND_SETTINGS: dict[str, tuple[str, ...]] = {
    "chat": (*_AGENT, "copilot"),
    "run": (*_AGENT, "copilot"),
    "tools": ("provider", "model", "base_url", "config", "debug"),
    "convert": ("model", "config", "debug"),  # --model names the target's model
    "batch": _AGENT,
    "serve": ("config", "debug"),
    "mcp-server": ("debug",),
    "eval": ("provider", "model", "base_url", "api_key_env", "tool_mode", "config", "debug"),
}
"""The settings flags each command reads (after the command; before it, `toolwire` takes them all)."""


def _add_common(parser: argparse.ArgumentParser, *, top: bool, only: Collection[str] | None = None) -> None:
    """The settings flags `only` names (all of them at the top); sub-commands never reset them."""
    default = None if top else argparse.SUPPRESS
    switch = False if top else argparse.SUPPRESS
    group = parser.add_argument_group("settings (override toolwire.toml)")
    for name, (flags, options) in _setting_flags(default, switch).items():
        if only is None or name in only:
            group.add_argument(*flags, **options)
    if only is None or "copilot" in only:
        _add_copilot(parser, default)


def _setting_flags(default: Any, switch: Any) -> dict[str, tuple[tuple[str, ...], dict[str, Any]]]:
    modes = ("native", "text", "auto", "constrained")
    return {
        "provider": (
            ("--provider",),
            {"metavar": "NAME", "default": default, "help": "the provider (default: scripted)"},
        ),
        "model": (
            ("--model",),
            {
                "metavar": "NAME",
                "default": default,
                "help": "the model, as provider:model (groq:llama-3.3-70b) or a name",
            },
        ),
        "base_url": (("--base-url",), {"metavar": "URL", "default": default, "help": "where the API lives"}),
        "api_key_env": (
            ("--api-key-env",),
            {"metavar": "VAR", "default": default, "help": "the variable holding the key (default: the provider's)"},
        ),
        "tool_mode": (
            ("--tool-mode",),
            {"choices": modes, "default": default, "help": "how tools are sent"},
        ),
        "max_tool_turns": (
            ("--max-tool-turns",),
            {"metavar": "N", "type": _count, "default": default, "help": "tool turns per run"},
        ),
        "config": (
            ("--config",),
            {"metavar": "FILE", "type": Path, "default": default, "help": "read this settings file"},
        ),
        "yes": (("-y", "--yes"), {"action": "store_true", "default": switch, "help": "approve every tool call"}),
        "debug": (("--debug",), {"action": "store_true", "default": switch, "help": "log at DEBUG on stderr"}),
    }


def _add_copilot(parser: argparse.ArgumentParser, default: str | None) -> None:
    group = parser.add_argument_group("GitHub Copilot CLI (--provider copilot)")
    byok = ("openai", "azure", "anthropic")
    help = "bring your own key: the CLI calls --base-url with api_key_env's key"
    group.add_argument("--copilot-byok", choices=byok, default=default, help=help)
    group.add_argument("--copilot-wire-api", choices=("completions", "responses"), default=default, help="BYOK API")
    group.add_argument("--copilot-record", metavar="FILE", default=default, help="append the JSON-RPC traffic here")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The `toolwire` command line."""
    formatter = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="toolwire", description=_DESCRIPTION, epilog=_EPILOG, formatter_class=formatter)
    from toolwire import __version__

    parser.add_argument("--version", action="version", version=f"toolwire {__version__}")
    _add_common(parser, top=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        # The settings order and examples live in `toolwire --help` only, not repeated per command.
        epilog = "settings, providers and examples: toolwire --help"
        sub = commands.add_parser(name, help=help, description=help, epilog=epilog, formatter_class=formatter)
        _add_common(sub, top=False, only=COMMAND_SETTINGS[name])
        return sub

    from toolwire.cli._mcp import add_mcp_flag, add_mcp_server_command

    chat = command("chat", "talk to the agent; it asks before each high-risk tool call unless --yes")
    add_mcp_flag(chat)
    _add_model_call_flags(chat)
    run = command("run", "run one task and print the answer (tool calls are shown on stderr)")
    add_mcp_flag(run)
    _add_model_call_flags(run)
    run.add_argument("prompt", nargs="+", metavar="PROMPT", help="the task; '-' reads it from stdin")
    run.add_argument("--json", action="store_true", help="print the whole run result as JSON")
    run.add_argument("--no-stream", action="store_true", help="ask for whole replies (for servers that stream badly)")
    help = "the answer must be JSON matching this JSON Schema file: validated, re-asked, printed as JSON"
    run.add_argument("--output-schema", type=Path, metavar="FILE", default=None, help=help)
    help = "how the answer is asked for: tool, native, prompted or constrained (default: the provider's best)"
    strategies = ("tool", "native", "prompted", "constrained")
    run.add_argument("--output-strategy", choices=strategies, default=None, metavar="STRATEGY", help=help)
    help = "re-asks of an answer that does not match --output-schema (default: 1)"
    run.add_argument("--output-retries", type=_count, default=1, metavar="N", help=help)
    tools = command("tools", "print the tool definitions as the provider's codec sends them, and the text prompt")
    tools.add_argument("--json", action="store_true", help="print one JSON object")
    add_mcp_flag(tools)
    convert = command("convert", "re-encode a request body from one wire format to another")
    convert.add_argument(
        "--from", dest="source", choices=CODEC_NAMES, help="the input's format (default: detected from the body)"
    )
    convert.add_argument("--to", dest="target", required=True, choices=CODEC_NAMES, help="the output's format")
    convert.add_argument("file", nargs="?", default="-", metavar="FILE", help="a JSON request body ('-': stdin)")
    _add_batch(command("batch", "run many tasks from a JSONL file into a resumable JSONL of results"))
    serve = command("serve", "run the gateway: clients of any wire protocol, models routed by [[route]] tables")
    serve.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=4000, help="the port (default: 4000)")
    serve.add_argument("--workers", type=_count, default=1, metavar="N", help="worker processes (default: 1)")
    serve.add_argument(
        "--drain-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="on SIGTERM, how long requests in flight may take to finish before they are cut (default: 30)",
    )
    serve.add_argument(
        "--log-level",
        choices=("debug", "info", "warning", "error"),
        default=None,
        help="the gateway's log level on stderr (default: info, which includes the access log; --debug: debug)",
    )
    serve.add_argument(
        "--access-log",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one INFO line per request: route, upstream, status, time, tokens (default: on)",
    )
    serve.add_argument(
        "--max-body-mb",
        type=_positive_float,
        default=32.0,
        metavar="MB",
        help="the largest request body accepted, in MiB; larger ones get 413 before they are read (default: 32)",
    )
    add_mcp_server_command(command("mcp-server", "serve the standard tools to MCP clients (stdio, or --http PORT)"))
    _add_eval(command("eval", "score tool calling on a benchmark (BFCL) in one tool mode: a table, --json, --plot"))
    return parser


def _add_model_call_flags(parser: argparse.ArgumentParser) -> None:
    """How each model call is made: `run` and `chat` only (local models need the last two most)."""
    help = (
        "auto, none, required or a tool's name; required and a name force the first turn of each "
        "prompt, later turns send auto (default: the provider's own)"
    )
    parser.add_argument("--tool-choice", metavar="CHOICE", default=None, help=help)
    help = "cap each reply at N tokens (default: the provider's own)"
    parser.add_argument("--max-tokens", metavar="N", type=_positive, default=None, help=help)
    help = "sampling temperature, e.g. 0 for repeatable runs (default: the provider's own)"
    parser.add_argument("--temperature", metavar="T", type=_temperature, default=None, help=help)
    help = "seconds to wait for the model to connect and for each piece of its reply (default: 60)"
    parser.add_argument("--timeout", metavar="S", type=_seconds, default=None, help=help)


def _temperature(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a temperature >= 0, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a temperature >= 0, got {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _add_batch(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks", metavar="TASKS.jsonl", type=Path, help="one task per line: {id, prompt, ...}")
    parser.add_argument("--out", required=True, type=Path, metavar="RESULTS.jsonl", help="results, appended")
    parser.add_argument("--concurrency", type=_positive, default=16, metavar="N", help="tasks at once (16)")
    parser.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds per task (600)")
    parser.add_argument("--retries", type=_count, default=2, metavar="N", help="retries after rate limits (2)")
    parser.add_argument("--retry-failed", action="store_true", help="run tasks whose result line holds an error again")
    ray_help = "run on a Ray cluster at ADDRESS (none: start a local Ray)"
    parser.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS", help=ray_help)
    parser.add_argument("--ray-workers", type=_positive, default=None, metavar="N", help="Ray workers (default: CPUs)")


def _add_eval(parser: argparse.ArgumentParser) -> None:
    """`eval`'s own flags (provider, model, base URL and tool mode are the common ones)."""
    from toolwire.evals import CATEGORIES, DEFAULT_CATEGORIES

    default = ",".join(DEFAULT_CATEGORIES)
    others = ", ".join(c for c in CATEGORIES if c not in DEFAULT_CATEGORIES)
    help = "bfcl: the Berkeley Function Calling Leaderboard; output: typed replies in each output strategy"
    parser.add_argument("benchmark", choices=("bfcl", "output"), help=help)
    help = "output: comma-separated output strategies (default: every one the provider supports)"
    parser.add_argument("--strategies", default=None, help=help)
    parser.add_argument("--retries", type=_count, default=2, metavar="N", help="output: re-asks per case (2)")
    parser.add_argument(
        "--categories", default=default, help=f"comma-separated (default: {default}; also: {others}; single-turn only)"
    )
    help = "the first N cases of each category (output: the first N cases)"
    parser.add_argument("--limit", type=_positive, default=None, metavar="N", help=help)
    parser.add_argument("--json", dest="json_out", type=Path, metavar="FILE", help="write every case and the summary")
    parser.add_argument("--plot", type=Path, metavar="FILE.png", help="draw the chart (needs matplotlib)")
    parser.add_argument("--seed", type=int, default=0, help="the sampling seed sent with every case (0)")
    parser.add_argument("--max-tokens", type=_positive, default=512, metavar="N", help="reply token limit (512)")
    parser.add_argument(
        "--stream",
        action="store_true",
        help="ask as a streaming client does (its latency; constrained mode stops a model that repeats a call)",
    )
    parser.add_argument("--data-dir", type=Path, metavar="DIR", help="BFCL data (default: the installed bfcl-eval's)")


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


_PLAIN_COMMANDS = frozenset({"serve", "mcp-server", "convert"})  # they print nothing through rich


def _needs_rich(name: str) -> None:
    """Commands that print through rich need the `cli` extra; the others run on any install."""
    if name in _PLAIN_COMMANDS:
        return
    try:
        import rich  # noqa: F401 - only checks that the `cli` extra is installed
    except ModuleNotFoundError:
        raise UsageError(
            f"toolwire {name} needs rich; install it from the toolwire checkout with: pip install -e '.[cli]'"
        ) from None


def _command(name: str) -> Command:
    """Import only the command that runs (`convert` never loads the agent, nothing loads rich early)."""
    if name == "chat":
        from toolwire.cli._chat import chat_command

        return chat_command
    if name == "run":
        from toolwire.cli._run import run_command

        return run_command
    if name == "tools":
        from toolwire.cli._tools import tools_command

        return tools_command
    if name == "batch":
        from toolwire.cli._batch import batch_command

        return batch_command
    if name == "serve":
        from toolwire.cli._serve import serve_command

        return serve_command
    if name == "eval":
        from toolwire.cli._eval import eval_command

        return eval_command
    if name == "mcp-server":
        from toolwire.cli._mcp import mcp_server_command

        return mcp_server_command
    from toolwire.cli._convert import convert_command

    return convert_command


def _configure_logging(debug: bool) -> None:
    from toolwire.http import SafeLogFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(SafeLogFormatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("toolwire")
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    root.propagate = False


def _fail(status: int, message: str) -> int:
    from toolwire.cli._error_messages import in_cli_terms

    sys.stderr.write(f"toolwire: error: {' '.join(in_cli_terms(message).split())}\n")
    sys.stderr.flush()
    return status


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Parse `argv`, run the command, and turn every failure into one line and an exit status."""
    args = build_parser().parse_args(argv)
    debug = bool(args.debug) or os.environ.get("DEBUG", "") not in ("", "0")
    _configure_logging(debug)
    try:
        _needs_rich(args.command)
        settings = resolve(args, load_config(args.config))
        return _command(args.command)(settings, args)
    except KeyboardInterrupt:
        sys.stderr.write("\ntoolwire: interrupted\n")
        return 130
    except BrokenPipeError:  # `toolwire tools | head`: the reader had enough; stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush has nowhere to fail
        return 141
    except (UsageError, ConfigError) as exc:
        return _fail(2, str(exc))
    except (ToolwireError, CommandFailed) as exc:
        return _fail(1, str(exc))
    except Exception as exc:  # the CLI's promise: one line, never a traceback
        logger.debug("unexpected failure", exc_info=True)
        hint = "" if debug else " (run with --debug for the traceback)"
        return _fail(1, f"{type(exc).__name__}: {exc}{hint}")
