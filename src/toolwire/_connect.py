"""`connect("provider:model")`: the one entry point for every kind of client.

It sits above the HTTP client (`toolwire.client`) and the Copilot CLI client (`toolwire.copilot`),
which both sit above `toolwire.session`'s base: nothing below imports this module, so the
layers form a line, not a circle.
"""

from __future__ import annotations

from typing import Any

from toolwire.client import BaseClient, connect_http

__all__ = ["connect"]


def connect(
    target: str,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float | None = 60.0,
    max_retries: int = 2,
    **options: Any,
) -> BaseClient:
    """Return a client for `"provider:model"`, e.g. `connect("anthropic:claude-sonnet-4-5")`.

    HTTP providers (the keys of `PROVIDERS`) are described at `connect_http`. `copilot:<model>`
    drives the GitHub Copilot CLI as a child process (options: `cli_path`, `cwd`, `token_env`,
    `env` and the others `toolwire.copilot.connect_copilot` lists).
    """
    name, _, copilot_model = target.partition(":")
    if name != "copilot":
        return connect_http(
            target, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries, **options
        )
    if not copilot_model:
        raise ValueError(f"No model in {target!r}; write 'copilot:<model>', e.g. 'copilot:claude-sonnet-4.5'.")
    from toolwire.copilot import connect_copilot  # loaded only when used: it drives a child process

    return connect_copilot(copilot_model, token=api_key, timeout=timeout, **options)
