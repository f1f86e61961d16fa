"""`connect("provider:model")`: the one entry point for every kind of client.

It sits above the HTTP client (`toolwire.client`), the offline scripted model (`toolwire.offline`)
and the Copilot CLI client (`toolwire.copilot`): nothing below imports this module, so the layers
form a line, not a circle.
"""

from __future__ import annotations

from typing import Any

from toolwire.client import BaseClient, connect_http
from toolwire.offline import SCRIPTED_MODEL, SCRIPTED_PROVIDERS, OfflineModel

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
    `env` and the others `toolwire.copilot.connect_copilot` lists). `scripted:<name>` (or
    `scripted-<wire>:<name>`, `wire` one of openai, openai-responses, anthropic, gemini, ollama)
    starts the offline scripted model in-process, as the CLI and gateway do: no network, no key;
    it stops when the client closes (option: `parallel`, its calls per turn).
    """
    name, _, copilot_model = target.partition(":")
    if name in SCRIPTED_PROVIDERS:
        if base_url is not None:
            raise ValueError(f"{target!r} is the offline scripted model, served in-process: base_url does not apply.")
        return _connect_offline(name, copilot_model, timeout=timeout, max_retries=max_retries, **options)
    if name != "copilot":
        return connect_http(
            target, api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries, **options
        )
    if not copilot_model:
        raise ValueError(f"No model in {target!r}; write 'copilot:<model>', e.g. 'copilot:claude-sonnet-4.5'.")
    from toolwire.copilot import connect_copilot  # loaded only when used: it drives a child process

    return connect_copilot(copilot_model, token=api_key, timeout=timeout, **options)


def _connect_offline(provider: str, model: str, *, parallel: int | None = None, **options: Any) -> BaseClient:
    offline = OfflineModel(provider, parallel=parallel).__enter__()
    try:
        client = offline.connect(model or SCRIPTED_MODEL, **options)
    except BaseException:
        offline.__exit__(None, None, None)
        raise
    client.close_with(lambda: offline.__exit__(None, None, None))
    return client
