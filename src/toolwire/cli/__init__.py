"""The `toolwire` command line: `chat`, `run`, `tools` and `convert` (see `toolwire --help`).

Settings come from flags, then `toolwire.toml` (see `toolwire.config`), then built-in
defaults; the environment only supplies API keys. With no settings at all the provider is
the offline scripted model, so every command works without a key or a network.
This package sits at the edge: nothing in toolwire imports it, and it loads `rich` only
when a command that prints with it runs (`serve`, `mcp-server` and `convert` never do, so the
`serve` extra alone can run the gateway).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with `argv` (default: `sys.argv[1:]`); return the exit status."""
    from toolwire.cli._app import run_cli

    return run_cli(argv)
