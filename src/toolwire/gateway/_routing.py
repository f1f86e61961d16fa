"""Routes: which upstream serves the model a client asks for, and one pooled client per route.

A route is what a `[[route]]` table of `toolwire.toml` says (`toolwire.config.RouteSettings`
has the same fields): an fnmatch pattern over the requested model, a `provider:model`
target, an optional base URL and key variable, and a tool mode. The first matching route
wins. Each route builds its upstream client once, on first use, and keeps it (and so its
connection pool) for the life of the app. Imports the client layer, never a codec module.
"""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from toolwire.client import Client, connect_http
from toolwire.errors import ToolwireError
from toolwire.textcalls import TOOL_MODES, ToolMode

__all__ = ["Route", "RouteConfigError", "RouteLike", "Router", "RoutingError"]

logger = logging.getLogger("toolwire.gateway")


class RouteLike(Protocol):
    """Anything shaped like a `[[route]]` table (`toolwire.config.RouteSettings`, `Route`)."""

    @property
    def model(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def tool_mode(self) -> ToolMode: ...


class RoutingError(LookupError):
    """No route matches the requested model (the message names the model and the patterns)."""


class RouteConfigError(Exception):
    """A route's upstream client cannot be built (unknown provider, missing key or option)."""


@dataclass(slots=True)
class Route:
    """One route and, once built, its upstream client.

    Attributes:
        model: The fnmatch pattern over requested model names.
        target: `provider:model` for `toolwire.connect`.
        base_url: The upstream URL (default: the provider's).
        api_key_env: The variable holding the upstream key (default: the provider's own).
        tool_mode: `native`, `text` or `auto`; `auto` turns into `text` for good when the
            upstream rejects the `tools` parameter.
        timeout: Seconds to wait for the upstream to connect and for each read.
    """

    model: str
    target: str
    base_url: str | None = None
    api_key_env: str | None = None
    tool_mode: ToolMode = "native"
    timeout: float | None = 600.0
    _client: Client | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.tool_mode not in TOOL_MODES:
            raise ValueError(f"Route {self.model!r}: tool_mode must be one of {TOOL_MODES}, got {self.tool_mode!r}.")

    @classmethod
    def of(cls, settings: RouteLike) -> Route:
        """A route from a `[[route]]` table."""
        return cls(
            model=settings.model,
            target=settings.target,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            tool_mode=settings.tool_mode,
        )

    @property
    def target_model(self) -> str:
        """The model name the upstream is asked for."""
        return self.target.partition(":")[2]

    def client(self) -> Client:
        """The route's upstream client, built on first use.

        Its pool has no cap on connections and keeps every idle one for reuse: a gateway's
        upstream connections are bounded by its clients' anyway, and the default cap (100 open,
        20 idle) queued streams behind each other and reconnected under load.

        The gateway never retries: the client that called it has its own retry policy, and an
        upstream 429 must reach it with its `Retry-After` instead of being slept on here.
        """
        if self._client is None:
            key = os.environ.get(self.api_key_env) if self.api_key_env else None
            if self.api_key_env and not key:
                raise RouteConfigError(
                    f"Route {self.model!r}: the variable {self.api_key_env} holding its key is not set."
                )
            try:
                self._client = connect_http(
                    self.target,
                    api_key=key,
                    base_url=self.base_url,
                    timeout=self.timeout,
                    max_retries=0,
                    max_connections=None,  # one per request in flight: 1,000 streams need 1,000
                )
            except (ValueError, ToolwireError) as exc:
                raise RouteConfigError(f"Route {self.model!r} cannot reach {self.target!r}: {exc}") from None
        return self._client

    async def aclose(self) -> None:
        """Close the upstream connections."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


class Router:
    """The routes in order; `find(model)` returns the first whose pattern matches."""

    def __init__(self, routes: Iterable[RouteLike]) -> None:
        self.routes: list[Route] = [r if isinstance(r, Route) else Route.of(r) for r in routes]

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

    def listed_models(self) -> Sequence[tuple[str, Route]]:
        """Model names a client can pick from `/v1/models`: the patterns without wildcards."""
        return [(r.model, r) for r in self.routes if not any(c in r.model for c in "*?[")]

    async def aclose(self) -> None:
        """Close every route's upstream connections."""
        for route in self.routes:
            await route.aclose()
