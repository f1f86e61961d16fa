"""Routes: which upstreams serve the model a client asks for, and one pooled client per target.

A route is what a `[[route]]` table of `toolwire.toml` says (`toolwire.routes.RouteSettings`,
which `Route` extends): an fnmatch pattern over the requested model and one target — or several
(`[[route.targets]]`), tried in order (`strategy = "fallback"`) or shared by weight and load
(`"balance"`). The first matching route wins. Each target builds its upstream client once, on
first use, and keeps it (and so its connection pool) for the life of the app. A target that
keeps failing rests for a cool-down (an upstream's `Retry-After` when it gave one) and is tried
again after it. Imports the client layer, never a codec module.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from toolwire.client import Client, check_target, connect_http
from toolwire.errors import ToolwireError
from toolwire.http import redact_urls
from toolwire.offline import SCRIPTED_PROVIDERS
from toolwire.routes import STRATEGIES, RouteSettings, Strategy, TargetSettings
from toolwire.toolmodes import ModeState

if TYPE_CHECKING:
    from toolwire.offline import OfflineModel

__all__ = [
    "STRATEGIES",
    "Route",
    "RouteConfigError",
    "RouteLike",
    "Router",
    "RoutingError",
    "Strategy",
    "Target",
    "TargetLike",
]

TargetLike = TargetSettings
"""A `[[route.targets]]` table (`toolwire.routes.TargetSettings`), or a `Target` (which is one)."""

logger = logging.getLogger("toolwire.gateway")

FAILURES_BEFORE_REST = 3
"""Consecutive failures after which a target rests for the route's cool-down."""


RouteLike = RouteSettings
"""A `[[route]]` table (`toolwire.routes.RouteSettings`), or a `Route` (which is one)."""


_ROUTE_TERMS = (
    ("pass api_key=... to connect() or set", "set api_key_env in the route, or"),
    ("needs base_url=...,", "needs base_url in the route,"),
)
"""The client layer's hints in the words of a `[[route]]` table."""


class RoutingError(LookupError):
    """No route matches the requested model (the message names the model and the patterns)."""


class RouteConfigError(Exception):
    """A route's upstream client cannot be built (unknown provider, missing key or option)."""


@dataclass(slots=True, eq=False)
class Target(TargetSettings):
    """One upstream of a route: its settings (`toolwire.routes.TargetSettings`), its client, how it is doing.

    Attributes:
        modes: The tool mode requests use now: `auto` turns into `text` for good when the upstream
            refuses the `tools` parameter (`toolwire.toolmodes.refuses_tools`).
        in_flight: Requests it is serving now.
        failures: Failures in a row (reset by a success).
        resting_until: `time.monotonic()` before which it gets traffic only when no other can.
    """

    in_flight: int = 0
    failures: int = 0
    resting_until: float = 0.0
    modes: ModeState = field(init=False, repr=False)
    _credit: float = field(default=0.0, repr=False)  # smooth weighted round robin
    _client: Client | None = field(default=None, repr=False)
    _offline: OfflineModel | None = field(default=None, repr=False)

    # One object per upstream, whatever its settings say (the settings compare by value).
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __post_init__(self) -> None:
        TargetSettings.__post_init__(self)
        self.modes = ModeState(self.tool_mode, owner=f"gateway target {self.target}")

    @property
    def target_model(self) -> str:
        """The model name the upstream is asked for."""
        return self.target.partition(":")[2]

    def resting(self, now: float) -> bool:
        """Whether the target is in its cool-down."""
        return now < self.resting_until

    def succeeded(self) -> None:
        """A request went through: the failure count starts again."""
        self.failures = 0

    def failed(self, cooldown: float, retry_after: float | None = None) -> None:
        """A request failed before any byte reached the client: count it, and rest when due."""
        self.failures += 1
        rest = retry_after if retry_after is not None else (cooldown if self.failures >= FAILURES_BEFORE_REST else 0)
        if rest > 0:
            self.resting_until = time.monotonic() + rest
            logger.warning("target %s rests for %.0f s after %d failure(s)", self.target, rest, self.failures)

    def client(self, route: str) -> Client:
        """The target's upstream client, built on first use.

        Its pool has no cap on connections and keeps every idle one for reuse: a gateway's
        upstream connections are bounded by its clients' anyway, and the default cap (100 open,
        20 idle) queued streams behind each other and reconnected under load.

        The gateway never retries a target: the client that called it has its own retry policy,
        and an upstream 429 must reach it (or the next target) instead of being slept on here.
        """
        if self._client is None and self.offline:
            self._client = self._start_offline()
        if self._client is None:
            try:
                self._client = connect_http(
                    self.target,
                    api_key=self._key(route),
                    base_url=self.base_url,
                    timeout=self.timeout,
                    max_retries=0,
                    max_connections=None,  # one per request in flight: 1,000 streams need 1,000
                )
            except (ValueError, ToolwireError) as exc:
                raise self._unreachable(route, exc) from None
        return self._client

    def check(self, route: str) -> str:
        """What `client` would refuse, found without building anything; else where requests go.

        Raises:
            RouteConfigError: Naming the route and what is wrong (provider, key, base URL).
        """
        if self.offline:
            return "offline scripted model, in-process, no key"
        try:
            return check_target(self.target, api_key=self._key(route), base_url=self.base_url)
        except (ValueError, ToolwireError) as exc:
            raise self._unreachable(route, exc) from None

    def _key(self, route: str) -> str | None:
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if self.api_key_env and not key:
            raise RouteConfigError(
                f"Route {route!r}: the variable {self.api_key_env} holding the key of {self.target!r} is not set."
            )
        return key

    def _unreachable(self, route: str, exc: Exception) -> RouteConfigError:
        said = exc.message if isinstance(exc, ToolwireError) else str(exc)
        for hint, in_a_route in _ROUTE_TERMS:
            said = said.replace(hint, in_a_route)
        return RouteConfigError(f"Route {route!r} cannot reach {self.target!r}: {said}")

    @property
    def offline(self) -> bool:
        """Whether the target is the offline scripted model (no network, no key)."""
        return self.target.partition(":")[0] in SCRIPTED_PROVIDERS

    def _start_offline(self) -> Client:
        from toolwire.offline import OfflineModel

        provider = self.target.partition(":")[0]
        self._offline = OfflineModel(provider, keep_requests=False, parallel=self.parallel).__enter__()
        return self._offline.connect(
            self.target_model or "offline-scripted", timeout=self.timeout, max_retries=0, max_connections=None
        )

    async def aclose(self) -> None:
        """Close the upstream connections (and stop the offline model)."""
        client, self._client = self._client, None
        offline, self._offline = self._offline, None
        if client is not None:
            await client.aclose()
        if offline is not None:
            offline.__exit__(None, None, None)


