"""What a gateway route declares: the fields of `[[route]]` and `[[route.targets]]` tables, once.

`toolwire.config` reads them from `toolwire.toml`; the gateway's `Route` and `Target`
(`toolwire.gateway`) are these settings plus what serving needs (a client, counters, the tool
mode in use), so a field added here reaches the settings file, the gateway and its checks
alike. Imports only the tool-mode names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolwire.textcalls import TOOL_MODES, ToolMode

__all__ = ["STRATEGIES", "RouteSettings", "Strategy", "TargetSettings"]

Strategy = Literal["fallback", "balance"]
STRATEGIES: tuple[Strategy, ...] = ("fallback", "balance")


@dataclass(slots=True)
class TargetSettings:
    """One upstream of a route (a `[[route.targets]]` table).

    Attributes:
        target: `provider:model`, as `toolwire.connect` takes it, or `scripted[-<wire>]:<name>`
            for the offline scripted model (started in-process on first use).
        base_url: The upstream's URL (default: the provider's own).
        api_key_env: The environment variable holding the upstream key (default: the provider's).
        tool_mode: `native`, `text`, `auto` or `constrained`, for this upstream.
        weight: Its share of a `balance` route's traffic, relative to the others'.
        timeout: Seconds to wait for the upstream to connect and for each read.
        parallel: For the offline scripted model only: calls per turn (`toolwire.offline`).

    Raises:
        ValueError: For a tool mode, weight or `parallel` out of range, or `parallel` on a
            target that is not the offline scripted model.
    """

    target: str
    base_url: str | None = None
    api_key_env: str | None = None
    tool_mode: ToolMode = "native"
    weight: float = 1.0
    timeout: float | None = 600.0
    parallel: int | None = None

    def __post_init__(self) -> None:
        _check_parallel(self.target, self.parallel)
        if self.tool_mode not in TOOL_MODES:
            raise ValueError(f"Target {self.target!r}: tool_mode must be one of {TOOL_MODES}, got {self.tool_mode!r}.")
        if not self.weight > 0:
            raise ValueError(f"Target {self.target!r}: weight must be a positive number, got {self.weight!r}.")


@dataclass(slots=True)
class RouteSettings:
    """Where requests for a model go (a `[[route]]` table): one target, or several.

    A route with one target may name it directly (`target`, `base_url`, `api_key_env`,
    `tool_mode`, `timeout`); with `targets`, `target`, `base_url` and `api_key_env` stay unset.

    Attributes:
        model: An fnmatch pattern over the model name the client asks for (`claude-*`).
        target: `provider:model` of the one target (or `targets`, not both).
        base_url: The upstream's URL (default: the provider's own).
        api_key_env: The environment variable holding the upstream key (default: the provider's).
        tool_mode: `native` (the upstream's tool API), `text` or `auto` (tools in the prompt),
            `constrained` (the reply decoded under a JSON Schema built from the tools).
        timeout: Seconds to wait for the upstream to connect and for each read.
        strategy: With `targets`: `fallback` (in order) or `balance` (by weight and load).
        cooldown: Seconds a target that keeps failing rests (an upstream's `Retry-After` wins).
        targets: Several upstreams, instead of `target`.
        parallel: For the offline scripted model only: calls per turn (`toolwire.offline`).

    Raises:
        ValueError: For an unknown strategy, or a `parallel` that does not apply.
    """

    model: str
    target: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    tool_mode: ToolMode = "native"
    timeout: float | None = 600.0
    strategy: Strategy = "fallback"
    cooldown: float = 30.0
    targets: Sequence[TargetSettings] = ()
    parallel: int | None = None

    def __post_init__(self) -> None:
        if self.target is not None:
            _check_parallel(self.target, self.parallel)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"Route {self.model!r}: strategy must be one of {STRATEGIES}, got {self.strategy!r}.")


def _check_parallel(target: str, parallel: int | None) -> None:
    if parallel is None:
        return
    if not target.startswith("scripted"):
        raise ValueError(f"Target {target!r}: parallel applies only to the offline scripted model (scripted:<name>).")
    if parallel < 1:
        raise ValueError(f"Target {target!r}: parallel must be a whole number of calls >= 1, got {parallel!r}.")
