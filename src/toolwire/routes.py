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

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_COOLDOWN",
    "MAX_TIMEOUT",
    "MAX_WEIGHT",
    "STRATEGIES",
    "RouteSettings",
    "Strategy",
    "TargetSettings",
    "check_range",
]

Strategy = Literal["fallback", "balance"]
STRATEGIES: tuple[Strategy, ...] = ("fallback", "balance")

DEFAULT_TIMEOUT = 120.0
"""Seconds an upstream has for its first byte (and then between two reads) before the next target
is asked. The official SDKs give up after 600 s: two targets fit well inside that."""
MAX_TIMEOUT = 3600.0
MAX_WEIGHT = 1_000_000.0
"""Weights are shares: a million to one is as uneven as balancing gets (`inf` or `1e308` broke the sums)."""
MAX_COOLDOWN = 3600.0
"""An hour: a target benched longer is a target to remove from the route."""


def check_range(owner: str, name: str, value: float, most: float, *, zero: bool = False) -> None:
    """Refuse `value` unless it is a finite number in (0, most] (or [0, most] when `zero`).

    Raises:
        ValueError: Naming `owner`, the setting and the range.
    """
    low_ok = value >= 0 if zero else value > 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not (low_ok and value <= most):
        low = "0" if zero else "more than 0"
        raise ValueError(f"{owner}: {name} must be a number from {low} to {most:g}, got {value!r}.")


@dataclass(slots=True)
class TargetSettings:
    """One upstream of a route (a `[[route.targets]]` table).

    Attributes:
        target: `provider:model`, as `toolwire.connect` takes it, or `scripted[-<wire>]:<name>`
            for the offline scripted model (started in-process on first use).
        base_url: The upstream's URL (default: the provider's own).
        api_key_env: The environment variable holding the upstream key (default: the provider's).
        tool_mode: `native`, `text`, `auto` or `constrained`, for this upstream.
        weight: Its share of a `balance` route's traffic, relative to the others' (up to `MAX_WEIGHT`).
        timeout: Seconds the upstream has to connect and send its reply's first byte, and then
            between two reads; past it the route's next target is asked (`DEFAULT_TIMEOUT`).
        parallel: For the offline scripted model only: calls per turn (`toolwire.offline`).

    Raises:
        ValueError: For a tool mode, weight, timeout or `parallel` out of range, or `parallel`
            on a target that is not the offline scripted model.
    """

    target: str
    base_url: str | None = None
    api_key_env: str | None = None
    tool_mode: ToolMode = "native"
    weight: float = 1.0
    timeout: float | None = DEFAULT_TIMEOUT
    parallel: int | None = None

    def __post_init__(self) -> None:
        _check_parallel(self.target, self.parallel)
        if self.tool_mode not in TOOL_MODES:
            raise ValueError(f"Target {self.target!r}: tool_mode must be one of {TOOL_MODES}, got {self.tool_mode!r}.")
        check_range(f"Target {self.target!r}", "weight", self.weight, MAX_WEIGHT)
        if self.timeout is not None:
            check_range(f"Target {self.target!r}", "timeout", self.timeout, MAX_TIMEOUT)


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
        timeout: Seconds the upstream has to connect and send its reply's first byte, and then
            between two reads; past it the route's next target is asked (`DEFAULT_TIMEOUT`).
        strategy: With `targets`: `fallback` (in order) or `balance` (by weight and load).
        cooldown: Seconds a target that keeps failing rests, up to `MAX_COOLDOWN` (an upstream's
            `Retry-After` wins, read within bounds).
        targets: Several upstreams, instead of `target`.
        parallel: For the offline scripted model only: calls per turn (`toolwire.offline`).

    Raises:
        ValueError: For an unknown strategy, a timeout or cool-down out of range, or a `parallel`
            that does not apply.
    """

    model: str
    target: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    tool_mode: ToolMode = "native"
    timeout: float | None = DEFAULT_TIMEOUT
    strategy: Strategy = "fallback"
    cooldown: float = 30.0
    targets: Sequence[TargetSettings] = ()
    parallel: int | None = None

    def __post_init__(self) -> None:
        if self.target is not None:
            _check_parallel(self.target, self.parallel)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"Route {self.model!r}: strategy must be one of {STRATEGIES}, got {self.strategy!r}.")
        check_range(f"Route {self.model!r}", "cooldown", self.cooldown, MAX_COOLDOWN, zero=True)
        if self.timeout is not None:
            check_range(f"Route {self.model!r}", "timeout", self.timeout, MAX_TIMEOUT)


def _check_parallel(target: str, parallel: int | None) -> None:
    if parallel is None:
        return
    if not target.startswith("scripted"):
        raise ValueError(f"Target {target!r}: parallel applies only to the offline scripted model (scripted:<name>).")
    if parallel < 1:
        raise ValueError(f"Target {target!r}: parallel must be a whole number of calls >= 1, got {parallel!r}.")