@dataclass(slots=True, eq=False)
class Route(RouteSettings):
    """One route (its settings: `toolwire.routes.RouteSettings`) and the targets that serve it.

    Attributes:
        targets: The upstreams, in order (`target` names the first).
    """

    targets: list[Target] = field(default_factory=list)

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __post_init__(self) -> None:
        RouteSettings.__post_init__(self)
        if self.targets and self.target is not None and self.target != self.targets[0].target:
            raise ValueError(f"Route {self.model!r}: give either target or targets, not both.")
        if not self.targets:
            if self.target is None:
                raise ValueError(f"Route {self.model!r} needs a target (or targets).")
            self.targets = [
                Target(
                    self.target,
                    self.base_url,
                    self.api_key_env,
                    self.tool_mode,
                    timeout=self.timeout,
                    parallel=self.parallel,
                )
            ]
        self.target = self.targets[0].target

    @classmethod
    def of(cls, settings: RouteSettings) -> Route:
        """A route from a `[[route]]` table."""
        if isinstance(settings, Route):
            return settings
        values = {f.name: getattr(settings, f.name) for f in fields(RouteSettings)}
        targets = [_target_of(t) for t in settings.targets]
        return cls(**values | {"target": None if targets else settings.target, "targets": targets})

    def candidates(self) -> list[Target]:
        """The targets to try for one request, in order: the chosen one first, resting ones last."""
        now = time.monotonic()
        awake = [t for t in self.targets if not t.resting(now)]
        resting = []
        if len(awake) < len(self.targets):  # most requests find every target awake
            resting = sorted((t for t in self.targets if t.resting(now)), key=lambda t: t.resting_until)
        if self.strategy == "balance" and len(awake) > 1:
            first = _pick(awake)
            awake = [first, *(t for t in awake if t is not first)]
        return awake + resting

    async def aclose(self) -> None:
        """Close every target's upstream connections."""
        for target in self.targets:
            await target.aclose()


def _target_of(settings: TargetSettings) -> Target:
    if isinstance(settings, Target):
        return settings
    return Target(**{f.name: getattr(settings, f.name) for f in fields(TargetSettings)})


def _pick(targets: list[Target]) -> Target:
    """The least busy target for its weight; among equals, smooth weighted round robin (nginx's).

    Requests one at a time then spread exactly by weight, and under load the target with the
    fewest requests in flight per unit of weight goes first.
    """
    load = min(t.in_flight / t.weight for t in targets)
    equal = [t for t in targets if t.in_flight / t.weight == load]
    total = sum(t.weight for t in equal)
    for t in equal:
        t._credit += t.weight
    chosen = max(equal, key=lambda t: t._credit)
    chosen._credit -= total
    return chosen


class Router:
    """The routes in order; `find(model)` returns the first whose pattern matches."""

    def __init__(self, routes: Iterable[RouteLike]) -> None:
        self.routes: list[Route] = [Route.of(r) for r in routes]

    def find(self, model: str) -> Route:
        """The route for `model`.

        Raises:
            RoutingError: When no pattern matches; the message names the model and the patterns.
        """
        for route in self.routes:
            if fnmatch.fnmatchcase(model, route.model):
                return route
        raise RoutingError(
            f"No route for model {model!r}; the gateway routes {self.patterns() or 'nothing'}. "
            "Ask for a model these patterns match, or add a [[route]] to toolwire.toml."
        )

    def patterns(self) -> str:
        """The configured patterns, for messages."""
        return ", ".join(repr(r.model) for r in self.routes)

    def check(self) -> list[str]:
        """Every target checked as its first request would: one line per route, `route -> target (where)`.

        Raises:
            RouteConfigError: For the first target that cannot work, naming its route.
        """
        lines = []
        for route in self.routes:
            for target in route.targets:
                lines.append(redact_urls(f"{route.model} -> {target.target} ({target.check(route.model)})"))
        return lines

    def listed_models(self) -> Sequence[tuple[str, Route]]:
        """Model names a client can pick from `/v1/models`: the patterns without wildcards."""
        return [(r.model, r) for r in self.routes if not any(c in r.model for c in "*?[")]

    async def aclose(self) -> None:
        """Close every route's upstream connections."""
        for route in self.routes:
            await route.aclose()
